//! Build the out-of-tree test modules against the test kernel.
//!
//! Sources are copied from `guest/modules/<name>/` into
//! `$KFAST_CACHE/guest/modules/<name>/` (only when changed, so make stays
//! incremental); `ksym_many` additionally gets its generated parts there.

use crate::env::Flavor;
use crate::{env, gen_many, run, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// Test modules, in load order.
pub const MODULES: &[&str] = &["ksym_truth", "ksym_many"];

/// In-tree modules the test kernel builds (`=m` in
/// `xtask/configs/test-kernel.config`), relative to the kernel build directory.
/// The mirror guest suite loads them after the test modules: their data,
/// rodata, ro_after_init, `__ksymtab*`, `__tracepoints*`, `__dyndbg`,
/// `__jump_table` and note sections are what region derivation is checked
/// on, and they come with no layout file.
pub const IN_TREE: &[&str] = &[
    "samples/trace_events/trace-events-sample.ko",
    "samples/kobject/kobject-example.ko",
    "samples/kobject/kset-example.ko",
    "lib/crc-itu-t.ko",
    "lib/crc7.ko",
    "lib/crc8.ko",
    "fs/binfmt_misc.ko",
];

/// The in-tree modules of [`IN_TREE`], as built by `cargo xtask kernel`.
pub fn in_tree(flavor: Flavor) -> Result<Vec<PathBuf>> {
    IN_TREE
        .iter()
        .map(|rel| {
            let ko = flavor.kernel_build().join(rel);
            if ko.exists() {
                Ok(ko)
            } else {
                Err(format!(
                    "{} missing: the test kernel config builds it (=m); run `cargo xtask kernel`",
                    ko.display()
                ))
            }
        })
        .collect()
}

fn copy_tree(src: &Path, dst: &Path) -> Result<()> {
    fs::create_dir_all(dst).map_err(|e| format!("cannot create {}: {e}", dst.display()))?;
    let entries = fs::read_dir(src).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path();
        if path.is_file() {
            let data = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            gen_many::write_if_changed(&dst.join(entry.file_name()), &data)?;
        }
    }
    Ok(())
}

/// Build all test modules against `flavor`'s kernel; returns the `.ko`
/// paths in load order.
pub fn build(flavor: Flavor) -> Result<Vec<PathBuf>> {
    build_these(flavor, MODULES)
}

/// Build the named modules of `guest/modules/` against `flavor`'s
/// kernel, in its guest directory; returns the `.ko` paths in the order
/// given.
pub fn build_these(flavor: Flavor, names: &[&str]) -> Result<Vec<PathBuf>> {
    build_for(
        names,
        &flavor.kernel_build(),
        &env::kernel_make_vars(),
        &flavor.guest_dir().join("modules"),
    )
}

/// Lays out the sources of the named modules of `guest/modules/` in
/// `out/<name>/` (copied only when changed, so make stays incremental;
/// `ksym_many` gets its generated parts); returns the directories in the
/// order given. `debian-shim-test` builds them there in its chroot.
pub fn stage(names: &[&str], out: &Path) -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for name in names {
        let src = env::repo_root().join("guest/modules").join(name);
        let dir = out.join(name);
        copy_tree(&src, &dir)?;
        if *name == "ksym_many" {
            let n = gen_many::generate(&dir)?;
            eprintln!("modules: ksym_many has {n} generated functions");
        }
        dirs.push(dir);
    }
    Ok(dirs)
}

/// Build the named modules of `guest/modules/` against the kernel
/// built in `kbuild` (made with `vars`), in `out/<name>/`; returns the
/// `.ko` paths in the order given. The UML suite uses this with its own
/// build directory and `ARCH=um` variables.
pub fn build_for(
    names: &[&str],
    kbuild: &Path,
    vars: &[String],
    out: &Path,
) -> Result<Vec<PathBuf>> {
    let mut kos = Vec::new();
    for dir in stage(names, out)? {
        let name = dir.file_name().unwrap_or_default().to_string_lossy();
        let mut make = env::kernel_make();
        make.arg("-C")
            .arg(kbuild)
            .arg(format!("M={}", dir.display()))
            .args(vars)
            // Test modules must build warning-free.
            .args(["KCFLAGS=-Werror", env::MAKE_JOBS, "modules"]);
        run::status(&mut make)?;
        let ko = dir.join(format!("{name}.ko"));
        if !ko.exists() {
            return Err(format!("{} missing after build", ko.display()));
        }
        kos.push(ko);
    }
    Ok(kos)
}
