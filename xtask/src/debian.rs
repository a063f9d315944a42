//! `cargo xtask debian-shim-test`: kmod-shim in Debian's own, unmodified
//! Rust-enabled kernel.
//!
//! 1. A private apt configuration (its own sources list, lists and cache
//!    under `$KFAST_CACHE/debian/apt`; the system's sources are not
//!    touched) sees trixie and trixie-backports. The newest
//!    `linux-headers-<version>-amd64` whose `.config` has `CONFIG_RUST=y`
//!    names the kernel; its image (`linux-binary-unsigned-…`, or the older
//!    `linux-image-…-unsigned`), modules, headers, `-common`,
//!    `linux-kbuild-…` and `linux-source-<major.minor>` are downloaded, all
//!    at the headers' version.
//! 2. A trixie chroot (debootstrap, `--variant=minbase`) with the rustc the
//!    kernel's `CONFIG_RUSTC_VERSION_TEXT` names, refused when it differs:
//!    Rust symbol names carry a hash of the rustc version, so a module
//!    built by another rustc does not link against the kernel.
//! 3. The source unpacked with the headers' `.config`, `.kernelvariables`
//!    and `Module.symvers`, and `make modules_prepare` once in the chroot
//!    (it builds `rust/`: the headers package has no Rust metadata),
//!    cached in `$KFAST_CACHE/debian/<kernel-release>/`, keyed on the
//!    package versions and the rustc.
//! 4. kmod-shim and the test modules built there, in the chroot.
//! 5. Debian's own vmlinuz booted in QEMU TCG (`-cpu max`) with Debian's
//!    modules (btrfs, xfs, mac80211, nf_tables, kvm and what they depend
//!    on, decompressed on the host) loaded first, then the shim suite's own
//!    `/init` (`guest/shim-init.sh`), shortened: fewer scale threads,
//!    `check`/`truth` on every 16th address (the UML and 6.12 QEMU
//!    suites cover the same code at length); the 20 load/unload cycles.
//!    Before the shim loads, the guest makes the mirror's capture
//!    (`kfast-guest` with `ksym_truth`, as guest-test does on the
//!    project's kernel): the host resolves every captured address with
//!    `kallsyms-bench resolve`: every vmlinux answer must be Debian's
//!    kernel's, and at least 99.5% of the module answers.
//!
//! The guest's two vCPUs run in one host thread (`-accel
//! tcg,thread=single`). Under QEMU's default multi-threaded TCG, a run
//! can die on a livepatch transition: `Oops: int3` at `__schedule+0xa4`
//! on both CPUs at once, the site of the kernel's own
//! `klp_sched_try_switch` static key that every transition pokes through
//! `text_poke_bp`, the int3 still executed after the poke is over. Not
//! proven, but taken for multi-threaded TCG's cross-vCPU handling of
//! modified code (the shim's code is on neither stack); one TCG
//! thread orders the poke and the vCPUs, keeps two CPUs for the contexts
//! test and leaves the second host core to the steps beside it.
//!
//! Not covered: a CPU enforcing IBT (TCG does not), so the shim's ENDBR
//! check on the functions it calls through pointers always passes here.
//! A fresh run (chroot, `modules_prepare`, ksym_many) takes about 30
//! minutes on the shared 2-core host, not 15; cached, about 10.
//!
//! Everything lives under `$KFAST_CACHE/debian` (default
//! `/var/cache/kallsyms-fast/debian`); `debian-src` beside it is not ours.

use crate::initramfs;
use crate::{env, modules, run, shim_test, steps, Result};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Suites the private apt configuration sees.
const SUITES: &[&str] = &["trixie", "trixie-backports"];
/// The Debian mirror.
const MIRROR: &str = "http://deb.debian.org/debian";
/// The keyring that signs trixie (debian-archive-keyring).
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";
/// The chroot's suite.
const CHROOT_SUITE: &str = "trixie";
/// What the chroot needs to build the kernel's Rust and the shim (rustc
/// and rust-src are added at the version the kernel names).
const CHROOT_PACKAGES: &[&str] = &[
    "bindgen",
    "clang",
    "libclang-dev",
    "gcc-14",
    "make",
    "flex",
    "bison",
    "bc",
    "libelf-dev",
    "libssl-dev",
    "pahole",
    "libc6-dev",
    "cpio",
    "xz-utils",
    "kmod",
    "python3",
];
/// Debian modules the guest loads (their dependencies first, from
/// `modules.dep`): big symbol tables, and `cifs`, whose dependency
/// `nls_ucs2_utils` has no text at all (tables only: no `MOD_TEXT`, so
/// `/proc/modules` shows its base as 0 even to root).
const DEBIAN_MODULES: &[&str] = &["btrfs", "xfs", "mac80211", "nf_tables", "kvm", "cifs"];
/// How many of the newest kernels are checked for `CONFIG_RUST=y`.
const CANDIDATES: usize = 4;

