//! `cargo xtask`: developer tasks for kallsyms-fast.
//!
//! Subcommands:
//! - `setup`: install the toolchain the kernel harness needs (idempotent).
//! - `kernel`: unpack, configure and build the Rust-enabled 6.12 test kernel.
//! - `guest-test`: build the test modules and initramfs, boot QEMU (TCG) and
//!   compare the userspace mirror against the kernel's `sprint_symbol()`.
//! - `compare`: that comparison again over a saved guest run's output.
//! - `shim-test`: build kmod-shim, load it into the stock kernel under QEMU
//!   and compare its answers with the kernel's (kmod-shim/README.md);
//!   `shim-compare`: the shim's timings against stock, same boot.
//! - `debian-shim-test`: the shim suite in Debian's own Rust-enabled kernel
//!   (trixie-backports), built in a trixie chroot with that kernel's rustc.
//! - `test`: `cargo test --workspace`, setup, the host tests that need its
//!   kernel tree or root (`--ignored`), then all of the above.
//! - `uml`: configure and build a User-Mode Linux kernel (`--tree`,
//!   `--build` for a patched tree).
//! - `uml-test`: build it, boot it on a hostfs root and run the
//!   mirror-vs-kernel comparison there.
//! - `lint`: clippy over the shim as Kbuild builds it, checkpatch on its C,
//!   the kernel's `rustfmtcheck` and a `CLIPPY=1` build of the applied
//!   series, a `duplicates` report, rustdoc with warnings denied.
//! - `patches`: generate (or `--check`) the `CONFIG_KALLSYMS_FAST` series.
//! - `fast-test`: apply the series, build and boot the patched kernel:
//!   KUnit, in-kernel benchmark, module cycles, nproc's access suites, the
//!   mirror suite.
//! - `fast-uml-test`: the patched kernel as User-Mode Linux: KUnit and the
//!   in-kernel benchmark at native speed, the wchan cache across module
//!   unloads and failed loads.
//! - `nproc-uml-test`: nproc's guest suites on that UML kernel (parity
//!   with /proc per procfs mount, access rules, storms, fuzzing).
//! - `nproc-bench`: the nproc benchmark on that kernel in QEMU TCG
//!   (`/bin/ps` vs `nps`, /proc vs nproc, ~5,000 tasks, `--dumps N`).
//! - `tcg-blocks`: QEMU TCG's blocks translated or executed per function,
//!   from its `in_asm` or `exec` log.
//! - `readme`: README.md's headline table from the latest files in
//!   `bench/results/` (`--check` in `.ci/run`); `record`: such a file from
//!   an earlier run's output. `fast-uml-test`, `fast-test` and
//!   `nproc-bench` write theirs when they pass, `test` its step table
//!   (`steps.rs`) pass or fail (see `results.rs`).
//!
//! Everything large lives in the cache directory (`$KFAST_CACHE`, default
//! `/var/cache/kallsyms-fast`), never in the repository.

mod apt;
mod channel;
mod compare;
mod console;
mod debian;
mod env;
mod fast;
mod fast_uml;
mod gen_many;
mod guest_clock;
mod guest_test;
mod initramfs;
mod kconfig;
mod kernel;
mod ktap;
mod kunit_counts;
mod layers;
mod libclang;
mod lint;
mod linux_source;
mod modules;
mod nproc_bench;
mod nproc_uml;
mod patches;
mod qemu;
mod record;
mod results;
mod run;
mod schedule;
mod seed;
mod setup;
mod shim_compare;
mod shim_test;
mod steps;
mod tcg_blocks;
mod top_uml;
mod tree;
mod uml;
mod uml_test;
mod wchan_check;

use env::Flavor;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use steps::{Step, Steps};

use clap::{Parser, Subcommand};

