//! Build static guest binaries and busybox initramfs images (newc cpio,
//! uncompressed), for the mirror suite and the shim suite alike.

use crate::env::Flavor;
use crate::{env, run, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// busybox applets linked into the guest's `/bin`.
const APPLETS: &[&str] = &[
    "sh", "mount", "insmod", "lsmod", "cat", "echo", "ls", "mkdir", "sleep", "tar", "gzip",
    "base64", "stty", "dmesg", "sync", "ps", "uname", "date", "head", "tail", "wc",
];
/// The guest's `/init`, kept in the repository.
const INIT_SCRIPT: &str = "guest/mirror-init.sh";
/// Where every guest finds the shell library its scripts source.
pub const GUEST_LIB_NAME: &str = "kfast-lib.sh";

/// The shell library every guest `/init` and UML job sources.
pub fn guest_lib() -> PathBuf {
    env::repo_root().join("guest/lib.sh")
}
const GUEST_TARGET: &str = "x86_64-unknown-linux-gnu";

/// Build the static guest agent with cargo; returns the binary path.
pub fn build_agent() -> Result<PathBuf> {
    build_static("kfast-guest-agents", "kfast-guest")
}

/// Build `bin` of `package` as a static binary for the guest; returns its
/// path.
pub fn build_static(package: &str, bin: &str) -> Result<PathBuf> {
    // One target directory for every kernel flavour: the static binaries
    // do not depend on the kernel, and a step running beside a flavour
    // switch (debian-shim-test beside fast-test) finds them in one place.
    let target_dir = env::work_dir().join("guest-target");
    let mut cargo = Command::new(env::cargo());
    cargo
        .current_dir(env::repo_root())
        .args(["build", "--release", "--package", package, "--bin", bin])
        .args(["--target", GUEST_TARGET])
        .arg("--target-dir")
        .arg(&target_dir)
        .env(
            "RUSTFLAGS",
            "-C target-feature=+crt-static -C strip=debuginfo",
        );
    run::status(&mut cargo)?;
    Ok(target_dir.join(GUEST_TARGET).join("release").join(bin))
}

/// A minimal writer for the `newc` cpio format the kernel unpacks (also
/// used by the shim suite's initramfs).
pub(crate) struct Cpio {
    /// The archive so far.
    pub(crate) buf: Vec<u8>,
    ino: u32,
}

impl Cpio {
    /// An empty archive.
    pub(crate) fn new() -> Self {
        Cpio {
            buf: Vec::new(),
            ino: 0,
        }
    }

    /// Appends one entry; `rdev` is the (major, minor) of a device node.
    pub(crate) fn entry(&mut self, name: &str, mode: u32, rdev: (u32, u32), data: &[u8]) {
        self.ino += 1;
        let fields = [
            self.ino,
            mode,
            0,
            0,
            if mode & 0o170000 == 0o040000 { 2 } else { 1 },
            0,
            data.len() as u32,
            0,
            0,
            rdev.0,
            rdev.1,
            name.len() as u32 + 1,
            0,
        ];
        self.buf.extend_from_slice(b"070701");
        for f in fields {
            self.buf.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.push(0);
        self.pad();
        self.buf.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }
}

/// Reads a file, naming it in the error.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// What an initramfs holds besides busybox and the base directories.
pub struct Spec<'a> {
    /// The `/init` script, relative to the repository.
    pub init: &'a str,
    /// busybox applets linked into `/bin`.
    pub applets: &'a [&'a str],
    /// Binaries for `/bin`: (name, file).
    pub bins: &'a [(&'a str, &'a Path)],
    /// Kernel modules for `/lib/modules`.
    pub modules: &'a [PathBuf],
    /// Where the image is written (a flavour's guest directory, or the
    /// Debian kernel's).
    pub out: &'a Path,
}

/// Build the mirror suite's initramfs for `flavor`'s kernel: `/init`, the
/// agent and the modules.
pub fn build(flavor: Flavor, agent: &Path, modules: &[PathBuf]) -> Result<PathBuf> {
    pack(&Spec {
        init: INIT_SCRIPT,
        applets: APPLETS,
        bins: &[("kfast-guest", agent)],
        modules,
        out: &flavor.guest_dir().join("initramfs.cpio"),
    })
}

/// The directories every image has.
const BASE_DIRS: [&str; 8] = [
    "bin",
    "dev",
    "proc",
    "sys",
    "lib",
    "lib/modules",
    "out",
    "tmp",
];

