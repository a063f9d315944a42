//! Reading `/proc/PID/task/TID/wchan` as the suite needs beyond the user
//! CLI's `kallsyms-bench shim wchan` dump: that dump as an unprivileged
//! user, and timed passes over two groups of threads.

use crate::Result;
use std::fs;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every process id in `/proc`. Kernel threads are processes of their own
/// (one thread each, tid = pid), so this finds every kthread; whole thread
/// dumps come from `kallsyms-bench shim wchan`.
fn processes() -> Result<Vec<u32>> {
    let dir = fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))?;
    Ok(dir
        .flatten()
        .filter_map(|p| p.file_name().to_string_lossy().parse().ok())
        .collect())
}

/// PF_KTHREAD in the flags field of `/proc/PID/stat`.
fn is_kthread(stat: &str) -> bool {
    const PF_KTHREAD: u64 = 0x0020_0000;
    // The comm field may hold spaces: fields count from its closing paren.
    stat.rfind(')')
        .and_then(|i| stat[i + 1..].split_ascii_whitespace().nth(6))
        .and_then(|f| f.parse::<u64>().ok())
        .is_some_and(|f| f & PF_KTHREAD != 0)
}

/// The wchan dump (`kallsyms-bench shim wchan`) as uid/gid `uid`, which also
/// owns a sleeping child; then the
/// `# child <pid>` and `# kthread <tid>` lines the host checks.
pub fn unpriv(uid: u32) -> Result<()> {
    let mut child = Command::new("sleep")
        .arg("100000")
        .uid(uid)
        .gid(uid)
        .spawn()
        .map_err(|e| format!("sleep as uid {uid}: {e}"))?;
    let cpid = child.id();
    // Wait until the child sleeps (the stock wchan, read as root).
    let wchan = format!("/proc/{cpid}/wchan");
    let t = Instant::now();
    while fs::read_to_string(&wchan).map_or(true, |w| w == "0")
        && t.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    // The dump itself is the user CLI's, run as `uid`.
    let out = Command::new("kallsyms-bench")
        .args(["shim", "wchan"])
        .uid(uid)
        .gid(uid)
        .stderr(Stdio::inherit())
        .output();
    let _ = child.kill();
    let _ = child.wait();
    let out = out.map_err(|e| format!("wchan as uid {uid}: {e}"))?;
    if !out.status.success() {
        return Err(format!("wchan as uid {uid}: {}", out.status));
    }
    let mut stdout = std::io::stdout().lock();
    let mut text = out.stdout;
    text.extend_from_slice(format!("# child {cpid}\n").as_bytes());
    for pid in processes()? {
        if fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| is_kthread(&s)) {
            text.extend_from_slice(format!("# kthread {pid}\n").as_bytes());
        }
    }
    stdout.write_all(&text).map_err(|e| format!("stdout: {e}"))
}

/// Whole passes over `paths` until `budget` is spent: (rounds, ns per read).
fn time_passes(paths: &[PathBuf], budget: Duration) -> (u64, u64) {
    let mut buf = Vec::with_capacity(256);
    let t = Instant::now();
    let mut rounds = 0u64;
    while rounds == 0 || t.elapsed() < budget {
        for p in paths {
            buf.clear();
            if let Ok(mut f) = fs::File::open(p) {
                let _ = std::io::Read::read_to_end(&mut f, &mut buf);
            }
        }
        rounds += 1;
    }
    let reads = rounds * paths.len() as u64;
    (rounds, t.elapsed().as_nanos() as u64 / reads.max(1))
}

/// `wchan-scale: <group> <n> threads x <r> rounds: <ns> ns per read` for
/// the threads of `core_pid` and those whose comm starts with
/// `module_comm`.
pub fn scale(core_pid: u32, module_comm: &str, budget: Duration) -> Result<()> {
    let tasks = format!("/proc/{core_pid}/task");
    let core: Vec<PathBuf> = fs::read_dir(&tasks)
        .map_err(|e| format!("{tasks}: {e}"))?
        .flatten()
        .map(|t| t.path().join("wchan"))
        .collect();
    // The module's threads are kthreads: one thread per process.
    let module: Vec<PathBuf> = processes()?
        .into_iter()
        .map(|pid| PathBuf::from(format!("/proc/{pid}/task/{pid}")))
        .filter(|t| fs::read_to_string(t.join("comm")).is_ok_and(|c| c.starts_with(module_comm)))
        .map(|t| t.join("wchan"))
        .collect();
    for (name, group) in [("core", &core), ("module", &module)] {
        let (rounds, ns) = time_passes(group, budget);
        println!(
            "wchan-scale: {name} {} threads x {rounds} rounds: {ns} ns per read",
            group.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_kthread;

    #[test]
    fn kthread_flag_counts_fields_after_comm() {
        assert!(is_kthread("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0"));
        assert!(is_kthread("9 (a b) c) I 2 0 0 0 -1 69238880 0"));
        assert!(!is_kthread("1 (init) S 0 1 1 0 -1 4194560 0 0"));
    }
}
