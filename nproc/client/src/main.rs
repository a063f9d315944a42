//! `nps`: a ps whose output is byte-identical to procps-ng 4.0.2's.

use clap::Parser;
use nproc::cli::{Args, Env, SourceKind};
use nproc::netlink::NprocSource;
use nproc::procfs::{parse_stat, ProcSource};
use nproc::render::{Charset, Ctx, Names, TtyNamer};
use nproc::select::Me;
use nproc::{Source, SourceError, Task};
use std::process::ExitCode;

/// Our euid and controlling terminal, as ps caches them at start-up.
fn me() -> Me {
    // SAFETY: geteuid() has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    let mut t = Task::empty(0, 0);
    let tty = match std::fs::read("/proc/self/stat") {
        Ok(s) if parse_stat(&s, &mut t).is_ok() => t.tty_nr,
        _ => 0,
    };
    Me { euid, tty }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let fail = |msg: &dyn std::fmt::Display| {
        eprintln!("nps: error: {msg}");
        ExitCode::FAILURE
    };
    if args.fields {
        return list_fields();
    }
    let request = match args.request() {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let charset = Charset::from_environment();
    nproc::render::clock::init_time_zone();
    let mut source: Box<dyn Source> = match args.source {
        SourceKind::Proc => Box::new(ProcSource::new()),
        SourceKind::Nproc => match NprocSource::connect() {
            Ok(s) => Box::new(s),
            Err(e) => return source_failed(&e),
        },
    };
    let global = match source.global() {
        Ok(g) => g,
        Err(e) => return source_failed(&e),
    };
    let cols = nproc::screen::screen_cols(std::env::var("COLUMNS").ok().as_deref(), request.wide);
    let plan = match request.plan(&global, me(), cols, &Env::from_process()) {
        Ok((plan, warnings)) => {
            for w in warnings {
                eprintln!("{w}");
            }
            plan
        }
        Err(e) => return fail(&e),
    };
    let mut tty = TtyNamer::new("/proc");
    let mut names = Names::new();
    let mut ctx = Ctx {
        global: &global,
        charset,
        tty: &mut tty,
        names: &mut names,
        now: nproc::render::clock::now(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match plan.run(source.as_mut(), &mut ctx, &mut out) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        // ps exits 0 on SIGPIPE ("ps | head").
        Err(nproc::ps::RunError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(nproc::ps::RunError::Source(e)) => source_failed(&e),
        Err(e) => fail(&e),
    }
}

/// A source error, with the way out when the kernel has no nproc.
fn source_failed(e: &SourceError) -> ExitCode {
    match e {
        SourceError::Nproc(nproc_genl::Error::NoFamily) => {
            eprintln!("nps: {e}, or nps --source proc")
        }
        _ => eprintln!("nps: error: {e}"),
    }
    ExitCode::FAILURE
}

/// `nps --fields`.
fn list_fields() -> ExitCode {
    let fields = match NprocSource::connect().and_then(|mut s| s.fields()) {
        Ok(f) => f,
        Err(e) => return source_failed(&e),
    };
    let stdout = std::io::stdout();
    match nproc::netlink::list::print_fields(&mut stdout.lock(), &fields) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nps: error: write error: {e}");
            ExitCode::FAILURE
        }
    }
}