/// Developer tasks for kallsyms-fast: toolchain, test kernel, guest suites.
#[derive(Parser, Debug)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    after_help = "environment:\n  \
        KFAST_CACHE   cache directory (default /var/cache/kallsyms-fast)\n  \
        KFAST_WORK    guest artefacts and run logs (default $KFAST_CACHE)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Install missing toolchain pieces (apt, bindgen-cli).
    Setup,
    /// Unpack, configure and build the test kernel (incremental).
    Kernel {
        /// The patched kernel instead: the committed series applied and
        /// xtask/configs/fast-kernel.config added (what fast-test boots).
        #[arg(long)]
        patched: bool,
    },
    /// Build test modules + initramfs, boot QEMU, compare mirror vs kernel.
    GuestTest(guest_test::Options),
    /// cargo test --workspace, setup, kernel, the --ignored host tests that
    /// need its tree or root, guest-test, shim-test, uml-test,
    /// fast-uml-test, nproc-uml-test, fast-test, nproc-bench and
    /// debian-shim-test.
    Test(guest_test::Options),
    /// Boot with kmod-shim: wchan identity, refusals, contexts, load
    /// cycles, timings.
    ShimTest(shim_test::Options),
    /// kmod-shim in Debian's own Rust-enabled kernel (trixie-backports):
    /// find and download it, build the shim in a trixie chroot with the
    /// kernel's rustc, boot Debian's vmlinuz with its modules, run the
    /// shim suite (shortened).
    DebianShimTest(debian::Options),
    /// Configure and build a User-Mode Linux kernel (incremental).
    Uml(uml::BuildOptions),
    /// Build the UML kernel, boot it, compare mirror vs kernel there.
    UmlTest(uml_test::Options),
    /// Two builds of kmod-shim (an older tree's and this one's), timed in
    /// one boot.
    ShimCompare(shim_compare::Options),
    /// Rerun mirror-vs-kernel on a capture.
    Compare {
        /// The capture directory (default: the last guest run's).
        dir: Option<PathBuf>,
    },
    /// kmod-shim under clippy (make CLIPPY=1), checkpatch --strict on its
    /// C, cargo doc with warnings denied.
    Lint,
    /// Generate patches/kallsyms-fast/ from kernel/series/ and the crates;
    /// --check compares, --apply DIR runs git am, --export DIR writes back.
    Patches(patches::Options),
    /// The CONFIG_KALLSYMS_FAST series on a real kernel: apply, build,
    /// boot (KUnit, bench, module cycles under load), mirror suite.
    FastTest(fast::Options),
    /// The CONFIG_KALLSYMS_FAST series on User-Mode Linux (native speed):
    /// KUnit, the in-kernel benchmark, whole wchan reads, permission parity.
    FastUmlTest(fast_uml::Options),
    /// The nproc suites on the patched UML kernel: /proc parity,
    /// permissions, pid namespaces, fork storms, bad and random requests.
    NprocUmlTest(nproc_uml::Options),
    /// The nproc benchmark on the patched kernel in QEMU TCG: /bin/ps vs
    /// nps, /proc vs nproc, ~5,000 tasks, N interleaved rounds of one dump each.
    NprocBench(nproc_bench::Options),
    /// procps' top (batch, WCHAN column, every thread) and ps -eLo
    /// pid,wchan on the patched UML kernel with ~5,000 waiting tasks:
    /// their CPU per refresh, kallsyms-fast off against on, one boot.
    TopUmlBench(top_uml::Options),
    /// QEMU TCG's blocks translated or executed per function, from a
    /// `-d in_asm` or `-d exec,nochain` log (KFAST_QEMU_EXTRA).
    TcgBlocks(tcg_blocks::Options),
    /// Rewrite README.md's headline table from the latest files in
    /// bench/results/; --check fails when it differs instead.
    Readme(results::ReadmeOptions),
    /// Write a bench/results/ file from the output an earlier run left
    /// (uml-native, qemu-tcg or nproc).
    Record(record::RecordOptions),
}

/// Result type used throughout the xtask: errors are human-readable strings.
pub type Result<T> = std::result::Result<T, String>;

/// A whole number of seconds, for the `--timeout` options.
fn secs(s: &str) -> Result<Duration> {
    s.parse()
        .map(Duration::from_secs)
        .map_err(|_| format!("not a whole number of seconds: {s:?}"))
}

