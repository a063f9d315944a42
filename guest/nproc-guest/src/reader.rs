//! The rules that bind a request to one reader and re-read its limits
//! (fs/proc/nproc/nproc_access.c), each against what /proc gives the
//! same process:
//!
//! - one reader: a child that inherited the socket, a deputy it was
//!   passed to by `SCM_RIGHTS` (from a Landlock-sandboxed opener), a real
//!   setuid-root program handed it, a reader that inherited it across
//!   setuid and exec after root sent the request, and a process that
//!   entered a Landlock domain after opening it: each is refused and
//!   gets no task, while the opener itself is answered;
//! - an LSM check per task at hidepid=off: a Landlock-restricted process
//!   gets no value of a task whose /proc files `openat(procfd, ...)`
//!   refuses it, its own child in the same domain (which it may ptrace)
//!   included;
//! - rules read at every chunk: a remount with `hidepid=invisible`, and
//!   `kernel.nproc_restrict=1`, during a dump bind the dump's later
//!   chunks;
//! - `kernel.nproc_restrict` 0, 1, 2 and `gid=`, against /proc's listing.
//!
//! Every refusal expected here has a positive case beside it, so that a
//! kernel that refuses everything fails too.

use crate::access::{in_child, refused, restrict_landlock};
use nproc_genl::{open_procfs, Client, Error, Record, TaskRequest};
use nproc_proto::{field_id, Scope};
use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

/// What the kernel says to a sender that is not the socket's opener.
const NOT_OPENER: &str = "the sender is not the socket's opener";
/// What it says to a reader that is not the sender.
const NOT_READER: &str = "the reader is not the sender";

/// Sleeping root processes with long command lines: enough chunks that
/// a change in the middle of a dump binds many tasks after it.
const SLEEPERS: usize = 200;
/// Tasks that may have been built before a change took effect: the
/// chunk being read and the one the kernel built ahead of it, at most
/// 32 KiB each (netlink_dump()'s largest), of about 1 KiB a task on
/// average (a shell's record and its child's): four chunks' worth.
const SKIP_AFTER_CHANGE: usize = 128;

