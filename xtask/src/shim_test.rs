//! `cargo xtask shim-test`: boot the test kernel with `kmod-shim/` and check
//! that the shim changes no `/proc/PID/wchan`, refuses bad loader input,
//! survives load/unload cycles under a wchan-reading loop, shows an
//! unprivileged reader what stock shows it, and how fast it is (in-kernel and
//! `/proc` read timings, stock and shim, same boot, also over thousands of
//! threads sleeping in core code and in a module).
//!
//! Reuses the harness: `qemu::boot`, the result channel framing, the
//! cache layout; the initramfs is its own (different `/init`, the shim and
//! a static `kallsyms-bench`).

use crate::env::Flavor;
use crate::initramfs::{self, read};
use crate::{channel, compare, console, env, kernel, modules, qemu, run, wchan_check, Result};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const INIT_SCRIPT: &str = "guest/shim-init.sh";
const APPLETS: &[&str] = &[
    "sh", "mount", "insmod", "rmmod", "lsmod", "cat", "echo", "ls", "mkdir", "mkfifo", "sleep",
    "tar", "gzip", "base64", "stty", "dmesg", "sync", "head", "tail", "wc", "grep", "sed", "awk",
    "kill", "printf", "uname", "rm",
];

/// Options of `shim-test`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Hard timeout for the QEMU guest, in seconds. A full run takes 7-11
    /// min on an idle host without lockdep, about 18 with it; TCG slows 2x
    /// when the host is shared.
    #[arg(long, value_name = "SECS", default_value = "2700", value_parser = crate::secs)]
    timeout: Duration,
    /// Load/unload stress cycles.
    #[arg(long, value_name = "N", default_value_t = 20)]
    cycles: u32,
    /// Threads per group (core- and module-sleeping) in the scale phase.
    #[arg(long, value_name = "N", default_value_t = 2500)]
    scale: u32,
}

impl Default for Options {
    /// The defaults above, as `cargo xtask test` runs the suite.
    fn default() -> Self {
        crate::arg_defaults()
    }
}

/// The kernel the shim suite (and `shim-compare`) builds against and
/// boots: the stock test kernel, which the shim patches at run time.
pub(crate) const FLAVOR: Flavor = Flavor::Stock;

/// `make -C kmod-shim`; returns the `.ko`.
pub(crate) fn build_module() -> Result<PathBuf> {
    let out = env::work_dir().join("shim-build");
    let mut make = env::kernel_make();
    make.arg("-C")
        .arg(env::repo_root().join("kmod-shim"))
        .arg(format!("KDIR={}", FLAVOR.kernel_build().display()))
        .arg(format!("OUT={}", out.display()))
        .arg(format!("BINDGEN={}", env::bindgen().display()));
    run::status(&mut make)?;
    Ok(out.join("kallsyms_fast_shim.ko"))
}

/// The shim suite's initramfs: `/init` from kmod-shim, the module, a static
/// `kallsyms-bench` (the loader and `check`, as users run them), the static
/// test helpers `kfast-shim-guest`, and the test modules: ksym_truth's
/// load/unload events during the cycles exercise the notifier; ksym_many's
/// kthreads sleep in a module for the scale bench; ksym_ctx prints %pS from
/// scheduler-lock, hard-irq, work-item and NMI contexts. `shim-compare`
/// packs its own `/init` and modules with the same binaries.
pub(crate) fn build_initramfs(
    init: &str,
    modules: &[PathBuf],
    extra: &[(String, PathBuf)],
    out: &Path,
) -> Result<PathBuf> {
    let loader = initramfs::build_static("userspace-bench", "kallsyms-bench")?;
    let helpers = initramfs::build_static("kfast-guest-agents", "kfast-shim-guest")?;
    initramfs::pack_with(
        &initramfs::Spec {
            init,
            applets: APPLETS,
            bins: &[("kallsyms-bench", &loader), ("kfast-shim-guest", &helpers)],
            modules,
            out,
        },
        extra,
    )
}

fn parse_dump(path: &Path) -> BTreeMap<u32, String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (t, w) = l.split_once(' ')?;
            Some((t.parse().ok()?, w.to_string()))
        })
        .collect()
}

