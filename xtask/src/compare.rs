//! Run the userspace mirror (`kallsyms-bench resolve`) over the captured
//! addresses and diff it against the kernel's `sprint_symbol()` output.

use crate::{env, run, Result};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Outcome of one comparison.
pub enum Outcome {
    /// The resolver could not be built or does not implement `resolve`.
    Unavailable(String),
    /// Counts from a full comparison.
    Compared(Counts),
}

/// Mismatch counts.
#[derive(Default)]
pub struct Counts {
    /// Addresses compared.
    pub compared: usize,
    /// Of those, addresses the kernel answered from a module or that lie in
    /// a module region.
    pub module: usize,
    /// Of those, addresses in a module text region.
    pub module_text: usize,
    /// Mismatches among the module text addresses.
    pub text_mismatch: usize,
    /// Mismatches attributed to vmlinux.
    pub vm_mismatch: usize,
    /// Mismatches attributed to modules.
    pub mod_mismatch: usize,
    /// Addresses the mirror printed no line for.
    pub missing: usize,
}

/// Exit code when the kernel side ran but the mirror could not be compared.
pub const EXIT_MIRROR_UNAVAILABLE: u8 = 3;

/// Map a comparison outcome to the exit code (and say why).
pub fn judge(label: &str, outcome: Outcome, capture: &Path) -> u8 {
    match outcome {
        Outcome::Unavailable(why) => {
            eprintln!(
                "{label}: MIRROR NOT TESTED: {why}\n  the kernel truth is in {} (exit code {EXIT_MIRROR_UNAVAILABLE})",
                capture.display()
            );
            EXIT_MIRROR_UNAVAILABLE
        }
        Outcome::Compared(c) => {
            let fail = c.vm_mismatch > 0 || c.missing > 0 || c.mod_mismatch > 0;
            let rate = |bad: usize, all: usize| {
                if all == 0 {
                    "n/a".to_string()
                } else {
                    format!("{:.3}%", (all - bad) as f64 * 100.0 / all as f64)
                }
            };
            eprintln!(
                "{label}: {}: {} compared, {} vmlinux and {} module mismatches, {} missing; \
                 module answers exact {} (text {})",
                if fail { "FAIL" } else { "PASS" },
                c.compared,
                c.vm_mismatch,
                c.mod_mismatch,
                c.missing,
                rate(c.mod_mismatch, c.module),
                rate(c.text_mismatch, c.module_text)
            );
            u8::from(fail)
        }
    }
}

fn build_bench() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("KFAST_MIRROR") {
        return Ok(PathBuf::from(p));
    }
    let mut cargo = Command::new(env::cargo());
    cargo.current_dir(env::repo_root()).args([
        "build",
        "--release",
        "--package",
        "userspace-bench",
        "--bin",
        "kallsyms-bench",
    ]);
    run::status(&mut cargo)?;
    Ok(env::repo_root().join("target/release/kallsyms-bench"))
}

fn parse_lines(text: &str) -> Vec<(u64, &str)> {
    text.lines()
        .filter_map(|l| {
            let (a, rest) = l.split_once(' ')?;
            Some((
                u64::from_str_radix(a.trim_start_matches("0x"), 16).ok()?,
                rest,
            ))
        })
        .collect()
}

/// `(start, end, is text)` of every region in a module layout file.
fn module_regions(layout: &str) -> Vec<(u64, u64, bool)> {
    layout
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let t: u32 = f.get(1)?.parse().ok()?;
            let b = u64::from_str_radix(f.get(2)?, 16).ok()?;
            let s = u64::from_str_radix(f.get(3)?, 16).ok()?;
            (s > 0).then_some((b, b.saturating_add(s), t == 0 || t == 4))
        })
        .collect()
}

/// The exact module layout the guest recorded: `truth/module_layout`, or
/// `kallsyms-fast/module_layout` in captures made before it moved.
fn truth_layout(capture: &Path) -> String {
    ["truth/module_layout", "kallsyms-fast/module_layout"]
        .iter()
        .find_map(|f| fs::read_to_string(capture.join(f)).ok())
        .unwrap_or_default()
}