fn main() -> ExitCode {
    let res = match Cli::parse().cmd {
        Cmd::Setup => setup::run().map(|()| 0),
        Cmd::Kernel { patched } => {
            let flavor = if patched {
                Flavor::Patched
            } else {
                Flavor::Stock
            };
            kernel::run(flavor).map(|()| 0)
        }
        Cmd::GuestTest(o) => guest_test::run(Flavor::Stock, &o),
        Cmd::Compare { dir } => guest_test::compare_only(dir.as_deref()),
        Cmd::ShimTest(o) => shim_test::run(&o),
        Cmd::DebianShimTest(o) => debian::run(&o),
        Cmd::ShimCompare(o) => shim_compare::run(&o),
        Cmd::Test(o) => test_all(&o),
        Cmd::Uml(o) => uml::run_build(&o),
        Cmd::UmlTest(o) => uml_test::run(&o),
        Cmd::Lint => lint::run(),
        Cmd::Patches(o) => patches::run(&o),
        Cmd::FastTest(o) => fast::run(&o),
        Cmd::FastUmlTest(o) => fast_uml::run(&o),
        Cmd::NprocUmlTest(o) => nproc_uml::run(&o),
        Cmd::NprocBench(o) => nproc_bench::run(&o),
        Cmd::TopUmlBench(o) => top_uml::run(&o),
        Cmd::TcgBlocks(o) => tcg_blocks::run(&o),
        Cmd::Readme(o) => results::readme(&o),
        Cmd::Record(o) => record::record(&o),
    };
    match res {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo xtask test`: the whole test suite, host and guest; its step
/// table printed, then recorded (`test-steps` in bench/results/), pass or
/// fail.
fn test_all(opts: &guest_test::Options) -> Result<u8> {
    let cache = steps::cache_state(&env::cache_dir());
    let mut steps = Steps::default();
    let r = run_steps(opts, cache, &mut steps);
    steps.record(cache, &r);
    r
}

/// The steps of `cargo xtask test`; the table is printed on every return.
fn run_steps(opts: &guest_test::Options, cache: &str, steps: &mut Steps) -> Result<u8> {
    let root = env::repo_root();
    let cargo = |args: &[&str]| {
        let mut c = std::process::Command::new(env::cargo());
        c.current_dir(&root).args(args);
        run::status(&mut c).map(|()| 0)
    };
    steps.run("setup", || setup::run().map(|()| 0))?;
    // The workspace's own tests beside the stock kernel's build: each
    // leaves a core idle part of the time (the kernel's links, kallsyms
    // passes and bindgen; cargo's links and single-threaded suites).
    let cargo = &cargo;
    steps.run_lanes(
        vec![(
            "kernel",
            Box::new(|| kernel::run(Flavor::Stock).map(|()| 0)),
        )],
        vec![(
            "cargo test --workspace",
            Box::new(move || cargo(&["test", "--workspace"])),
        )],
    )?;
    // The mirror suite boots the stock test kernel, which brings up one
    // CPU (see the shim suite below): the host tests that needed the
    // kernel step run beside it, on the other core. They read the
    // pristine tree and work in temporary directories; guest-test writes
    // only its own guest and run directories.
    let host: Vec<Step> = vec![
        // The host tests `cargo test` skips as #[ignore]d because they
        // need what setup and the kernel step provide (the unpacked 6.12
        // tree, gcc for the real scripts/kallsyms and the kernel's
        // lib/xxhash.c) or root with visible kernel addresses (this
        // machine's /proc/kallsyms).
        (
            "ignored host tests",
            Box::new(move || {
                cargo(&[
                    "test",
                    "-p",
                    "kallsyms-fast-tests",
                    "--test",
                    "compressor_identity",
                    "--test",
                    "parse_real",
                    "--test",
                    "kernel_xxh64",
                    "--test",
                    "real_table",
                    "--",
                    "--ignored",
                    "identical_to_real_tool",
                    "real_proc_kallsyms",
                    "real_capture_round_trip",
                    "kernel_xxh64_agrees",
                    "fast_equals_mainline_on_this_machines_table",
                ])?;
                cargo(&[
                    "test",
                    "-p",
                    "userspace-bench",
                    "--test",
                    "cli",
                    "--",
                    "--ignored",
                    "capture_then_resolve_gives_the_live_answers",
                ])
            }),
        ),
        // The patch generator end to end on its example series (needs the
        // pristine tree the kernel step unpacked).
        (
            "patches end to end",
            Box::new(move || {
                cargo(&[
                    "test",
                    "-p",
                    "xtask",
                    "--test",
                    "patches",
                    "--",
                    "--ignored",
                ])
            }),
        ),
        // The series on a second 6.12.y sublevel Debian serves (the
        // installed one is checked by `.ci/run` and built below): it must
        // generate and apply there too, with the committed series' base
        // difference reported as a notice, not a failure.
        (
            "patches on another sublevel",
            Box::new(move || cargo(&["xtask", "patches", "--check", "--linux-source", "other"])),
        ),
    ];
    // The suites run even when an earlier one failed, so one run reports
    // them all; the worst exit code wins.
    steps.run_beside(
        (
            "guest-test",
            Box::new(|| guest_test::run(Flavor::Stock, opts)),
        ),
        host,
    )?;
    // Then the other guest suites, in two rounds of two lanes ordered for
    // the state of the kernel cache (schedule.rs says why).
    for [first, second] in schedule::rounds(cache) {
        steps.run_lanes(schedule::lane(first)?, schedule::lane(second)?)?;
    }
    Ok(steps.report())
}

/// A subcommand's options as clap fills them from no arguments: the
/// `default_value`s on its fields, so that `cargo xtask test` runs each
/// suite exactly as its own command does, with the defaults written once.
pub(crate) fn arg_defaults<T: clap::Args>() -> T {
    #[derive(clap::Parser)]
    struct Defaults<T: clap::Args> {
        #[command(flatten)]
        options: T,
    }
    <Defaults<T> as clap::Parser>::parse_from(["xtask"]).options
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> std::result::Result<Cmd, clap::Error> {
        Cli::try_parse_from(std::iter::once("xtask").chain(args.iter().copied())).map(|c| c.cmd)
    }

    #[test]
    fn defaults_are_what_ci_runs() {
        let Ok(Cmd::Test(o)) = parse(&["test"]) else {
            panic!("`test` did not parse");
        };
        assert_eq!((o.timeout.as_secs(), o.extra_cmdline.as_str()), (1500, ""));
        let Ok(Cmd::ShimTest(s)) = parse(&["shim-test"]) else {
            panic!("`shim-test` did not parse");
        };
        assert_eq!(
            format!("{s:?}"),
            format!("{:?}", shim_test::Options::default())
        );
        assert!(format!("{s:?}").contains("cycles: 20, scale: 2500"));
    }

    #[test]
    fn options_and_refusals() {
        let Ok(Cmd::GuestTest(o)) = parse(&["guest-test", "--timeout", "60", "--cmdline", "a=1"])
        else {
            panic!("guest-test options did not parse");
        };
        assert_eq!((o.timeout.as_secs(), o.extra_cmdline.as_str()), (60, "a=1"));
        let Ok(Cmd::Uml(u)) = parse(&[
            "uml", "--tree", "/t", "--build", "/b", "--config", "/f1", "--config", "/f2",
        ]) else {
            panic!("uml options did not parse");
        };
        assert_eq!(
            (u.tree, u.build, u.fragments),
            (
                Some(PathBuf::from("/t")),
                Some(PathBuf::from("/b")),
                vec![PathBuf::from("/f1"), PathBuf::from("/f2")]
            )
        );
        let Ok(Cmd::UmlTest(t)) = parse(&["uml-test", "--timeout", "30", "--build", "/b"]) else {
            panic!("uml-test options did not parse");
        };
        assert!(format!("{t:?}").contains("timeout: 30s"), "{t:?}");
        let Ok(Cmd::Compare { dir }) = parse(&["compare", "/x"]) else {
            panic!("compare did not parse");
        };
        assert_eq!(dir, Some(PathBuf::from("/x")));
        let Ok(Cmd::Patches(p)) = parse(&["patches", "--check", "--out", "/o"]) else {
            panic!("patches --check did not parse");
        };
        assert!(p.check && p.apply.is_none() && p.export.is_none());
        assert_eq!(p.out, Some(PathBuf::from("/o")));
        assert_eq!(p.base, None);
        let Ok(Cmd::Patches(p)) = parse(&["patches", "--check", "--base", "7.3"]) else {
            panic!("patches --base did not parse");
        };
        assert_eq!(p.base.as_deref(), Some("7.3"));
        assert!(p.series.ends_with("kernel/series"));
        for bad in [
            &["patches", "--check", "--apply", "/d"][..],
            &["patches", "--apply", "/d", "--export", "/d"],
            &["patches", "--export"],
            &["guest-test", "--timeout", "soon"],
            &["test", "--strict-modules"],
            &["shim-test", "--cycles"],
            &["uml", "--tree"],
            &["uml-test", "--timeout", "-1"],
            &["bogus"],
            &[],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
