//! `cargo xtask lint`: the checks that need the kernel tree, plus the docs.
//!
//! - `make -C kmod-shim CLIPPY=1` with warnings denied: clippy over the
//!   shim's crate as Kbuild compiles it (kernel flags, `kernel` crate). The
//!   driver must match the kernel's rustc (Debian's `rust-web-clippy` for
//!   `rustc-web`), so this uses `/usr/bin/clippy-driver`.
//! - `checkpatch.pl --strict` on the shim's C glue and the test module
//!   written for it (`--no-tree -f`: out-of-tree files).
//! - The applied series (`fast-src`, the tree `fast-test` builds), as the
//!   kernel's maintainers would lint it: `make rustfmtcheck` (every `.rs`
//!   file of the tree, with the kernel's `.rustfmt.toml` and the rustfmt
//!   of its rustc, Debian's `rustfmt-web`), and the series' Rust objects
//!   (`kernel/kallsyms_fast/`, `fs/proc/nproc/`: the glue, the vendored
//!   crates, the name index, nproc's field table) built with
//!   `CLIPPY=1 KRUSTFLAGS=-Dwarnings`: the kernel's own clippy flags,
//!   warnings denied, in `fast-clippy-build` (see [`series`]). The
//!   sources are kernel/series/tree/ and the crates.
//! - `duplicates` (a command of the development machine, when it is on
//!   `PATH`) over the workspace, the shim and the series' tree together:
//!   its report is printed, for a reader; it never fails the lint.
//! - `cargo doc --workspace --no-deps` with `RUSTDOCFLAGS=-D warnings`.
//!
//! Needs the test kernel (`cargo xtask kernel`) for the first two.

use crate::env::Flavor;
use crate::{env, kernel, run, Result};
use std::fs;
use std::path::Path;
use std::process::Command;

/// C files checkpatch must pass, relative to the repository.
const C_FILES: &[&str] = &[
    "kmod-shim/shim_glue.c",
    "kmod-shim/shim_glue.h",
    "guest/modules/ksym_ctx/ksym_ctx.c",
];

/// The clippy driver that matches the kernel's rustc.
const CLIPPY_DRIVER: &str = "/usr/bin/clippy-driver";

/// The rustfmt of the kernel's rustc (Debian's `rustfmt-web`).
const KERNEL_RUSTFMT: &str = "/usr/bin/rustfmt";

/// The directories of the applied series that hold its Rust objects.
const SERIES_RUST_DIRS: &[&str] = &["kernel/kallsyms_fast/", "fs/proc/nproc/"];

/// Run every lint; the first failure stops the run.
pub fn run() -> Result<u8> {
    if !kernel::bzimage(Flavor::Stock).exists() {
        return Err("test kernel missing: run `cargo xtask kernel` first".into());
    }
    if !Path::new(CLIPPY_DRIVER).exists() {
        return Err(format!(
            "{CLIPPY_DRIVER} missing: apt-get install rust-web-clippy (clippy for rustc-web)"
        ));
    }
    let root = env::repo_root();

    eprintln!("lint: make -C kmod-shim CLIPPY=1 (warnings denied)");
    let mut make = env::kernel_make();
    make.arg("-C")
        .arg(root.join("kmod-shim"))
        .arg(format!("KDIR={}", Flavor::Stock.kernel_build().display()))
        // Its own output directory: a clippy build's objects are not the
        // shim-test's, and a fresh one lints every file.
        .arg(format!(
            "OUT={}",
            env::work_dir().join("shim-clippy").display()
        ))
        .arg(format!("BINDGEN={}", env::bindgen().display()))
        .arg("CLIPPY=1")
        .arg(format!("CLIPPY_DRIVER={CLIPPY_DRIVER}"))
        .arg("KRUSTFLAGS=-Dwarnings");
    run::status(&mut make)?;

    eprintln!("lint: checkpatch.pl --strict");
    let mut checkpatch = Command::new(env::pristine_src().join("scripts/checkpatch.pl"));
    checkpatch
        .current_dir(&root)
        .args(["--no-tree", "--strict", "--quiet", "-f"])
        .args(C_FILES);
    run::status(&mut checkpatch)?;

    series()?;
    duplicates(&root);

    eprintln!("lint: cargo doc --workspace --no-deps (warnings denied)");
    let mut doc = Command::new(env::cargo());
    doc.current_dir(&root)
        .args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings");
    run::status(&mut doc)?;
    eprintln!("lint: PASS");
    Ok(0)
}

