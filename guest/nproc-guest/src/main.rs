//! `nproc-guest`: the nproc guest suites, run inside the patched UML guest
//! by `cargo xtask nproc-uml-test` (guest/nproc-uml-job.sh).
//!
//! Each subcommand prints `<suite>: ...` lines, ends with
//! `<suite>: PASS ...` or `<suite>: FAIL ...`, and exits non-zero on
//! failure. Numbers are printed, never asserted against times.

mod access;
mod badreq;
mod fuzz;
mod ns;
mod parity;
mod procfs;
mod reader;
mod smack;
mod storm;

use clap::{Parser, Subcommand};
use nproc_genl::Client;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A procfs mount's hidepid= value, as mount(8) spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Hidepid {
    /// hidepid=0
    Off,
    /// hidepid=1
    Noaccess,
    /// hidepid=2
    Invisible,
    /// hidepid=4
    Ptraceable,
}

#[derive(Parser)]
#[command(about = "nproc guest suites (run inside the patched kernel)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Every field of every task equals /proc (stat, statm, status, wchan).
    Parity {
        /// The threads scope (/proc/PID/task/TID) instead of processes.
        #[arg(long)]
        threads: bool,
        /// Rounds of re-reads for values that moved.
        #[arg(long, default_value_t = 6)]
        rounds: usize,
        /// Drop to this uid (and gid) first, after forking a sleeper of
        /// that uid: wchan must then be "0" exactly where /proc/PID/wchan
        /// shows that reader "0", and both kinds must occur.
        #[arg(long)]
        uid: Option<u32>,
        /// The procfs mount to compare with (its root directory), which
        /// the requests name: its hidepid= decides what both show.
        #[arg(long, default_value = "/proc")]
        proc: PathBuf,
        /// The mount's hidepid= (off, noaccess, invisible, ptraceable):
        /// what the run must have seen for it not to be vacuous (tasks
        /// sent by pid alone under noaccess, hidden ones under invisible
        /// and ptraceable, neither under off).
        #[arg(long, default_value = "off")]
        hidepid: Hidepid,
        /// First enter a new mount namespace and mount a procfs with these
        /// options over /proc there (what systemd's ProtectProc= gives a
        /// service); `--proc` is then that /proc.
        #[arg(long, value_name = "OPTIONS")]
        private_mount: Option<String>,
        /// Appended to the suite's name (`parity-uid1000-LABEL`).
        #[arg(long)]
        label: Option<String>,
    },
    /// The access rules beyond one mount's parity: no procfs, foreign
    /// descriptors, Landlock, credentials of the socket's opener and of
    /// the sender mixed, subset=pid's GET_GLOBAL (see access.rs).
    Access {
        /// A procfs mounted with subset=pid, for GET_GLOBAL's refusal.
        #[arg(long)]
        subset_pid: PathBuf,
        /// A procfs mounted with hidepid=invisible, for the credential
        /// mixes (what uid `uid` may see there is what it may list).
        #[arg(long)]
        invisible: PathBuf,
        /// The unprivileged uid.
        #[arg(long, default_value_t = 1000)]
        uid: u32,
    },
    /// One reader, the LSM check per task, rules read at every chunk,
    /// kernel.nproc_restrict and gid= (see reader.rs).
    Reader {
        /// The unprivileged uid.
        #[arg(long, default_value_t = 1000)]
        uid: u32,
        /// A setuid-root copy of this program.
        #[arg(long)]
        suid: PathBuf,
        /// An empty directory to mount procfs instances under.
        #[arg(long, default_value = "/tmp/reader")]
        scratch: PathBuf,
    },
    /// nproc against /proc under Smack labels (see smack.rs).
    Smack {
        /// The unprivileged uid of the reader.
        #[arg(long, default_value_t = 1000)]
        uid: u32,
    },
    /// The setuid-root program of the reader suite: sends a request on an
    /// inherited socket; exit status 0 when the kernel refuses it.
    SendAsHelper {
        #[arg(long)]
        sock: i32,
        #[arg(long)]
        procfs: i32,
        #[arg(long)]
        family: u16,
    },
    /// The reader of the reader suite that inherits, across setuid and
    /// exec, a socket whose request root sent; exit status 0 when it gets
    /// no task and the kernel's refusal.
    ReadInherited {
        #[arg(long)]
        sock: i32,
        #[arg(long)]
        seq: u32,
        #[arg(long)]
        family: u16,
    },
    /// A reader in a new pid namespace sees only that namespace's pids.
    Pidns,
    /// Dumps during a fork/exit storm: no duplicates, no lost survivors.
    Storm {
        /// Dumps (processes and threads scope alternately).
        #[arg(long, default_value_t = 40)]
        dumps: usize,
        /// Threads that fork and reap children meanwhile.
        #[arg(long, default_value_t = 2)]
        forkers: usize,
        /// Sleeping processes, and as many sleeping threads, started
        /// first so that every dump spans several chunks.
        #[arg(long, default_value_t = 200)]
        sleepers: usize,
    },
    /// The fixed malformed requests: each must get a kernel error.
    Badreq,
    /// Random malformed messages: each must get an error (or, for a
    /// datagram shorter than its header claims, no answer); no slab leak.
    Fuzz {
        /// Messages (after 1,000 warm-up ones).
        #[arg(long, default_value_t = 100_000)]
        count: u64,
        /// Seed (default: from the clock); printed either way.
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Starts `n` threads that fault in and burn different amounts, then
    /// sleep forever: a process whose sums differ from its threads' values.
    Threads {
        /// Threads besides the main one.
        n: u64,
    },
}

