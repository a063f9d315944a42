//! `cargo xtask shim-compare --old DIR`: two builds of kmod-shim, timed in
//! one boot of the test kernel.
//!
//! Whole `/proc` reads and in-kernel benches under TCG drift between boots
//! by tens of percent, so a before/after claim about the shim only holds
//! when both builds run in the same boot. `DIR` is a checkout (or `git
//! archive` export) of the older tree; its `kmod-shim/` is built against
//! the same kernel build as this tree's. Both take the loader input of this
//! tree's `kallsyms-bench shim load` (the symbol list has not changed since
//! the shim first loaded from userspace; a shim that refuses it is reported
//! as a failure). The guest script is `guest/shim-compare-init.sh`; its
//! `kfs-shim:` console lines are the numbers.

use crate::console;
use crate::initramfs::read;
use crate::shim_test::{build_initramfs, build_module, FLAVOR};
use crate::{channel, env, kernel, modules, qemu, run, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

const INIT_SCRIPT: &str = "guest/shim-compare-init.sh";
/// Options of `shim-compare`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// The older tree (its `kmod-shim/` is built, with its own sources).
    #[arg(long, value_name = "DIR")]
    old: PathBuf,
    /// Threads per group (core- and module-sleeping) for the wchan reads.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    scale: u32,
    /// Measure this tree's shim first (host load drifts within a boot; a
    /// second boot in the other order shows how much).
    #[arg(long)]
    new_first: bool,
    /// Hard timeout for the QEMU guest, in seconds.
    #[arg(long, value_name = "SECS", default_value = "2400", value_parser = crate::secs)]
    timeout: Duration,
}

/// `make -C <old>/kmod-shim` into its own output directory; returns the
/// `.ko`, copied to a name of its own for the initramfs.
fn build_old(old: &Path) -> Result<PathBuf> {
    let out = env::work_dir().join("shim-old-build");
    let mut make = env::kernel_make();
    make.arg("-C")
        .arg(old.join("kmod-shim"))
        .arg(format!("KDIR={}", FLAVOR.kernel_build().display()))
        .arg(format!("OUT={}", out.display()))
        .arg(format!("BINDGEN={}", env::bindgen().display()));
    run::status(&mut make)?;
    let guest = FLAVOR.guest_dir();
    fs::create_dir_all(&guest).map_err(|e| format!("{}: {e}", guest.display()))?;
    let ko = guest.join("kallsyms_fast_shim_old.ko");
    fs::copy(out.join("kallsyms_fast_shim.ko"), &ko)
        .map_err(|e| format!("{}: {e}", ko.display()))?;
    Ok(ko)
}

/// Build both shims, boot once, print the numbers; returns the exit code.
pub fn run(opts: &Options) -> Result<u8> {
    if !kernel::bzimage(FLAVOR).exists() {
        return Err("test kernel missing: run `cargo xtask kernel` first".into());
    }
    let old = build_old(&opts.old)?;
    let new = build_module()?;
    let mut kos = vec![old, new];
    kos.extend(modules::build_these(FLAVOR, &["ksym_many"])?);
    let initrd = build_initramfs(
        INIT_SCRIPT,
        &kos,
        &[],
        &FLAVOR.guest_dir().join("shim-compare-initramfs.cpio"),
    )?;
    let dir = env::work_dir().join("runs").join("shim-compare-latest");
    let boot = qemu::boot(
        &kernel::bzimage(FLAVOR),
        &initrd,
        &dir,
        opts.timeout,
        &format!(
            "kfs.scale={} kfs.first={}",
            opts.scale,
            if opts.new_first { "new" } else { "old" }
        ),
    )?;
    let console = fs::read_to_string(&boot.console).unwrap_or_default();
    for l in console.lines() {
        if l.contains("kfs-shim:") || l.contains("kallsyms_fast_shim") {
            eprintln!("{l}");
        }
    }
    let mut fails = console::faults("console", &console);
    if boot.timed_out {
        fails.push(format!("timed out after {}s", opts.timeout.as_secs()));
    }
    match channel::parse(&read(&boot.result).unwrap_or_default())?
        .verdict
        .as_deref()
    {
        Some("ok") => {}
        Some(v) => fails.push(format!("guest: {v}")),
        None => fails.push("no verdict on the result channel".into()),
    }
    eprintln!(
        "shim-compare: logs in {} (guest {:.1?})",
        dir.display(),
        boot.elapsed
    );
    if fails.is_empty() {
        eprintln!("shim-compare: done");
        Ok(0)
    } else {
        eprintln!("shim-compare: FAIL: {}", fails.join("; "));
        Ok(1)
    }
}
