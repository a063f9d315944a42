//! `cargo xtask fast-test`: the `CONFIG_KALLSYMS_FAST` series on a real
//! kernel.
//!
//! 1. The committed series (`patches/kallsyms-fast/`) is applied to a copy
//!    of the pristine tree (`$KFAST_CACHE/fast-src`), as a user would apply
//!    it, and built for x86_64 with the test kernel's fragment plus
//!    `xtask/configs/fast-kernel.config` into `$KFAST_CACHE/fast-build`.
//! 2. The patched kernel boots in QEMU (2 CPUs, lockdep) with
//!    `guest/fast-init.sh`: the KUnit suite runs at boot and again
//!    after modules are loaded (every core and module symbol, fast against
//!    stock), the in-kernel benchmark runs (TCG numbers, labelled so), and
//!    20 load/unload cycles of a 60,000-symbol module run under wchan and
//!    `%pS` (`/proc/PID/stack`) load from both CPUs. Any failed KUnit
//!    case, splat or missing step fails the run.
//! 3. The mirror-vs-kernel guest suite (`guest-test`) runs unchanged
//!    against the patched kernel: 0 mismatches, as on the stock kernel.
//!
//! Every step works on the patched kernel's own paths (`Flavor::Patched`),
//! so nothing of the stock kernel's is rebuilt or overwritten.

use crate::env::Flavor;
use crate::{
    console, guest_test, initramfs, kernel, ktap, kunit_counts, modules, qemu, results, Result,
};
use std::fs;
use std::time::{Duration, Instant};

/// busybox applets `guest/fast-init.sh` uses.
const APPLETS: &[&str] = &[
    "sh", "mount", "insmod", "rmmod", "cat", "echo", "sleep", "stty", "dmesg", "sed", "grep",
    "kill", "sync", "seq", "true", "mkdir",
];

/// The nproc suites the guest runs (guest/fast-init.sh): each
/// must print its PASS line.
const NPROC_SUITES: &[&str] = &[
    "parity-uid1000-hidepid0",
    "parity-uid1000-hidepid1",
    "parity-uid1000-hidepid2",
    "parity-uid1000-hidepid4",
    "parity-uid1000-private",
    "access",
    "parity-uid1000-yama1",
    "parity-uid1000-yama2",
    "parity-uid1000-yama3",
];

/// Command-line options of `fast-test`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Hard timeout for the patched kernel's own guest run, in seconds.
    #[arg(long, value_name = "SECS", default_value = "1800", value_parser = crate::secs)]
    pub timeout: Duration,
    /// Skip the mirror-vs-kernel suite on the patched kernel.
    #[arg(long)]
    pub no_mirror: bool,
}

impl Default for Options {
    /// What `cargo xtask test` runs.
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(1800),
            no_mirror: false,
        }
    }
}

/// The command, as its results files name it.
pub const COMMAND: &str = "cargo xtask fast-test";

/// The kernel every step here builds and boots.
const FLAVOR: Flavor = Flavor::Patched;

