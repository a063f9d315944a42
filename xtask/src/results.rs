//! `bench/results/YYYY-MM-DD-<kind>.json`: the numbers of one passing
//! run of `cargo xtask fast-uml-test` (kind `fast-uml`) or `nproc-uml-test`
//! (kind `nproc-uml`), machine-readable, for the series' texts (`patches`
//! fills their `{{...}}` numbers from the newest file of each kind). The
//! format is documented in `bench/results/README.md`.

use crate::Result;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The values of one run: flat dotted keys -> integers.
pub type Values = BTreeMap<String, u64>;

/// The integer a token starts with (`"82402"`, `"(2.39"` -> no).
fn int(tok: &str) -> Option<u64> {
    tok.trim_start_matches('(').parse().ok()
}

/// The in-kernel benchmark's table (`/sys/kernel/debug/kallsyms_fast/bench`).
pub fn parse_bench(text: &str, v: &mut Values) {
    for l in text.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        if let Some(rest) = l.strip_prefix("# ") {
            // "# 50 rounds; ns per call; ..."
            if let (Some(n), Some(&"rounds;")) = (t.get(1).and_then(|s| int(s)), t.get(2)) {
                v.insert("bench.rounds".into(), n);
            }
            // "# module-sorted: 61486 symbols of 1 module(s) sorted in
            // 15286784 ns (...); 0 answer(s) differ from stock"
            if let Some(r) = rest.strip_prefix("module-sorted: ") {
                let w: Vec<&str> = r.split_whitespace().collect();
                if let Some(n) = w.first().and_then(|s| int(s)) {
                    v.insert("bench.module-sorted.sorted_symbols".into(), n);
                }
                if let Some(i) = w.iter().position(|s| *s == "sorted") {
                    if let Some(n) = w.get(i + 2).and_then(|s| int(s)) {
                        v.insert("bench.module-sorted.sort_ns".into(), n);
                    }
                }
                if let Some(i) = w.iter().position(|s| *s == "answer(s)") {
                    if let Some(n) = i.checked_sub(1).and_then(|j| w.get(j)).and_then(|s| int(s)) {
                        v.insert("bench.module-sorted.differ".into(), n);
                    }
                }
            }
            continue;
        }
        // case addrs stock fast cached fast-x cached-x hit%
        if t.len() == 8 && t[0] != "case" {
            let cols = [
                (1, "addrs"),
                (2, "stock_ns"),
                (3, "fast_ns"),
                (4, "cached_ns"),
                (7, "hit_pct"),
            ];
            for (i, name) in cols {
                if let Some(n) = int(t[i]) {
                    v.insert(format!("bench.{}.{name}", t[0]), n);
                }
            }
        }
    }
}

/// The boot log's index lines:
/// `kallsyms_fast: core index: 34433 symbols, 82402 bytes (2.39 per
/// symbol), built in 1245 us` and `kallsyms_fast: name index: 170504 bytes
/// (...), built in 2793 us`.
pub fn parse_console(text: &str, v: &mut Values) {
    for l in text.lines() {
        for which in ["core", "name"] {
            let Some(r) = l.split(&format!("kallsyms_fast: {which} index: ")).nth(1) else {
                continue;
            };
            let w: Vec<&str> = r.split_whitespace().collect();
            for (i, s) in w.iter().enumerate() {
                let Some(n) = int(s) else { continue };
                let unit = w.get(i + 1).map(|u| u.trim_end_matches([',', ')']));
                let key = match unit {
                    Some("symbols") => "symbols",
                    Some("bytes") => "bytes",
                    Some("us") => "build_us",
                    _ => continue,
                };
                v.insert(format!("index.{which}.{key}"), n);
            }
        }
    }
}

/// One KUnit results file (`kunit-boot`, `kunit-module`, `kunit-after`):
/// each case's summary line, `# kallsyms_fast_test_<case>: <what>: N
/// <unit> (A answered by ..., M of K module ... by a module ...), X
/// mismatches`, as `kunit.<run>.<case>.{checked,answered,module_answered,
/// module_total,mismatches}`.
pub fn parse_kunit(run: &str, text: &str, v: &mut Values) {
    for l in text.lines() {
        let Some(r) = l.split("# kallsyms_fast_test_").nth(1) else {
            continue;
        };
        let Some((case, r)) = r.split_once(": ") else {
            continue;
        };
        let Some((_, r)) = r.split_once(": ") else {
            continue;
        };
        let w: Vec<&str> = r.split_whitespace().collect();
        let key = |k: &str| format!("kunit.{run}.{case}.{k}");
        let mut seen_first = false;
        for (i, s) in w.iter().enumerate() {
            let Some(n) = int(s) else { continue };
            let next = w.get(i + 1).copied().unwrap_or("");
            if !seen_first {
                v.insert(key("checked"), n);
                seen_first = true;
            } else if next == "answered" {
                v.entry(key("answered")).or_insert(n);
            } else if next == "of" && w.get(i + 3).is_some_and(|u| u.starts_with("module")) {
                v.insert(key("module_answered"), n);
                if let Some(k) = w.get(i + 2).and_then(|s| int(s)) {
                    v.insert(key("module_total"), k);
                }
            } else if next.starts_with("mismatches") {
                v.insert(key("mismatches"), n);
            }
        }
    }
}