/// Options of `debian-shim-test`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Hard timeout for the QEMU guest, in seconds.
    #[arg(long, value_name = "SECS", default_value = "1500", value_parser = crate::secs)]
    timeout: Duration,
    /// Load/unload cycles (init.sh's step 4): 20, as the 6.12 suite runs
    /// them (`cargo xtask test` runs the boot beside other
    /// suites: xtask/src/schedule.rs).
    #[arg(long, value_name = "N", default_value_t = 20)]
    cycles: u32,
    /// Threads per group in init.sh's step 5 (check, truth, scale dumps).
    #[arg(long, value_name = "N", default_value_t = 16)]
    scale: u32,
    /// `shim check` and `shim truth` on every Nth address around the
    /// symbols (1: all 390,000 of Debian's kernel with its modules, about
    /// 25 minutes under TCG on a shared host; the 6.12 suite does all).
    #[arg(long, value_name = "N", default_value_t = 16)]
    every: u32,
    /// Prepare and build only: no boot.
    #[arg(long)]
    build_only: bool,
}

impl Default for Options {
    fn default() -> Self {
        crate::arg_defaults()
    }
}

impl Options {
    /// `--build-only`: the chroot, `modules_prepare` and the modules, no
    /// boot (a step of its own in `cargo xtask test`, so that the table
    /// shows the build apart from the boot).
    pub fn build_only() -> Self {
        Options {
            build_only: true,
            ..Self::default()
        }
    }
}

/// `$KFAST_CACHE/debian`.
fn root() -> PathBuf {
    env::cache_dir().join("debian")
}

fn mkdir(p: &Path) -> Result<()> {
    fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))
}

fn write(p: &Path, data: impl AsRef<[u8]>) -> Result<()> {
    fs::write(p, data).map_err(|e| format!("cannot write {}: {e}", p.display()))
}

/// The private apt configuration.
struct Apt {
    dir: PathBuf,
}

impl Apt {
    fn new() -> Result<Self> {
        let dir = root().join("apt");
        for d in ["lists/partial", "cache/archives/partial"] {
            mkdir(&dir.join(d))?;
        }
        let mut list = String::new();
        for s in SUITES {
            list.push_str(&format!("deb [signed-by={KEYRING}] {MIRROR} {s} main\n"));
        }
        write(&dir.join("sources.list"), list)?;
        Ok(Apt { dir })
    }

    fn cmd(&self, tool: &str) -> Command {
        let mut c = Command::new(tool);
        let d = &self.dir;
        c.arg("-o")
            .arg(format!(
                "Dir::Etc::SourceList={}",
                d.join("sources.list").display()
            ))
            .args(["-o", "Dir::Etc::SourceParts=/dev/null"])
            .arg("-o")
            .arg(format!("Dir::State::Lists={}", d.join("lists").display()))
            .arg("-o")
            .arg(format!("Dir::Cache={}", d.join("cache").display()))
            .args(["-o", "APT::Architecture=amd64", "-q"]);
        c
    }

    /// `apt-get update`; with lists from an earlier run, a failure (no
    /// network) is a warning.
    fn update(&self) -> Result<()> {
        let had = fs::read_dir(self.dir.join("lists"))
            .map(|d| d.count() > 2)
            .unwrap_or(false);
        match run::output(self.cmd("apt-get").arg("update")) {
            Ok(_) => Ok(()),
            Err(e) if had => {
                eprintln!("debian: apt-get update failed, using the lists of an earlier run: {e}");
                Ok(())
            }
            Err(e) => Err(format!("cannot read the Debian archive ({MIRROR}): {e}")),
        }
    }