/// Tasks whose stock wchan was the same in every stock dump (before, between
/// and after the shim's) must show that wchan in the shim's dumps too. A
/// task can still move at any moment (rcu_sched flips between
/// rcu_gp_kthread and rcu_gp_fqs_loop), so a difference in one shim dump is
/// reported as motion; a task that differs in every shim dump is a failure.
/// Exact same-address comparisons are the load-time verification and the
/// bench's agreement count. Returns (identical, moved, failed, unstable).
fn compare_dumps(
    dir: &Path,
    stock: &[&str],
    shim: &[&str],
    report: &mut String,
) -> (usize, usize, usize, usize) {
    let stock: Vec<_> = stock.iter().map(|n| parse_dump(&dir.join(n))).collect();
    let shim: Vec<_> = shim.iter().map(|n| parse_dump(&dir.join(n))).collect();
    let (mut same, mut moved, mut bad, mut unstable) = (0, 0, 0, 0);
    for (tid, w) in &stock[0] {
        if !stock.iter().all(|d| d.get(tid) == Some(w)) {
            unstable += 1;
            continue;
        }
        let seen: Vec<&String> = shim.iter().filter_map(|d| d.get(tid)).collect();
        let agree = seen.iter().filter(|x| **x == w).count();
        same += agree;
        if agree == seen.len() {
            continue;
        }
        let diff: Vec<&str> = seen
            .iter()
            .filter(|x| **x != w)
            .map(|x| x.as_str())
            .collect();
        if agree > 0 {
            moved += 1;
            report.push_str(&format!(
                "tid {tid}: stock {w}, shim once {diff:?} (moved)\n"
            ));
        } else {
            bad += 1;
            report.push_str(&format!("tid {tid}: stock {w}, shim always {diff:?}\n"));
        }
    }
    (same, moved, bad, unstable)
}

/// The `# child <pid>` and `# kthread <tid>` lines of a `wchan-unpriv` dump.
fn unpriv_marks(path: &Path) -> (Option<u32>, Vec<u32>) {
    let text = fs::read_to_string(path).unwrap_or_default();
    let (mut child, mut kthreads) = (None, Vec::new());
    for l in text.lines() {
        if let Some(p) = l.strip_prefix("# child ") {
            child = p.parse().ok();
        } else if let Some(t) = l.strip_prefix("# kthread ") {
            kthreads.extend(t.parse::<u32>().ok());
        }
    }
    (child, kthreads)
}

/// The unprivileged reader's dumps (`wchan-unpriv`): the same
/// motion-tolerant comparison as root's between the `stock` and `other`
/// dumps in `dir`, every kthread reads `0`, and the reader's own sleeping
/// child shows a real name (`child_ok` says which: x86_64 shows the
/// nanosleep path, UML its own `um_set_signals`). `label` names the
/// non-stock side and the suite in messages. Returns the failures.
pub fn check_unpriv(
    dir: &Path,
    stock: &[&str],
    other: &[&str],
    label: &str,
    child_ok: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let mut fails = Vec::new();
    let mut report = String::new();
    let (same, moved, bad, unstable) = compare_dumps(dir, stock, other, &mut report);
    eprint!("{report}");
    eprintln!(
        "{label}-test: unprivileged wchan (uid 1000): {same} (task, {label} dump) answers \
         identical to stock; {moved} moved in one {label} dump, {bad} differ in all; \
         {unstable} skipped"
    );
    if bad > 0 || same == 0 {
        fails.push(format!(
            "uid 1000: {bad} tasks with a different wchan under the {label} path"
        ));
    }
    let (mut kthreads, mut zero) = (0, 0);
    for n in stock.iter().chain(other) {
        let path = dir.join(n);
        let dump = parse_dump(&path);
        let (child, kt) = unpriv_marks(&path);
        for t in &kt {
            // A kthread that exited between the two listings has no line.
            if let Some(w) = dump.get(t) {
                kthreads += 1;
                if w == "0" {
                    zero += 1;
                } else {
                    fails.push(format!("{n}: uid 1000 reads kthread {t} wchan {w:?}"));
                }
            }
        }
        match child.map(|c| (c, dump.get(&c))) {
            Some((c, Some(w))) if child_ok(w) => {
                eprintln!("{label}-test: {n}: own child {c} sleeps in {w}");
            }
            other => fails.push(format!("{n}: own sleeping child: {other:?}")),
        }
    }
    eprintln!("{label}-test: unprivileged wchan: {zero} of {kthreads} kthread reads are 0");
    if kthreads == 0 {
        fails.push("uid 1000: no kthreads seen".into());
    }
    fails
}

/// `wchan-scale: <group> <n> threads x <r> rounds: <ns> ns per read` lines.
pub fn parse_scale(path: &Path) -> BTreeMap<String, (u64, u64)> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            match w.as_slice() {
                ["wchan-scale:", g, n, "threads", "x", _, "rounds:", ns, "ns", "per", "read"] => {
                    Some((g.to_string(), (n.parse().ok()?, ns.parse().ok()?)))
                }
                _ => None,
            }
        })
        .collect()
}

