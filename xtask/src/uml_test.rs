//! `cargo xtask uml-test`: the mirror-vs-kernel suite on User-Mode Linux.
//!
//! The same pieces as `guest-test` (the `ksym_truth` and `ksym_many` test
//! modules, in-tree modules with data sections, the `kfast-guest` agent,
//! `wchan_check` and `compare`), run on a UML kernel: its table has
//! all-lowercase types, init text below `_stext`, no per-CPU section and a
//! fixed 0x60000000 base, and the mirror must be exact there too. Exit
//! codes as `guest-test`.
//!
//! `cargo xtask test` runs it on the patched tree with
//! `CONFIG_KALLSYMS_FAST` off (`--patched-off`): that build is the series'
//! "option off still builds" check, and the exact mirror suite on it shows
//! that, off, the series changes nothing a lookup answers. (A separate
//! option-off build would cost a second UML build from scratch, 8-15
//! minutes on a fresh 2-core machine, for no additional check.)

use crate::env::Flavor;
use crate::uml::{self, Uml};
use crate::{compare, console, env, fast_uml, initramfs, modules, wchan_check, Result};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// In-tree modules the UML config builds (`=m` in `xtask/configs/uml.config`),
/// loaded after the test modules for their data sections.
pub const IN_TREE: &[&str] = &[
    "lib/crc-itu-t.ko",
    "lib/crc7.ko",
    "lib/crc8.ko",
    "fs/binfmt_misc.ko",
];

/// The same on Linux 7.3, whose Kconfig no longer lets a config choose
/// the CRC library modules (`xtask/configs/uml-7.3.config`).
pub const IN_TREE_7_3: &[&str] = &["fs/binfmt_misc.ko"];

/// Command-line options of `uml-test`.
#[derive(clap::Args, Debug)]
pub struct Options {
    #[command(flatten)]
    build: uml::BuildOptions,
    /// Hard timeout for the UML guest, in seconds.
    #[arg(long, value_name = "SECS", default_value = "600", value_parser = crate::secs)]
    timeout: Duration,
    /// Extra guest kernel command line (e.g. `kfast.seed=N`).
    #[arg(long = "cmdline", value_name = "TEXT", default_value = "")]
    extra_cmdline: String,
    /// Build the tree with the committed series applied and
    /// `CONFIG_KALLSYMS_FAST` off (`xtask/configs/fast-off.config`) instead of
    /// the pristine tree: what `cargo xtask test` runs.
    #[arg(long)]
    patched_off: bool,
    /// Run on the kernel `fast-uml-test --base X.Y` builds (the series of
    /// that base of `kernel/series/bases`, `CONFIG_KALLSYMS_FAST` on; built
    /// here when missing): the mirror against a 7.3 kernel.
    #[arg(long, value_name = "X.Y", conflicts_with_all = ["patched_off", "tree", "build"])]
    base: Option<String>,
}

impl Options {
    /// The defaults `cargo xtask test` runs with.
    pub fn ci() -> Self {
        Options {
            build: uml::BuildOptions {
                tree: None,
                build: None,
                fragments: Vec::new(),
            },
            timeout: Duration::from_secs(600),
            extra_cmdline: String::new(),
            patched_off: true,
            base: None,
        }
    }

    /// The defaults `cargo xtask test` runs `uml-test --base <base>` with.
    pub fn ci_base(base: &str) -> Self {
        Options {
            patched_off: false,
            base: Some(base.to_string()),
            ..Self::ci()
        }
    }
}

/// The job the guest runs: the agent captures and asks `ksym_truth`.
const JOB: &str = "exec /bin/kfast-guest /out\n";

/// Build, boot, compare; returns the exit code.
pub fn run(o: &Options) -> Result<u8> {
    let t = Instant::now();
    let mut build = o.build.clone();
    if o.patched_off {
        // One build, two checks: the series with the option off still
        // builds, and behaves as stock (the mirror suite below is exact
        // against it, as against the pristine kernel).
        crate::tree::prepare_tree()?;
        build.tree = Some(env::patched_src());
        // fast-kernel.config first, then the option turned off: every
        // other option the patched kernel has stays on (fast-off.config).
        for f in ["fast-kernel.config", "fast-off.config"] {
            build
                .fragments
                .push(env::repo_root().join("xtask/configs").join(f));
        }
    }
    let (k, in_tree, suffix) = match &o.base {
        Some(b) => {
            let k = fast_uml::base_kernel(b)?.ok_or_else(|| {
                format!("--base {b} is the first base: run uml-test without --base")
            })?;
            (k, IN_TREE_7_3, format!("-{b}"))
        }
        None => (Uml::from_options(&build), IN_TREE, String::new()),
    };
    k.build()?;
    let tb = t.elapsed();
    let mut kos = modules::build_for(
        modules::MODULES,
        &k.build,
        &k.make_vars(),
        &Flavor::Stock
            .guest_dir()
            .join(format!("uml-modules{suffix}")),
    )?;
    for rel in in_tree {
        let ko = k.build.join(rel);
        if !ko.exists() {
            return Err(format!(
                "{} missing: the UML config builds it (=m)",
                ko.display()
            ));
        }
        kos.push(ko);
    }
    let agent = initramfs::build_agent()?;
    let root = uml::make_root(&uml::RootSpec {
        bins: &[("kfast-guest", &agent)],
        modules: &kos,
        load: true,
        job: JOB,
    })?;
    let dir: PathBuf = env::work_dir()
        .join("uml-runs")
        .join(format!("latest{suffix}"));
    let ta = t.elapsed();
    let boot = uml::boot(&k.image(), root.path(), &o.extra_cmdline, o.timeout, &dir)?;
    eprintln!(
        "uml-test: guest ran {:.1?} (exit {:?}); kernel build step {tb:.1?}, artefacts {:.1?}",
        boot.elapsed,
        boot.exit_code,
        ta - tb
    );
    let fail = |msg: String| {
        let lines: Vec<&str> = boot.console.lines().collect();
        eprintln!(
            "uml-test: FAIL: {msg}\n--- last console lines ({}) ---\n{}\n---",
            dir.join("console.log").display(),
            lines[lines.len().saturating_sub(60)..].join("\n")
        );
        Ok(1)
    };
    if boot.timed_out {
        return fail(format!("timed out after {}s", o.timeout.as_secs()));
    }
    let trouble = console::faults("console", &boot.console);
    if !trouble.is_empty() {
        return fail(trouble.join("\n  "));
    }
    match boot.verdict.as_deref() {
        Some("ok") => {}
        Some(v) => return fail(format!("guest verdict: {v}")),
        None => return fail("the guest wrote no verdict".into()),
    }
    let capture = boot.dir.join("out");
    if let Ok(s) = std::fs::read_to_string(capture.join("kallsyms-fast/guest-summary.txt")) {
        eprint!("--- guest summary ---\n{s}---\n");
    }
    match wchan_check::check_with(&capture, false) {
        Ok(s) => eprintln!("uml-test: {s}"),
        Err(e) => return fail(e),
    }
    let outcome = compare::compare_with(&capture, &dir.join("report.txt"), false)?;
    eprintln!("uml-test: total {:.1?}", t.elapsed());
    Ok(compare::judge("uml-test", outcome, &capture))
}
