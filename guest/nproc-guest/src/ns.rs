//! The pid namespace check: a reader in a new pid namespace, with a
//! procfs of that namespace, sees only that namespace's tasks, with the
//! pids of that namespace; through the procfs of the namespace outside
//! (opened before), it sees pids of that one: the mount's namespace
//! numbers the pids, as in /proc.

use nproc_genl::{open_procfs, Client, TaskRequest};
use nproc_proto::{field_id, Scope};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// The outcome of the check.
pub enum Outcome {
    /// The check ran: its failures (none = passed).
    Ran(Vec<String>),
    /// The kernel cannot make a pid namespace (no `CONFIG_PID_NS`):
    /// nothing was checked.
    Unsupported(String),
}

/// Mounts a procfs of the new pid namespace on /proc, in the new mount
/// namespace only.
fn mount_own_proc() -> Result<(), String> {
    crate::mount_private_proc("").map_err(|e| format!("mounting /proc: {e}"))
}

/// What `/proc/self` of the procfs `outer` names: this process's pid in
/// that mount's namespace.
fn pid_in(outer: &OwnedFd) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/self/fd/{}/self", outer.as_raw_fd())).ok()?;
    link.to_str()?.parse().ok()
}

/// In the child, pid 1 of the new namespace: fork a sleeper (pid 2 there)
/// and dump both scopes, then once through the outer procfs. Returns the
/// exit code for the parent.
fn in_namespace(outer: OwnedFd) -> i32 {
    if let Err(e) = mount_own_proc() {
        println!("pidns: FAIL {e}");
        return 1;
    }
    // SAFETY: the child only sleeps until killed.
    let sleeper = unsafe { libc::fork() };
    if sleeper == 0 {
        loop {
            // SAFETY: pause(2) has no memory effects.
            unsafe { libc::pause() };
        }
    }
    let me = std::process::id();
    let mut bad = Vec::new();
    let mut seen = String::new();
    match Client::connect() {
        Err(e) => bad.push(format!("connect: {e}")),
        Ok(mut c) => {
            for scope in [Scope::Processes, Scope::Threads] {
                let req = TaskRequest::from_names(&["tgid", "tid", "ppid", "comm"], scope);
                let dump = req.and_then(|r| c.tasks(&r));
                match dump {
                    Err(e) => bad.push(format!("{scope:?} dump: {e}")),
                    Ok(d) => {
                        let got: Vec<(u64, u64, u64)> = d
                            .iter()
                            .map(|r| {
                                let g = |id| r.get(id).and_then(|v| v.as_u64()).unwrap_or(u64::MAX);
                                (g(field_id::TGID), g(field_id::TID), g(field_id::PPID))
                            })
                            .collect();
                        // pid 1 (its parent is outside: ppid 0) and the
                        // sleeper, pid 2 with parent 1.
                        let want = vec![(1, 1, 0), (sleeper as u64, sleeper as u64, 1)];
                        seen.push_str(&format!("{scope:?}: {got:?}; "));
                        if got != want || me != 1 {
                            bad.push(format!(
                                "{scope:?}: (tgid, tid, ppid) {got:?}, want {want:?} (own pid {me})"
                            ));
                        }
                    }
                }
            }
        }
    }
    // The outer procfs: this process by its outer pid, many more tasks.
    let outer_pid = pid_in(&outer);
    match Client::connect_with_procfs(Some(outer))
        .and_then(|mut c| c.tasks(&TaskRequest::from_names(&["tgid"], Scope::Processes)?))
    {
        Err(e) => bad.push(format!("outer procfs dump: {e}")),
        Ok(d) => {
            let tgids: Vec<u64> = d
                .iter()
                .filter_map(|r| r.get(field_id::TGID)?.as_u64())
                .collect();
            seen.push_str(&format!(
                "outer procfs: {} tasks, own pid {outer_pid:?}; ",
                tgids.len()
            ));
            let mine = outer_pid.is_some_and(|p| p != 1 && tgids.contains(&p));
            if !mine || tgids.len() <= 2 {
                bad.push(format!(
                    "through the outer procfs: {} tasks, own outer pid {outer_pid:?} listed: {mine}",
                    tgids.len()
                ));
            }
        }
    }
    // SAFETY: kill(2) and waitpid(2) on our own child.
    unsafe {
        libc::kill(sleeper, libc::SIGKILL);
        libc::waitpid(sleeper, std::ptr::null_mut(), 0);
    }
    println!("pidns: saw {seen}");
    for b in &bad {
        println!("pidns: FAIL {b}");
    }
    i32::from(!bad.is_empty())
}

/// unshare(CLONE_NEWPID | CLONE_NEWNS), fork, check in the child.
pub fn run() -> Outcome {
    let outer = match open_procfs(Path::new("/proc")) {
        Ok(fd) => fd,
        Err(e) => return Outcome::Ran(vec![e.to_string()]),
    };
    // SAFETY: unshare(2) changes only this process's mount namespace and
    // the pid namespace our future children get; it touches no memory.
    if unsafe { libc::unshare(libc::CLONE_NEWPID | libc::CLONE_NEWNS) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) {
            return Outcome::Unsupported(format!(
                "unshare(CLONE_NEWPID): {e} (a kernel without CONFIG_PID_NS)"
            ));
        }
        return Outcome::Ran(vec![format!("unshare(CLONE_NEWPID): {e}")]);
    }
    // SAFETY: the child runs only the check and leaves with _exit(2).
    match unsafe { libc::fork() } {
        0 => {
            let code = in_namespace(outer);
            use std::io::Write as _;
            let _ = std::io::stdout().flush();
            // SAFETY: _exit(2) ends the child without running the
            // parent's atexit handlers twice.
            unsafe { libc::_exit(code) }
        }
        pid if pid > 0 => {
            let mut status = 0;
            // SAFETY: waitpid(2) writes only `status`; pid is our child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            let fails = if ok {
                Vec::new()
            } else {
                vec![format!(
                    "the namespace's pid 1 ended with status {status:#x}"
                )]
            };
            Outcome::Ran(fails)
        }
        _ => Outcome::Ran(vec![format!("fork: {}", std::io::Error::last_os_error())]),
    }
}