/// `git rev-parse HEAD` of the repository, with `-dirty` when the work
/// tree has changes (the numbers may then come from uncommitted code).
fn commit(root: &Path) -> String {
    let out = |args: &[&str]| {
        Command::new("git")
            .current_dir(root)
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let head = out(&["rev-parse", "HEAD"]);
    let dirty = !out(&["status", "--porcelain", "--untracked-files=no"]).is_empty();
    if dirty {
        format!("{head}-dirty")
    } else {
        head
    }
}

/// Today's date (UTC), `YYYY-MM-DD`.
fn today() -> Result<String> {
    let o = Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .map_err(|e| format!("cannot run date: {e}"))?;
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// What a kind's file says about where its numbers come from.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// `fast-uml`, `nproc-uml`: the file name's and `kind`'s.
    pub name: &'static str,
    /// The command that wrote it.
    pub tool: &'static str,
    /// What it measured on.
    pub machine: &'static str,
}

/// `cargo xtask fast-uml-test`.
pub const FAST_UML: Kind = Kind {
    name: "fast-uml",
    tool: "cargo xtask fast-uml-test",
    machine: "User-Mode Linux (ARCH=um, kernel/uml.config + kernel/fast-kernel.config), native speed, ksym_many loaded",
};

/// `cargo xtask nproc-uml-test`.
pub const NPROC_UML: Kind = Kind {
    name: "nproc-uml",
    tool: "cargo xtask nproc-uml-test",
    machine: "User-Mode Linux (ARCH=um, kernel/uml.config + kernel/fast-kernel.config), native speed, 1,025 sleeping processes",
};

/// nproc's in-kernel benchmark (`/sys/kernel/debug/nproc/bench`, as the
/// job prints it): `<label>: <scope> <fields>: N tasks x P passes: M
/// ns/task median, B ns/task best pass, X bytes/task, ...` as
/// `bench.<label>.{tasks,passes,median_ns,best_ns,bytes_per_task}`, the
/// label lower-cased with every run of other characters than letters and
/// digits turned into one `-` ("wchan, kallsyms_fast off" ->
/// `wchan-kallsyms-fast-off`).
pub fn parse_nproc_bench(text: &str, v: &mut Values) {
    for l in text.lines() {
        let Some((label, rest)) = l.split_once(": ") else {
            continue;
        };
        let Some((_, nums)) = rest.split_once(": ") else {
            continue;
        };
        let mut slug = String::new();
        for c in label.chars() {
            if c.is_ascii_alphanumeric() {
                slug.push(c.to_ascii_lowercase());
            } else if !slug.ends_with('-') {
                slug.push('-');
            }
        }
        let slug = slug.trim_matches('-');
        let w: Vec<&str> = nums.split_whitespace().collect();
        for (i, s) in w.iter().enumerate() {
            let Some(n) = int(s) else { continue };
            let next = w.get(i + 1).copied().unwrap_or("");
            let after = w.get(i + 2).copied().unwrap_or("");
            let key = match (next, after) {
                ("tasks", _) => "tasks",
                ("passes:", _) | ("passes,", _) | ("passes", _) => "passes",
                ("ns/task", "median,") => "median_ns",
                ("ns/task", "best") => "best_ns",
                ("bytes/task,", _) | ("bytes/task", _) => "bytes_per_task",
                _ => continue,
            };
            v.insert(format!("bench.{slug}.{key}"), n);
        }
    }
}

/// The results file's text.
pub fn render(kind: &Kind, date: &str, commit: &str, kernel: &str, values: &Values) -> String {
    let doc = serde_json::json!({
        "kind": kind.name,
        "date": date,
        "commit": commit,
        "tool": kind.tool,
        "machine": kind.machine,
        "kernel": kernel,
        "values": values,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// Writes `dir/<today>-<kind>.json` (replacing a run of the same day)
/// and returns its path.
pub fn write(
    kind: &Kind,
    dir: &Path,
    root: &Path,
    kernel: &str,
    values: &Values,
) -> Result<PathBuf> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let date = today()?;
    let path = dir.join(format!("{date}-{}.json", kind.name));
    let text = render(kind, &date, &commit(root), kernel, values);
    fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BENCH: &str = "\
# 50 rounds; ns per call; ratio = stock / fast (hundredths)
case           addrs     stock      fast    cached     fast-x   cached-x hit%
core-uniform    4096       448        82         0       5.46       0.00    0
core-zipf       4096       444       117        18       3.79      24.66   96
module-sorted   4096    184706        66         0    2798.57       0.00    0
# module-sorted: 61486 symbols of 1 module(s) sorted in 15286784 ns (largest ksym_many: 61486 in 15286784 ns); 0 answer(s) differ from stock
";

    #[test]
    fn bench_table() {
        let mut v = Values::new();
        parse_bench(BENCH, &mut v);
        assert_eq!(v["bench.rounds"], 50);
        assert_eq!(v["bench.core-uniform.stock_ns"], 448);
        assert_eq!(v["bench.core-uniform.fast_ns"], 82);
        assert_eq!(v["bench.core-zipf.cached_ns"], 18);
        assert_eq!(v["bench.core-zipf.hit_pct"], 96);
        assert_eq!(v["bench.module-sorted.addrs"], 4096);
        assert_eq!(v["bench.module-sorted.sorted_symbols"], 61486);
        assert_eq!(v["bench.module-sorted.sort_ns"], 15286784);
        assert_eq!(v["bench.module-sorted.differ"], 0);
        assert!(!v.contains_key("bench.case.addrs"));
    }

    #[test]
    fn console_index_lines() {
        let mut v = Values::new();
        parse_console(
            "[    0.5] kallsyms_fast: core index: 34433 symbols, 82402 bytes (2.39 per symbol), built in 1245 us\n\
             [    0.6] kallsyms_fast: name index: 170504 bytes (4.95 per symbol), built in 2793 us\n",
            &mut v,
        );
        assert_eq!(v["index.core.symbols"], 34433);
        assert_eq!(v["index.core.bytes"], 82402);
        assert_eq!(v["index.core.build_us"], 1245);
        assert_eq!(v["index.name.bytes"], 170504);
        assert_eq!(v["index.name.build_us"], 2793);
        assert_eq!(v.len(), 5);
    }

    #[test]
    fn kunit_summaries() {
        let mut v = Values::new();
        parse_kunit(
            "module",
            "    # kallsyms_fast_test_module_names: module names: 1024 names (1024 answered by the name index, 1024 with the module side, 1000 of 1024 module names by a module name index), 3 mismatches\n",
            &mut v,
        );
        let k = |s: &str| v[&format!("kunit.module.module_names.{s}")];
        assert_eq!(k("checked"), 1024);
        assert_eq!(k("answered"), 1024);
        assert_eq!(k("module_answered"), 1000);
        assert_eq!(k("module_total"), 1024);
        assert_eq!(k("mismatches"), 3);
    }

    #[test]
    fn nproc_bench_lines() {
        let mut v = Values::new();
        parse_nproc_bench(
            "wchan: processes tgid,wchan: 1025 tasks x 20 passes: 169 ns/task median, 161 ns/task best pass, 67 bytes/task, 341 tasks/chunk\n\
             wchan, kallsyms_fast off: processes tgid,wchan: 1025 tasks x 20 passes: 1059 ns/task median, 781 ns/task best pass, 67 bytes/task, 341 tasks/chunk\n\
             bench: PASS (numbers above, never compared)\n",
            &mut v,
        );
        assert_eq!(v["bench.wchan.tasks"], 1025);
        assert_eq!(v["bench.wchan.passes"], 20);
        assert_eq!(v["bench.wchan.median_ns"], 169);
        assert_eq!(v["bench.wchan.best_ns"], 161);
        assert_eq!(v["bench.wchan.bytes_per_task"], 67);
        assert_eq!(v["bench.wchan-kallsyms-fast-off.median_ns"], 1059);
        assert_eq!(v.len(), 10);
    }

    #[test]
    fn rendered_file_is_what_patches_reads() {
        let mut v = Values::new();
        parse_bench(BENCH, &mut v);
        let text = render(&FAST_UML, "2026-12-03", "abc", "6.12.118", &v);
        let j: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(j["kind"], "fast-uml");
        assert_eq!(j["values"]["bench.core-uniform.stock_ns"], 448);
    }
}
