//! The access rules that one mount's parity run does not reach (the
//! kernel's model is in fs/proc/nproc/nproc_access.c):
//!
//! - no procfs descriptor, or a foreign one (a pipe, a directory of
//!   another file system, a procfs directory that is not the root, an
//!   `O_PATH` descriptor, a closed or negative number): refused, with the
//!   kernel's extack text;
//! - a Landlock-restricted process that may not open `/proc` gets
//!   nothing: it cannot open it, and its `O_PATH` descriptor is refused;
//! - `subset=pid`: `GET_GLOBAL` refused, `GET_TASKS` served;
//! - the credentials of the socket's opener and of the sender, mixed in
//!   one process (a socket opened unprivileged and used by root, and the
//!   reverse, by switching the effective ids with setresuid(2)): refused,
//!   the opener's credentials being the only ones answered (reader.rs has
//!   the cases with separate processes and a real setuid program).

use nproc_genl::{open_procfs, Client, Error, TaskRequest};
use nproc_proto::{attr, field_id, Cmd, Scope};
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// Runs every check; returns the failures.
pub fn run(subset_pid: &Path, invisible: &Path, uid: u32) -> Vec<String> {
    let mut fails = Vec::new();
    no_procfs(&mut fails);
    foreign_fds(&mut fails);
    subset(subset_pid, &mut fails);
    in_child("landlock", &mut fails, landlock);
    // A process of `uid` to be seen: unprivileged readers see their own.
    let sleeper = sleeper_of(uid);
    in_child("credentials", &mut fails, |f| {
        credentials(invisible, uid, f)
    });
    // SAFETY: kill(2) and waitpid(2) on our own child.
    unsafe {
        libc::kill(sleeper, libc::SIGKILL);
        libc::waitpid(sleeper, std::ptr::null_mut(), 0);
    }
    fails
}

/// A GET_TASKS request for tgids, processes scope.
fn tgids() -> TaskRequest {
    TaskRequest::from_names(&["tgid", "wchan"], Scope::Processes).expect("fields of the table")
}

/// Whether `e` is the kernel's refusal with an extack text containing
/// `text`; prints it.
pub(crate) fn refused(what: &str, e: &Error, text: &str) -> Option<String> {
    println!("access: {what}: {e}");
    let msg = match e {
        Error::Kernel { msg, .. } | Error::PermissionDenied { msg, .. } => msg.as_deref(),
        _ => return Some(format!("{what}: not a kernel refusal: {e}")),
    };
    match msg {
        Some(m) if m.contains(text) => None,
        _ => Some(format!(
            "{what}: the kernel's message {msg:?} does not say {text:?}"
        )),
    }
}

fn no_procfs(fails: &mut Vec<String>) {
    let mut c = match Client::connect_with_procfs(None) {
        Ok(c) => c,
        Err(e) => return fails.push(format!("connect: {e}")),
    };
    match c.tasks(&tgids()) {
        Ok(d) => fails.push(format!("GET_TASKS without a procfs: {} tasks", d.len())),
        Err(e) => fails.extend(refused("GET_TASKS without a procfs", &e, "procfs_fd")),
    }
    match c.global() {
        Ok(_) => fails.push("GET_GLOBAL without a procfs: answered".into()),
        Err(e) => fails.extend(refused("GET_GLOBAL without a procfs", &e, "procfs_fd")),
    }
}

