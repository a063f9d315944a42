//! `kfast-nproc-guest`: the helpers of the nproc benchmark guest
//! (`cargo xtask nproc-bench`, `guest/nproc-bench-init.sh`). Built
//! statically and packed into that guest's initramfs.
//!
//! - `tasks PROCS THREADED THREADS READY`: forks PROCS single-threaded
//!   processes sleeping in four core ways (nanosleep, pause, a pipe read,
//!   a futex wait) and THREADED processes of THREADS sleeping threads each,
//!   then creates the file READY and waits for its children (`do_wait`).
//! - `time LABEL N CMD ARGS...`: runs CMD N times one after the other,
//!   stdout to /dev/null, and prints `time LABEL N WALL_US USER_US SYS_US`
//!   (totals; user and sys from `wait4()`'s rusage of each child). Fails
//!   if a run exits non-zero.
//! - `procread`: the plain /proc reader: reads every `/proc/PID/stat` and
//!   `/proc/PID/wchan` (processes, as `ps ax` lists them) into one reused
//!   buffer, prints nothing but the number of processes read.
//! - `nprocread FIELDS`: the same processes through the nproc family, the
//!   comma-separated FIELDS of each received and every value decoded,
//!   nothing printed but the count. `procread`'s counterpart in the same
//!   binary, so that the benchmark's two raw rows pay the same start-up
//!   and differ only in how they collect.

mod tasks;

use nproc_genl::{Client, TaskRequest};
use nproc_proto::Scope;
use std::fs::File;
use std::io::Write;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// Errors are reported as text on stderr.
pub type Result<T> = std::result::Result<T, String>;

const USAGE: &str = "usage: kfast-nproc-guest tasks PROCS THREADED THREADS READY | \
                     time LABEL N CMD [ARGS...] | procread | nprocread FIELDS";

/// Parses a decimal count argument.
fn num(s: &str) -> Result<u32> {
    s.parse()
        .map_err(|_| format!("not a count: {s:?}\n{USAGE}"))
}

fn run(args: &[String]) -> Result<()> {
    let (cmd, rest) = args.split_first().ok_or(USAGE)?;
    match (cmd.as_str(), rest) {
        ("tasks", [procs, threaded, threads, ready]) => {
            tasks::run(num(procs)?, num(threaded)?, num(threads)?, ready)
        }
        ("time", [label, n, cmd, args @ ..]) => time(label, num(n)?, cmd, args),
        ("procread", []) => procread(),
        ("nprocread", [fields]) => nprocread(fields),
        _ => Err(USAGE.into()),
    }
}

/// Microseconds of a `timeval`.
fn micros(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64
}

/// `time LABEL N CMD ARGS...`.
fn time(label: &str, n: u32, cmd: &str, args: &[String]) -> Result<()> {
    let (mut user, mut sys) = (0u64, 0u64);
    let t = Instant::now();
    for i in 0..n {
        let null = File::create("/dev/null").map_err(|e| format!("/dev/null: {e}"))?;
        let child = Command::new(cmd)
            .args(args)
            .stdin(Stdio::null())
            .stdout(null)
            .spawn()
            .map_err(|e| format!("{cmd}: {e}"))?;
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value of that plain C struct.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child's pid with valid pointers to
        // locals; `Child` is never waited on by std afterwards (dropping it
        // does not reap).
        let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
        if r < 0 {
            return Err(format!("wait4: {}", std::io::Error::last_os_error()));
        }
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            return Err(format!(
                "{label}: run {i} of {cmd} failed (status {status:#x})"
            ));
        }
        user += micros(ru.ru_utime);
        sys += micros(ru.ru_stime);
    }
    let wall = t.elapsed().as_micros();
    println!("time {label} {n} {wall} {user} {sys}");
    Ok(())
}

/// `procread`: every process's stat and wchan, nothing printed but the
/// count. The plainest honest reader: `open`, `read()` into one 4 KiB
/// buffer until end of file (two reads for these short files), `close`:
/// libc directly, because std's `File` adds an `fcntl` per open and
/// `read_to_end` a `statx`.
fn procread() -> Result<()> {
    let mut buf = [0u8; 4096];
    let mut path = Vec::with_capacity(32);
    let mut count = 0u32;
    let dir = std::fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))?;
    for ent in dir {
        let ent = ent.map_err(|e| format!("/proc: {e}"))?;
        let name = ent.file_name();
        let pid = name.as_encoded_bytes();
        if pid.is_empty() || !pid.iter().all(u8::is_ascii_digit) {
            continue;
        }
        let mut ok = false;
        for file in [&b"stat"[..], b"wchan"] {
            path.clear();
            path.extend_from_slice(b"/proc/");
            path.extend_from_slice(pid);
            path.push(b'/');
            path.extend_from_slice(file);
            path.push(0);
            // SAFETY: `path` is NUL-terminated and outlives the call.
            let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
            // A process that exited since the directory read is skipped,
            // as ps skips it.
            if fd < 0 {
                continue;
            }
            loop {
                // SAFETY: reads at most buf.len() bytes into `buf`.
                let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                if n <= 0 {
                    ok |= n == 0;
                    break;
                }
            }
            // SAFETY: closes the fd opened above, once.
            unsafe { libc::close(fd) };
        }
        count += u32::from(ok);
    }
    let _ = writeln!(std::io::stdout(), "{count} processes");
    Ok(())
}

/// `nprocread FIELDS`: every process's FIELDS through nproc, each value
/// decoded and checked against the field table, none kept: the collection
/// cost a ps pays before it renders anything.
fn nprocread(fields: &str) -> Result<()> {
    let names: Vec<&str> = fields.split(',').collect();
    let req = TaskRequest::from_names(&names, Scope::Processes).map_err(|e| e.to_string())?;
    let mut client = Client::connect().map_err(|e| format!("nproc: {e}"))?;
    let mut count = 0u32;
    client
        .for_each_task_view(&req, |task| {
            task.for_each(|_, _| {})?;
            count += 1;
            Ok(())
        })
        .map_err(|e| format!("nproc: {e}"))?;
    let _ = writeln!(std::io::stdout(), "{count} processes");
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kfast-nproc-guest: {e}");
            ExitCode::FAILURE
        }
    }
}
