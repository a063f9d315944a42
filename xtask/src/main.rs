//! `cargo xtask`: developer tasks for kallsyms-fast.
//!
//! Subcommands:
//! - `setup`: install the toolchain the kernel harness needs (idempotent).
//! - `kernel`: unpack, configure and build the Rust-enabled 6.12 test kernel.
//! - `guest-test`: build the test modules and initramfs, boot QEMU (TCG) and
//!   compare the userspace mirror against the kernel's `sprint_symbol()`.
//! - `test`: `cargo test --workspace`, setup, the host tests that need its
//!   kernel tree or root (`--ignored`), then all of the above.
//! - `lint`: clippy over the shim as Kbuild builds it, checkpatch on its C,
//!   rustdoc with warnings denied.
//!
//! Everything large lives in the cache directory (`$KFAST_CACHE`, default
//! `/var/cache/kallsyms-fast`), never in the repository.

mod channel;
mod compare;
mod env;
mod gen_many;
mod guest_test;
mod initramfs;
mod kconfig;
mod kernel;
mod lint;
mod modules;
mod qemu;
mod run;
mod setup;
mod shim_test;
mod wchan_check;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  setup         install missing toolchain pieces (apt, bindgen-cli)
  kernel        unpack, configure and build the test kernel (incremental)
  guest-test    build test modules + initramfs, boot QEMU, compare mirror vs kernel
  test          cargo test --workspace, then setup, the --ignored host tests that need
                its kernel tree or root, kernel, guest-test and shim-test
  shim-test     boot with kmod-shim: wchan identity, refusals, load cycles, timings
                (--timeout <secs>, --cycles <n>)
  compare [DIR] rerun mirror-vs-kernel on a capture (default: the last run's)
  lint          kmod-shim under clippy (make CLIPPY=1), checkpatch --strict on
                its C, cargo doc with warnings denied

guest-test options:
  --timeout <secs>   hard timeout for the QEMU guest (default 1500)
  --cmdline <text>   extra guest kernel command line (kfast.seed=N, kfast.mod_budget=N)

environment:
  KFAST_CACHE        cache directory (default /var/cache/kallsyms-fast)
  KFAST_WORK         guest artefacts and run logs (default $KFAST_CACHE)
";

/// Result type used throughout the xtask: errors are human-readable strings.
pub type Result<T> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    let res = match cmd.as_str() {
        "setup" => setup::run().map(|()| 0),
        "kernel" => kernel::run().map(|()| 0),
        "guest-test" => guest_test::Options::parse(rest).and_then(|o| guest_test::run(&o)),
        "compare" => guest_test::compare_only(rest),
        "shim-test" => shim_test::Options::parse(rest).and_then(|o| shim_test::run(&o)),
        "lint" => lint::run(),
        "test" => guest_test::Options::parse(rest).and_then(|o| test_all(&o)),
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(0)
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    };
    match res {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo xtask test`: the whole test suite, host and guest.
fn test_all(opts: &guest_test::Options) -> Result<u8> {
    let root = env::repo_root();
    let mut cargo = std::process::Command::new(env::cargo());
    cargo.current_dir(&root).args(["test", "--workspace"]);
    run::status(&mut cargo)?;
    setup::run()?;
    kernel::run()?;
    // The host tests `cargo test` skips as #[ignore]d because they need what
    // setup and the kernel step provide (the unpacked 6.12 tree, gcc for
    // the real scripts/kallsyms)
    // or root with visible kernel addresses (this machine's /proc/kallsyms).
    let mut ignored = std::process::Command::new(env::cargo());
    ignored.current_dir(&root).args([
        "test",
        "-p",
        "kallsyms-fast-tests",
        "--test",
        "compressor_identity",
        "--test",
        "parse_real",
        "--",
        "--ignored",
        "identical_to_real_tool",
        "real_proc_kallsyms",
        "real_capture_round_trip",
    ]);
    run::status(&mut ignored)?;
    let mirror = guest_test::run(opts)?;
    // The shim suite runs even when the mirror failed, so one run reports
    // both; the worse exit code wins.
    let shim = shim_test::Options::parse(&[]).and_then(|o| shim_test::run(&o))?;
    Ok(mirror.max(shim))
}