    /// Package names starting with `prefix`.
    fn names(&self, prefix: &str) -> Result<Vec<String>> {
        let out = run::output(self.cmd("apt-cache").args(["pkgnames", prefix]))?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect())
    }

    /// The candidate versions' records of `pkgs` (one `apt-cache` run: each
    /// reads all the lists), by package; a package the archive does not
    /// have is absent.
    fn records(&self, pkgs: &[String]) -> Result<BTreeMap<String, Record>> {
        let out = self
            .cmd("apt-cache")
            .args(["show", "--no-all-versions"])
            .args(pkgs)
            .output()
            .map_err(|e| format!("cannot run apt-cache: {e}"))?;
        let mut map = BTreeMap::new();
        for stanza in String::from_utf8_lossy(&out.stdout).split("\n\n") {
            let field = |f: &str| {
                let key = format!("{f}: ");
                stanza
                    .lines()
                    .find_map(|l| l.strip_prefix(&key))
                    .map(|v| v.trim().to_string())
            };
            if let (Some(p), Some(version), Some(file)) =
                (field("Package"), field("Version"), field("Filename"))
            {
                map.insert(p, Record { version, file });
            }
        }
        Ok(map)
    }

    /// Downloads `pkg` at `r.version` into `debs` (kept: a second run
    /// finds it there); returns the file.
    fn download(&self, pkg: &str, r: &Record, debs: &Path) -> Result<PathBuf> {
        let name = r.file.rsplit('/').next().unwrap_or(&r.file);
        let path = debs.join(name);
        if !path.exists() {
            mkdir(debs)?;
            run::output(
                self.cmd("apt-get")
                    .current_dir(debs)
                    .args(["download", &format!("{pkg}={}", r.version)]),
            )?;
        }
        if !path.exists() {
            return Err(format!(
                "{pkg}: apt-get download left no {}",
                path.display()
            ));
        }
        Ok(path)
    }
}

/// A package's candidate version and its file in the archive.
struct Record {
    version: String,
    file: String,
}

/// Orders "7.3.4+deb13" before "7.3.10+deb13": the numbers of the version
/// up to the first `+` or `-`.
fn version_key(v: &str) -> Vec<u64> {
    v.split(['+', '-'])
        .next()
        .unwrap_or("")
        .split('.')
        .map(|n| n.parse().unwrap_or(0))
        .collect()
}

/// `<version>` of `linux-headers-<version>-amd64` (the generic flavour:
/// not cloud, not rt, not the common package).
fn headers_version(name: &str) -> Option<&str> {
    let v = name
        .strip_prefix("linux-headers-")?
        .strip_suffix("-amd64")?;
    (v.starts_with(|c: char| c.is_ascii_digit()) && !v.contains('-')).then_some(v)
}

/// `CONFIG_<name>`'s value in a `.config` (quotes removed), `None` when
/// unset.
pub(crate) fn config_value(config: &str, name: &str) -> Option<String> {
    let key = format!("CONFIG_{name}=");
    config
        .lines()
        .find_map(|l| l.strip_prefix(&key))
        .map(|v| v.trim_matches('"').to_string())
}

/// Extracts `deb` into `dir`.
fn extract(deb: &Path, dir: &Path) -> Result<()> {
    mkdir(dir)?;
    run::output(Command::new("dpkg-deb").arg("-x").arg(deb).arg(dir)).map(|_| ())
}

/// The kernel the suite runs: its packages, all at one version.
struct Kernel {
    /// `7.3.4+deb13-amd64`.
    release: String,
    /// The `.config` of the headers package.
    config: String,
    /// (package, version, .deb) of image, modules, headers, -common,
    /// kbuild, source.
    debs: Vec<(String, String, PathBuf)>,
    /// `linux-source-7.3`.
    source: String,
}

