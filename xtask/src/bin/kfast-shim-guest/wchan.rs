//! Reading every thread's `/proc/PID/task/TID/wchan`: dumps, as an
//! unprivileged user, and timed passes.

use crate::Result;
use std::fs;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every thread as `(tid, its wchan file)`, sorted by tid.
fn threads() -> Result<Vec<(u32, PathBuf)>> {
    let mut v = Vec::new();
    for p in fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))? {
        let Ok(p) = p else { continue };
        if p.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        let Ok(tasks) = fs::read_dir(p.path().join("task")) else {
            continue;
        };
        for t in tasks.flatten() {
            if let Ok(tid) = t.file_name().to_string_lossy().parse::<u32>() {
                v.push((tid, t.path().join("wchan")));
            }
        }
    }
    v.sort();
    Ok(v)
}

/// `<tid> <wchan>` for every thread but this process's own (they are
/// running while they read).
pub fn dump() -> Result<()> {
    let mut out = std::io::stdout().lock();
    let own = format!("/proc/{}/", std::process::id());
    for (tid, path) in threads()? {
        if path.starts_with(&own) {
            continue;
        }
        let w = fs::read_to_string(&path).unwrap_or_else(|_| "?".into());
        writeln!(out, "{tid} {w}").map_err(|e| format!("stdout: {e}"))?;
    }
    Ok(())
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

/// [`dump`] as uid/gid `uid`, which also owns a sleeping child; then the
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
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let out = Command::new(exe)
        .arg("wchan")
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
    for (tid, path) in threads()? {
        if fs::read_to_string(path.with_file_name("stat")).is_ok_and(|s| is_kthread(&s)) {
            text.extend_from_slice(format!("# kthread {tid}\n").as_bytes());
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
    let all = threads()?;
    let core = format!("/proc/{core_pid}/");
    let core: Vec<PathBuf> = all
        .iter()
        .filter(|(_, p)| p.starts_with(&core))
        .map(|(_, p)| p.clone())
        .collect();
    let module: Vec<PathBuf> = all
        .iter()
        .filter(|(_, p)| {
            fs::read_to_string(p.with_file_name("comm")).is_ok_and(|c| c.starts_with(module_comm))
        })
        .map(|(_, p)| p.clone())
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