/// The patched kernel's own guest run: KUnit, bench, module cycles.
fn guest_run(timeout: Duration) -> Result<u8> {
    let kos = modules::build_these(FLAVOR, &["ksym_many"])?;
    let agent = initramfs::build_agent()?;
    let helper = initramfs::build_static("kfast-guest-agents", "kfast-shim-guest")?;
    let nproc = initramfs::build_static("nproc-guest", "nproc-guest")?;
    let initrd = initramfs::pack(&initramfs::Spec {
        init: "guest/fast-init.sh",
        applets: APPLETS,
        bins: &[
            ("kfast-guest", &agent),
            ("kfast-shim-guest", &helper),
            ("nproc-guest", &nproc),
        ],
        modules: &kos,
        out: &FLAVOR.guest_dir().join("fast-initramfs.cpio"),
    })?;
    let dir = FLAVOR.run_dir().with_file_name("fast-guest");
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("cannot clean {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let boot = qemu::boot(&kernel::bzimage(FLAVOR), &initrd, &dir, timeout, "")?;
    let console = fs::read_to_string(&boot.console).unwrap_or_default();
    let result = fs::read_to_string(&boot.result).unwrap_or_default();
    let mut failures = Vec::new();
    if boot.timed_out {
        failures.push(format!("timed out after {}s", timeout.as_secs()));
    }
    failures.extend(console::faults("console", &console));
    failures.extend(check_result(&result));
    print_report(&result);
    if failures.is_empty() {
        // TCG numbers, recorded as such (kind `qemu-tcg`).
        results::record_run_bench("qemu-tcg", COMMAND, &result);
        eprintln!(
            "fast-test: patched kernel guest PASS in {:.1?}",
            boot.elapsed
        );
        Ok(0)
    } else {
        eprintln!(
            "fast-test: patched kernel guest FAIL:\n  {}\n  console: {}\n  results: {}",
            failures.join("\n  "),
            boot.console.display(),
            boot.result.display()
        );
        Ok(1)
    }
}

/// The lines of the result channel worth showing: KUnit totals, the
/// benchmark tables, the cycle summary.
fn print_report(result: &str) {
    for l in result.lines() {
        if l.starts_with("# kallsyms_fast_test")
            || l.contains("symbols:")
            || l.starts_with("bench")
            || l.starts_with("cycles")
            || l.starts_with("# ")
            || l.starts_with("core")
            || l.starts_with("module")
            || l.starts_with("sprint")
            || l.starts_with("case")
            || l.contains(": PASS ")
            || l.contains(": FAIL")
        {
            eprintln!("fast-test: {l}");
        }
    }
}

/// What the result channel must show: the verdict, both KUnit runs
/// passing with module symbols compared the second time, the bench
/// table, all 20 cycles.
fn check_result(result: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let has = |s: &str| result.lines().any(|l| l.contains(s));
    // nproc's access suites (guest/fast-init.sh, step 5).
    for suite in NPROC_SUITES {
        if !result
            .lines()
            .any(|l| l.starts_with(&format!("{suite}: PASS ")))
        {
            bad.push(format!("nproc suite {suite} did not pass"));
        }
    }
    if !result
        .lines()
        .any(|l| l.starts_with(qemu::VERDICT) && l.ends_with("ok"))
    {
        bad.push("no `ok` verdict on the result channel".to_string());
    }
    let kunit_ok = ktap::verdicts(result, "kallsyms_fast")
        .filter(|s| *s == ktap::Status::Success)
        .count();
    if kunit_ok < 3 {
        bad.push(format!(
            "KUnit suite passed {kunit_ok} times, want 3 (boot, module loaded, after the cycles)"
        ));
    }
    for case in ktap::failures(result) {
        bad.push(format!("KUnit: {case} failed"));
    }
    let module_lines: Vec<&str> = result
        .lines()
        .filter(|l| l.contains("module symbols:"))
        .collect();
    let compared = module_lines.iter().any(|l| {
        l.split("module symbols: ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n >= 2048)
    });
    if !compared {
        bad.push("KUnit did not compare the module's symbols (>= 2048 addresses)".to_string());
    }
    // The second KUnit run (module loaded) and the third (after the
    // cycles) both print module counts: every one must be whole.
    bad.extend(kunit_counts::module_index_problems("fast-test", result));
    if !has("sprint-module") {
        bad.push("no benchmark table".to_string());
    }
    if !has("cycles: 20 of 20") {
        bad.push("the 20 load/unload cycles did not all run".to_string());
    }
    bad
}

/// `cargo xtask fast-test`.
pub fn run(opts: &Options) -> Result<u8> {
    let t = Instant::now();
    kernel::run(FLAVOR)?;
    eprintln!("fast-test: patched kernel built in {:.1?}", t.elapsed());
    let own = guest_run(opts.timeout)?;
    if own != 0 {
        return Ok(own);
    }
    if opts.no_mirror {
        return Ok(0);
    }
    let code = guest_test::run(
        FLAVOR,
        &guest_test::Options {
            timeout: Duration::from_secs(1500),
            extra_cmdline: String::new(),
        },
    )?;
    eprintln!(
        "fast-test: mirror vs patched kernel exit {code}; total {:.1?}",
        t.elapsed()
    );
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_need_every_step() {
        let good = "ok 1 kallsyms_fast\n    # kallsyms_fast_test_modules: module symbols: \
                    12000 addresses (0 answered by the core index, 12000 of 12000 module addresses \
                    by a module index), 0 mismatches\n# module names: 9 names (9 of 9 module names \
                    by a module name index)\nok 1 kallsyms_fast\nsprint-module 4096 1 1\n\
                    cycles: 20 of 20\nok 1 kallsyms_fast\nKFAST-VERDICT ok\n";
        let nproc: String = NPROC_SUITES
            .iter()
            .map(|s| format!("{s}: PASS x\n"))
            .collect();
        let good = &format!("{good}{nproc}");
        assert!(check_result(good).is_empty(), "{:?}", check_result(good));
        let bad = good.replace("access: PASS", "access: FAIL");
        assert_eq!(check_result(&bad), ["nproc suite access did not pass"]);
        let bad = good.replace("cycles: 20 of 20", "cycles: 7 of 20");
        assert_eq!(check_result(&bad).len(), 1);
        let bad = good.replace("12000 addresses", "12 addresses");
        assert_eq!(check_result(&bad).len(), 1);
        let bad = good.replace("12000 of 12000", "0 of 12000");
        assert_eq!(check_result(&bad).len(), 1);
        let bad = format!("{good}    not ok 2 kallsyms_fast_test_modules\n");
        assert_eq!(check_result(&bad).len(), 1);
    }
}