/// Finds the newest Rust-enabled amd64 kernel and downloads its packages.
fn find_kernel(apt: &Apt) -> Result<Kernel> {
    let debs = root().join("debs");
    let mut versions: Vec<String> = apt
        .names("linux-headers-")?
        .iter()
        .filter_map(|n| headers_version(n).map(String::from))
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
    versions.dedup();
    versions.truncate(CANDIDATES);
    // Every package of every candidate, in one apt-cache run.
    let wanted = |v: &str| -> Vec<String> {
        let release = format!("{v}-amd64");
        let mm: Vec<&str> = v.split(['.', '+']).take(2).collect();
        vec![
            format!("linux-headers-{release}"),
            format!("linux-binary-unsigned-{release}"),
            format!("linux-image-{release}-unsigned"),
            format!("linux-modules-{release}"),
            format!("linux-headers-{v}-common"),
            format!("linux-kbuild-{v}"),
            format!("linux-source-{}", mm.join(".")),
        ]
    };
    let all: Vec<String> = versions.iter().flat_map(|v| wanted(v)).collect();
    let recs = apt.records(&all)?;
    let mut checked = Vec::new();
    for v in &versions {
        let release = format!("{v}-amd64");
        let names = wanted(v);
        let headers = &names[0];
        let hrec = recs
            .get(headers)
            .ok_or(format!("{headers}: listed but has no record"))?;
        let deb = apt.download(headers, hrec, &debs)?;
        let dir = root().join(&release).join("pkgs");
        extract(&deb, &dir)?;
        let cfg_path = dir.join("usr/src").join(headers).join(".config");
        let config = fs::read_to_string(&cfg_path)
            .map_err(|e| format!("{headers}: no .config ({}: {e})", cfg_path.display()))?;
        if config_value(&config, "RUST").as_deref() != Some("y") {
            checked.push(format!("{release} ({}) has no CONFIG_RUST=y", hrec.version));
            continue;
        }
        // The image: the split packaging of 7.x (vmlinuz and modules apart)
        // or the older one (both in linux-image-…-unsigned).
        let (image, modules) = match (recs.get(&names[1]), recs.get(&names[3])) {
            (Some(_), Some(_)) => (&names[1], Some(&names[3])),
            _ if recs.contains_key(&names[2]) => (&names[2], None),
            _ => {
                return Err(format!(
                    "{release} is Rust-enabled, but the archive has neither {} with {} nor {}",
                    names[1], names[3], names[2]
                ))
            }
        };
        let pkgs = [
            Some(image),
            modules,
            Some(headers),
            Some(&names[4]),
            Some(&names[5]),
            Some(&names[6]),
        ];
        let mut got = Vec::new();
        for p in pkgs.into_iter().flatten() {
            let r = recs.get(p).ok_or(format!(
                "{release} is Rust-enabled, but {p} is not in the archive"
            ))?;
            if r.version != hrec.version {
                return Err(format!(
                    "{p} is at {}, {headers} at {}: the archive is mid-update, try later",
                    r.version, hrec.version
                ));
            }
            let deb = apt.download(p, r, &debs)?;
            got.push((p.clone(), r.version.clone(), deb));
        }
        return Ok(Kernel {
            release,
            config,
            debs: got,
            source: names[6].clone(),
        });
    }
    if checked.is_empty() {
        return Err(format!(
            "no linux-headers-<version>-amd64 package in {}",
            SUITES.join(" or ")
        ));
    }
    Err(format!(
        "Debian serves no Rust-enabled amd64 kernel in {}: {}",
        SUITES.join(" or "),
        checked.join("; ")
    ))
}

/// Mounts into the chroot, undone (lazily, in reverse) on drop.
struct Mounts {
    points: Vec<PathBuf>,
}

impl Mounts {
    fn new() -> Self {
        Mounts { points: Vec::new() }
    }

    fn mount(&mut self, args: &[&str], src: &Path, at: &Path) -> Result<()> {
        mkdir(at)?;
        run::output(Command::new("mount").args(args).arg(src).arg(at))?;
        self.points.push(at.to_path_buf());
        Ok(())
    }

    fn bind(&mut self, src: &Path, at: &Path, read_only: bool) -> Result<()> {
        self.mount(&["--bind"], src, at)?;
        if read_only {
            run::output(
                Command::new("mount")
                    .args(["-o", "remount,bind,ro"])
                    .arg(at),
            )?;
        }
        Ok(())
    }
}

impl Drop for Mounts {
    fn drop(&mut self) {
        while let Some(p) = self.points.pop() {
            let _ = Command::new("umount").arg("-l").arg(&p).status();
        }
    }
}

/// The trixie chroot the kernel's Rust and the shim are built in.
struct Chroot {
    dir: PathBuf,
}

