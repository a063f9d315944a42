//! `nps`: a ps whose output is byte-identical to procps-ng 4.0.2's.
//!
//! `main` is the C entry point, not Rust's: before a Rust `fn main`, std
//! asks glibc for the main thread's stack bounds (for its stack overflow
//! message), and glibc finds them by reading and `sscanf`-parsing
//! /proc/self/maps — a third of the instructions `nps --version` ran,
//! plus a file the kernel formats, in every run of a tool that `watch`
//! and scripts run in loops. What std's start-up did that nps needs is
//! done here: SIGPIPE ignored (so `nps | head` ends with `BrokenPipe`,
//! which exits 0 as ps does) and standard output flushed at the end. A
//! stack overflow is a plain SIGSEGV instead of std's message.
//!
//! It ends with `_exit()`, not a return into glibc's `exit()`: nps writes
//! nothing through C stdio and registers no exit handlers, so glibc's walk
//! of both would only run code (translated again at every start under an
//! emulator) to find nothing to do.
#![no_main]

use nproc::cli::{Command, Env, SourceKind};
use nproc::netlink::NprocSource;
use nproc::procfs::{parse_stat, ProcSource};
use nproc::render::{Charset, Ctx, Names, TtyNamer};
use nproc::select::Me;
use nproc::{Source, SourceError, Task};

/// Our euid and controlling terminal, as ps caches them at start-up; read
/// only when the selection compares them (`Selection::new`).
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

/// Exit status: done.
const SUCCESS: u8 = 0;
/// Exit status: an error, or (as ps) no task selected.
const FAILURE: u8 = 1;
/// Exit status: a command line `nps` cannot parse (as GNU tools).
const USAGE: u8 = 2;

/// The process's entry point, called by glibc's start-up code; std reads
/// the arguments itself (glibc hands them to its `.init_array` hook).
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    // SAFETY: signal() with SIG_IGN has no preconditions; no other
    // thread exists yet to race on the disposition.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    exit(nps())
}

/// Flushes standard output and ends the process with `status`, without
/// returning: a listing's plan, source and buffers are left for the kernel
/// to reclaim with the address space rather than freed one by one.
fn exit(status: u8) -> ! {
    // A failed flush of what is left (a closed pipe) changes nothing: ps
    // exits with the status its listing earned.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // SAFETY: _exit() ends the process; standard output is flushed above,
    // standard error is unbuffered, and no other thread exists.
    unsafe { libc::_exit(libc::c_int::from(status)) }
}

/// Runs `nps`: a listing's end exits the process (see [`exit`]); anything
/// that ends earlier (help, an error) returns its exit status.
fn nps() -> u8 {
    let args = match Command::from_env() {
        Ok(Command::Run(args)) => args,
        Ok(Command::Help) => {
            print!("{}", nproc::cli::HELP);
            return SUCCESS;
        }
        Ok(Command::Version) => {
            println!("nps {}", env!("CARGO_PKG_VERSION"));
            return SUCCESS;
        }
        Err(e) => {
            eprintln!("nps: error: {e}\nTry 'nps --help' for more information.");
            return USAGE;
        }
    };
    let fail = |msg: &dyn std::fmt::Display| {
        eprintln!("nps: error: {msg}");
        FAILURE
    };
    if args.fields {
        return list_fields();
    }
    let request = match args.request() {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let charset = Charset::from_environment();
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
    let plan = match request.plan(&global, me, cols, &Env::from_process()) {
        Ok((plan, warnings)) => {
            for w in warnings {
                eprintln!("{w}");
            }
            plan
        }
        Err(e) => return fail(&e),
    };
    if plan.wants_local_time() {
        nproc::render::clock::init_time_zone();
    }
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
    let status = match plan.run(source.as_mut(), &mut ctx, &mut out) {
        Ok(true) => SUCCESS,
        Ok(false) => FAILURE,
        // ps exits 0 on SIGPIPE ("ps | head").
        Err(nproc::ps::RunError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => SUCCESS,
        Err(nproc::ps::RunError::Source(e)) => source_failed(&e),
        Err(e) => fail(&e),
    };
    drop(out);
    exit(status)
}

/// A source error, with the way out when the kernel has no nproc.
fn source_failed(e: &SourceError) -> u8 {
    match e {
        SourceError::Nproc(nproc_genl::Error::NoFamily) => {
            eprintln!("nps: {e}, or nps --source proc")
        }
        _ => eprintln!("nps: error: {e}"),
    }
    FAILURE
}

/// `nps --fields`.
fn list_fields() -> u8 {
    let fields = match NprocSource::connect().and_then(|mut s| s.fields()) {
        Ok(f) => f,
        Err(e) => return source_failed(&e),
    };
    let stdout = std::io::stdout();
    match nproc::netlink::list::print_fields(&mut stdout.lock(), &fields) {
        Ok(()) => SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => SUCCESS,
        Err(e) => {
            eprintln!("nps: error: write error: {e}");
            FAILURE
        }
    }
}
