//! `cargo xtask shim-test`: boot the test kernel with `kmod-shim/` and check
//! that the shim changes no `/proc/PID/wchan`, refuses bad loader input,
//! survives load/unload cycles under a wchan-reading loop, and how fast it
//! is (in-kernel and `/proc` read timings, stock and shim, same boot).
//!
//! Reuses the harness: `qemu::boot`, the result channel framing, the
//! cache layout; the initramfs is its own (different `/init`, the shim and
//! a static `kallsyms-bench`).

use crate::{channel, env, kernel, qemu, run, Result};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const GUEST_TARGET: &str = "x86_64-unknown-linux-gnu";
const INIT_SCRIPT: &str = "kmod-shim/guest/init.sh";
const APPLETS: &[&str] = &[
    "sh", "mount", "insmod", "rmmod", "lsmod", "cat", "echo", "ls", "mkdir", "mkfifo", "sleep",
    "tar", "gzip", "base64", "stty", "dmesg", "sync", "head", "tail", "wc", "grep", "sed", "awk",
    "kill", "printf", "uname", "rm",
];

/// Options of `shim-test`.
pub struct Options {
    timeout: Duration,
    cycles: u32,
}

impl Options {
    /// `--timeout <secs>`, `--cycles <n>`.
    pub fn parse(args: &[String]) -> Result<Self> {
        let mut o = Options {
            timeout: Duration::from_secs(1500),
            cycles: 20,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = |name: &str| -> Result<u64> {
                let v = it.next().ok_or(format!("{name} needs a value"))?;
                v.parse().map_err(|_| format!("bad {name} {v}"))
            };
            match a.as_str() {
                "--timeout" => o.timeout = Duration::from_secs(val("--timeout")?),
                "--cycles" => o.cycles = val("--cycles")? as u32,
                other => return Err(format!("unknown option {other}")),
            }
        }
        Ok(o)
    }
}

/// `make -C kmod-shim`; returns the `.ko`.
fn build_module() -> Result<PathBuf> {
    let out = env::cache_dir().join("shim-build");
    let mut make = env::kernel_make();
    make.arg("-C")
        .arg(env::repo_root().join("kmod-shim"))
        .arg(format!("KDIR={}", env::kernel_build().display()))
        .arg(format!("OUT={}", out.display()))
        .arg(format!("BINDGEN={}", env::bindgen().display()));
    run::status(&mut make)?;
    Ok(out.join("kallsyms_fast_shim.ko"))
}

/// A static `kallsyms-bench` for the guest.
fn build_loader() -> Result<PathBuf> {
    let target_dir = env::guest_dir().join("shim-target");
    let mut cargo = Command::new(env::cargo());
    cargo
        .current_dir(env::repo_root())
        .args(["build", "--release", "-p", "userspace-bench"])
        .args(["--bin", "kallsyms-bench", "--target", GUEST_TARGET])
        .arg("--target-dir")
        .arg(&target_dir)
        .env(
            "RUSTFLAGS",
            "-C target-feature=+crt-static -C strip=debuginfo",
        );
    run::status(&mut cargo)?;
    Ok(target_dir.join(GUEST_TARGET).join("release/kallsyms-bench"))
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// newc cpio, as `initramfs.rs` writes it.
fn cpio_entry(buf: &mut Vec<u8>, ino: &mut u32, name: &str, mode: u32, data: &[u8]) {
    *ino += 1;
    let dir = mode & 0o170000 == 0o040000;
    let fields = [
        *ino,
        mode,
        0,
        0,
        if dir { 2 } else { 1 },
        0,
        data.len() as u32,
        0,
        0,
        0,
        0,
        name.len() as u32 + 1,
        0,
    ];
    buf.extend_from_slice(b"070701");
    for f in fields {
        buf.extend_from_slice(format!("{f:08x}").as_bytes());
    }
    buf.extend_from_slice(name.as_bytes());
    buf.push(0);
    while buf.len() & 3 != 0 {
        buf.push(0);
    }
    buf.extend_from_slice(data);
    while buf.len() & 3 != 0 {
        buf.push(0);
    }
}

fn build_initramfs(ko: &Path, loader: &Path) -> Result<PathBuf> {
    let (mut b, mut ino) = (Vec::new(), 0u32);
    for d in [
        "bin",
        "dev",
        "proc",
        "sys",
        "lib",
        "lib/modules",
        "out",
        "tmp",
    ] {
        cpio_entry(&mut b, &mut ino, d, 0o040755, &[]);
    }
    cpio_entry(
        &mut b,
        &mut ino,
        "bin/busybox",
        0o100755,
        &read(Path::new("/bin/busybox"))?,
    );
    for a in APPLETS {
        cpio_entry(&mut b, &mut ino, &format!("bin/{a}"), 0o120777, b"busybox");
    }
    cpio_entry(
        &mut b,
        &mut ino,
        "bin/kallsyms-bench",
        0o100755,
        &read(loader)?,
    );
    cpio_entry(
        &mut b,
        &mut ino,
        "lib/modules/kallsyms_fast_shim.ko",
        0o100644,
        &read(ko)?,
    );
    // A second module, if the harness built it: module load/unload events
    // during the cycles exercise the notifier.
    let other = env::guest_dir().join("modules/ksym_truth/ksym_truth.ko");
    if other.exists() {
        cpio_entry(
            &mut b,
            &mut ino,
            "lib/modules/ksym_truth.ko",
            0o100644,
            &read(&other)?,
        );
    }
    let init = read(&env::repo_root().join(INIT_SCRIPT))?;
    cpio_entry(&mut b, &mut ino, "init", 0o100755, &init);
    cpio_entry(&mut b, &mut ino, "TRAILER!!!", 0, &[]);
    let out = env::guest_dir().join("shim-initramfs.cpio");
    fs::write(&out, &b).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(out)
}

fn parse_dump(path: &Path) -> BTreeMap<u32, String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (t, w) = l.split_once(' ')?;
            Some((t.parse().ok()?, w.to_string()))
        })
        .collect()
}

