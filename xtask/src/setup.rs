//! `cargo xtask setup`: install what the kernel harness needs, idempotently.

use crate::{env, run, Result};
use std::process::Command;

/// Debian packages the harness needs (bookworm names).
pub const APT_PACKAGES: &[&str] = &[
    "linux-source-6.12",
    "rustc-web",
    "rust-web-src",
    "clang",
    "libclang-dev",
    "qemu-system-x86",
    "busybox-static",
    "gcc",
    "binutils",
    "libc6-dev",
    "make",
    "flex",
    "bison",
    "bc",
    "libelf-dev",
    "libssl-dev",
    "cpio",
    "xz-utils",
    "tar",
    "perl",
    // `cargo xtask lint`: clippy for the kernel's rustc (rustup's clippy
    // cannot read the 1.96 libcore the kernel builds against).
    "rust-web-clippy",
    // `cargo xtask lint`: the kernel's `make rustfmtcheck` on the applied
    // series, with the rustfmt of the kernel's rustc (/usr/bin/rustfmt).
    "rustfmt-web",
];

/// Oldest rustc the 6.12 kernel accepts.
const MIN_KERNEL_RUSTC: (u32, u32) = (1, 78);

fn is_installed(pkg: &str) -> bool {
    run::stdout_opt(Command::new("dpkg-query").args(["-W", "-f=${Status}", pkg]))
        .is_some_and(|s| s.trim() == "install ok installed")
}

/// Packages from [`APT_PACKAGES`] that are not installed.
pub fn missing_packages() -> Vec<&'static str> {
    APT_PACKAGES
        .iter()
        .copied()
        .filter(|p| !is_installed(p))
        .collect()
}

fn apt_install(missing: &[&str]) -> Result<()> {
    let hint = || {
        format!(
            "missing Debian packages: {}\n  install them with: apt-get update && apt-get install -y {}",
            missing.join(" "),
            missing.join(" ")
        )
    };
    let mut update = Command::new("apt-get");
    update
        .arg("update")
        .env("DEBIAN_FRONTEND", "noninteractive");
    run::status(&mut update).map_err(|e| format!("{e}\n{}", hint()))?;
    let mut install = Command::new("apt-get");
    install
        .args(["install", "-y"])
        .args(missing)
        .env("DEBIAN_FRONTEND", "noninteractive");
    run::status(&mut install).map_err(|e| format!("{e}\n{}", hint()))?;
    let still = missing_packages();
    if !still.is_empty() {
        return Err(format!(
            "apt-get finished but packages are still missing: {}",
            still.join(" ")
        ));
    }
    Ok(())
}

fn parse_version(s: &str) -> Option<(u32, u32, u32)> {
    let v = s.split_whitespace().nth(1)?;
    let mut it = v.split(['.', '-']).map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??, it.next().flatten().unwrap_or(0)))
}

fn check_kernel_rustc() -> Result<String> {
    let out = run::stdout_opt(Command::new(env::KERNEL_RUSTC).arg("--version"))
        .ok_or_else(|| format!("{} does not run (package rustc-web)", env::KERNEL_RUSTC))?;
    let (maj, min, _) =
        parse_version(&out).ok_or_else(|| format!("cannot parse rustc version: {out}"))?;
    if (maj, min) < MIN_KERNEL_RUSTC {
        return Err(format!(
            "{} is {maj}.{min}, the kernel needs >= {}.{}",
            env::KERNEL_RUSTC,
            MIN_KERNEL_RUSTC.0,
            MIN_KERNEL_RUSTC.1
        ));
    }
    let sysroot = run::stdout_opt(Command::new(env::KERNEL_RUSTC).args(["--print", "sysroot"]))
        .ok_or("cannot query the kernel rustc's sysroot")?;
    let core =
        std::path::Path::new(sysroot.trim()).join("lib/rustlib/src/rust/library/core/src/lib.rs");
    if !core.exists() {
        return Err(format!(
            "{} is missing: install rust-web-src (the kernel compiles `core` from it)",
            core.display()
        ));
    }
    Ok(out.trim().to_string())
}

/// Version string of the bindgen in the cache, if it is the pinned one.
pub fn bindgen_ok() -> Option<String> {
    let out = run::stdout_opt(Command::new(env::bindgen()).arg("--version"))?;
    let want = format!("bindgen {}", env::BINDGEN_VERSION);
    (out.trim() == want).then(|| out.trim().to_string())
}

fn install_bindgen() -> Result<()> {
    let mut cmd = Command::new(env::cargo());
    cmd.args(["install", "--locked", "bindgen-cli", "--version"])
        .arg(env::BINDGEN_VERSION)
        .arg("--root")
        .arg(env::cargo_root());
    run::status(&mut cmd).map_err(|e| {
        format!(
            "{e}\n  bindgen-cli {} could not be installed into {}",
            env::BINDGEN_VERSION,
            env::cargo_root().display()
        )
    })
}

/// Install missing packages and bindgen; check versions.
pub fn run() -> Result<()> {
    let t = std::time::Instant::now();
    let missing = missing_packages();
    if missing.is_empty() {
        eprintln!("setup: all {} Debian packages present", APT_PACKAGES.len());
    } else {
        eprintln!("setup: installing {}", missing.join(" "));
        apt_install(&missing)?;
    }
    let rustc = check_kernel_rustc()?;
    eprintln!("setup: kernel rustc: {rustc}");
    std::fs::create_dir_all(env::cache_dir())
        .map_err(|e| format!("cannot create {}: {e}", env::cache_dir().display()))?;
    let bindgen = match bindgen_ok() {
        Some(v) => v,
        None => {
            install_bindgen()?;
            bindgen_ok().ok_or("bindgen was installed but does not report the pinned version")?
        }
    };
    eprintln!("setup: {bindgen} at {}", env::bindgen().display());
    eprintln!("setup: done in {:.1?}", t.elapsed());
    Ok(())
}
