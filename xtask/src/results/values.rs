//! The flat values of a run (dotted keys -> integers), which the series'
//! `{{...}}` numbers read (`patches/numbers.rs`): recorded as `values` in
//! the `uml-native` file `cargo xtask fast-uml-test` writes and in the
//! `nproc-uml` file of `cargo xtask nproc-uml-test`. The keys are listed in
//! `bench/results/README.md`.

use serde_json::Value;
use std::collections::BTreeMap;

/// The values of one run: flat dotted keys -> integers.
pub type Values = BTreeMap<String, u64>;

/// The integer a token starts with (`"82402"`, `"(2.39"` -> no).
fn int(tok: &str) -> Option<u64> {
    tok.trim_start_matches('(').parse().ok()
}

/// The in-kernel benchmark's table, as [`super::kernel_bench`] made it
/// data: `bench.rounds`, `bench.<case>.{addrs,stock_ns,fast_ns,cached_ns,
/// hit_pct}` per row (and the times in hundredths of a nanosecond,
/// `stock_cns`, `fast_cns`, `cached_cns`), and from the `module-sorted:` note (`61486 symbols
/// of 1 module(s) sorted in 15286784 ns (...); 0 answer(s) differ from
/// stock`) `bench.module-sorted.{sorted_symbols,sort_ns,differ}`.
pub fn bench(table: &Value, v: &mut Values) {
    if let Some(n) = table["rounds"].as_u64() {
        v.insert("bench.rounds".into(), n);
    }
    for row in table["rows"].as_array().into_iter().flatten() {
        let Some(case) = row["case"].as_str() else {
            continue;
        };
        for col in ["addrs", "hit_pct"] {
            if let Some(n) = row[col].as_u64() {
                v.insert(format!("bench.{case}.{col}"), n);
            }
        }
        // Times: whole nanoseconds (`_ns`, rounded) and hundredths
        // (`_cns`), which the kernel prints because a cache hit takes a
        // few nanoseconds, and whole ones would move its ratio by a
        // seventh or more.
        for col in ["stock", "fast", "cached"] {
            if let Some(ns) = row[format!("{col}_ns")].as_f64().filter(|n| *n >= 0.0) {
                v.insert(format!("bench.{case}.{col}_ns"), ns.round() as u64);
                v.insert(
                    format!("bench.{case}.{col}_cns"),
                    (ns * 100.0).round() as u64,
                );
            }
        }
    }
    for note in table["notes"].as_array().into_iter().flatten() {
        let Some(r) = note
            .as_str()
            .and_then(|n| n.strip_prefix("module-sorted: "))
        else {
            continue;
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_table() {
        let table = super::super::kernel_bench(
            "\
# 50 rounds; ns per call; ratio = stock / fast (hundredths)
case           addrs     stock      fast    cached     fast-x   cached-x hit%
core-uniform    4096       448        82         0       5.46       0.00    0
core-zipf       4096       444       117        18       3.79      24.66   96
module-sorted   4096    184706        66         0    2798.57       0.00    0
# module-sorted: 61486 symbols of 1 module(s) sorted in 15286784 ns (largest ksym_many: 61486 in 15286784 ns); 0 answer(s) differ from stock
",
        )
        .unwrap();
        let mut v = Values::new();
        bench(&table, &mut v);
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
        assert_eq!(v["bench.core-zipf.cached_cns"], 1800);
    }

    /// The table as the kernel prints it since it gives hundredths of a
    /// nanosecond: `_ns` rounds them, `_cns` keeps them.
    #[test]
    fn bench_table_in_hundredths() {
        let table = super::super::kernel_bench(
            "\
# 50 rounds; ns per call (hundredths); ratio = stock / fast (hundredths)
case           addrs     stock      fast    cached     fast-x   cached-x hit%
core-zipf       4096    352.41     93.07      6.62       3.78      53.23   99
",
        )
        .unwrap();
        let mut v = Values::new();
        bench(&table, &mut v);
        assert_eq!(v["bench.core-zipf.stock_ns"], 352);
        assert_eq!(v["bench.core-zipf.cached_ns"], 7);
        assert_eq!(v["bench.core-zipf.cached_cns"], 662);
        assert_eq!(v["bench.core-zipf.stock_cns"], 35241);
        assert_eq!(v["bench.core-zipf.hit_pct"], 99);
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
}
