//! `cargo xtask nproc-uml-test`: the guest suites of the `nproc`
//! family, on the patched User-Mode Linux kernel `fast-uml-test` builds
//! (`$KFAST_CACHE/fast-uml-build`, `CONFIG_NPROC=y`; the same tree,
//! configuration and build: nothing is rebuilt when that step ran).
//!
//! One boot runs `guest/nproc-uml-job.sh`, which calls the static
//! `nproc-guest` binary (guest/nproc-guest) for each suite:
//!
//! - field parity, processes and threads scope, as root and as uid 1000:
//!   every field the kernel and `nproc-proto` declare equals /proc (stat,
//!   statm, status, wchan), re-read until stable, with the documented
//!   tolerances (a clock tick of utime/stime, the wchan or a kworker's
//!   workqueue name of a task that ran);
//!   a field without a /proc reader fails;
//! - a reader in a new pid namespace sees only that namespace's pids
//!   (xtask/configs/fast-kernel.config asks for `CONFIG_PID_NS`: the guest's
//!   NOT CHECKED, what a kernel without it gives, fails the run);
//! - the access model (fs/proc/nproc/nproc_access.c): as uid 1000,
//!   against a procfs mounted with each `hidepid=` (0, 1, 2, 4), with
//!   `subset=pid` and privately over /proc (systemd's `ProtectProc=`), the
//!   dump lists exactly the tasks the mount lists, with values exactly
//!   where its files are readable, field for field; no or a foreign procfs
//!   descriptor, Landlock, `subset=pid`'s `GET_GLOBAL` and mixed opener
//!   and sender credentials (`access`); one reader against inherited,
//!   passed and setuid-exec'd sockets and a real setuid-root program, the
//!   LSM check per task under Landlock, a remount and a sysctl change in
//!   the middle of a dump, `kernel.nproc_restrict` 0/1/2 and `gid=`
//!   (`reader`); each Yama `ptrace_scope` (last: 3 cannot be undone);
//! - dumps during a fork/exit storm: no duplicate, no lost survivor;
//! - the fixed malformed requests, then random ones from a printed seed:
//!   each refused, no slab growth beyond the stated tolerance.
//! - the in-kernel benchmark (`CONFIG_NPROC_BENCH`,
//!   `/sys/kernel/debug/nproc/bench`) with 1,000 sleeping processes: the
//!   dump's kernel time per task at native speed for the base fields,
//!   `nps ax`'s, `nps -eo ...,wchan`'s and all fields; printed, never
//!   compared (a refused request fails).
//!
//! The run fails on any suite's failure, on kernel trouble on the console
//! (oops, BUG, WARNING, lockdep) and on a missing result; numbers are
//! printed, never compared with times. A passing run writes the bench's
//! to `bench/results/YYYY-MM-DD-nproc-uml.json` (results.rs).

use crate::uml;
use crate::{console, env, fast_uml, initramfs, linux_source, results, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The command, as results files name it.
pub const COMMAND: &str = "cargo xtask nproc-uml-test";

/// The guest's job script.
const JOB: &str = "guest/nproc-uml-job.sh";

/// The suites' result files in `/out`, in the order the job runs them.
pub const SUITES: &[&str] = &[
    "parity-processes",
    "parity-threads",
    "parity-uid1000",
    "parity-threads-uid1000",
    "pidns",
    "parity-uid1000-hidepid0",
    "parity-threads-uid1000-hidepid0",
    "parity-uid1000-hidepid1",
    "parity-threads-uid1000-hidepid1",
    "parity-uid1000-hidepid2",
    "parity-threads-uid1000-hidepid2",
    "parity-uid1000-hidepid4",
    "parity-threads-uid1000-hidepid4",
    "parity-uid1000-subset",
    "parity-uid1000-private",
    "access",
    "reader",
    "badreq",
    "storm",
    "fuzz",
    "parity-uid1000-yama1",
    "parity-uid1000-yama2",
    "parity-uid1000-yama3",
    "bench",
];

/// Command-line options of `nproc-uml-test`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Hard timeout for the UML guest, in seconds.
    #[arg(long, value_name = "SECS", default_value = "300", value_parser = crate::secs)]
    pub timeout: Duration,
    /// Random messages the fuzzing client sends.
    #[arg(long, default_value_t = 100_000)]
    pub fuzz_count: u64,
    /// The fuzzing client's seed (default: from the clock; printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run on the kernel `fast-uml-test --base X.Y` builds (that base's
    /// series; built when missing). Its numbers are printed, not recorded.
    #[arg(long, value_name = "X.Y")]
    pub base: Option<String>,
}