fn percent(ok: usize, all: usize) -> String {
    if all == 0 {
        return "n/a".into();
    }
    format!("{:.3}%", ok as f64 * 100.0 / all as f64)
}

/// Compare the mirror against the truth in `capture`, for both forms the
/// kernel prints: `sprint_symbol()` (`truth/sprint_symbol.txt`, fatal if
/// missing) and `%ps` (`truth/ps.txt`, when the capture has it). The report
/// goes to `report`, every mismatch to `mismatches.txt` beside it.
pub fn compare(capture: &Path, report: &Path) -> Result<Outcome> {
    compare_with(capture, report, true)
}

/// [`compare`]; `stack_wchan` says whether the wchan each task reported can
/// be derived from its captured stack trace (the first frame outside the
/// scheduler, as x86_64's unwinding `__get_wchan()` does). UML's
/// `__get_wchan()` instead takes the first kernel text address on the raw
/// stack above a scheduler address, stale words included, which a stack
/// trace does not show; there the wchan names are only checked to be
/// kallsyms names (`wchan_check::check_with`).
pub fn compare_with(capture: &Path, report: &Path, stack_wchan: bool) -> Result<Outcome> {
    let mut total = Counts::default();
    let mut rep = String::new();
    let mut lines = String::new();
    let forms: [(&str, &[&str]); 2] = [("sprint_symbol", &[]), ("ps", &["--no-offset"])];
    for (form, args) in forms {
        let file = capture.join(format!("truth/{form}.txt"));
        if form != "sprint_symbol" && !file.exists() {
            continue;
        }
        match compare_one(capture, form, args)? {
            OneOutcome::Unavailable(why) => return Ok(Outcome::Unavailable(why)),
            OneOutcome::Compared(c) => {
                total.compared += c.0.compared;
                total.module += c.0.module;
                total.module_text += c.0.module_text;
                total.text_mismatch += c.0.text_mismatch;
                total.vm_mismatch += c.0.vm_mismatch;
                total.mod_mismatch += c.0.mod_mismatch;
                total.missing += c.0.missing;
                let _ = writeln!(rep, "[{form}]\n{}", c.1);
                lines.push_str(&c.2);
            }
        }
    }
    if !stack_wchan {
        let _ = writeln!(
            rep,
            "[wchan]\nnot derivable from stack traces on this kernel"
        );
    } else if capture.join("kallsyms-fast/stacks").exists() {
        let bench = build_bench()?;
        match crate::wchan_check::compare_mirror(capture, &bench) {
            Ok(line) => {
                let _ = writeln!(rep, "[wchan]\n{line}");
            }
            Err(e) => return Err(format!("wchan: {e}")),
        }
    }
    fs::write(report, &rep).map_err(|e| format!("{}: {e}", report.display()))?;
    let all = report.with_file_name("mismatches.txt");
    fs::write(&all, &lines).map_err(|e| format!("{}: {e}", all.display()))?;
    print!("{rep}");
    Ok(Outcome::Compared(total))
}

/// What one form's comparison found: counts, report text, mismatch lines.
struct FormResult(Counts, String, String);

enum OneOutcome {
    Unavailable(String),
    Compared(FormResult),
}

