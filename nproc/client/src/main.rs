//! `nps`: a ps whose output is byte-identical to procps-ng 4.0.2's.
//!
//! `main` is the C entry point, not Rust's: before a Rust `fn main`, std
//! asks glibc for the main thread's stack bounds (for its stack overflow
//! message), and glibc finds them by reading and `sscanf`-parsing
//! /proc/self/maps — a third of the instructions `nps --version` ran,
//! plus a file the kernel formats, in every run of a tool that `watch`
//! and scripts run in loops. What std's start-up did that nps needs is
//! done here: SIGPIPE ignored (a closed pipe is `EPIPE`, which ends nps
//! with status 0 as ps's SIGPIPE handler does: see `nps::stdio`). A stack
//! overflow is a plain SIGSEGV instead of std's message.
#![no_main]

use nps::stdio;

/// The process's entry point, called by glibc's start-up code; std reads
/// the arguments itself (glibc hands them to its `.init_array` hook).
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    // SAFETY: signal() with SIG_IGN has no preconditions; no other
    // thread exists yet to race on the disposition.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    stdio::reserve_standard_fds();
    // A listing's plan, source and buffers are left for the kernel to
    // reclaim with the address space rather than freed one by one.
    stdio::exit(nps::run::nps(std::env::args_os().collect()))
}
