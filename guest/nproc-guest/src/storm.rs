//! Dumps during a fork/exit storm: no duplicated pid in one dump, and
//! every task that lived through the whole dump (listed by /proc before
//! and after it, with the same start time) appears in it exactly once.
//! The kernel side of "no oops" is the console, checked by the xtask.

use crate::parity::numeric_dirs;
use crate::procfs::{task_dir, ProcTask};
use nproc_genl::{Client, TaskRequest};
use nproc_proto::{field_id, Scope};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

/// What the storm run saw.
#[derive(Debug, Default)]
pub struct Stats {
    /// Dumps made.
    pub dumps: usize,
    /// Tasks in all dumps together.
    pub records: usize,
    /// Netlink bytes of the largest dump, from its records' attributes
    /// (`netlink_dump()` fills chunks of at most the reader's largest
    /// receive buffer, 64 KiB for nproc-genl: more bytes, more chunks).
    pub bytes: usize,
    /// Tasks that lived through their dump, summed over dumps.
    pub survivors: usize,
    /// Processes forked (and reaped) by the storm meanwhile.
    pub forks: u64,
    /// Threads started (and joined) by the storm meanwhile.
    pub threads: u64,
    /// Failures, described.
    pub fails: Vec<String>,
}

/// Start times of every task /proc lists, by pid (tid in the threads
/// scope).
fn starts(threads: bool) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for tgid in numeric_dirs(Path::new("/proc")) {
        let ids: Vec<(u32, Option<u32>)> = if threads {
            numeric_dirs(&Path::new("/proc").join(format!("{tgid}/task")))
                .into_iter()
                .map(|t| (t, Some(t)))
                .collect()
        } else {
            vec![(tgid, None)]
        };
        for (id, tid) in ids {
            if let Some(s) = ProcTask::read_start(&task_dir(Path::new("/proc"), tgid, tid)) {
                out.insert(id, s);
            }
        }
    }
    out
}

/// The bytes a record took on the wire: netlink and genl headers, the
/// task nest, and each attribute padded to 4 bytes (a u64 may add a pad
/// attribute; not counted).
fn wire_len(r: &nproc_genl::Record) -> usize {
    use nproc_genl::Value;
    let attrs: usize = r
        .values
        .iter()
        .map(|(_, v)| {
            let n = match v {
                Value::U32(_) | Value::S32(_) => 4,
                Value::U64(_) => 8,
                Value::Str(b) => b.len() + 1,
                Value::Bytes(b) | Value::Raw(b) => b.len(),
            };
            (4 + n).next_multiple_of(4)
        })
        .sum();
    16 + 4 + 4 + attrs
}

/// Forks and reaps children as fast as it can until `stop`.
fn forker(stop: &AtomicBool, n: &AtomicU64) {
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: the child calls only _exit(2), which is async-signal-safe
        // and so allowed after fork(2) in a multi-threaded process.
        let pid = unsafe { libc::fork() };
        match pid {
            // SAFETY: _exit(2) ends the child at once, touching no state.
            0 => unsafe { libc::_exit(0) },
            p if p > 0 => {
                let mut status = 0;
                // SAFETY: waitpid(2) writes only `status`; p is our child.
                unsafe { libc::waitpid(p, &mut status, 0) };
                n.fetch_add(1, Ordering::Relaxed);
            }
            _ => thread::yield_now(),
        }
    }
}

/// Runs `dumps` dumps (processes and threads scope alternately) while
/// `forkers` threads fork and one thread starts and joins threads.
/// `sleepers` sleeping processes and as many sleeping threads are started
/// first, and every field is asked for, so that each dump spans several
/// chunks and the kernel's cursor resumes between them while tasks come
/// and go.
pub fn run(client: &mut Client, dumps: usize, forkers: usize, sleepers: usize) -> Stats {
    let mut st = Stats::default();
    let mut children = Vec::new();
    for _ in 0..sleepers {
        // SAFETY: the child only sleeps until killed.
        match unsafe { libc::fork() } {
            0 => loop {
                // SAFETY: pause(2) has no memory effects.
                unsafe { libc::pause() };
            },
            p if p > 0 => children.push(p),
            _ => st
                .fails
                .push(format!("fork: {}", std::io::Error::last_os_error())),
        }
    }
    for _ in 0..sleepers {
        thread::spawn(|| loop {
            thread::park();
        });
    }
    let stop = Arc::new(AtomicBool::new(false));
    let forks = Arc::new(AtomicU64::new(0));
    let spawned = Arc::new(AtomicU64::new(0));
    let mut helpers = Vec::new();
    for _ in 0..forkers {
        let (stop, forks) = (stop.clone(), forks.clone());
        helpers.push(thread::spawn(move || forker(&stop, &forks)));
    }
    {
        let (stop, spawned) = (stop.clone(), spawned.clone());
        helpers.push(thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if thread::spawn(|| ()).join().is_ok() {
                    spawned.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for i in 0..dumps {
        let threads = i % 2 == 1;
        let (scope, id) = if threads {
            (Scope::Threads, field_id::TID)
        } else {
            (Scope::Processes, field_id::TGID)
        };
        let all: Vec<&str> = nproc_proto::TASK_FIELDS.iter().map(|d| d.name).collect();
        let req = match TaskRequest::from_names(&all, scope) {
            Ok(r) => r,
            Err(e) => {
                st.fails.push(e.to_string());
                break;
            }
        };
        let before = starts(threads);
        let dump = match client.tasks(&req) {
            Ok(d) => d,
            Err(e) => {
                st.fails.push(format!("dump {i}: {e}"));
                continue;
            }
        };
        let after = starts(threads);
        st.dumps += 1;
        st.records += dump.len();
        st.bytes = st.bytes.max(dump.iter().map(wire_len).sum());
        let mut count: BTreeMap<u32, usize> = BTreeMap::new();
        for r in &dump {
            match r
                .get(id)
                .and_then(|v| v.as_u64())
                .and_then(|v| u32::try_from(v).ok())
            {
                Some(p) => *count.entry(p).or_default() += 1,
                None => st
                    .fails
                    .push(format!("dump {i}: a record without its id: {r:?}")),
            }
        }
        for (p, n) in count.iter().filter(|(_, n)| **n > 1) {
            st.fails
                .push(format!("dump {i} ({scope:?}): pid {p} appears {n} times"));
        }
        for (p, s) in &before {
            if after.get(p) != Some(s) {
                continue;
            }
            st.survivors += 1;
            if !count.contains_key(p) {
                st.fails.push(format!(
                    "dump {i} ({scope:?}): pid {p} lived through the dump but is not in it"
                ));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    for h in helpers {
        let _ = h.join();
    }
    for p in children {
        // SAFETY: kill(2) and waitpid(2) on our own children.
        unsafe {
            libc::kill(p, libc::SIGKILL);
            libc::waitpid(p, std::ptr::null_mut(), 0);
        }
    }
    st.forks = forks.load(Ordering::Relaxed);
    st.threads = spawned.load(Ordering::Relaxed);
    st
}
