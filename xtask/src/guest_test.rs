//! `cargo xtask guest-test`: modules + initramfs, QEMU boot, mirror vs kernel.
//!
//! Exit codes: 0 pass; 1 guest failure, or any vmlinux or module mismatch;
//! 3 the mirror could not be tested (`kallsyms-bench resolve` missing or
//! failing).
//!
//! The capture the mirror resolves from has no `module_layout` file (the
//! exact layout goes to `truth/module_layout`, for address generation and
//! for attributing mismatches only): module regions are derived from
//! `/proc/modules` and sysfs as on any machine, and a module mismatch fails
//! the run like a vmlinux one.

use crate::env::Flavor;
use crate::{channel, compare, initramfs, kernel, modules, qemu, run, wchan_check, Result};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

/// Command-line options of `guest-test` (and `test`).
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Hard timeout for the QEMU guest, in seconds.
    #[arg(long, value_name = "SECS", default_value = "1500", value_parser = crate::secs)]
    pub timeout: Duration,
    /// Extra guest kernel command line (e.g. `kfast.seed=N`,
    /// `kfast.mod_budget=N`).
    #[arg(long = "cmdline", value_name = "TEXT", default_value = "")]
    pub extra_cmdline: String,
}

fn tail(path: &Path, n: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn guest_failure(msg: &str, boot: &qemu::Boot) -> Result<u8> {
    eprintln!(
        "guest-test: FAIL: {msg}\n--- last console lines ({}) ---\n{}\n---",
        boot.console.display(),
        tail(&boot.console, 60)
    );
    Ok(1)
}

/// Run the guest test on `flavor`'s kernel (the stock one, or the
/// patched one from `fast-test`); returns the process exit code.
pub fn run(flavor: Flavor, opts: &Options) -> Result<u8> {
    let t = Instant::now();
    if !kernel::bzimage(flavor).exists() {
        return Err(format!(
            "{} missing: run `cargo xtask kernel` first",
            kernel::bzimage(flavor).display()
        ));
    }
    kernel::check_tools()?;
    let mut kos = modules::build(flavor)?;
    kos.extend(modules::in_tree(flavor)?);
    let agent = initramfs::build_agent()?;
    let initrd = initramfs::build(flavor, &agent, &kos)?;
    eprintln!("guest-test: artefacts ready in {:.1?}", t.elapsed());

    let dir = flavor.run_dir();
    let boot = qemu::boot(
        &kernel::bzimage(flavor),
        &initrd,
        &dir,
        opts.timeout,
        &opts.extra_cmdline,
    )?;
    eprintln!(
        "guest-test: guest ran {:.1?}, left via {}",
        boot.elapsed,
        boot.guest_exit
            .map_or("reset/kill".to_string(), |c| format!(
                "isa-debug-exit code {c}"
            ))
    );
    if boot.timed_out {
        return guest_failure(
            &format!("timed out after {}s", opts.timeout.as_secs()),
            &boot,
        );
    }
    let raw = fs::read(&boot.result).unwrap_or_default();
    let ch = channel::parse(&raw)?;
    match ch.verdict.as_deref() {
        Some("ok") => {}
        Some(v) => return guest_failure(&format!("guest verdict: {v}"), &boot),
        None => return guest_failure("no verdict on the result channel", &boot),
    }
    let Some(archive) = ch.archive else {
        return guest_failure("result channel has no complete capture", &boot);
    };
    let tgz = dir.join("capture.tar.gz");
    fs::write(&tgz, &archive).map_err(|e| format!("{}: {e}", tgz.display()))?;
    let capture = dir.join("capture");
    fs::create_dir_all(&capture).map_err(|e| e.to_string())?;
    run::status(
        std::process::Command::new("tar")
            .arg("-xzf")
            .arg(&tgz)
            .arg("-C")
            .arg(&capture),
    )?;
    eprintln!("guest-test: capture in {}", capture.display());
    if let Ok(s) = fs::read_to_string(capture.join("kallsyms-fast/guest-summary.txt")) {
        eprint!("--- guest summary ---\n{s}---\n");
    }
    match wchan_check::check(&capture) {
        Ok(s) => eprintln!("guest-test: {s}"),
        Err(e) => return guest_failure(&e, &boot),
    }
    let outcome = compare::compare(&capture, &dir.join("report.txt"))?;
    eprintln!("guest-test: total {:.1?}", t.elapsed());
    Ok(compare::judge("guest-test", outcome, &capture))
}

/// `cargo xtask compare [DIR]`: rerun the comparison on an existing capture
/// (by default the stock kernel's last `guest-test`).
pub fn compare_only(dir: Option<&Path>) -> Result<u8> {
    let capture = dir.map_or_else(
        || Flavor::Stock.run_dir().join("capture"),
        Path::to_path_buf,
    );
    let report = capture.with_file_name("report.txt");
    // A module sleeper is required when the guest had ksym_many loaded
    // (guest-test's captures); the Debian suite's mirror capture is made
    // before it loads.
    let sleepers = fs::read_to_string(capture.join("proc/modules"))
        .is_ok_and(|m| m.lines().any(|l| l.starts_with("ksym_many ")));
    match wchan_check::check_with(&capture, sleepers) {
        Ok(s) => eprintln!("compare: {s}"),
        Err(e) => {
            eprintln!("compare: FAIL: {e}");
            return Ok(1);
        }
    }
    let outcome = compare::compare(&capture, &report)?;
    Ok(compare::judge("compare", outcome, &capture))
}