/// Prints stock vs shim per group; returns the failures.
///
/// Stock is timed before the shim is enabled and again after it is gone;
/// the ratio is against the mean of the two, and both are printed, since
/// whole reads under TCG drift by tens of percent within one boot.
fn report_scale(dir: &Path, scale: u32) -> Vec<String> {
    let stock = parse_scale(&dir.join("scale-stock"));
    let shim = parse_scale(&dir.join("scale-shim"));
    let again = parse_scale(&dir.join("scale-stock-again"));
    let mut fails = Vec::new();
    for g in ["core", "module"] {
        match (stock.get(g), shim.get(g)) {
            (Some(&(n, a1)), Some(&(m, b))) => {
                let a2 = again.get(g).map_or(a1, |&(_, a)| a);
                let a = (a1 + a2) / 2;
                eprintln!(
                    "shim-test: scale: {g}-sleeping {n} threads: stock {a1} ns (before) and \
                     {a2} ns (after), shim {b} ns per wchan read ({:.2}x the mean of stock)",
                    a as f64 / b.max(1) as f64
                );
                if n < u64::from(scale) || m < u64::from(scale) {
                    fails.push(format!("scale: {g}: {n}/{m} threads, wanted {scale}"));
                }
            }
            _ => fails.push(format!("scale: no {g} timings")),
        }
    }
    fails
}

/// Run the suite; returns the exit code.
pub fn run(opts: &Options) -> Result<u8> {
    if !kernel::bzimage(FLAVOR).exists() {
        return Err("test kernel missing: run `cargo xtask kernel` first".into());
    }
    let ko = build_module()?;
    let mut test_kos = modules::build(FLAVOR)?;
    test_kos.extend(modules::build_these(FLAVOR, &["ksym_ctx"])?);
    let mut kos = vec![ko];
    kos.extend(test_kos);
    run_suite(&Suite {
        label: "shim-test",
        kernel: &kernel::bzimage(FLAVOR),
        modules: &kos,
        extra_files: &[],
        initramfs: &FLAVOR.guest_dir().join("shim-initramfs.cpio"),
        cmdline: &format!("kfs.cycles={} kfs.scale={}", opts.cycles, opts.scale),
        qemu_args: &[],
        dir: &env::work_dir().join("runs").join("shim-latest"),
        timeout: opts.timeout,
        scale: opts.scale,
        mirror: false,
    })
}

/// One boot of the shim suite (`guest/shim-init.sh`): the 6.12 test
/// kernel's (`shim-test`) or Debian's (`debian-shim-test`).
pub(crate) struct Suite<'a> {
    /// The name in messages.
    pub label: &'a str,
    /// The kernel image.
    pub kernel: &'a Path,
    /// The shim first, then ksym_truth, ksym_many, ksym_ctx and any others.
    pub modules: &'a [PathBuf],
    /// More files for the initramfs: (path in it, file).
    pub extra_files: &'a [(String, PathBuf)],
    /// Where the suite's initramfs is written.
    pub initramfs: &'a Path,
    /// `kfs.*` parameters on the kernel command line.
    pub cmdline: &'a str,
    /// More QEMU arguments.
    pub qemu_args: &'a [&'a str],
    /// The run's log directory.
    pub dir: &'a Path,
    pub timeout: Duration,
    /// Threads per group in the scale phase (0: skipped).
    pub scale: u32,
    /// Whether the guest made the mirror's capture (`kfs.mirror=1`, with
    /// `kfast-guest` in the initramfs): it is then resolved by the mirror
    /// on the host and compared with the kernel's answers, as guest-test
    /// does for the project's own kernel.
    pub mirror: bool,
}

/// How many of the module answers the mirror must get right on a
/// distribution kernel's capture. On the project's own 6.12 kernels
/// guest-test requires all; on Debian's 7.3 the regions are
/// derived from `/proc/modules`' total and the sections' starts, and the
/// size of the last section of a region (`.static_call_sites`,
/// `.orc_unwind_ip`) is not visible there, so a few pages of some
/// regions' ends are estimated.
const MODULE_EXACT_PERCENT: f64 = 99.5;

/// The mirror against the kernel on the guest's capture in `mirror`: the
/// wchan names are kallsyms names, and `kallsyms-bench resolve` prints
/// what `sprint_symbol()` and `%ps` printed for every captured address
/// (any vmlinux mismatch fails; module answers at least
/// [`MODULE_EXACT_PERCENT`] exact).
fn judge_mirror(label: &str, mirror: &Path) -> Result<Vec<String>> {
    if !mirror.join("truth/sprint_symbol.txt").exists() {
        return Ok(vec!["no mirror capture from the guest".into()]);
    }
    let mut fails = Vec::new();
    match wchan_check::check_with(mirror, false) {
        Ok(s) => eprintln!("{label}: {s}"),
        Err(e) => fails.push(format!("mirror capture wchan: {e}")),
    }
    let report = mirror.with_file_name("mirror-report.txt");
    match compare::compare(mirror, &report)? {
        compare::Outcome::Unavailable(why) => fails.push(format!("mirror not tested: {why}")),
        compare::Outcome::Compared(c) => {
            let exact = if c.module == 0 {
                100.0
            } else {
                (c.module - c.mod_mismatch) as f64 * 100.0 / c.module as f64
            };
            let ok = c.vm_mismatch == 0 && c.missing == 0 && exact >= MODULE_EXACT_PERCENT;
            eprintln!(
                "{label} (mirror): {}: {} compared, {} vmlinux and {} module mismatches, {} \
                 missing; module answers exact {exact:.3}% (at least {MODULE_EXACT_PERCENT}% \
                 required, every vmlinux answer); report {}",
                if ok { "PASS" } else { "FAIL" },
                c.compared,
                c.vm_mismatch,
                c.mod_mismatch,
                c.missing,
                report.display()
            );
            if !ok {
                fails.push(format!(
                    "the mirror differs from the kernel: {}",
                    report.display()
                ));
            }
        }
    }
    Ok(fails)
}