/// Where the kernel's directory and the repository appear in the chroot.
const IN_KERNEL: &str = "/kfast/kernel";
const IN_REPO: &str = "/kfast/repo";

impl Chroot {
    /// A `sh -c script` in the chroot, `/proc` mounted, the kernel
    /// directory `kdir` at [`IN_KERNEL`] and the repository (read-only) at
    /// [`IN_REPO`].
    fn sh(&self, kdir: Option<&Path>, script: &str) -> Result<()> {
        let mut m = Mounts::new();
        m.mount(&["-t", "proc"], Path::new("proc"), &self.dir.join("proc"))?;
        if let Some(k) = kdir {
            m.bind(k, &self.dir.join(&IN_KERNEL[1..]), false)?;
            m.bind(&env::repo_root(), &self.dir.join(&IN_REPO[1..]), true)?;
        }
        let mut c = Command::new("chroot");
        c.arg(&self.dir)
            .args(["/bin/sh", "-ec", script])
            .env_clear()
            .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
            .env("HOME", "/root")
            .env("LANG", "C.UTF-8")
            .env("DEBIAN_FRONTEND", "noninteractive");
        run::status(&mut c)
    }

    /// `rustc --version` in the chroot.
    fn rustc_version(&self) -> Option<String> {
        let out = run::stdout_opt(
            Command::new("chroot")
                .arg(&self.dir)
                .args(["rustc", "--version"]),
        )?;
        Some(out.trim().to_string())
    }
}

/// The debootstrap to run: the system's, else trixie's `.deb` extracted
/// (it runs from its directory with `DEBOOTSTRAP_DIR`).
fn debootstrap(apt: &Apt) -> Result<Command> {
    if Path::new("/usr/sbin/debootstrap").exists() {
        return Ok(Command::new("/usr/sbin/debootstrap"));
    }
    let recs = apt.records(&["debootstrap".to_string()])?;
    let r = recs
        .get("debootstrap")
        .ok_or("debootstrap is neither installed nor in the archive")?;
    let deb = apt.download("debootstrap", r, &root().join("debs"))?;
    let dir = root()
        .join("tools")
        .join(format!("debootstrap-{}", r.version));
    extract(&deb, &dir)?;
    let mut c = Command::new(dir.join("usr/sbin/debootstrap"));
    c.env("DEBOOTSTRAP_DIR", dir.join("usr/share/debootstrap"));
    Ok(c)
}

/// The chroot, made (or remade) when missing or built for another rustc.
fn chroot(apt: &Apt, rustc_text: &str) -> Result<Chroot> {
    let dir = root().join(format!("chroot-{CHROOT_SUITE}"));
    let stamp_path = dir.join(".kfast-chroot");
    let want = format!("{}\n{rustc_text}\n", CHROOT_PACKAGES.join(" "));
    let ch = Chroot { dir: dir.clone() };
    if fs::read_to_string(&stamp_path).ok().as_deref() == Some(want.as_str()) {
        steps::note_built(format!(
            "debian chroot-{CHROOT_SUITE}: current (packages and rustc as stamped)"
        ));
        return Ok(ch);
    }
    let t = Instant::now();
    let created = !dir.join("usr/bin/apt-get").exists();
    if created {
        let tmp = root().join(format!("chroot-{CHROOT_SUITE}.tmp"));
        if tmp.exists() {
            fs::remove_dir_all(&tmp)
                .map_err(|e| format!("cannot remove {}: {e}", tmp.display()))?;
        }
        if dir.exists() {
            fs::remove_dir_all(&dir)
                .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
        }
        let mut c = debootstrap(apt)?;
        c.args([
            "--variant=minbase",
            &format!("--keyring={KEYRING}"),
            CHROOT_SUITE,
        ])
        .arg(&tmp)
        .arg(MIRROR);
        run::output(&mut c)?;
        fs::rename(&tmp, &dir).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))?;
    }
    // rustc and rust-src as trixie has them: the chroot's rustc must be
    // the kernel's, checked below.
    ch.sh(
        None,
        &format!(
            "apt-get -q update >/dev/null && apt-get -q -y --no-install-recommends install \
             rustc rust-src {} >/dev/null",
            CHROOT_PACKAGES.join(" ")
        ),
    )?;
    let have = ch.rustc_version().unwrap_or_else(|| "no rustc".into());
    if have != rustc_text {
        return Err(format!(
            "the kernel was built with \"{rustc_text}\" (CONFIG_RUSTC_VERSION_TEXT), the \
             {CHROOT_SUITE} chroot has \"{have}\": a module built by another rustc cannot link \
             against the kernel's Rust symbols"
        ));
    }
    write(&stamp_path, want)?;
    steps::note_built(if created {
        format!("debian chroot-{CHROOT_SUITE}: created from nothing (debootstrap, packages)")
    } else {
        format!("debian chroot-{CHROOT_SUITE}: packages installed again (stamp differed)")
    });
    eprintln!(
        "debian: chroot {} ready ({:.0?})",
        dir.display(),
        t.elapsed()
    );
    Ok(ch)
}

