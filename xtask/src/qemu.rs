//! Boot the test kernel in QEMU (TCG) with a hard timeout.

use crate::Result;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Marker the guest's `/init` writes last on the result channel.
pub const VERDICT: &str = "KFAST-VERDICT";
/// How long the guest may linger after its verdict before we stop it.
const GRACE: Duration = Duration::from_secs(20);

/// What happened to one QEMU run.
pub struct Boot {
    /// Full kernel console (ttyS0).
    pub console: PathBuf,
    /// Result channel (ttyS1).
    pub result: PathBuf,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// True when the hard timeout killed QEMU.
    pub timed_out: bool,
    /// Code the guest passed to isa-debug-exit, if it left that way.
    pub guest_exit: Option<i32>,
}

/// `$KFAST_QEMU_EXTRA`, split at whitespace: arguments added to every boot,
/// for probes, e.g. `-d in_asm -D FILE -dfilter LO..HI` to log the blocks
/// TCG translates in an address range (docs/nproc-bench.md).
fn extra_args() -> Vec<String> {
    std::env::var("KFAST_QEMU_EXTRA")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Boot `kernel` with `initrd`; logs go into `dir`, emptied first so that
/// no earlier run's logs are read as this one's.
pub fn boot(
    kernel: &Path,
    initrd: &Path,
    dir: &Path,
    timeout: Duration,
    extra: &str,
) -> Result<Boot> {
    boot_with(kernel, initrd, dir, timeout, extra, &[])
}

/// [`boot`], with `qemu_args` added to QEMU's command line (before
/// `$KFAST_QEMU_EXTRA`'s).
pub fn boot_with(
    kernel: &Path,
    initrd: &Path,
    dir: &Path,
    timeout: Duration,
    extra: &str,
    qemu_args: &[&str],
) -> Result<Boot> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("cannot clean {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let console = dir.join("console.log");
    let result = dir.join("result.txt");
    let qlog = dir.join("qemu.log");
    let log = fs::File::create(&qlog).map_err(|e| format!("{}: {e}", qlog.display()))?;
    let log2 = log.try_clone().map_err(|e| e.to_string())?;
    let append = format!("console=ttyS0 nokaslr panic=-1 oops=panic {extra}");
    let mut cmd = Command::new("qemu-system-x86_64");
    // QEMU uses the first `-accel` that works: a caller's own TCG options
    // (e.g. `thread=single`) replace the default instead of following it.
    if !qemu_args.contains(&"-accel") {
        cmd.args(["-accel", "tcg"]);
    }
    cmd.args(["-m", "1024", "-smp", "2", "-nic", "none"])
        .arg("-kernel")
        .arg(kernel)
        .arg("-initrd")
        .arg(initrd)
        .args(["-append", &append])
        .args(["-nographic", "-no-reboot", "-monitor", "none"])
        .args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"])
        .args(qemu_args)
        .args(extra_args())
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .arg("-serial")
        .arg(format!("file:{}", result.display()))
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2);
    let with: String = qemu_args.iter().map(|a| format!(" {a}")).collect();
    eprintln!(
        "qemu: booting (TCG{with}, timeout {}s), console {}",
        timeout.as_secs(),
        console.display()
    );
    let t = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start qemu-system-x86_64: {e} (run `cargo xtask setup`)"))?;
    let mut verdict_at: Option<Instant> = None;
    let mut timed_out = false;
    let mut guest_exit = None;
    loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            // isa-debug-exit makes QEMU exit with (code << 1) | 1.
            match st.code() {
                Some(c) if c % 2 == 1 => guest_exit = Some(c >> 1),
                Some(0) => {}
                _ => eprintln!("qemu: exited with {st} (see {})", qlog.display()),
            }
            break;
        }
        if verdict_at.is_none()
            && fs::read(&result)
                .is_ok_and(|r| r.windows(VERDICT.len()).any(|w| w == VERDICT.as_bytes()))
        {
            verdict_at = Some(Instant::now());
        }
        if verdict_at.is_some_and(|v| v.elapsed() > GRACE) {
            eprintln!("qemu: guest did not power off after its verdict; stopping it");
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        if t.elapsed() > timeout {
            timed_out = true;
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Ok(Boot {
        console,
        result,
        elapsed: t.elapsed(),
        timed_out,
        guest_exit,
    })
}