impl Default for Options {
    /// What `cargo xtask test` runs.
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(300),
            fuzz_count: 100_000,
            seed: None,
            base: None,
        }
    }
}

/// `cargo xtask nproc-uml-test`: build (incremental), boot, check; returns
/// the exit code.
pub fn run(o: &Options) -> Result<u8> {
    let t = Instant::now();
    let (k, base) = match o
        .base
        .as_deref()
        .map(fast_uml::base_kernel)
        .transpose()?
        .flatten()
    {
        Some(k) => (k, o.base.clone()),
        None => {
            crate::tree::prepare_tree()?;
            (fast_uml::kernel(), None)
        }
    };
    let suffix = base.as_ref().map_or(String::new(), |b| format!("-{b}"));
    k.build()?;
    let tb = t.elapsed();
    let guest = initramfs::build_static("nproc-guest", "nproc-guest")?;
    let seed = o.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    eprintln!("nproc-uml-test: fuzz seed {seed} (rerun with --seed {seed})");
    let script = fs::read_to_string(env::repo_root().join(JOB))
        .map_err(|e| format!("cannot read {JOB}: {e}"))?;
    let job = format!("SEED={seed}\nFUZZ_COUNT={}\n{script}", o.fuzz_count);
    let dir: PathBuf = env::work_dir()
        .join("uml-runs")
        .join(format!("nproc-latest{suffix}"));
    let ta = t.elapsed();
    let (mut fails, out) = boot_and_check(&k, &guest, &job, "", SUITES, o.timeout, &dir)?;
    eprintln!(
        "nproc-uml-test: kernel build step {tb:.1?}, artefacts {:.1?}",
        ta - tb
    );
    // The 6.12 kernel has Smack built in (xtask/configs/nproc-lsm.config),
    // not in CONFIG_LSM: a second boot runs the Smack suite under it, so
    // that the first boot's benchmark pays for no hook Smack adds.
    if base.is_none() {
        let job = format!("ONLY=smack\n{job}");
        let dir = dir.with_file_name("nproc-latest-smack");
        let (f, _) = boot_and_check(
            &k,
            &guest,
            &job,
            "lsm=landlock,yama,smack",
            &["smack"],
            o.timeout,
            &dir,
        )?;
        fails.extend(f);
    }
    eprintln!("nproc-uml-test: results in {}", out.display());
    if let (true, Some(b)) = (fails.is_empty(), &base) {
        eprintln!("nproc-uml-test: base {b}: numbers not recorded in bench/results/");
        eprintln!("nproc-uml-test: PASS (base {b}) in {:.1?}", t.elapsed());
        return Ok(0);
    }
    if fails.is_empty() {
        // Only a passing run's numbers go where the series reads them.
        let mut v = results::values::Values::new();
        results::values::parse_nproc_bench(
            &fs::read_to_string(out.join("bench")).unwrap_or_default(),
            &mut v,
        );
        let body = serde_json::json!({
            "kernel": linux_source::makefile_version(&env::patched_src())?,
            "values": v,
        });
        let file = results::write("nproc-uml", COMMAND, results::Origin::Run, body)?;
        eprintln!(
            "nproc-uml-test: numbers in {} (`cargo xtask patches` puts them in the series)",
            file.display()
        );
        eprintln!("nproc-uml-test: PASS in {:.1?}", t.elapsed());
        Ok(0)
    } else {
        eprintln!(
            "nproc-uml-test: FAIL:\n  {}\n  console: {}",
            fails.join("\n  "),
            dir.join("console.log").display()
        );
        Ok(1)
    }
}