/// The kernel's directory: `pkgs/` (the extracted packages), `tree/`
/// (the prepared source), `shim-build/`, `test-modules/`, `guest/`.
fn kernel_dir(k: &Kernel) -> PathBuf {
    root().join(&k.release)
}

/// The headers package's directory inside `pkgs/`.
fn headers_dir(k: &Kernel) -> PathBuf {
    kernel_dir(k)
        .join("pkgs/usr/src")
        .join(format!("linux-headers-{}", k.release))
}

/// Unpacks the source with the headers' configuration and runs
/// `modules_prepare` in the chroot, unless the stamp says it was done for
/// these packages and this rustc. Returns the tree's path in the chroot.
fn prepare(k: &Kernel, ch: &Chroot, rustc_text: &str) -> Result<String> {
    let kdir = kernel_dir(k);
    let pkgs = kdir.join("pkgs");
    let stamp: String = k
        .debs
        .iter()
        .map(|(p, v, _)| format!("{p}={v}\n"))
        .chain(std::iter::once(format!("{rustc_text}\n")))
        .collect();
    let stamp_path = kdir.join("prepared.stamp");
    let tree_name = k.source.clone();
    let in_tree = format!("{IN_KERNEL}/tree/{tree_name}");
    if fs::read_to_string(&stamp_path).ok().as_deref() == Some(stamp.as_str()) {
        steps::note_built(format!(
            "debian {}: modules_prepare current (packages and rustc as stamped)",
            k.release
        ));
        return Ok(in_tree);
    }
    let t = Instant::now();
    for (_, _, deb) in &k.debs {
        if !deb.to_string_lossy().contains("linux-source-") {
            extract(deb, &pkgs)?;
        }
    }
    let tree = kdir.join("tree");
    if tree.exists() {
        fs::remove_dir_all(&tree).map_err(|e| format!("cannot remove {}: {e}", tree.display()))?;
    }
    mkdir(&tree)?;
    let src_deb = &k
        .debs
        .iter()
        .find(|(p, _, _)| *p == k.source)
        .ok_or("no source package")?
        .2;
    // The source package holds /usr/src/<name>.tar.xz.
    run::status(Command::new("sh").arg("-ec").arg(format!(
        "dpkg-deb --fsys-tarfile '{}' | tar -xOf - ./usr/src/{tree_name}.tar.xz | tar -xJf - -C '{}'",
        src_deb.display(),
        tree.display()
    )))?;
    let hdr = headers_dir(k);
    for f in [".config", ".kernelvariables", "Module.symvers"] {
        fs::copy(hdr.join(f), tree.join(&tree_name).join(f))
            .map_err(|e| format!("cannot copy {f} from {}: {e}", hdr.display()))?;
    }
    ch.sh(
        Some(&kdir),
        &format!(
            "cd {in_tree}; make -s olddefconfig; make rustavailable; make {} modules_prepare",
            env::MAKE_JOBS
        ),
    )?;
    write(&stamp_path, stamp)?;
    steps::note_built(format!(
        "debian {}: modules_prepare from nothing (source unpacked afresh)",
        k.release
    ));
    eprintln!("debian: {} prepared ({:.0?})", tree.display(), t.elapsed());
    Ok(in_tree)
}

