//! `cargo xtask lint`: the checks that need the kernel tree, plus the docs.
//!
//! - `make -C kmod-shim CLIPPY=1` with warnings denied: clippy over the
//!   shim's crate as Kbuild compiles it (kernel flags, `kernel` crate). The
//!   driver must match the kernel's rustc (Debian's `rust-web-clippy` for
//!   `rustc-web`), so this uses `/usr/bin/clippy-driver`.
//! - `checkpatch.pl --strict` on the shim's C glue and the test module
//!   written for it (`--no-tree -f`: out-of-tree files).
//! - `cargo doc --workspace --no-deps` with `RUSTDOCFLAGS=-D warnings`.
//!
//! Needs the test kernel (`cargo xtask kernel`) for the first two.

use crate::env::Flavor;
use crate::{env, kernel, run, Result};
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

    eprintln!("lint: cargo doc --workspace --no-deps (warnings denied)");
    let mut doc = Command::new(env::cargo());
    doc.current_dir(&root)
        .args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings");
    run::status(&mut doc)?;
    eprintln!("lint: PASS");
    Ok(0)
}
