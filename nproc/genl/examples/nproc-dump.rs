//! Try the nproc family by hand.
//!
//! ```text
//! nproc-dump --fields                      # what the kernel serves
//! nproc-dump --global                      # the global block
//! nproc-dump tgid,ppid,state,comm,wchan    # one line per process
//! nproc-dump -L tgid,tid,comm              # one line per thread
//! nproc-dump -p 1 all                      # every field of pid 1
//! nproc-dump --ppid 2 tgid,comm            # the children of pid 2
//! ```
//!
//! Each task prints as `name=value` pairs separated by spaces; strings
//! are printed as the kernel sent them (lossily as UTF-8). The real `ps`
//! is `nps`.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use nproc_genl::{Client, Error, TaskRequest};
use nproc_proto::{flags, global_item, task_field, Scope, TASK_FIELDS};

#[derive(Parser)]
#[command(about = "Dump process information through the nproc netlink family")]
struct Args {
    /// List the fields and global items the kernel describes.
    #[arg(long, conflicts_with_all = ["global", "names"])]
    fields: bool,
    /// Print the global block.
    #[arg(long, conflicts_with = "names")]
    global: bool,
    /// Every thread instead of every process.
    #[arg(short = 'L', conflicts_with_all = ["pid", "ppid"])]
    threads: bool,
    /// Only the task with this pid.
    #[arg(short, long, conflicts_with = "ppid")]
    pid: Option<u32>,
    /// Only the processes whose parent is this pid.
    #[arg(long)]
    ppid: Option<u32>,
    /// Comma-separated field names, or `all`.
    names: Option<String>,
}

fn run(args: Args) -> Result<(), Error> {
    let mut client = Client::connect()?;
    let mut out = std::io::stdout().lock();
    if args.fields {
        for f in client.fields()? {
            let ty = f.ty.map_or("?", |t| t.name());
            let unit = f.unit.map_or("?", |u| u.name());
            let set = match f.set {
                Some(nproc_proto::FieldSet::Global) => "global",
                Some(nproc_proto::FieldSet::Task) => "task",
                None => "?",
            };
            let mut fl = Vec::new();
            for (bit, name) in [
                (flags::NEEDS_PTRACE, "needs-ptrace"),
                (flags::PER_THREAD, "per-thread"),
                (flags::EXPENSIVE, "expensive"),
            ] {
                if f.flags & bit != 0 {
                    fl.push(name);
                }
            }
            let _ = writeln!(
                out,
                "{set:6} {:3} {:15} {ty:6} {unit:22} {}",
                f.id,
                f.name,
                fl.join(",")
            );
        }
        return Ok(());
    }
    if args.global {
        for (id, v) in client.global()? {
            let name = global_item(id).map_or("?", |d| d.name);
            let _ = writeln!(out, "{name}={v}");
        }
        return Ok(());
    }
    let names = args.names.unwrap_or_else(|| "tgid,ppid,state,comm".into());
    let names: Vec<&str> = if names == "all" {
        TASK_FIELDS.iter().map(|d| d.name).collect()
    } else {
        names.split(',').collect()
    };
    let scope = if args.threads {
        Scope::Threads
    } else {
        Scope::Processes
    };
    let mut req = TaskRequest::from_names(&names, scope)?;
    if let Some(pid) = args.pid {
        req = req.with_pid(Scope::Pid, pid);
    } else if let Some(ppid) = args.ppid {
        req = req.with_pid(Scope::Children, ppid);
    }
    client.for_each_task(&req, |task| {
        let line: Vec<String> = task
            .values
            .iter()
            .map(|(id, v)| format!("{}={v}", task_field(*id).map_or("?", |d| d.name)))
            .collect();
        let _ = writeln!(out, "{}", line.join(" "));
    })
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nproc-dump: {e}");
            ExitCode::FAILURE
        }
    }
}