/// Builds kmod-shim and the test modules in the chroot; returns the
/// `.ko`s (the shim first) as host paths.
fn build(k: &Kernel, ch: &Chroot, in_tree: &str) -> Result<Vec<PathBuf>> {
    let kdir = kernel_dir(k);
    // The test modules' sources, as modules::build_for lays them out.
    let names = ["ksym_truth", "ksym_many", "ksym_ctx"];
    modules::stage(&names, &kdir.join("test-modules"))?;
    let mut script = format!(
        "make -C {IN_REPO}/kmod-shim KDIR={in_tree} OUT={IN_KERNEL}/shim-build BINDGEN=bindgen\n"
    );
    for n in names {
        script.push_str(&format!(
            "make -C {in_tree} M={IN_KERNEL}/test-modules/{n} KCFLAGS=-Werror {} modules\n",
            env::MAKE_JOBS
        ));
    }
    ch.sh(Some(&kdir), &script)?;
    let mut kos = vec![kdir.join("shim-build/kallsyms_fast_shim.ko")];
    kos.extend(
        names
            .iter()
            .map(|n| kdir.join("test-modules").join(n).join(format!("{n}.ko"))),
    );
    for ko in &kos {
        if !ko.exists() {
            return Err(format!("{} missing after the build", ko.display()));
        }
    }
    Ok(kos)
}

/// Debian's modules for the guest, dependencies first, decompressed into
/// `guest/debian-modules/`; returns (load order, files).
fn debian_modules(k: &Kernel) -> Result<(Vec<String>, Vec<PathBuf>)> {
    let kdir = kernel_dir(k);
    let pkgs = kdir.join("pkgs");
    let mods = pkgs.join("usr/lib/modules").join(&k.release);
    // depmod -b wants <base>/lib/modules/<release>.
    let base = kdir.join("depmod");
    let link = base.join("lib/modules");
    if !link.exists() {
        mkdir(&base.join("lib"))?;
        std::os::unix::fs::symlink(pkgs.join("usr/lib/modules"), &link)
            .map_err(|e| format!("cannot link {}: {e}", link.display()))?;
    }
    let dep = mods.join("modules.dep");
    if !dep.exists() {
        run::output(Command::new("depmod").arg("-b").arg(&base).arg(&k.release))?;
    }
    let dep = fs::read_to_string(&dep).map_err(|e| format!("{}: {e}", dep.display()))?;
    let name_of = |path: &str| -> String {
        let f = path.rsplit('/').next().unwrap_or(path);
        f.split(".ko").next().unwrap_or(f).to_string()
    };
    // name -> (path, dependencies).
    let mut table = std::collections::BTreeMap::new();
    for l in dep.lines() {
        let Some((m, deps)) = l.split_once(':') else {
            continue;
        };
        let d: Vec<String> = deps.split_whitespace().map(String::from).collect();
        table.insert(name_of(m), (m.to_string(), d));
    }
    let mut order: Vec<String> = Vec::new();
    let mut files = Vec::new();
    let out = kdir.join("guest/debian-modules");
    mkdir(&out)?;
    for want in DEBIAN_MODULES {
        let (path, deps) = table
            .get(*want)
            .ok_or(format!("{} has no module {want}", k.release))?;
        // modules.dep lists the dependencies so that loading them from
        // last to first works.
        for p in deps.iter().rev().chain(std::iter::once(path)) {
            let name = name_of(p);
            if order.contains(&name) {
                continue;
            }
            let ko = out.join(format!("{name}.ko"));
            if !ko.exists() {
                let src = mods.join(p);
                let data = if p.ends_with(".xz") {
                    run::output(Command::new("xz").arg("-dc").arg(&src))?.stdout
                } else if p.ends_with(".zst") {
                    run::output(Command::new("zstd").arg("-dc").arg(&src))?.stdout
                } else {
                    initramfs::read(&src)?
                };
                write(&ko, data)?;
            }
            order.push(name);
            files.push(ko);
        }
    }
    Ok((order, files))
}

/// The vmlinuz of the image package.
fn vmlinuz(k: &Kernel) -> Result<PathBuf> {
    let pkgs = kernel_dir(k).join("pkgs");
    let cands = [
        pkgs.join("boot").join(format!("vmlinuz-{}", k.release)),
        pkgs.join("usr/lib/modules")
            .join(&k.release)
            .join("vmlinuz"),
        pkgs.join("usr/lib/modules")
            .join(&k.release)
            .join("vmlinuz.unsigned"),
    ];
    cands
        .iter()
        .find(|p| p.exists())
        .cloned()
        .ok_or(format!("no vmlinuz in the image package of {}", k.release))
}