/// Boots `s.kernel` with the suite's initramfs and judges the run; returns
/// the exit code.
pub(crate) fn run_suite(s: &Suite<'_>) -> Result<u8> {
    let t = Instant::now();
    let label = s.label;
    let initrd = build_initramfs(INIT_SCRIPT, s.modules, s.extra_files, s.initramfs)?;
    let dir = s.dir;
    let boot = qemu::boot_with(s.kernel, &initrd, dir, s.timeout, s.cmdline, s.qemu_args)?;
    let console = fs::read_to_string(&boot.console).unwrap_or_default();
    eprintln!("--- guest (kfs-shim lines and kernel messages of the shim) ---");
    for l in console.lines() {
        if l.contains("kfs-shim:") || l.contains("kallsyms_fast_shim") {
            eprintln!("{l}");
        }
    }
    eprintln!("--- guest ran {:.1?} ---", boot.elapsed);
    let mut fails = Vec::new();
    if boot.timed_out {
        fails.push(format!("timed out after {}s", s.timeout.as_secs()));
    }
    fails.extend(console::faults("console", &console));
    let ch = channel::parse(&read(&boot.result).unwrap_or_default())?;
    match ch.verdict.as_deref() {
        Some("ok") => {}
        Some(v) => fails.push(format!("guest: {v}")),
        None => fails.push("no verdict on the result channel".into()),
    }
    if let Some(archive) = ch.archive {
        let capture = dir.join("capture");
        fs::create_dir_all(&capture).map_err(|e| e.to_string())?;
        let tgz = dir.join("capture.tar.gz");
        fs::write(&tgz, &archive).map_err(|e| e.to_string())?;
        run::status(
            Command::new("tar")
                .arg("-xzf")
                .arg(&tgz)
                .arg("-C")
                .arg(&capture),
        )?;
        let mut report = String::new();
        let (same, moved, bad, unstable) = compare_dumps(
            &capture,
            &["stock1", "stock2", "stock3", "stock4", "stock5"],
            &["shim1", "shim2", "shim3"],
            &mut report,
        );
        eprint!("{report}");
        eprintln!(
            "shim-test: wchan: {same} (task, shim dump) answers identical to stock; {moved} tasks \
             moved in one shim dump, {bad} differ in all; {unstable} tasks skipped (moved \
             between stock dumps)"
        );
        if bad > 0 || same == 0 {
            fails.push(format!("{bad} tasks with a different wchan under the shim"));
        }
        fails.extend(check_unpriv(
            &capture,
            &["unpriv-stock1", "unpriv-stock2"],
            &["unpriv-shim1", "unpriv-shim2"],
            "shim",
            &|w| w.contains("nanosleep"),
        ));
        if s.mirror {
            fails.extend(judge_mirror(label, &capture.join("mirror"))?);
        }
        if s.scale > 0 {
            let mut report = String::new();
            let (same, moved, bad, unstable) = compare_dumps(
                &capture,
                &["scale-stock1", "scale-stock2"],
                &["scale-shim1", "scale-shim2"],
                &mut report,
            );
            eprint!("{report}");
            eprintln!(
                "{label}: scale wchan (the core and module sleepers): {same} (task, shim dump) \
                 answers identical to stock; {moved} moved in one shim dump, {bad} differ in \
                 all; {unstable} skipped"
            );
            if bad > 0 || same < s.scale as usize {
                fails.push(format!(
                    "scale: {bad} tasks with a different wchan under the shim, {same} identical"
                ));
            }
            fails.extend(report_scale(&capture, s.scale));
        }
    } else {
        fails.push("no capture on the result channel".into());
    }
    eprintln!("{label}: logs in {} ({:.1?})", dir.display(), t.elapsed());
    if fails.is_empty() {
        eprintln!("{label}: PASS");
        Ok(0)
    } else {
        eprintln!("{label}: FAIL: {}", fails.join("; "));
        Ok(1)
    }
}