/// One form: the mirror run with `args` against `truth/<form>.txt`.
fn compare_one(capture: &Path, form: &str, args: &[&str]) -> Result<OneOutcome> {
    let truth_name = format!("truth/{form}.txt");
    let truth_text = fs::read_to_string(capture.join(&truth_name))
        .map_err(|e| format!("capture has no {truth_name}: {e}"))?;
    let truth = parse_lines(&truth_text);
    let bench = match build_bench() {
        Ok(b) => b,
        Err(e) => {
            return Ok(OneOutcome::Unavailable(format!(
                "kallsyms-bench does not build: {e}"
            )))
        }
    };
    let mut input = String::with_capacity(truth.len() * 17);
    for (a, _) in &truth {
        let _ = writeln!(input, "{a:x}");
    }
    let addr_file = capture.join(format!("truth/addresses-{form}.txt"));
    fs::write(&addr_file, &input).map_err(|e| format!("{}: {e}", addr_file.display()))?;
    eprintln!(
        "compare: {} resolve --root {} < {}",
        bench.display(),
        capture.display(),
        addr_file.display()
    );
    let t = std::time::Instant::now();
    let mut child = Command::new(&bench)
        .arg("resolve")
        .args(args)
        .arg("--root")
        .arg(capture)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bench.display()))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let feeder = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = feeder.join();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mirror: HashMap<u64, &str> = parse_lines(&stdout).into_iter().collect();
    if !out.status.success() || mirror.is_empty() {
        return Ok(OneOutcome::Unavailable(format!(
            "`kallsyms-bench resolve --root DIR` exited with {} and printed {} result lines for {} addresses{}",
            out.status,
            mirror.len(),
            truth.len(),
            if stderr.trim().is_empty() {
                String::new()
            } else {
                format!("; stderr: {}", stderr.lines().take(5).collect::<Vec<_>>().join(" | "))
            }
        )));
    }
    eprintln!(
        "compare: mirror resolved {} addresses in {:.2?}",
        mirror.len(),
        t.elapsed()
    );
    let regions = module_regions(&truth_layout(capture));
    let cats_text =
        fs::read_to_string(capture.join("kallsyms-fast/addresses.txt")).unwrap_or_default();
    let cats: HashMap<u64, &str> = parse_lines(&cats_text).into_iter().collect();
    let mut c = Counts::default();
    let mut by_cat: BTreeMap<&str, usize> = BTreeMap::new();
    let mut lines = String::new();
    for &(a, want) in &truth {
        c.compared += 1;
        let got = mirror.get(&a).copied();
        let region = regions.iter().find(|&&(lo, hi, _)| (lo..hi).contains(&a));
        let in_mod =
            want.ends_with(']') || got.is_some_and(|g| g.ends_with(']')) || region.is_some();
        let in_text = region.is_some_and(|r| r.2);
        c.module += usize::from(in_mod);
        c.module_text += usize::from(in_text);
        if got == Some(want) {
            continue;
        }
        c.text_mismatch += usize::from(in_text);
        match (got, in_mod) {
            (None, _) => c.missing += 1,
            (_, true) => c.mod_mismatch += 1,
            (_, false) => c.vm_mismatch += 1,
        }
        *by_cat
            .entry(cats.get(&a).copied().unwrap_or("?"))
            .or_default() += 1;
        let _ = writeln!(
            lines,
            "{a:x} [{}] {}: kernel {want:?} mirror {:?}",
            cats.get(&a).copied().unwrap_or("?"),
            if in_mod { "module" } else { "vmlinux" },
            got.unwrap_or("<no line>")
        );
    }
    let mut rep = format!(
        "addresses compared: {}\nmismatches: vmlinux {}, modules {}, missing lines {}\n\
         module answers exact: {} of {} ({}); in module text: {} of {} ({})\n",
        c.compared,
        c.vm_mismatch,
        c.mod_mismatch,
        c.missing,
        c.module - c.mod_mismatch,
        c.module,
        percent(c.module - c.mod_mismatch, c.module),
        c.module_text - c.text_mismatch,
        c.module_text,
        percent(c.module_text - c.text_mismatch, c.module_text),
    );
    for (cat, n) in &by_cat {
        let _ = writeln!(rep, "  category {cat}: {n}");
    }
    let first: Vec<&str> = lines.lines().take(25).collect();
    if !first.is_empty() {
        let _ = writeln!(rep, "first mismatches:\n  {}", first.join("\n  "));
    }
    Ok(OneOutcome::Compared(FormResult(c, rep, lines)))
}