/// Run the Debian flavour of the shim suite; returns the exit code.
pub fn run(opts: &Options) -> Result<u8> {
    let t = Instant::now();
    let apt = Apt::new()?;
    apt.update()?;
    let k = find_kernel(&apt)?;
    eprintln!(
        "debian: kernel {} ({}), {:.0?}",
        k.release,
        k.debs.first().map_or("", |d| d.1.as_str()),
        t.elapsed()
    );
    let rustc_text = config_value(&k.config, "RUSTC_VERSION_TEXT").ok_or(format!(
        "{}: .config has no CONFIG_RUSTC_VERSION_TEXT",
        k.release
    ))?;
    for (opt, want) in [("LIVEPATCH", "y"), ("MODULES", "y")] {
        if config_value(&k.config, opt).as_deref() != Some(want) {
            return Err(format!("{}: the shim needs CONFIG_{opt}={want}", k.release));
        }
    }
    if config_value(&k.config, "MODVERSIONS").is_some() {
        return Err(format!(
            "{}: has CONFIG_MODVERSIONS (Rust needs it off)",
            k.release
        ));
    }
    let ch = chroot(&apt, &rustc_text)?;
    let in_tree = prepare(&k, &ch, &rustc_text)?;
    let t_build = Instant::now();
    let kos = build(&k, &ch, &in_tree)?;
    eprintln!(
        "debian: shim and test modules built ({:.0?})",
        t_build.elapsed()
    );
    if opts.build_only {
        eprintln!(
            "debian: built in {:.0?}; --build-only: no boot",
            t.elapsed()
        );
        return Ok(0);
    }
    let (order, debian_kos) = debian_modules(&k)?;
    let kdir = kernel_dir(&k);
    let preload = kdir.join("guest/preload");
    write(&preload, order.join("\n") + "\n")?;
    let mut all = kos;
    all.extend(debian_kos);
    // The mirror's capture agent (init.sh's kfs.mirror=1 step).
    let agent = initramfs::build_agent()?;
    let dir = env::work_dir().join("runs").join("debian-shim-latest");
    let code = shim_test::run_suite(&shim_test::Suite {
        label: "debian-shim-test",
        kernel: &vmlinuz(&k)?,
        modules: &all,
        extra_files: &[
            ("lib/modules/preload".into(), preload),
            ("bin/kfast-guest".into(), agent),
        ],
        initramfs: &kdir.join("guest/debian-shim-initramfs.cpio"),
        cmdline: &format!(
            "kfs.mirror=1 kfs.cycles={} kfs.scale={} kfs.every={}",
            opts.cycles, opts.scale, opts.every
        ),
        qemu_args: &["-accel", "tcg,thread=single", "-cpu", "max"],
        dir: &dir,
        timeout: opts.timeout,
        scale: opts.scale,
        mirror: true,
    })?;
    eprintln!("debian: {} in {:.0?}", k.release, t.elapsed());
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names() {
        assert_eq!(
            headers_version("linux-headers-7.3.4+deb13-amd64"),
            Some("7.3.4+deb13")
        );
        assert_eq!(
            headers_version("linux-headers-7.3.4+deb13-cloud-amd64"),
            None
        );
        assert_eq!(headers_version("linux-headers-7.3.4+deb13-common"), None);
        assert_eq!(headers_version("linux-headers-amd64"), None);
        assert!(version_key("7.3.10+deb13") > version_key("7.3.4+deb13"));
        assert!(version_key("7.10.1+deb13") > version_key("7.3.4+deb13"));
    }

    #[test]
    fn config_values() {
        let c = "CONFIG_RUST=y\nCONFIG_RUSTC_VERSION_TEXT=\"rustc 1.85.1 (x)\"\n# CONFIG_MODVERSIONS is not set\n";
        assert_eq!(config_value(c, "RUST").as_deref(), Some("y"));
        assert_eq!(
            config_value(c, "RUSTC_VERSION_TEXT").as_deref(),
            Some("rustc 1.85.1 (x)")
        );
        assert_eq!(config_value(c, "MODVERSIONS"), None);
    }
}