/// Runs every check as root; `suid` is a setuid-root copy of this
/// program, `scratch` an empty directory to mount procfs instances on.
pub fn run(uid: u32, suid: &Path, scratch: &Path) -> Vec<String> {
    let mut fails = Vec::new();
    let invisible = scratch.join("invisible");
    let plain = scratch.join("plain");
    let gid = scratch.join("gid");
    let modes = ["off", "noaccess", "invisible", "ptraceable"].map(|m| (scratch.join(m), m));
    let mut mounts = vec![
        (plain.clone(), "hidepid=off".to_string()),
        (gid.clone(), "hidepid=invisible,gid=4321".to_string()),
    ];
    mounts.extend(
        modes
            .iter()
            .map(|(d, m)| (d.clone(), format!("hidepid={m}"))),
    );
    for (dir, opts) in &mounts {
        if let Err(e) = mount_proc(dir, opts, false) {
            return vec![format!("mount proc {opts} at {}: {e}", dir.display())];
        }
    }
    let sleepers = long_sleepers(SLEEPERS);
    in_child("inherited", &mut fails, |f| inherited(uid, f));
    in_child("setuid-helper", &mut fails, |f| {
        setuid_helper(uid, suid, &invisible, f)
    });
    // A reader other than the sender, under each hidepid= mode.
    for (dir, mode) in &modes {
        in_child(&format!("scm-rights-{mode}"), &mut fails, |f| {
            scm_rights(uid, dir, f)
        });
        in_child(&format!("setuid-exec-reader-{mode}"), &mut fails, |f| {
            setuid_exec_reader(uid, dir, f)
        });
    }
    in_child("landlock-after-open", &mut fails, landlock_after_open);
    in_child("landlock-per-task", &mut fails, landlock_per_task);
    in_child("landlock-scoped-wchan", &mut fails, landlock_scoped_wchan);
    change_during_dump(uid, &plain, &mut fails);
    restrict_levels(uid, &mut fails);
    gid_option(uid, &gid, &mut fails);
    for pid in sleepers {
        // SAFETY: kill(2) of our children's process groups, waitpid(2) on
        // our own children.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
    fails
}

fn mount_proc(dir: &Path, opts: &str, remount: bool) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let c = |s: &str| CString::new(s).expect("no NUL");
    let (src, target, fs, data) = (c("proc"), c(&dir.to_string_lossy()), c("proc"), c(opts));
    let flags = if remount { libc::MS_REMOUNT } else { 0 };
    // SAFETY: mount(2) with NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            fs.as_ptr(),
            flags,
            data.as_ptr().cast(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `n` root shells waiting for `sleep 1000` in `sh -c 'sleep 1000; :'
/// ARG` with an 1,800 byte ARG (the shell's record of a dump with cmdline
/// over 1.5 KiB, its child's short), each in a process group of its own.
fn long_sleepers(n: usize) -> Vec<libc::pid_t> {
    use std::os::unix::process::CommandExt;
    let arg = "x".repeat(1800);
    (0..n)
        .filter_map(|_| {
            std::process::Command::new("/bin/sh")
                .args(["-c", "sleep 1000; :", &arg])
                .process_group(0)
                .spawn()
                .ok()
                .and_then(|c| libc::pid_t::try_from(c.id()).ok())
        })
        .collect()
}

fn request(names: &[&str]) -> TaskRequest {
    TaskRequest::from_names(names, Scope::Processes).expect("fields of the table")
}

fn euid(r: &Record) -> Option<u64> {
    r.get(field_id::EUID)?.as_u64()
}

fn tgid(r: &Record) -> Option<u64> {
    r.get(field_id::TGID)?.as_u64()
}

/// Clears FD_CLOEXEC so that `fd` survives exec.
fn keep_on_exec(fd: RawFd) {
    // SAFETY: fcntl(2) on a descriptor of ours.
    unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
}

/// Forks, runs `f` in the child (which exits with its return value) and
/// returns the child's exit status (or why there is none).
fn forked(f: impl FnOnce() -> i32) -> Result<i32, String> {
    // SAFETY: the child runs `f` and leaves with _exit(2).
    match unsafe { libc::fork() } {
        0 => {
            let code = f();
            let _ = std::io::stdout().flush();
            // SAFETY: ends the child without the parent's exit handlers.
            unsafe { libc::_exit(code) }
        }
        pid if pid > 0 => {
            let mut status = 0;
            // SAFETY: waitpid(2) on our child; writes only `status`.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            if libc::WIFEXITED(status) {
                Ok(libc::WEXITSTATUS(status))
            } else {
                Err(format!("child ended with status {status:#x}"))
            }
        }
        _ => Err(format!("fork: {}", std::io::Error::last_os_error())),
    }
}

/// The opener is answered; a child that inherited its socket is not.
fn inherited(uid: u32, fails: &mut Vec<String>) {
    if let Err(e) = crate::drop_to(uid) {
        return fails.push(format!("drop to {uid}: {e}"));
    }
    let Some(mut c) = crate::connect_at("reader", Path::new("/proc")) else {
        return fails.push("connect".into());
    };
    let req = request(&["tgid", "comm"]);
    match c.tasks(&req) {
        Ok(d) if !d.is_empty() => println!("reader: inherited: the opener got {} tasks", d.len()),
        Ok(_) => fails.push("the opener got no task".into()),
        Err(e) => fails.push(format!("the opener was refused: {e}")),
    }
    let child = forked(|| match c.tasks(&req) {
        Ok(d) => {
            println!("reader: inherited: a child got {} tasks", d.len());
            1
        }
        Err(e) => i32::from(refused("inherited: a child's request", &e, NOT_OPENER).is_some()),
    });
    if child != Ok(0) {
        fails.push(format!("a child using the inherited socket: {child:?}"));
    }
}

/// Sends `fds` over the unix socket `sock` (SCM_RIGHTS).
fn send_fds(sock: RawFd, fds: &[RawFd]) -> std::io::Result<()> {
    let byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    let len = std::mem::size_of_val(fds);
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(len as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: a zeroed msghdr is valid; the pointers set below outlive
    // sendmsg(2), and the control buffer has room for one header and
    // `fds` (CMSG_SPACE).
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(len as u32) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg).cast(), fds.len());
        if libc::sendmsg(sock, &msg, 0) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives two descriptors sent by [`send_fds`].
fn recv_two_fds(sock: RawFd) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let len = 2 * std::mem::size_of::<RawFd>();
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(len as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: as in send_fds; the kernel fills at most `space` bytes, and
    // the header is checked before its data is read.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        if libc::recvmsg(sock, &mut msg, 0) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
            || ((*cmsg).cmsg_len as usize) < libc::CMSG_LEN(len as u32) as usize
        {
            return Err(std::io::Error::other("no two descriptors received"));
        }
        let mut fds = [0 as RawFd; 2];
        std::ptr::copy_nonoverlapping(libc::CMSG_DATA(cmsg).cast(), fds.as_mut_ptr(), 2);
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

/// A Landlock-sandboxed process (uid `uid`) opens /proc and the socket
/// and passes both to an unsandboxed deputy of the same uid, which is
/// refused.
fn scm_rights(uid: u32, root: &Path, fails: &mut Vec<String>) {
    if let Err(e) = crate::drop_to(uid) {
        return fails.push(format!("drop to {uid}: {e}"));
    }
    let mut sv = [0; 2];
    // SAFETY: socketpair(2) writes two descriptors into the array.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM, 0, sv.as_mut_ptr()) } != 0 {
        return fails.push(format!("socketpair: {}", std::io::Error::last_os_error()));
    }
    let (mine, theirs) = (sv[0], sv[1]);
    let sandboxed = forked(|| {
        let Ok(procfs) = open_procfs(root) else {
            return 10;
        };
        if let Err(e) = restrict_landlock() {
            println!("reader: scm-rights: {e}");
            return 11;
        }
        let Ok(c) = Client::connect_with_procfs(Some(procfs)) else {
            return 12;
        };
        let (sock, procfs) = c.raw_fds();
        let fam = c.family_id().to_ne_bytes();
        // The family id first, then the two descriptors.
        // SAFETY: write(2) of a local array to our socket.
        unsafe { libc::write(theirs, fam.as_ptr().cast(), fam.len()) };
        match send_fds(theirs, &[sock, procfs.unwrap_or(-1)]) {
            Ok(()) => 0,
            Err(e) => {
                println!("reader: scm-rights: sendmsg: {e}");
                13
            }
        }
    });
    if sandboxed != Ok(0) {
        return fails.push(format!("the sandboxed opener: {sandboxed:?}"));
    }
    let mut fam = [0u8; 2];
    // SAFETY: read(2) into a local array from our socket.
    if unsafe { libc::read(mine, fam.as_mut_ptr().cast(), 2) } != 2 {
        return fails.push("no family id from the sandboxed opener".into());
    }
    let (sock, procfs) = match recv_two_fds(mine) {
        Ok(p) => p,
        Err(e) => return fails.push(format!("recvmsg: {e}")),
    };
    let mut deputy = Client::from_fds(sock, Some(procfs), u16::from_ne_bytes(fam));
    match deputy.tasks(&request(&["tgid", "wchan", "cmdline"])) {
        Ok(d) => fails.push(format!("the deputy got {} tasks", d.len())),
        Err(e) => fails.extend(refused("scm-rights: the deputy's request", &e, NOT_OPENER)),
    }
}

/// Uid `uid` opens the socket on a hidepid=invisible mount and execs a
/// real setuid-root program (`suid send-as-helper`) with it, which must be
/// refused.
fn setuid_helper(uid: u32, suid: &Path, invisible: &Path, fails: &mut Vec<String>) {
    if let Err(e) = crate::drop_to(uid) {
        return fails.push(format!("drop to {uid}: {e}"));
    }
    let Some(c) = crate::connect_at("reader", invisible) else {
        return fails.push("connect".into());
    };
    let (sock, procfs) = c.raw_fds();
    let procfs = procfs.unwrap_or(-1);
    keep_on_exec(sock);
    keep_on_exec(procfs);
    let status = std::process::Command::new(suid)
        .args([
            "send-as-helper",
            "--sock",
            &sock.to_string(),
            "--procfs",
            &procfs.to_string(),
            "--family",
            &c.family_id().to_string(),
        ])
        .status();
    match status.map(|s| s.code()) {
        Ok(Some(0)) => println!("reader: setuid-helper: refused"),
        other => fails.push(format!(
            "the setuid helper: {other:?} (see its lines above)"
        )),
    }
}

/// The setuid-root helper: exits 0 when its request is refused as
/// coming from another than the opener, 2 when it does not run setuid.
pub fn send_as_helper(sock: RawFd, procfs: RawFd, family: u16) -> i32 {
    // SAFETY: geteuid(2) and getuid(2) cannot fail.
    let (euid, ruid) = unsafe { (libc::geteuid(), libc::getuid()) };
    if euid != 0 || ruid == 0 {
        println!("send-as-helper: not setuid root (uid {ruid}, euid {euid})");
        return 2;
    }
    // SAFETY: both descriptors were left open across exec for us.
    let (sock, procfs) = unsafe { (OwnedFd::from_raw_fd(sock), OwnedFd::from_raw_fd(procfs)) };
    let mut c = Client::from_fds(sock, Some(procfs), family);
    match c.tasks(&request(&["tgid", "euid", "wchan"])) {
        Ok(d) => {
            let me = u64::from(std::process::id());
            println!(
                "send-as-helper: answered with {} tasks (itself among them: {})",
                d.len(),
                d.iter().any(|r| tgid(r) == Some(me))
            );
            3
        }
        Err(e) => match refused("send-as-helper", &e, NOT_OPENER) {
            None => 0,
            Some(why) => {
                println!("send-as-helper: {why}");
                4
            }
        },
    }
}

/// Root opens the socket on a hidepid=invisible mount and sends a
/// request, then becomes uid `uid` and execs a reader that inherits the
/// socket: the reader gets no task.
fn setuid_exec_reader(uid: u32, invisible: &Path, fails: &mut Vec<String>) {
    let Some(mut c) = crate::connect_at("reader", invisible) else {
        return fails.push("connect".into());
    };
    let seq = match c.send_tasks(&request(&["tgid", "euid", "cmdline"])) {
        Ok(s) => s,
        Err(e) => return fails.push(format!("send: {e}")),
    };
    let (sock, _) = c.raw_fds();
    keep_on_exec(sock);
    let family = c.family_id();
    let exe = std::env::current_exe().unwrap_or_else(|_| "/bin/nproc-guest".into());
    let status = forked(|| {
        if crate::drop_to(uid).is_err() {
            return 10;
        }
        let err = std::os::unix::process::CommandExt::exec(std::process::Command::new(exe).args([
            "read-inherited",
            "--sock",
            &sock.to_string(),
            "--seq",
            &seq.to_string(),
            "--family",
            &family.to_string(),
        ]));
        println!("reader: exec: {err}");
        11
    });
    if status != Ok(0) {
        fails.push(format!(
            "the reader after setuid and exec: {status:?} (see its lines above)"
        ));
    }
}

/// The reader of [`setuid_exec_reader`]: exits 0 when it got no task and
/// the dump ended with the kernel's refusal.
pub fn read_inherited(sock: RawFd, seq: u32, family: u16) -> i32 {
    // SAFETY: the descriptor was left open across exec for us.
    let sock = unsafe { OwnedFd::from_raw_fd(sock) };
    let mut c = Client::from_fds(sock, None, family);
    let mut n = 0usize;
    let mut root = 0usize;
    let r = c.recv_tasks(seq, |t| {
        n += 1;
        root += usize::from(euid(&t) == Some(0));
    });
    println!("read-inherited: {n} tasks, {root} of uid 0; the dump ended with {r:?}");
    match r {
        Err(e) if n == 0 => i32::from(refused("read-inherited", &e, NOT_READER).is_some()),
        _ => 3,
    }
}

/// A process that enters a Landlock domain after opening the socket is
/// no longer its opener.
fn landlock_after_open(fails: &mut Vec<String>) {
    let Some(mut c) = crate::connect_at("reader", Path::new("/proc")) else {
        return fails.push("connect".into());
    };
    if let Err(e) = restrict_landlock() {
        return fails.push(e);
    }
    match c.tasks(&request(&["tgid", "cmdline"])) {
        Ok(d) => fails.push(format!("answered with {} tasks", d.len())),
        Err(e) => fails.extend(refused("landlock-after-open", &e, NOT_OPENER)),
    }
}

/// Root opens /proc, enters a Landlock domain that handles reading files
/// and allows none, then opens the socket (one reader, sandboxed): every
/// task it gets values of must have files it can open under that /proc.
fn landlock_per_task(fails: &mut Vec<String>) {
    let procfs = match open_procfs(Path::new("/proc")) {
        Ok(f) => f,
        Err(e) => return fails.push(e.to_string()),
    };
    let dir = procfs.as_raw_fd();
    if let Err(e) = restrict_landlock() {
        return fails.push(e);
    }
    // A child in the same domain: ptrace allows it, /proc's files do not.
    // SAFETY: the child sleeps until killed.
    let child = unsafe {
        let pid = libc::fork();
        if pid == 0 {
            loop {
                libc::pause();
            }
        }
        pid
    };
    let mut c = match Client::connect_with_procfs(Some(procfs)) {
        Ok(c) => c,
        Err(e) => return fails.push(format!("connect: {e}")),
    };
    let d = match c.tasks(&request(&["tgid", "comm", "euid", "cmdline"])) {
        Ok(d) => d,
        Err(e) => return fails.push(format!("the sandboxed reader was refused: {e}")),
    };
    let mut valued = 0;
    for r in &d {
        let Some(t) = tgid(r) else { continue };
        if r.get(field_id::COMM).is_none() {
            continue; // sent as its pid alone
        }
        valued += 1;
        for file in ["stat", "status", "cmdline"] {
            let path = CString::new(format!("{t}/{file}")).expect("no NUL");
            // SAFETY: openat(2) relative to our procfs descriptor.
            let fd = unsafe { libc::openat(dir, path.as_ptr(), libc::O_RDONLY) };
            if fd < 0 {
                fails.push(format!(
                    "nproc gave the values of {t}, whose {file} /proc refuses: {}",
                    std::io::Error::last_os_error()
                ));
            } else {
                // SAFETY: our own descriptor.
                unsafe { libc::close(fd) };
            }
        }
    }
    // SAFETY: kill(2) and waitpid(2) on our own child.
    unsafe {
        libc::kill(child, libc::SIGKILL);
        libc::waitpid(child, std::ptr::null_mut(), 0);
    }
    let listed_child = d.iter().any(|r| tgid(r) == u64::try_from(child).ok());
    println!(
        "reader: landlock-per-task: {} tasks listed (the domain's child among them: \
         {listed_child}), {valued} with values",
        d.len()
    );
    if !listed_child {
        fails.push(format!(
            "the sandboxed reader's child {child} was not listed"
        ));
    }
    if d.len() < 2 {
        fails.push(format!("only {} tasks listed: nothing compared", d.len()));
    }
}

/// Landlock ABI 1's execute right: a ruleset that handles only it leaves
/// /proc readable, and still makes a domain, outside which ptrace (and so
/// /proc/PID/wchan) is refused.
const LANDLOCK_ACCESS_FS_EXECUTE: u64 = 1;

/// Root in a Landlock domain that restricts nothing /proc needs: where
/// /proc/PID/wchan shows it "0" (every task outside its domain), nproc's
/// wchan is "0" too, and some are.
fn landlock_scoped_wchan(fails: &mut Vec<String>) {
    if let Err(e) = crate::access::restrict_landlock_fs(LANDLOCK_ACCESS_FS_EXECUTE) {
        return fails.push(e);
    }
    let Some(mut c) = crate::connect_at("reader", Path::new("/proc")) else {
        return fails.push("connect".into());
    };
    let d = match c.tasks(&request(&["tgid", "wchan"])) {
        Ok(d) => d,
        Err(e) => return fails.push(format!("the scoped reader was refused: {e}")),
    };
    let (mut zero, mut leaks) = (0usize, Vec::new());
    for r in &d {
        let Some(t) = tgid(r) else { continue };
        let ours = r
            .get(field_id::WCHAN)
            .map(|v| v.to_string())
            .unwrap_or_default();
        // A task that runs shows "0" too: ask /proc up to three times.
        let theirs_zero = (0..3)
            .all(|_| std::fs::read_to_string(format!("/proc/{t}/wchan")).is_ok_and(|w| w == "0"));
        if theirs_zero && ours == "0" {
            zero += 1;
        } else if theirs_zero {
            leaks.push(format!("{t} ({ours})"));
        }
    }
    println!(
        "reader: landlock-scoped-wchan: {} tasks, {zero} wchans \"0\" from both",
        d.len()
    );
    if !leaks.is_empty() {
        fails.push(format!("nproc gave wchans /proc shows as \"0\": {leaks:?}"));
    }
    if zero == 0 {
        fails.push("no wchan was \"0\": the scope refused nothing, nothing compared".into());
    }
}

/// One dump as uid `uid` through the procfs at `root`, during which
/// `change` runs (as root) once the first task is read; returns the
/// number of others' tasks (listed at all, values or not) read before
/// the change and after [`SKIP_AFTER_CHANGE`] tasks past it, and the
/// number of tasks in all.
fn dump_across(
    uid: u32,
    root: &Path,
    change: impl FnOnce() -> Result<(), String>,
) -> Result<(usize, usize, usize), String> {
    let mut go = [0; 2];
    let mut done = [0; 2];
    let mut out = [0; 2];
    // SAFETY: pipe(2) writes two descriptors into each array.
    unsafe {
        if libc::pipe(go.as_mut_ptr()) != 0
            || libc::pipe(done.as_mut_ptr()) != 0
            || libc::pipe(out.as_mut_ptr()) != 0
        {
            return Err(format!("pipe: {}", std::io::Error::last_os_error()));
        }
    }
    // SAFETY: the child reads and writes its ends and leaves with _exit(2).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = (|| {
            crate::drop_to(uid).ok()?;
            let mut c = crate::connect_at("reader", root)?;
            let (mut before, mut after, mut i, mut at) = (0usize, 0usize, 0usize, None);
            let r = c.for_each_task(&request(&["tgid", "euid", "cmdline"]), |t| {
                i += 1;
                // Not this reader's own process: root's, under every
                // rule here (listed, or sent with values).
                let is_root = tgid(&t) != Some(u64::from(std::process::id()));
                match at {
                    None => {
                        before += usize::from(is_root);
                        // SAFETY: write(2)/read(2) of one byte on our pipes.
                        unsafe {
                            libc::write(go[1], [1u8].as_ptr().cast(), 1);
                            libc::read(done[0], [0u8].as_mut_ptr().cast(), 1);
                        }
                        at = Some(i);
                    }
                    Some(a) if i > a + SKIP_AFTER_CHANGE => after += usize::from(is_root),
                    Some(_) => {}
                }
            });
            r.ok()?;
            let msg = format!("{before} {after} {i}");
            // SAFETY: write(2) of our buffer to our pipe.
            unsafe { libc::write(out[1], msg.as_ptr().cast(), msg.len()) };
            Some(())
        })();
        // SAFETY: ends the child without the parent's exit handlers.
        unsafe { libc::_exit(i32::from(code.is_none())) }
    }
    // SAFETY: closing the child's ends in the parent.
    unsafe {
        libc::close(go[1]);
        libc::close(done[0]);
        libc::close(out[1]);
    }
    let mut b = [0u8; 1];
    // SAFETY: read(2) of one byte from our pipe.
    let started = unsafe { libc::read(go[0], b.as_mut_ptr().cast(), 1) } == 1;
    let changed = if started { change() } else { Ok(()) };
    // SAFETY: write(2) of one byte to our pipe, then closing our ends.
    unsafe {
        libc::write(done[1], [1u8].as_ptr().cast(), 1);
        libc::close(done[1]);
        libc::close(go[0]);
    }
    let mut text = String::new();
    // SAFETY: `out[0]` is ours; the File owns it from here.
    let _ = unsafe { std::fs::File::from_raw_fd(out[0]) }.read_to_string(&mut text);
    let mut status = 0;
    // SAFETY: waitpid(2) on our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    changed?;
    if !started {
        return Err("the dump read no task".into());
    }
    let n: Vec<usize> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match n[..] {
        [before, after, total] => Ok((before, after, total)),
        _ => Err(format!("the reading child failed (status {status:#x})")),
    }
}

