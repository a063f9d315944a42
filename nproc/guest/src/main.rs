//! `nproc-guest`: the nproc guest suites, run inside the patched UML guest
//! by `cargo xtask nproc-uml-test` (kernel/guest/nproc-uml-job.sh).
//!
//! Each subcommand prints `<suite>: ...` lines, ends with
//! `<suite>: PASS ...` or `<suite>: FAIL ...`, and exits non-zero on
//! failure. Numbers are printed, never asserted against times.

mod badreq;
mod fuzz;
mod ns;
mod parity;
mod procfs;
mod storm;

use clap::{Parser, Subcommand};
use nproc_genl::Client;
use std::process::ExitCode;

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
    match Client::connect() {
        Ok(c) => Some(c),
        Err(e) => {
            println!("{suite}: FAIL {e}");
            None
        }
    }
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

/// Forks a child that sleeps until killed; returns its pid.
fn sleeper() -> libc::pid_t {
    // SAFETY: the child only sleeps.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        loop {
            // SAFETY: pause(2) has no memory effects.
            unsafe { libc::pause() };
        }
    }
    pid
}

fn parity(threads: bool, rounds: usize, uid: Option<u32>) -> ExitCode {
    let suite = match (threads, uid) {
        (false, None) => "parity-processes".to_string(),
        (true, None) => "parity-threads".to_string(),
        (false, Some(u)) => format!("parity-uid{u}"),
        (true, Some(u)) => format!("parity-threads-uid{u}"),
    };
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
    let Some(mut c) = connect(&suite) else {
        return ExitCode::FAILURE;
    };
    let st = parity::run(&mut c, threads, rounds);
    if let Some(pid) = child {
        // SAFETY: kill(2) and waitpid(2) on our own child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
    let mut fails = st.diffs.clone();
    // A run that compared (almost) nothing proves nothing.
    if st.tasks < 5 {
        fails.push(format!("only {} tasks compared", st.tasks));
    }
    if uid.is_some() && (st.wchan_zero == 0 || st.wchan_sym == 0) {
        fails.push(format!(
            "an unprivileged run must see guarded wchans (\"0\") and its own symbols: {} and {}",
            st.wchan_zero, st.wchan_sym
        ));
    }
    let summary = format!(
        "{} tasks x {} fields: {} equal at once, {} after re-reads, {} within a clock tick \
         (utime/stime), {} wchan or worker name of a task that ran; wchan agreed \"0\" {} times, a symbol {} times",
        st.tasks, st.fields, st.first, st.reread, st.tick, st.ran, st.wchan_zero, st.wchan_sym
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
        } => parity(threads, rounds, uid),
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
