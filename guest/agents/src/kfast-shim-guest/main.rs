//! `kfast-shim-guest`: the test helpers of the kmod-shim guest suite
//! (`cargo xtask shim-test`, `guest/shim-init.sh`), kept out of the
//! user-facing `kallsyms-bench` CLI. Built statically and packed into the
//! shim suite's initramfs.
//!
//! - `wchan-unpriv [--uid N]`: starts a `sleep` owned by uid/gid N, runs
//!   `kallsyms-bench shim wchan` (the user CLI's dump of every thread) as
//!   uid/gid N, and appends `# child <pid>` and `# kthread <tid>`
//!   lines (kthreads found as root, from `/proc/PID/stat` flags).
//! - `sleepers N`: N threads sleeping in `nanosleep` until killed.
//! - `waiters N`: N threads blocked in 13 different wait paths (waits.rs).
//! - `wchan-scale --core-pid P [--module-comm PREFIX] [--seconds S]`: times
//!   whole passes over the wchans of two groups of threads, the threads of
//!   process P and the threads whose `comm` starts with PREFIX.
//! - `comm-files PREFIX FILE`: `<comm> <FILE>` for every process whose
//!   `comm` starts with PREFIX, the file's lines joined by spaces, sorted:
//!   what the suite's shell loops did with a `cat` per process, which
//!   under emulation cost seconds per pass.
//! - `comm-pids PREFIX`: the pids of those processes, one per line.

mod waits;
mod wchan;

use std::process::ExitCode;
use std::time::Duration;

/// Errors are reported as text on stderr.
pub type Result<T> = std::result::Result<T, String>;

const USAGE: &str = "usage: kfast-shim-guest wchan-unpriv [--uid N] | sleepers N | waiters N | \
                     wchan-scale --core-pid P [--module-comm PREFIX] [--seconds S] | \
                     comm-files PREFIX FILE | comm-pids PREFIX";

/// `--name value` options after the subcommand, in any order.
struct Opts<'a>(&'a [String]);

impl Opts<'_> {
    /// The value of `--name`, parsed; `default` when absent.
    fn get<T: std::str::FromStr>(&self, name: &str, default: Option<T>) -> Result<T> {
        let mut it = self.0.iter();
        while let Some(a) = it.next() {
            if a == name {
                let v = it.next().ok_or(format!("{name} needs a value"))?;
                return v.parse().map_err(|_| format!("bad {name} {v}"));
            }
        }
        default.ok_or(format!("{name} is required"))
    }

    /// Fails on an option not in `known`.
    fn only(&self, known: &[&str]) -> Result<()> {
        let mut it = self.0.iter();
        while let Some(a) = it.next() {
            if !known.contains(&a.as_str()) {
                return Err(format!("unknown argument {a}\n{USAGE}"));
            }
            it.next();
        }
        Ok(())
    }
}

fn run(args: &[String]) -> Result<()> {
    let (cmd, rest) = args.split_first().ok_or(USAGE)?;
    match cmd.as_str() {
        "wchan-unpriv" => {
            let o = Opts(rest);
            o.only(&["--uid"])?;
            wchan::unpriv(o.get("--uid", Some(1000))?)
        }
        "sleepers" => {
            let [count] = rest else {
                return Err(USAGE.into());
            };
            let count: u32 = count.parse().map_err(|_| format!("bad count {count}"))?;
            sleepers(count)
        }
        "waiters" => {
            let [count] = rest else {
                return Err(USAGE.into());
            };
            let count: u32 = count.parse().map_err(|_| format!("bad count {count}"))?;
            waits::waiters(count)
        }
        "wchan-scale" => {
            let o = Opts(rest);
            o.only(&["--core-pid", "--module-comm", "--seconds"])?;
            wchan::scale(
                o.get("--core-pid", None)?,
                &o.get("--module-comm", Some("ksym_many/".to_string()))?,
                Duration::from_secs(o.get("--seconds", Some(5))?),
            )
        }
        "comm-files" => {
            let [prefix, file] = rest else {
                return Err(USAGE.into());
            };
            for (_, comm, text) in comm_files(prefix, Some(file))? {
                println!("{comm} {text}");
            }
            Ok(())
        }
        "comm-pids" => {
            let [prefix] = rest else {
                return Err(USAGE.into());
            };
            for (pid, _, _) in comm_files(prefix, None)? {
                println!("{pid}");
            }
            Ok(())
        }
        _ => Err(USAGE.into()),
    }
}

/// `(pid, comm, file)` for the processes whose `comm` starts with
/// `prefix`, sorted by comm and file, the file's lines joined by spaces
/// (empty without `file`). A process that exits meanwhile is left out; a
/// file that cannot be read (the task is exiting) is empty, as `cat` in
/// the shell loop gave it.
fn comm_files(prefix: &str, file: Option<&str>) -> Result<Vec<(u32, String, String)>> {
    let mut lines = Vec::new();
    let proc = std::fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))?;
    for entry in proc.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let dir = entry.path();
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else {
            continue;
        };
        let comm = comm.trim_end_matches('\n');
        if !comm.starts_with(prefix) {
            continue;
        }
        let text = file
            .and_then(|f| std::fs::read(dir.join(f)).ok())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&text).replace('\n', " ");
        lines.push((pid, comm.to_string(), text.trim_end().to_string()));
    }
    lines.sort_by(|a, b| (&a.1, &a.2).cmp(&(&b.1, &b.2)));
    Ok(lines)
}

/// `count` threads sleeping in nanosleep, and this one too, until killed.
fn sleepers(count: u32) -> Result<()> {
    for i in 0..count {
        std::thread::Builder::new()
            .stack_size(16 * 1024)
            .spawn(|| loop {
                std::thread::sleep(Duration::from_secs(100_000));
            })
            .map_err(|e| format!("sleeper thread {i}: {e}"))?;
    }
    eprintln!("kfast-shim-guest: {count} sleeper threads");
    loop {
        std::thread::sleep(Duration::from_secs(100_000));
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kfast-shim-guest: {e}");
            ExitCode::FAILURE
        }
    }
}