/// Pack an initramfs as `spec` says; returns its path.
pub fn pack(spec: &Spec<'_>) -> Result<PathBuf> {
    pack_with(spec, &[])
}

/// [`pack`], plus `extra` files at the given paths (relative to the root,
/// e.g. `lib/x86_64-linux-gnu/libc.so.6`), their directories created.
pub fn pack_with(spec: &Spec<'_>, extra: &[(String, PathBuf)]) -> Result<PathBuf> {
    let busybox = Path::new("/bin/busybox");
    let mut c = Cpio::new();
    for d in BASE_DIRS {
        c.entry(d, 0o040755, (0, 0), &[]);
    }
    c.entry("dev/console", 0o020600, (5, 1), &[]);
    c.entry("bin/busybox", 0o100755, (0, 0), &read(busybox)?);
    for a in spec.applets {
        c.entry(&format!("bin/{a}"), 0o120777, (0, 0), b"busybox");
    }
    c.entry(
        &format!("bin/{GUEST_LIB_NAME}"),
        0o100644,
        (0, 0),
        &read(&guest_lib())?,
    );
    for (name, file) in spec.bins {
        c.entry(&format!("bin/{name}"), 0o100755, (0, 0), &read(file)?);
    }
    for ko in spec.modules {
        let name = ko
            .file_name()
            .ok_or(format!("{}: not a module file", ko.display()))?
            .to_string_lossy();
        c.entry(&format!("lib/modules/{name}"), 0o100644, (0, 0), &read(ko)?);
    }
    let mut dirs: Vec<String> = Vec::new();
    for (path, file) in extra {
        let rel = Path::new(path);
        // Parents first, each once, skipping the base directories.
        let mut parents: Vec<&Path> = rel.ancestors().skip(1).collect();
        parents.reverse();
        for d in parents {
            let d = d.to_string_lossy().into_owned();
            if !d.is_empty() && !BASE_DIRS.contains(&d.as_str()) && !dirs.contains(&d) {
                c.entry(&d, 0o040755, (0, 0), &[]);
                dirs.push(d);
            }
        }
        c.entry(path, 0o100755, (0, 0), &read(file)?);
    }
    let init = read(&env::repo_root().join(spec.init))?;
    c.entry("init", 0o100755, (0, 0), &init);
    c.entry("TRAILER!!!", 0, (0, 0), &[]);
    let out = spec.out;
    if let Some(d) = out.parent() {
        fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    fs::write(out, &c.buf).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!("initramfs: {} ({} KiB)", out.display(), c.buf.len() / 1024);
    Ok(out.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `guest/lib.sh` sourced as the guests source it, under the host's
    /// busybox sh when there is one (the guests' shell), else `sh`.
    fn lib_sh(script: &str, dir: &Path) -> std::process::Output {
        let (shell, first) = if Path::new("/bin/busybox").exists() {
            ("/bin/busybox", Some("sh"))
        } else {
            ("sh", None)
        };
        let mut c = Command::new(shell);
        c.args(first)
            .arg("-c")
            .arg(format!(". {}\n{script}", guest_lib().display()))
            .current_dir(dir)
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        c.output().unwrap()
    }

    #[test]
    fn guest_lib_keeps_every_failure_and_frames_the_verdict() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        // lib.sh sets PATH=/bin; the host's tools are there too.
        let out = lib_sh(
            "TAG=t; passed && echo clean; fail one; fail 'two words'; passed || echo dirty\n\
             verdict; mkdir -p cap; echo hi > cap/f; send_framed cap chan",
            d,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout,
            "clean\nt: FAIL: one\nt: FAIL: two words\ndirty\none; two words\n",
            "stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ch = crate::channel::parse(&fs::read(d.join("chan")).unwrap()).unwrap();
        assert_eq!(ch.verdict.as_deref(), Some("one; two words"));
        assert!(ch.archive.is_some_and(|a| a.len() > 20), "no archive");
        let ok = lib_sh("send_framed cap chan2; verdict", d);
        assert_eq!(String::from_utf8_lossy(&ok.stdout), "ok\n");
        let ch = crate::channel::parse(&fs::read(d.join("chan2")).unwrap()).unwrap();
        assert_eq!(ch.verdict.as_deref(), Some("ok"));
    }
}
