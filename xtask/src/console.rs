//! The one list of kernel reports a run must not have, read the same way
//! from every console and kernel log the harness collects (QEMU and UML
//! consoles, a guest's saved `dmesg`).
//!
//! A line fails the run when it holds any of [`FAULTS`]: the prefixes the
//! kernel's own report functions print (`__warn()`, `oops_begin()`,
//! `panic()`, lockdep's and the scheduler's `BUG:`/`INFO:` headers) and
//! the headings lockdep uses for its reports.

/// Markers of a kernel report: oopses, warnings, panics, call traces and
/// lockdep's (`WARNING: possible recursive locking detected`, `BUG:
/// sleeping function called from invalid context`, `INFO: lockdep is
/// turned off`, ...).
pub const FAULTS: &[&str] = &[
    "Oops",
    "WARNING:",
    "BUG:",
    "INFO:",
    "Kernel panic",
    "Call Trace",
    "general protection",
    "possible recursive locking",
    "possible circular locking",
    "inconsistent lock state",
];

/// The lines of `log` with any of [`FAULTS`] (the first ten), each as
/// `<where> has "<marker>": <line>`; `place` names the log (`console`,
/// `dmesg`).
pub fn faults(place: &str, log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|line| {
            let bad = FAULTS.iter().find(|b| line.contains(*b))?;
            Some(format!("{place} has \"{bad}\": {}", line.trim()))
        })
        .take(10)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::faults;

    #[test]
    fn reports_fail_and_quiet_logs_pass() {
        for report in [
            "WARNING: possible recursive locking detected",
            "WARNING: possible circular locking dependency detected",
            "BUG: sleeping function called from invalid context at x.c:1",
            "INFO: lockdep is turned off.",
            "WARNING: CPU: 0 PID: 1 at kernel/x.c:1 f+0x1/0x2",
            "Kernel panic - not syncing: Attempted to kill init!",
            "Oops: general protection fault, probably for non-canonical address",
            " <TASK>\nCall Trace:",
        ] {
            let log = format!("kfs-shim: nmi-shim begin\n[ 1.0] {report}\nkfs-shim: end\n");
            assert_eq!(faults("console", &log).len(), 1, "{report}");
        }
        let quiet = "Linux version 6.12.118\nok 1 kallsyms_fast\nRun /init as init process\n";
        assert!(faults("console", quiet).is_empty());
        assert_eq!(
            faults("dmesg", "[ 2.0] BUG: KASAN: x\n"),
            ["dmesg has \"BUG:\": [ 2.0] BUG: KASAN: x"]
        );
    }

    #[test]
    fn at_most_ten_lines() {
        let flood = "WARNING: x\n".repeat(50);
        assert_eq!(faults("console", &flood).len(), 10);
    }
}