fn open_raw(path: &str, flags: i32) -> Option<OwnedFd> {
    let p = CString::new(path).ok()?;
    // SAFETY: open(2) on a NUL-terminated path; the descriptor is owned.
    let fd = unsafe { libc::open(p.as_ptr(), flags | libc::O_CLOEXEC) };
    // SAFETY: a fresh descriptor nothing else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn foreign_fds(fails: &mut Vec<String>) {
    let mut c = match Client::connect_with_procfs(None) {
        Ok(c) => c,
        Err(e) => return fails.push(format!("connect: {e}")),
    };
    let mut pipe = [0; 2];
    // SAFETY: pipe(2) writes two descriptors into the array.
    if unsafe { libc::pipe(pipe.as_mut_ptr()) } != 0 {
        return fails.push(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fresh descriptors, owned from here on.
    let pipe = unsafe { [OwnedFd::from_raw_fd(pipe[0]), OwnedFd::from_raw_fd(pipe[1])] };
    let dir_flags = libc::O_RDONLY | libc::O_DIRECTORY;
    let root = open_raw("/", dir_flags);
    let self_dir = open_raw("/proc/self", dir_flags);
    let o_path = open_raw("/proc", libc::O_PATH | libc::O_DIRECTORY);
    let closed = open_raw("/proc", dir_flags).map(|fd| fd.as_raw_fd());
    let cases: Vec<(&str, Option<i32>, &str)> = vec![
        (
            "a pipe",
            Some(pipe[0].as_raw_fd()),
            "root directory of a procfs",
        ),
        (
            "the root of another file system",
            root.as_ref().map(|f| f.as_raw_fd()),
            "root directory of a procfs",
        ),
        (
            "/proc/self",
            self_dir.as_ref().map(|f| f.as_raw_fd()),
            "root directory of a procfs",
        ),
        (
            "an O_PATH /proc",
            o_path.as_ref().map(|f| f.as_raw_fd()),
            "open for reading",
        ),
        ("a closed descriptor", closed, "open for reading"),
        ("descriptor -1", Some(-1), "open for reading"),
    ];
    let fields = (1u32 << field_id::TGID).to_ne_bytes().to_vec();
    for (what, fd, text) in cases {
        let Some(fd) = fd else {
            fails.push(format!("{what}: could not be opened for the test"));
            continue;
        };
        let attrs = vec![
            (attr::FIELDS, fields.clone()),
            (attr::PROCFS_FD, fd.to_ne_bytes().to_vec()),
        ];
        match c.raw_request(Cmd::GetTasks as u8, &attrs, true) {
            Ok(n) => fails.push(format!("{what}: accepted, {n} replies")),
            Err(e) => fails.extend(refused(what, &e, text)),
        }
    }
    // A procfs_fd of two bytes: the policy's length check.
    let attrs = vec![(attr::FIELDS, fields), (attr::PROCFS_FD, vec![0, 0])];
    if let Ok(n) = c.raw_request(Cmd::GetTasks as u8, &attrs, true) {
        fails.push(format!("a two-byte procfs_fd: accepted, {n} replies"));
    }
}

fn subset(root: &Path, fails: &mut Vec<String>) {
    let c = open_procfs(root).and_then(|fd| Client::connect_with_procfs(Some(fd)));
    let mut c = match c {
        Ok(c) => c,
        Err(e) => return fails.push(format!("subset=pid: {e}")),
    };
    match c.global() {
        Ok(_) => fails.push("GET_GLOBAL on a subset=pid mount: answered".into()),
        Err(e) => fails.extend(refused("GET_GLOBAL on subset=pid", &e, "subset=pid")),
    }
    match c.tasks(&tgids()) {
        Ok(d) if !d.is_empty() => println!("access: subset=pid: GET_TASKS sent {} tasks", d.len()),
        Ok(_) => fails.push("GET_TASKS on a subset=pid mount: no task".into()),
        Err(e) => fails.push(format!("GET_TASKS on a subset=pid mount: {e}")),
    }
}

/// Runs `f` in a forked child (which may change its credentials or
/// restrict itself for good); the child's failures come back through a
/// pipe, one per line.
pub(crate) fn in_child(what: &str, fails: &mut Vec<String>, f: impl FnOnce(&mut Vec<String>)) {
    use std::io::{Read, Write};
    let mut p = [0; 2];
    // SAFETY: pipe(2) writes two descriptors into the array.
    if unsafe { libc::pipe(p.as_mut_ptr()) } != 0 {
        return fails.push(format!("{what}: pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fresh descriptors, owned from here on.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) };
    // SAFETY: the child runs `f` and leaves with _exit(2).
    match unsafe { libc::fork() } {
        0 => {
            drop(r);
            let mut mine = Vec::new();
            f(&mut mine);
            let mut w = std::fs::File::from(w);
            for m in &mine {
                let _ = writeln!(w, "{what}: {}", m.replace('\n', " "));
            }
            let _ = std::io::stdout().flush();
            // SAFETY: ends the child without the parent's exit handlers.
            unsafe { libc::_exit(0) }
        }
        pid if pid > 0 => {
            drop(w);
            let mut text = String::new();
            let _ = std::fs::File::from(r).read_to_string(&mut text);
            let mut status = 0;
            // SAFETY: waitpid(2) on our child; writes only `status`.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            fails.extend(text.lines().map(String::from));
            if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
                fails.push(format!("{what}: the child ended with status {status:#x}"));
            }
        }
        _ => fails.push(format!("{what}: fork: {}", std::io::Error::last_os_error())),
    }
}

/// Landlock ABI 1: what a ruleset handles (struct landlock_ruleset_attr).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
}
const LANDLOCK_ACCESS_FS_READ_FILE: u64 = 1 << 2;
const LANDLOCK_ACCESS_FS_READ_DIR: u64 = 1 << 3;

/// Restricts this process with a Landlock ruleset that handles reading
/// files and directories and allows none.
pub(crate) fn restrict_landlock() -> Result<(), String> {
    restrict_landlock_fs(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
}

/// Restricts this process with a Landlock ruleset that handles the
/// filesystem rights `handled` and allows none of them.
pub(crate) fn restrict_landlock_fs(handled: u64) -> Result<(), String> {
    let attr = RulesetAttr {
        handled_access_fs: handled,
    };
    // SAFETY: landlock_create_ruleset(2) reads `attr` (its size given);
    // prctl(PR_SET_NO_NEW_PRIVS) and landlock_restrict_self(2) change only
    // this process.
    let rc = unsafe {
        let fd = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        );
        if fd < 0 {
            -1
        } else if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0
        {
            -2
        } else {
            0
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "cannot restrict with Landlock (CONFIG_SECURITY_LANDLOCK, lsm=landlock): {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// In a child: restricted by [`restrict_landlock`], then nproc.
fn landlock(fails: &mut Vec<String>) {
    if let Err(e) = restrict_landlock() {
        return fails.push(e);
    }
    match Client::connect() {
        Ok(mut c) => match c.tasks(&tgids()) {
            Ok(d) => fails.push(format!(
                "opened /proc under Landlock and got {} tasks",
                d.len()
            )),
            Err(e) => fails.push(format!("opened /proc under Landlock: {e}")),
        },
        Err(e) => println!("access: landlock: connect: {e}"),
    }
    // Landlock does not govern O_PATH: such a descriptor is at hand, and
    // the kernel must refuse it.
    let Some(o_path) = open_raw("/proc", libc::O_PATH | libc::O_DIRECTORY) else {
        return fails.push("an O_PATH /proc could not be opened under Landlock".into());
    };
    match Client::connect_with_procfs(Some(o_path)).and_then(|mut c| c.tasks(&tgids())) {
        Ok(d) => fails.push(format!(
            "an O_PATH /proc under Landlock gave {} tasks",
            d.len()
        )),
        Err(e) => fails.extend(refused("landlock, O_PATH /proc", &e, "open for reading")),
    }
}

/// A process of `uid` that sleeps until killed, dumpable as a process a
/// uid's login starts is (changing the uid cleared the flag).
fn sleeper_of(uid: u32) -> libc::pid_t {
    // SAFETY: the child changes its own credentials and sleeps.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            if crate::drop_to(uid).is_err() || libc::prctl(libc::PR_SET_DUMPABLE, 1) != 0 {
                libc::_exit(1);
            }
            loop {
                libc::pause();
            }
        }
        pid
    }
}

/// Switches the effective (and file-system) ids to `uid`, or back to 0,
/// keeping the saved ones: what a setuid-root program does.
fn set_effective(uid: u32) -> std::io::Result<()> {
    let gid = uid;
    // SAFETY: these calls change only this process's credentials.
    let rc = unsafe {
        if uid == 0 {
            libc::setresuid(u32::MAX, 0, u32::MAX) | libc::setresgid(u32::MAX, 0, u32::MAX)
        } else {
            libc::setresgid(u32::MAX, gid, u32::MAX) | libc::setresuid(u32::MAX, uid, u32::MAX)
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// One dump through a socket opened as `opener` and a request sent as
/// `sender` (0 or `uid`), in one process, naming the procfs at `root`.
fn mixed(root: &Path, opener: u32, sender: u32) -> Result<usize, Error> {
    let fd = open_procfs(root)?;
    set_effective(opener).map_err(|err| Error::Io {
        what: "seteuid",
        err,
    })?;
    let c = Client::connect_with_procfs(Some(fd));
    set_effective(0).map_err(|err| Error::Io {
        what: "seteuid",
        err,
    })?;
    let mut c = c?;
    set_effective(sender).map_err(|err| Error::Io {
        what: "seteuid",
        err,
    })?;
    let d = c.tasks(&tgids());
    set_effective(0).map_err(|err| Error::Io {
        what: "seteuid",
        err,
    })?;
    d.map(|d| d.len())
}

/// In a child (root, no supplementary groups): a socket opened as one of
/// root and `uid` and used as the other is refused, on a
/// hidepid=invisible mount and on /proc.
fn credentials(invisible: &Path, uid: u32, fails: &mut Vec<String>) {
    // SAFETY: setgroups(2) changes only this process's credentials.
    if unsafe { libc::setgroups(0, std::ptr::null()) } != 0 {
        return fails.push(format!("setgroups: {}", std::io::Error::last_os_error()));
    }
    for root in [invisible, Path::new("/proc")] {
        for (opener, sender) in [(uid, 0), (0, uid)] {
            let what = format!("{}: opener {opener}, sender {sender}", root.display());
            match mixed(root, opener, sender) {
                Ok(n) => fails.push(format!("{what}: answered with {n} tasks")),
                Err(e) => fails.extend(refused(&what, &e, "the sender is not the socket's opener")),
            }
        }
    }
}