fn connect(suite: &str) -> Option<Client> {
    connect_at(suite, Path::new("/proc"))
}

/// A client whose requests name the procfs mounted at `root`.
fn connect_at(suite: &str, root: &Path) -> Option<Client> {
    match nproc_genl::open_procfs(root).and_then(|fd| Client::connect_with_procfs(Some(fd))) {
        Ok(c) => Some(c),
        Err(e) => {
            println!("{suite}: FAIL {e}");
            None
        }
    }
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn verdict(suite: &str, fails: &[String], summary: &str) -> ExitCode {
    for f in fails.iter().take(50) {
        println!("{suite}: DIFF {f}");
    }
    if fails.is_empty() {
        println!("{suite}: PASS {summary}");
        ExitCode::SUCCESS
    } else {
        println!("{suite}: FAIL {} failures; {summary}", fails.len());
        ExitCode::FAILURE
    }
}

/// Drops every privilege to `uid` (gid = uid, no supplementary groups).
fn drop_to(uid: u32) -> std::io::Result<()> {
    // SAFETY: these calls change only this process's credentials.
    let rc = unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0
            || libc::setresgid(uid, uid, uid) != 0
            || libc::setresuid(uid, uid, uid) != 0
        {
            -1
        } else {
            0
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Forks a child that sleeps until killed; returns its pid once it
/// sleeps (a task that runs has wchan "0" for everyone), or after two
/// seconds.
fn sleeper() -> libc::pid_t {
    // SAFETY: the child only sleeps.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        loop {
            // SAFETY: pause(2) has no memory effects.
            unsafe { libc::pause() };
        }
    }
    for _ in 0..200 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat
            .rsplit_once(") ")
            .is_some_and(|(_, r)| r.starts_with('S'))
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    pid
}

/// The options of one parity run.
struct ParityRun {
    threads: bool,
    rounds: usize,
    uid: Option<u32>,
    root: PathBuf,
    hide: Hidepid,
    private_mount: Option<String>,
    label: Option<String>,
}

/// Makes this mount namespace's mounts private and mounts a procfs with
/// `options` over /proc: of the caller's pid namespace, seen in this mount
/// namespace only (the caller has unshared it).
fn mount_private_proc(options: &str) -> std::io::Result<()> {
    let c = |s: &str| {
        std::ffi::CString::new(s)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (root, proc_, fstype, opts) = (c("/")?, c("/proc")?, c("proc")?, c(options)?);
    // SAFETY: mount(2) with NUL-terminated strings; only this process's
    // mount namespace (unshared by the caller) changes.
    let rc = unsafe {
        if libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            -1
        } else {
            libc::mount(
                fstype.as_ptr(),
                proc_.as_ptr(),
                fstype.as_ptr(),
                0,
                opts.as_ptr().cast(),
            )
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// unshare(CLONE_NEWNS), then a procfs mounted over /proc with `options`
/// in the new mount namespace only.
fn private_proc(options: &str) -> Result<(), String> {
    // SAFETY: unshare(2) changes only this process's namespaces.
    let unshared = if unsafe { libc::unshare(libc::CLONE_NEWNS) } == 0 {
        mount_private_proc(options)
    } else {
        Err(std::io::Error::last_os_error())
    };
    unshared.map_err(|e| format!("a private /proc ({options}): {e}"))
}

fn parity(run: ParityRun) -> ExitCode {
    let ParityRun {
        threads,
        rounds,
        uid,
        root,
        hide,
        private_mount,
        label,
    } = run;
    let root = root.as_path();
    let mut suite = match (threads, uid) {
        (false, None) => "parity-processes".to_string(),
        (true, None) => "parity-threads".to_string(),
        (false, Some(u)) => format!("parity-uid{u}"),
        (true, Some(u)) => format!("parity-threads-uid{u}"),
    };
    if let Some(l) = label {
        suite += &format!("-{l}");
    }
    // What the guest's own /proc (hidepid=off) lists, before any private
    // mount covers it: the count of hidden tasks is against it.
    let all = parity::numeric_dirs(Path::new("/proc")).len();
    if let Some(o) = private_mount {
        if let Err(e) = private_proc(&o) {
            println!("{suite}: FAIL {e}");
            return ExitCode::FAILURE;
        }
    }
    let mut child = None;
    if let Some(u) = uid {
        if let Err(e) = drop_to(u) {
            println!("{suite}: FAIL cannot become uid {u}: {e}");
            return ExitCode::FAILURE;
        }
        // Changing the uid made the process non-dumpable, and
        // ptrace_may_access() refuses a non-dumpable task even to its own
        // uid: make it (and the sleeper, which inherits it) dumpable again,
        // as a process started by a uid-1000 login would be.
        // SAFETY: prctl(PR_SET_DUMPABLE) changes only a flag of our mm.
        if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1) } != 0 {
            println!(
                "{suite}: FAIL PR_SET_DUMPABLE: {}",
                std::io::Error::last_os_error()
            );
            return ExitCode::FAILURE;
        }
        child = Some(sleeper());
    }
    let Some(mut c) = connect_at(&suite, root) else {
        return ExitCode::FAILURE;
    };
    let st = parity::run(&mut c, root, threads, rounds);
    if let Some(pid) = child {
        // SAFETY: kill(2) and waitpid(2) on our own child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
    let mut fails = st.diffs.clone();
    // A run that compared (almost) nothing proves nothing; a mount that
    // hides or locks other users' tasks leaves the reader little, but
    // never nothing (its sleeper).
    let restricted = hide != Hidepid::Off && uid.is_some();
    if st.tasks < if restricted { 1 } else { 5 } {
        fails.push(format!("only {} tasks compared", st.tasks));
    }
    // Processes scope: the mount lists fewer than the whole /proc exactly
    // when it hides (threads: the sums differ by threads, not judged).
    let hidden = all.saturating_sub(st.listed + 1);
    if uid.is_some() && !threads {
        // Tasks may come and go between the reads: hiding means hiding
        // many (every root task, kernel threads included).
        let seen = (st.pid_only > 0, hidden * 4 > all);
        let want = match hide {
            Hidepid::Off => (false, false),
            Hidepid::Noaccess => (true, false),
            Hidepid::Invisible | Hidepid::Ptraceable => (false, true),
        };
        if seen != want {
            fails.push(format!(
                "hidepid={hide:?}: {} tasks by pid alone, {hidden} hidden; want (pid alone, hidden) = {want:?}",
                st.pid_only
            ));
        }
    }
    if uid.is_some() && st.wchan_sym == 0 || uid.is_some() && !restricted && st.wchan_zero == 0 {
        fails.push(format!(
            "an unprivileged run must see guarded wchans (\"0\") and its own symbols: {} and {}",
            st.wchan_zero, st.wchan_sym
        ));
    }
    let summary = format!(
        "{} tasks x {} fields: {} equal at once, {} after re-reads, {} within a clock tick \
         (utime/stime), {} wchan or worker name of a task that ran; wchan agreed \"0\" {} times, a symbol {} times; \
         {} listed by {}, {} of them by pid alone, {hidden} hidden",
        st.tasks, st.fields, st.first, st.reread, st.tick, st.ran, st.wchan_zero, st.wchan_sym,
        st.listed, root.display(), st.pid_only
    );
    verdict(&suite, &fails, &summary)
}

fn fuzz(count: u64, seed: Option<u64>) -> ExitCode {
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    println!("fuzz: seed {seed} (rerun: nproc-guest fuzz --count {count} --seed {seed})");
    let Some(c) = connect("fuzz") else {
        return ExitCode::FAILURE;
    };
    let st = match fuzz::run(c.family_id(), seed, count) {
        Ok(s) => s,
        Err(e) => {
            println!("fuzz: FAIL socket: {e}");
            return ExitCode::FAILURE;
        }
    };
    for (k, n) in fuzz::KINDS.iter().zip(st.sent) {
        println!("fuzz: sent {n} {k}");
    }
    for (errno, n) in &st.errnos {
        let texts = st.texts.get(errno).copied().unwrap_or(0);
        let s = st
            .samples
            .get(errno)
            .map(|v| format!("; e.g. {}", v.join(" | ")))
            .unwrap_or_default();
        println!("fuzz: errno {errno}: {n} replies, {texts} with extack text{s}");
    }
    let mut fails = st.fails.clone();
    if st.nfails > fails.len() as u64 {
        fails.push(format!("... {} failures in all", st.nfails));
    }
    let (s0, s1) = st.slab;
    let tolerance = count / 100;
    if s0 == 0 {
        fails.push("cannot read /proc/slabinfo".into());
    } else if s1 > s0 + tolerance {
        fails.push(format!(
            "slab objects (kmalloc-*, skbuff_*) grew from {s0} to {s1}, more than {tolerance}"
        ));
    }
    let answered: u64 = st.errnos.values().sum();
    let summary = format!(
        "{count} messages (seed {seed}): {answered} errors, {} with extack text, {} dropped \
         unanswered ({} of them empty, refused by sendmsg); slab objects {s0} -> {s1} \
         (tolerance +{tolerance}), meminfo Slab {} -> {} kB",
        st.with_text,
        st.sent[fuzz::KINDS.len() - 1],
        st.empty,
        st.meminfo_slab.0,
        st.meminfo_slab.1
    );
    verdict("fuzz", &fails, &summary)
}

fn threads(n: u64) -> ExitCode {
    for i in 0..n {
        std::thread::spawn(move || {
            let mut v = vec![0u8; ((i + 1) as usize * 2) << 20];
            for j in (0..v.len()).step_by(4096) {
                v[j] = 1;
            }
            let mut x = 0u64;
            for k in 0..10_000_000 * (i + 1) {
                x = x.wrapping_add(k.wrapping_mul(k));
            }
            std::hint::black_box((&v, x));
            loop {
                std::thread::park();
            }
        });
    }
    loop {
        std::thread::park();
    }
}

fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::Parity {
            threads,
            rounds,
            uid,
            proc,
            hidepid,
            private_mount,
            label,
        } => parity(ParityRun {
            threads,
            rounds,
            uid,
            root: proc,
            hide: hidepid,
            private_mount,
            label,
        }),
        Cmd::Access {
            subset_pid,
            invisible,
            uid,
        } => {
            let fails = access::run(&subset_pid, &invisible, uid);
            verdict("access", &fails, "every rule held")
        }
        Cmd::Reader { uid, suid, scratch } => {
            let fails = reader::run(uid, &suid, &scratch);
            verdict(
                "reader",
                &fails,
                "one reader, per-task LSM check, rules per chunk, restrict levels, gid=",
            )
        }
        Cmd::Smack { uid } => {
            let fails = smack::run(uid);
            verdict(
                "smack",
                &fails,
                "a Secret task's values exactly where /proc lets a Reader open them",
            )
        }
        Cmd::SendAsHelper {
            sock,
            procfs,
            family,
        } => exit_code(reader::send_as_helper(sock, procfs, family)),
        Cmd::ReadInherited { sock, seq, family } => {
            exit_code(reader::read_inherited(sock, seq, family))
        }
        Cmd::Pidns => match ns::run() {
            ns::Outcome::Ran(fails) => verdict("pidns", &fails, "new namespace saw pids 1 and 2"),
            ns::Outcome::Unsupported(why) => {
                // Not a pass: the xtask reports it as not checked.
                println!("pidns: NOT CHECKED {why}");
                ExitCode::SUCCESS
            }
        },
        Cmd::Storm {
            dumps,
            forkers,
            sleepers,
        } => {
            let Some(mut c) = connect("storm") else {
                return ExitCode::FAILURE;
            };
            let st = storm::run(&mut c, dumps, forkers, sleepers);
            let mut fails = st.fails.clone();
            if st.forks == 0 {
                fails.push("the storm forked nothing".into());
            }
            let summary = format!(
                "{} dumps of every field, {} records, {} bytes of attributes, {} survivors each \
                 found once; {} forks and {} threads meanwhile",
                st.dumps, st.records, st.bytes, st.survivors, st.forks, st.threads
            );
            verdict("storm", &fails, &summary)
        }
        Cmd::Badreq => {
            let Some(mut c) = connect("badreq") else {
                return ExitCode::FAILURE;
            };
            let n = badreq::cases().len();
            let accepted = badreq::run(&mut c);
            let fails: Vec<String> = (accepted > 0)
                .then(|| format!("{accepted} of {n} malformed requests accepted"))
                .into_iter()
                .collect();
            verdict("badreq", &fails, &format!("{n} malformed requests refused"))
        }
        Cmd::Fuzz { count, seed } => fuzz(count, seed),
        Cmd::Threads { n } => threads(n),
    }
}