fn set_restrict(level: u32) -> Result<(), String> {
    std::fs::write("/proc/sys/kernel/nproc_restrict", format!("{level}\n"))
        .map_err(|e| format!("kernel.nproc_restrict={level}: {e}"))
}

/// A change of the rules made (as root) during a dump, or its undoing.
type Step<'a> = Box<dyn FnOnce() -> Result<(), String> + 'a>;

/// A remount with hidepid=invisible, then kernel.nproc_restrict=1, in the
/// middle of a dump on a hidepid=off mount: no task but the reader's own comes.
fn change_during_dump(uid: u32, plain: &Path, fails: &mut Vec<String>) {
    let remount = |opts: &'static str| {
        move || mount_proc(plain, opts, true).map_err(|e| format!("remount {opts}: {e}"))
    };
    let cases: [(&str, Step<'_>, Step<'_>); 2] = [
        (
            "remount hidepid=invisible",
            Box::new(remount("hidepid=invisible")),
            Box::new(remount("hidepid=off")),
        ),
        (
            "kernel.nproc_restrict=1",
            Box::new(|| set_restrict(1)),
            Box::new(|| set_restrict(0)),
        ),
    ];
    for (what, change, undo) in cases {
        match dump_across(uid, plain, change) {
            Ok((before, after, total)) => {
                println!("reader: {what} during a dump: {before} of others' tasks before, {after} after, {total} tasks in all");
                if before == 0 {
                    fails.push(format!(
                        "{what}: the first task was the reader's own: nothing compared"
                    ));
                }
                if after > 0 {
                    fails.push(format!(
                        "{what}: {after} of others' tasks sent after the change"
                    ));
                }
            }
            Err(e) => fails.push(format!("{what}: {e}")),
        }
        if let Err(e) = undo() {
            fails.push(e);
        }
    }
}

