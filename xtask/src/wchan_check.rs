//! Sanity checks on the captured `/proc/PID/wchan` truth.
//!
//! Every non-zero wchan must name a symbol in the captured `/proc/kallsyms`
//! (the kernel prints `lookup_symbol_name()`), and the `ksym_many` kthreads
//! must be seen sleeping inside that module, or the wchan truth would not
//! cover module lookups.

use crate::Result;
use std::collections::HashMap;
use std::fs;
use std::path::Path;

/// The module whose kthreads must show up in wchan.
const SLEEPER_MODULE: &str = "ksym_many";

/// Check `truth/wchan.txt`; returns a one-line summary or an error.
pub fn check(capture: &Path) -> Result<String> {
    check_with(capture, true)
}

/// [`check`], with the module-sleeper requirement optional: UML's
/// `__get_wchan()` scans the stack for the first kernel text address above
/// the scheduler, which for every ksym_many sleeper is a stale core
/// address (`process_timeout` from `schedule_timeout()`'s on-stack timer,
/// `kthread_should_stop`), so on UML no task can be required to show a
/// module wchan.
pub fn check_with(capture: &Path, require_module_sleeper: bool) -> Result<String> {
    let ks = fs::read_to_string(capture.join("proc/kallsyms"))
        .map_err(|e| format!("capture has no proc/kallsyms: {e}"))?;
    let mut owner: HashMap<&str, &str> = HashMap::new();
    for line in ks.lines() {
        let (sym, module) = match line.split_once('\t') {
            Some((s, m)) => (s, m.trim_matches(['[', ']'])),
            None => (line, ""),
        };
        if let Some(name) = sym.split_whitespace().nth(2) {
            owner.entry(name).or_insert(module);
        }
    }
    let wchan = fs::read_to_string(capture.join("truth/wchan.txt"))
        .map_err(|e| format!("capture has no truth/wchan.txt: {e}"))?;
    let (mut tasks, mut sleeping, mut in_sleeper) = (0, 0, 0);
    let mut unknown = Vec::new();
    for line in wchan.lines() {
        tasks += 1;
        let Some(w) = line.split_whitespace().nth(2) else {
            return Err(format!("bad wchan line {line:?}"));
        };
        if w == "0" {
            continue;
        }
        sleeping += 1;
        match owner.get(w) {
            Some(&m) if m == SLEEPER_MODULE => in_sleeper += 1,
            Some(_) => {}
            None => unknown.push(w.to_string()),
        }
    }
    if !unknown.is_empty() {
        return Err(format!(
            "wchan names not in kallsyms: {}",
            unknown.join(" ")
        ));
    }
    if in_sleeper == 0 && require_module_sleeper {
        return Err(format!(
            "no task sleeps in {SLEEPER_MODULE} (wchan truth misses modules)"
        ));
    }
    Ok(format!(
        "wchan: {tasks} tasks, {sleeping} sleeping, {in_sleeper} in {SLEEPER_MODULE}, all names in kallsyms"
    ))
}

/// The address `get_wchan()` would report for a stack: the first return
/// address outside the scheduler and lock text (`in_sched_functions()`).
fn wchan_address(stack: &[u64], excluded: &[(u64, u64)]) -> Option<u64> {
    stack
        .iter()
        .copied()
        .find(|&a| !excluded.iter().any(|&(lo, hi)| a >= lo && a < hi))
}

/// Compares the mirror's wchan text with `/proc/PID/wchan` for every task
/// whose kernel stack was captured (`kallsyms-fast/stacks`). The stacks and
/// the wchan dump are taken a moment apart, so a task that ran in between
/// can differ; those are listed, not fatal. Returns a summary line.
pub fn compare_mirror(capture: &Path, bench: &Path) -> Result<String> {
    let ks = fs::read_to_string(capture.join("proc/kallsyms"))
        .map_err(|e| format!("capture has no proc/kallsyms: {e}"))?;
    let sym = |name: &str| {
        ks.lines().find_map(|l| {
            let mut f = l.split_whitespace();
            let a = f.next()?;
            (f.nth(1)? == name).then(|| u64::from_str_radix(a, 16).ok())?
        })
    };
    let mut excluded = Vec::new();
    for (s, e) in [
        ("__sched_text_start", "__sched_text_end"),
        ("__lock_text_start", "__lock_text_end"),
    ] {
        if let (Some(lo), Some(hi)) = (sym(s), sym(e)) {
            excluded.push((lo, hi));
        }
    }
    let stacks = fs::read_to_string(capture.join("kallsyms-fast/stacks"))
        .map_err(|e| format!("capture has no kallsyms-fast/stacks: {e}"))?;
    let mut want: Vec<(u64, u64)> = Vec::new(); // (tid, wchan address)
    for line in stacks.lines() {
        let mut f = line.split_whitespace();
        let Some(tid) = f.next().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let stack: Vec<u64> = f.filter_map(|a| u64::from_str_radix(a, 16).ok()).collect();
        if let Some(a) = wchan_address(&stack, &excluded) {
            want.push((tid, a));
        }
    }
    let truth_text = fs::read_to_string(capture.join("truth/wchan.txt"))
        .map_err(|e| format!("capture has no truth/wchan.txt: {e}"))?;
    let truth: HashMap<u64, &str> = truth_text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.get(1)?.parse().ok()?, *f.get(2)?))
        })
        .collect();
    let input: String = want.iter().map(|(_, a)| format!("{a:x}\n")).collect();
    let mut child = std::process::Command::new(bench)
        .args(["resolve", "--wchan", "--root"])
        .arg(capture)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bench.display()))?;
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        stdin
            .write_all(input.as_bytes())
            .map_err(|e| e.to_string())?;
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "kallsyms-bench resolve --wchan exited with {}",
            out.status
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let got: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, w)| w))
        .collect();
    if got.len() != want.len() {
        return Err(format!(
            "mirror printed {} wchan lines for {} tasks",
            got.len(),
            want.len()
        ));
    }
    let (mut same, mut differ) = (0usize, Vec::new());
    for ((tid, a), g) in want.iter().zip(got) {
        match truth.get(tid) {
            Some(&t) if t == g => same += 1,
            Some(&t) => differ.push(format!("tid {tid} at {a:x}: kernel {t:?} mirror {g:?}")),
            None => {}
        }
    }
    if same == 0 {
        return Err(format!(
            "no task's wchan matched the mirror: {}",
            differ.join("; ")
        ));
    }
    Ok(format!(
        "wchan vs mirror: {same} tasks identical, {} differ (ran between the two dumps?){}{}",
        differ.len(),
        if differ.is_empty() { "" } else { ": " },
        differ.join("; ")
    ))
}
