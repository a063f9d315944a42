//! `cargo xtask kernel`: unpack, configure and build the test kernel.
//!
//! Incremental: the source is unpacked once per tarball (stamp in `src/`),
//! configuration reruns only when the fragment or tarball changes (stamp in the
//! build directory), and `make` itself handles the rest.

use crate::env::Flavor;
use crate::{env, kconfig, linux_source, run, seed, setup, steps, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const CONFIG_STAMP: &str = ".kfast-config-stamp";

/// The kernel config fragment kept in the repository.
pub fn fragment_path() -> PathBuf {
    env::repo_root().join("xtask/configs/test-kernel.config")
}

/// What the patched kernel adds to the test kernel's fragment.
pub fn fast_fragment_path() -> PathBuf {
    env::repo_root().join("xtask/configs/fast-kernel.config")
}

/// What the benchmark kernel changes in the patched kernel's fragments.
pub fn bench_fragment_path() -> PathBuf {
    env::repo_root().join("xtask/configs/bench-kernel.config")
}

/// The fragments this kernel is configured from, in merge order (a later
/// fragment's line for an option overrides an earlier one's, as
/// `merge_config.sh` merges them).
fn fragment_paths(flavor: Flavor) -> Vec<PathBuf> {
    let mut v = vec![fragment_path()];
    if flavor.patched() {
        v.push(fast_fragment_path());
    }
    if flavor == Flavor::Bench {
        v.push(bench_fragment_path());
    }
    v
}

/// The built kernel image.
pub fn bzimage(flavor: Flavor) -> PathBuf {
    flavor.kernel_build().join("arch/x86/boot/bzImage")
}

/// `make -C <flavor's tree> O=<its build>` with the kernel toolchain.
fn make(flavor: Flavor, args: &[&str]) -> Command {
    make_at(&flavor.kernel_src(), &flavor.kernel_build(), args)
}

/// `make -C <tree> O=<build>` with the kernel toolchain.
pub fn make_at(tree: &Path, build: &Path, args: &[&str]) -> Command {
    let mut cmd = env::kernel_make();
    cmd.arg("-C")
        .arg(tree)
        .arg(format!("O={}", build.display()))
        .args(env::kernel_make_vars())
        .args(args);
    cmd
}

fn configure(flavor: Flavor, stamp_val: &str, fragment: &str) -> Result<()> {
    let build = flavor.kernel_build();
    let stamp = build.join(CONFIG_STAMP);
    let dot_config = build.join(".config");
    if dot_config.exists() && fs::read_to_string(&stamp).ok().as_deref() == Some(stamp_val) {
        eprintln!("kernel: configuration up to date");
        return Ok(());
    }
    fs::create_dir_all(&build).map_err(|e| format!("cannot create {}: {e}", build.display()))?;
    let _ = fs::remove_file(&stamp);
    run::status(&mut make(flavor, &["-s", "tinyconfig"]))?;
    let mut merge = Command::new(flavor.kernel_src().join("scripts/kconfig/merge_config.sh"));
    merge
        .current_dir(flavor.kernel_src())
        .env("PATH", env::kernel_path_var())
        .arg("-m")
        .arg("-O")
        .arg(&build)
        .arg(&dot_config)
        .args(fragment_paths(flavor));
    run::output(&mut merge)?;
    run::status(&mut make(flavor, &["-s", "olddefconfig"]))?;
    let cfg = fs::read_to_string(&dot_config)
        .map_err(|e| format!("cannot read {}: {e}", dot_config.display()))?;
    let bad = kconfig::verify(&kconfig::last_wins(kconfig::parse_fragment(fragment)), &cfg);
    if !bad.is_empty() {
        let hint = if bad.iter().any(|b| b.starts_with("CONFIG_RUST:")) {
            "\n  (CONFIG_RUST needs `make rustavailable` to succeed: check rustc-web, rust-web-src, bindgen, libclang)"
        } else {
            ""
        };
        return Err(format!(
            "options from {} did not stick after merging:\n  {}{hint}",
            fragment_paths(flavor)
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" + "),
            bad.join("\n  ")
        ));
    }
    fs::write(&stamp, stamp_val).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    eprintln!(
        "kernel: configured ({} options verified)",
        kconfig::parse_fragment(fragment).len()
    );
    Ok(())
}

/// Make sure the toolchain pieces `setup` installs are present.
pub fn check_tools() -> Result<()> {
    let missing = setup::missing_packages();
    if !missing.is_empty() {
        return Err(format!(
            "missing packages: {} (run `cargo xtask setup`)",
            missing.join(" ")
        ));
    }
    if setup::bindgen_ok().is_none() {
        return Err(format!(
            "bindgen {} not found at {} (run `cargo xtask setup`)",
            env::BINDGEN_VERSION,
            env::bindgen().display()
        ));
    }
    Ok(())
}

/// Unpack, configure and build bzImage + modules of `flavor`'s kernel.
pub fn run(flavor: Flavor) -> Result<()> {
    check_tools()?;
    let t = Instant::now();
    let id = linux_source::tarball_id()?;
    if linux_source::unpack(&id)? {
        eprintln!("kernel: unpacked in {:.1?}", t.elapsed());
    }
    let mut id = id;
    if flavor.patched() {
        id.push_str(&crate::tree::prepare_tree()?);
    }
    let mut fragment = String::new();
    for p in fragment_paths(flavor) {
        fragment.push_str(
            &fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?,
        );
        fragment.push('\n');
    }
    let stamp = format!("{:016x} {id}", run::fnv1a(fragment.as_bytes()));
    let build = flavor.kernel_build();
    let before = steps::Before::of(&build);
    // The stock and the patched x86_64 builds seed each other's first
    // build. Not the benchmark kernel's: lock debugging changes spinlock.h
    // and so nearly every object, and a copy would only add its own time.
    let mut seeded_from = None;
    if flavor != Flavor::Bench {
        let siblings = ["build", "fast-build"].map(|d| env::cache_dir().join(d));
        if seed::build_dir(&build, &flavor.kernel_src(), &siblings)?.is_some() {
            seeded_from = steps::seed_source(&build, &siblings);
        }
    }
    configure(flavor, &stamp, &fragment)?;
    let tb = Instant::now();
    run::status(&mut make(flavor, &[env::MAKE_JOBS, "bzImage", "modules"]))?;
    if !bzimage(flavor).exists() {
        return Err(format!("{} missing after build", bzimage(flavor).display()));
    }
    steps::note_built(format!(
        "x86_64 {}: {}",
        build.file_name().map_or_else(
            || build.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        ),
        before.describe(seeded_from.as_deref())
    ));
    eprintln!(
        "kernel: build step {:.1?}, total {:.1?}; image {}",
        tb.elapsed(),
        t.elapsed(),
        bzimage(flavor).display()
    );
    Ok(())
}