/// Whether uid `uid`'s dump of /proc has values of root's tasks; None
/// when refused with `refusal`.
fn sees_root(uid: u32, root: &Path, groups: &[libc::gid_t]) -> Result<Option<bool>, String> {
    let (root, groups) = (root.to_path_buf(), groups.to_vec());
    let code = forked(move || {
        // SAFETY: these calls change only this child's credentials.
        let ok = unsafe {
            libc::setgroups(groups.len(), groups.as_ptr()) == 0
                && libc::setresgid(uid, uid, uid) == 0
                && libc::setresuid(uid, uid, uid) == 0
        };
        if !ok {
            return 10;
        }
        let fd = match open_procfs(&root) {
            Ok(f) => f,
            Err(_) => return 11,
        };
        let r = Client::connect_with_procfs(Some(fd))
            .and_then(|mut c| c.tasks(&request(&["tgid", "euid"])));
        match r {
            Ok(d) => i32::from(d.iter().any(|t| euid(t) == Some(0))),
            Err(Error::PermissionDenied { .. }) => 2,
            Err(e) => {
                println!("reader: {e}");
                12
            }
        }
    })?;
    match code {
        0 => Ok(Some(false)),
        1 => Ok(Some(true)),
        2 => Ok(None),
        c => Err(format!("the reading child exited {c}")),
    }
}

