//! Debian's `linux-source-6.12`: the pristine tree the series applies to
//! and the test kernels build from.
//!
//! The package moves along the 6.12.y stable branch (6.12.117, then
//! 6.12.118, ...). The harness follows whatever sublevel is installed, and
//! can fetch any other version Debian serves beside it (`apt-get
//! download`, unpacked under the cache), which is how `cargo xtask test`
//! proves the series on two sublevels.

use crate::apt::Apt;
use crate::{env, run, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The Debian package that ships the tarball.
pub const PACKAGE: &str = "linux-source-6.12";

/// A pristine kernel tree and the line that names it.
#[derive(Clone, Debug)]
pub struct Source {
    /// The unpacked tree (its top-level `Makefile` is there).
    pub tree: PathBuf,
    /// "Linux 6.12.118 (Debian linux-source-6.12 6.12.118-1~deb12u1)".
    pub label: String,
}

impl Source {
    /// `VERSION.PATCHLEVEL.SUBLEVEL` from the tree's Makefile.
    pub fn version(&self) -> Result<String> {
        makefile_version(&self.tree)
    }
}

/// The stamp beside the pristine tree: the tarball it was unpacked from.
const UNPACK_STAMP: &str = ".kfast-unpacked";

/// The installed tarball's identity (path, size, time): what the unpack
/// stamp and the build's configuration stamp record.
pub fn tarball_id() -> Result<String> {
    let md = fs::metadata(env::KERNEL_SRC_TARBALL).map_err(|e| {
        format!(
            "{}: {e} (run `cargo xtask setup`, package linux-source-6.12)",
            env::KERNEL_SRC_TARBALL
        )
    })?;
    let mtime = md
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    Ok(format!(
        "{} {} {mtime}\n",
        env::KERNEL_SRC_TARBALL,
        md.len()
    ))
}

fn write(path: &Path, data: &str) -> Result<()> {
    fs::write(path, data).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Unpacks the installed tarball into the pristine tree unless the stamp
/// says it is already there; returns whether it unpacked.
pub fn unpack(id: &str) -> Result<bool> {
    let src = env::pristine_src();
    let parent = src.parent().expect("kernel source has a parent");
    let stamp = parent.join(UNPACK_STAMP);
    if src.join("Makefile").exists() && fs::read_to_string(&stamp).ok().as_deref() == Some(id) {
        return Ok(false);
    }
    eprintln!(
        "linux-source: unpacking {} into {}",
        env::KERNEL_SRC_TARBALL,
        parent.display()
    );
    if src.exists() {
        fs::remove_dir_all(&src).map_err(|e| format!("cannot remove {}: {e}", src.display()))?;
    }
    fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let mut tar = Command::new("tar");
    tar.arg("-xf")
        .arg(env::KERNEL_SRC_TARBALL)
        .arg("-C")
        .arg(parent);
    run::status(&mut tar)?;
    if !src.join("Makefile").exists() {
        return Err(format!("{} has no Makefile after unpacking", src.display()));
    }
    write(&stamp, id)?;
    Ok(true)
}

/// The pristine kernel source, unpacked from the Debian tarball if missing
/// or stale (the same step `run` starts with; no toolchain needed).
pub fn ensure_source() -> Result<PathBuf> {
    let t = Instant::now();
    if unpack(&tarball_id()?)? {
        eprintln!("linux-source: unpacked in {:.1?}", t.elapsed());
    }
    Ok(env::pristine_src())
}

/// `VERSION.PATCHLEVEL.SUBLEVEL` from a kernel tree's top-level Makefile.
pub fn makefile_version(tree: &Path) -> Result<String> {
    let path = tree.join("Makefile");
    let mk =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let var = |name: &str| {
        mk.lines()
            .find_map(|l| l.strip_prefix(name)?.trim_start().strip_prefix('='))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("{}: no {name} line", path.display()))
    };
    Ok(format!(
        "{}.{}.{}",
        var("VERSION")?,
        var("PATCHLEVEL")?,
        var("SUBLEVEL")?
    ))
}

/// The upstream part of a Debian version: "6.12.117-1~deb12u1" -> "6.12.117".
pub fn upstream(deb_version: &str) -> &str {
    let v = deb_version
        .split_once(':')
        .map_or(deb_version, |(_, rest)| rest);
    v.rsplit_once('-').map_or(v, |(up, _)| up)
}

fn label(tree: &Path, deb_version: &str) -> Result<String> {
    package_label(PACKAGE, tree, deb_version)
}

fn package_label(package: &str, tree: &Path, deb_version: &str) -> Result<String> {
    Ok(format!(
        "Linux {} (Debian {package} {deb_version})",
        makefile_version(tree)?
    ))
}

/// The installed package's tree, unpacked into the cache if needed.
pub fn installed() -> Result<Source> {
    let tree = ensure_source()?;
    let deb = run::stdout_opt(Command::new("dpkg-query").args(["-W", "-f=${Version}", PACKAGE]))
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| format!("{PACKAGE} is not installed (run `cargo xtask setup`)"))?;
    Ok(Source {
        label: label(&tree, deb.trim())?,
        tree,
    })
}

