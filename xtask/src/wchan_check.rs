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
    if in_sleeper == 0 {
        return Err(format!(
            "no task sleeps in {SLEEPER_MODULE} (wchan truth misses modules)"
        ));
    }
    Ok(format!(
        "wchan: {tasks} tasks, {sleeping} sleeping, {in_sleeper} in {SLEEPER_MODULE}, all names in kallsyms"
    ))
}