/// What /proc at `root` lists to uid `uid` with `groups`: whether pid 1
/// (root's init) is there.
fn lists_init(uid: u32, root: &Path, groups: &[libc::gid_t]) -> Result<bool, String> {
    let (root, groups) = (root.to_path_buf(), groups.to_vec());
    let code = forked(move || {
        // SAFETY: these calls change only this child's credentials.
        let ok = unsafe {
            libc::setgroups(groups.len(), groups.as_ptr()) == 0
                && libc::setresgid(uid, uid, uid) == 0
                && libc::setresuid(uid, uid, uid) == 0
        };
        if !ok {
            return 10;
        }
        match std::fs::read_dir(&root) {
            Ok(d) => i32::from(d.flatten().any(|e| e.file_name() == "1")),
            Err(_) => 11,
        }
    })?;
    match code {
        0 => Ok(false),
        1 => Ok(true),
        c => Err(format!("the listing child exited {c}")),
    }
}

/// kernel.nproc_restrict 0, 1 and 2 for uid `uid` on /proc (hidepid=off),
/// and root at 2.
fn restrict_levels(uid: u32, fails: &mut Vec<String>) {
    let proc = Path::new("/proc");
    for (level, want) in [(0, Some(true)), (1, Some(false)), (2, None)] {
        if let Err(e) = set_restrict(level) {
            fails.push(e);
            continue;
        }
        match sees_root(uid, proc, &[]) {
            Ok(got) if got == want => {
                println!("reader: nproc_restrict={level}: uid {uid} sees root's tasks: {got:?}")
            }
            Ok(got) => fails.push(format!(
                "nproc_restrict={level}: uid {uid} sees root's tasks: {got:?}, expected {want:?}"
            )),
            Err(e) => fails.push(format!("nproc_restrict={level}: {e}")),
        }
        if level == 2 {
            match sees_root(0, proc, &[]) {
                Ok(Some(true)) => {}
                other => fails.push(format!("nproc_restrict=2: root: {other:?}")),
            }
        }
    }
    if let Err(e) = set_restrict(0) {
        fails.push(e);
    }
}

/// gid=4321 on a hidepid=invisible mount: a member of group 4321 lists
/// root's tasks, a non-member does not, exactly as /proc lists them.
fn gid_option(uid: u32, gid_mount: &Path, fails: &mut Vec<String>) {
    for (groups, want) in [(&[4321][..], true), (&[][..], false)] {
        let listed = lists_init(uid, gid_mount, groups);
        let seen = sees_root(uid, gid_mount, groups);
        println!("reader: gid=4321, groups {groups:?}: /proc lists init: {listed:?}; nproc shows root's tasks: {seen:?}");
        match (listed, seen) {
            (Ok(l), Ok(Some(s))) if l == want && s == want => {}
            (l, s) => fails.push(format!(
                "gid=4321, groups {groups:?}: /proc {l:?}, nproc {s:?}, expected {want}"
            )),
        }
    }
}