/// The versions of the package apt can fetch, as `apt-cache madison`
/// lists them (newest first, each once).
pub fn served_versions() -> Result<Vec<String>> {
    let out = run::output(Command::new("apt-cache").args(["madison", PACKAGE]))?;
    let mut v: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut cols = line.split('|').map(str::trim);
        if cols.next() != Some(PACKAGE) {
            continue;
        }
        if let Some(ver) = cols.next().filter(|s| !s.is_empty()) {
            if !v.iter().any(|x| x == ver) {
                v.push(ver.to_string());
            }
        }
    }
    Ok(v)
}

/// The newest version Debian serves whose upstream sublevel differs from
/// the installed tree's.
pub fn other_sublevel() -> Result<String> {
    let have = makefile_version(&installed()?.tree)?;
    let served = served_versions()?;
    served
        .iter()
        .find(|v| upstream(v) != have)
        .cloned()
        .ok_or_else(|| {
            format!(
                "apt serves no {PACKAGE} other than Linux {have} (it lists: {}); \
                 run `apt-get update`, or name a version with --linux-source",
                served.join(", ")
            )
        })
}

/// `version` of the package, downloaded and unpacked under the cache
/// (`linux-source/<version>/`), reused when already there.
pub fn fetch(version: &str) -> Result<Source> {
    fetch_package(PACKAGE, version, None)
}

/// `version` of `package` (a `linux-source-X.Y`), downloaded by the
/// system's apt or by `apt`, and unpacked under the cache
/// (`linux-source/<version>/<package>/`), reused when already there.
pub fn fetch_package(package: &str, version: &str, apt: Option<&Apt>) -> Result<Source> {
    if version.is_empty() || version.contains(['/', ' ']) || version.starts_with('.') {
        return Err(format!("not a Debian version: {version:?}"));
    }
    let dir = env::cache_dir().join("linux-source").join(version);
    let tree = dir.join(package);
    let stamp = dir.join(".kfast-unpacked");
    if tree.join("Makefile").exists() && fs::read_to_string(&stamp).ok().as_deref() == Some(version)
    {
        return Ok(Source {
            label: package_label(package, &tree, version)?,
            tree,
        });
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    eprintln!(
        "linux-source: fetching {package} {version} into {}",
        dir.display()
    );
    match apt {
        Some(apt) => apt.download(package, version, &dir)?,
        None => {
            run::output(
                Command::new("apt-get")
                    .current_dir(&dir)
                    .args(["download", "-q"])
                    .arg(format!("{package}={version}")),
            )
            .map_err(|e| {
                format!("{e}\n  (`apt-cache madison {package}` lists what Debian serves)")
            })?;
        }
    }
    let deb = fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or_else(|| format!("apt-get download left no .deb in {}", dir.display()))?;
    let files = dir.join("deb");
    run::output(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&files))?;
    let tarball = files.join(format!("usr/src/{package}.tar.xz"));
    run::output(
        Command::new("tar")
            .arg("-xf")
            .arg(&tarball)
            .arg("-C")
            .arg(&dir),
    )?;
    for p in [files, deb] {
        let rm = if p.is_dir() {
            fs::remove_dir_all(&p)
        } else {
            fs::remove_file(&p)
        };
        rm.map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
    }
    fs::write(&stamp, version).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(Source {
        label: package_label(package, &tree, version)?,
        tree,
    })
}

/// The pristine tree of a series base (`kernel/series/bases`: `package`
/// from `suite`, `None` for the installed package): for the installed
/// package as [`select`] finds it; for a suite's, the version `which`
/// names (the suite's candidate when `None`), fetched through a private
/// apt configuration of that suite.
pub fn for_base(package: &str, suite: Option<&str>, which: Option<&str>) -> Result<Source> {
    let Some(suite) = suite else {
        return select(which);
    };
    let apt = Apt::new(suite)?;
    let version = match which {
        Some("other") => {
            return Err(format!(
                "--linux-source other picks another sublevel of the installed {PACKAGE} only; \
                 name a version of {} instead",
                package
            ))
        }
        Some(v) => v.to_string(),
        None => {
            apt.update()?;
            apt.candidate(package)?
        }
    };
    fetch_package(package, &version, Some(&apt))
}

/// The source `--linux-source` names: `None` for the installed package,
/// `other` for [`other_sublevel`], else a Debian version to [`fetch`].
pub fn select(which: Option<&str>) -> Result<Source> {
    match which {
        None => installed(),
        Some("other") => fetch(&other_sublevel()?),
        Some(v) => fetch(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_strips_revision_and_epoch() {
        assert_eq!(upstream("6.12.117-1~deb12u1"), "6.12.117");
        assert_eq!(upstream("6.12.118-1~bpo12+1"), "6.12.118");
        assert_eq!(upstream("1:6.12.9-2"), "6.12.9");
        assert_eq!(upstream("6.12.117"), "6.12.117");
    }

    #[test]
    fn makefile_version_reads_the_three_lines() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(
            tmp.path().join("Makefile"),
            "# SPDX\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 118\nEXTRAVERSION =\n",
        )
        .unwrap();
        assert_eq!(makefile_version(tmp.path()).unwrap(), "6.12.118");
        fs::write(tmp.path().join("Makefile"), "VERSION = 6\n").unwrap();
        let err = makefile_version(tmp.path()).unwrap_err();
        assert!(err.contains("no PATCHLEVEL line"), "{err}");
    }
}