/// The applied series: `make rustfmtcheck`, then its Rust objects rebuilt
/// with clippy, warnings denied. Needs `fast-build` configured and built
/// (`cargo xtask fast-test` does both).
///
/// Both run in a build directory of their own, `fast-clippy-build`, seeded
/// once from `fast-build` (seed.rs) and given its configuration each time:
/// `CLIPPY=1` changes the command line of every Rust object (`rust/`
/// included), so in `fast-build` it would make the next `fast-test`
/// rebuild them all and relink. Here only what changed since the last
/// lint is rebuilt, through clippy-driver.
fn series() -> Result<()> {
    if !Path::new(KERNEL_RUSTFMT).exists() {
        return Err(format!(
            "{KERNEL_RUSTFMT} missing: apt-get install rustfmt-web (rustfmt for rustc-web)"
        ));
    }
    let fast = Flavor::Patched.kernel_build();
    if !fast.join("vmlinux").exists() {
        return Err(format!(
            "no built patched kernel in {}: run `cargo xtask fast-test` first",
            fast.display()
        ));
    }
    // The committed series, applied (a no-op when the tree has it).
    crate::tree::prepare_tree()?;
    let src = Flavor::Patched.kernel_src();
    let build = env::cache_dir().join("fast-clippy-build");
    crate::seed::build_dir(&build, &src, std::slice::from_ref(&fast))?;
    let config = fs::read(fast.join(".config"))
        .map_err(|e| format!("cannot read {}: {e}", fast.join(".config").display()))?;
    if fs::read(build.join(".config")).ok().as_ref() != Some(&config) {
        fs::create_dir_all(&build).map_err(|e| format!("{}: {e}", build.display()))?;
        fs::write(build.join(".config"), &config)
            .map_err(|e| format!("cannot write {}: {e}", build.join(".config").display()))?;
    }
    eprintln!("lint: the applied series: make rustfmtcheck");
    run::status(&mut kernel::make_at(
        &src,
        &build,
        &[&format!("RUSTFMT={KERNEL_RUSTFMT}"), "rustfmtcheck"],
    ))?;
    eprintln!(
        "lint: the applied series: {} with CLIPPY=1 (warnings denied)",
        SERIES_RUST_DIRS.join(" ")
    );
    let driver = format!("CLIPPY_DRIVER={CLIPPY_DRIVER}");
    let mut args = vec!["CLIPPY=1", &driver, "KRUSTFLAGS=-Dwarnings"];
    args.extend(SERIES_RUST_DIRS);
    run::status(&mut kernel::make_at(&src, &build, &args))?;
    Ok(())
}

/// Print `duplicates`' report over the repository (the workspace, the
/// shim and kernel/series/tree/), when the command is on `PATH`.
fn duplicates(root: &Path) {
    let out = Command::new("duplicates")
        .current_dir(root)
        .args(["--most", "40", "--seconds", "60"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            eprintln!("lint: duplicates (the workspace, kmod-shim and kernel/series/tree/; a report, not a verdict):");
            eprint!("{}", String::from_utf8_lossy(&o.stdout));
        }
        Ok(o) => eprintln!(
            "lint: `duplicates` failed ({}): no duplicates report",
            o.status
        ),
        Err(e) => eprintln!("lint: `duplicates` is not on PATH here ({e}): no duplicates report"),
    }
}