/// Prints each suite's summary; returns the failures and the suites that
/// could not run on this kernel.
/// Boots `k` on a root with the nproc guest and `job`, with the kernel
/// parameters `extra`, into `dir`; returns the faults of the boot and of
/// `suites` (each must pass), and the guest's output directory.
fn boot_and_check(
    k: &uml::Uml,
    guest: &Path,
    job: &str,
    extra: &str,
    suites: &[&str],
    timeout: Duration,
    dir: &Path,
) -> Result<(Vec<String>, PathBuf)> {
    let root = uml::make_root(&uml::RootSpec {
        bins: &[("nproc-guest", guest)],
        modules: &[],
        load: false,
        job,
    })?;
    let boot = uml::boot(&k.image(), root.path(), extra, timeout, dir)?;
    eprintln!(
        "nproc-uml-test: guest ran {:.1?} (exit {:?}){}",
        boot.elapsed,
        boot.exit_code,
        if extra.is_empty() {
            String::new()
        } else {
            format!(" with {extra}")
        }
    );
    let out = boot.dir.join("out");
    let mut fails = boot.faults(timeout);
    // The kernel log as the guest saw it at the end, in case a message
    // did not reach the console (its log level).
    let dmesg = fs::read_to_string(out.join("dmesg")).unwrap_or_default();
    if dmesg.is_empty() {
        fails.push("the guest saved no kernel log (out/dmesg)".into());
    }
    fails.extend(console::faults("dmesg", &dmesg));
    match boot.verdict.as_deref() {
        Some("ok") => {}
        Some(v) => fails.push(format!("guest verdict: {v}")),
        None => fails.push("the guest wrote no verdict".into()),
    }
    let (bad, not_checked) = check_suites(&out, suites);
    fails.extend(bad);
    // xtask/configs/fast-kernel.config asks for pid namespaces: a suite the
    // kernel could not run is then a failure, not a note.
    fails.extend(
        not_checked
            .iter()
            .map(|n| format!("NOT CHECKED although the config asks for it: {n}")),
    );
    Ok((fails, out))
}

fn check_suites(out: &Path, suites: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut fails = Vec::new();
    let mut not_checked = Vec::new();
    for s in suites {
        let text = fs::read_to_string(out.join(s)).unwrap_or_default();
        let (f, n) = suite_result(s, &text);
        for l in text.lines().filter(|l| {
            l.contains(": PASS ")
                || l.contains(": FAIL")
                || l.starts_with("fuzz: ")
                || l.contains(" ns/task ")
        }) {
            eprintln!("nproc-uml-test: {l}");
        }
        fails.extend(f);
        not_checked.extend(n);
    }
    (fails, not_checked)
}

/// One suite's verdict from its output: a `PASS` line and no `FAIL` or
/// `DIFF` line, or (pid namespaces only) a `NOT CHECKED` line.
fn suite_result(suite: &str, text: &str) -> (Vec<String>, Vec<String>) {
    let prefix = format!("{suite}: ");
    let mut fails: Vec<String> = text
        .lines()
        .filter(|l| l.contains(": FAIL") || l.contains(": DIFF"))
        .map(|l| l.to_string())
        .collect();
    let passed = text
        .lines()
        .any(|l| l.starts_with(&format!("{prefix}PASS ")));
    let not_checked: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{prefix}NOT CHECKED ")))
        .map(|l| l.to_string())
        .collect();
    if !passed && not_checked.is_empty() && fails.is_empty() {
        fails.push(format!("{suite}: no result"));
    }
    (fails, not_checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_needs_a_pass_and_no_failure() {
        let (f, n) = suite_result("storm", "storm: PASS 40 dumps\n");
        assert!(f.is_empty() && n.is_empty());
        let (f, _) = suite_result("storm", "");
        assert_eq!(f, ["storm: no result"]);
        let (f, _) = suite_result(
            "parity-threads",
            "parity-threads: DIFF x\nparity-threads: FAIL 1\n",
        );
        assert_eq!(f.len(), 2);
        // Another suite's PASS does not count.
        let (f, _) = suite_result("badreq", "storm: PASS\n");
        assert_eq!(f.len(), 1);
        let (f, n) = suite_result("pidns", "pidns: NOT CHECKED unshare: EINVAL\n");
        assert!(f.is_empty());
        assert_eq!(n.len(), 1);
    }
}