/// Tasks whose stock wchan was the same in every stock dump (before, between
/// and after the shim's) must show that wchan in the shim's dumps too. A
/// task can still move at any moment (rcu_sched flips between
/// rcu_gp_kthread and rcu_gp_fqs_loop), so a difference in one shim dump is
/// reported as motion; a task that differs in every shim dump is a failure.
/// Exact same-address comparisons are the load-time verification and the
/// bench's agreement count. Returns (identical, moved, failed, unstable).
fn compare_dumps(dir: &Path, report: &mut String) -> (usize, usize, usize, usize) {
    let stock: Vec<_> = ["stock1", "stock2", "stock3", "stock4", "stock5"]
        .iter()
        .map(|n| parse_dump(&dir.join(n)))
        .collect();
    let shim: Vec<_> = ["shim1", "shim2", "shim3"]
        .iter()
        .map(|n| parse_dump(&dir.join(n)))
        .collect();
    let (mut same, mut moved, mut bad, mut unstable) = (0, 0, 0, 0);
    for (tid, w) in &stock[0] {
        if !stock.iter().all(|d| d.get(tid) == Some(w)) {
            unstable += 1;
            continue;
        }
        let seen: Vec<&String> = shim.iter().filter_map(|d| d.get(tid)).collect();
        let agree = seen.iter().filter(|x| **x == w).count();
        same += agree;
        if agree == seen.len() {
            continue;
        }
        let diff: Vec<&str> = seen
            .iter()
            .filter(|x| **x != w)
            .map(|x| x.as_str())
            .collect();
        if agree > 0 {
            moved += 1;
            report.push_str(&format!(
                "tid {tid}: stock {w}, shim once {diff:?} (moved)\n"
            ));
        } else {
            bad += 1;
            report.push_str(&format!("tid {tid}: stock {w}, shim always {diff:?}\n"));
        }
    }
    (same, moved, bad, unstable)
}

/// Run the suite; returns the exit code.
pub fn run(opts: &Options) -> Result<u8> {
    let t = Instant::now();
    if !kernel::bzimage().exists() {
        return Err("test kernel missing: run `cargo xtask kernel` first".into());
    }
    let ko = build_module()?;
    let loader = build_loader()?;
    let initrd = build_initramfs(&ko, &loader)?;
    let dir = env::cache_dir().join("runs").join("shim-latest");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let boot = qemu::boot(
        &kernel::bzimage(),
        &initrd,
        &dir,
        opts.timeout,
        &format!("kfs.cycles={}", opts.cycles),
    )?;
    let console = fs::read_to_string(&boot.console).unwrap_or_default();
    eprintln!("--- guest (kfs-shim lines and kernel messages of the shim) ---");
    for l in console.lines() {
        if l.contains("kfs-shim:") || l.contains("kallsyms_fast_shim") {
            eprintln!("{l}");
        }
    }
    eprintln!("--- guest ran {:.1?} ---", boot.elapsed);
    let mut fails = Vec::new();
    if boot.timed_out {
        fails.push(format!("timed out after {}s", opts.timeout.as_secs()));
    }
    for bad in [
        "Oops",
        "WARNING:",
        "BUG:",
        "Call Trace",
        "general protection",
    ] {
        if console.contains(bad) {
            fails.push(format!("console log has \"{bad}\""));
        }
    }
    let ch = channel::parse(&read(&boot.result).unwrap_or_default())?;
    match ch.verdict.as_deref() {
        Some("ok") => {}
        Some(v) => fails.push(format!("guest: {v}")),
        None => fails.push("no verdict on the result channel".into()),
    }
    if let Some(archive) = ch.archive {
        let capture = dir.join("capture");
        fs::create_dir_all(&capture).map_err(|e| e.to_string())?;
        let tgz = dir.join("capture.tar.gz");
        fs::write(&tgz, &archive).map_err(|e| e.to_string())?;
        run::status(
            Command::new("tar")
                .arg("-xzf")
                .arg(&tgz)
                .arg("-C")
                .arg(&capture),
        )?;
        let mut report = String::new();
        let (same, moved, bad, unstable) = compare_dumps(&capture, &mut report);
        eprint!("{report}");
        eprintln!(
            "shim-test: wchan: {same} (task, shim dump) answers identical to stock; {moved} tasks \
             moved in one shim dump, {bad} differ in all; {unstable} tasks skipped (moved \
             between stock dumps)"
        );
        if bad > 0 || same == 0 {
            fails.push(format!("{bad} tasks with a different wchan under the shim"));
        }
    } else {
        fails.push("no capture on the result channel".into());
    }
    eprintln!("shim-test: logs in {} ({:.1?})", dir.display(), t.elapsed());
    if fails.is_empty() {
        eprintln!("shim-test: PASS");
        Ok(0)
    } else {
        eprintln!("shim-test: FAIL: {}", fails.join("; "));
        Ok(1)
    }
}
