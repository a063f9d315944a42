//! `tasks`: the benchmark's population of sleeping processes and threads.
//!
//! Each process sleeps in one of four core paths so that `wchan` has more
//! than one answer (`do_nanosleep`/`hrtimer_nanosleep`, `sys_pause`,
//! `pipe_read`, `futex_wait_queue`); the parent ends in `do_wait`. The
//! module's sleepers are `ksym_many`'s kthreads, loaded by the init script.

use crate::Result;
use std::time::Duration;

/// Sleeps forever in the core path `kind` (0..4) names; never returns.
fn sleep_forever(kind: u32) -> ! {
    match kind % 4 {
        0 => loop {
            std::thread::sleep(Duration::from_secs(1_000_000));
        },
        1 => loop {
            // SAFETY: pause() has no arguments and only returns on a signal.
            unsafe { libc::pause() };
        },
        2 => {
            let mut fds = [0; 2];
            // SAFETY: pipe() writes two fds into the array it is given.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                sleep_forever(0);
            }
            // The write end stays open here, so the read never sees EOF.
            let mut b = 0u8;
            loop {
                // SAFETY: a one-byte read into a local.
                unsafe { libc::read(fds[0], (&mut b as *mut u8).cast(), 1) };
            }
        }
        _ => {
            let word: u32 = 0;
            loop {
                // SAFETY: FUTEX_WAIT on a live local that stays 0: the
                // kernel only reads it.
                unsafe {
                    libc::syscall(
                        libc::SYS_futex,
                        &word as *const u32,
                        libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                        0u32,
                        std::ptr::null::<libc::timespec>(),
                    )
                };
            }
        }
    }
}

/// Forks a child running `body`, which sleeps until killed (the child
/// exits if it ever returns); returns the child's pid.
fn fork_child(body: impl FnOnce()) -> Result<libc::pid_t> {
    // SAFETY: this process is single-threaded when it forks (threads only
    // ever start in children), so the child may run ordinary code.
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
        0 => {
            // SAFETY: prctl with integer arguments: die with the parent, so
            // killing the parent ends the whole population.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
            body();
            std::process::exit(1)
        }
        pid => Ok(pid),
    }
}

/// `tasks PROCS THREADED THREADS READY`.
pub fn run(procs: u32, threaded: u32, threads: u32, ready: &str) -> Result<()> {
    for i in 0..procs {
        fork_child(|| sleep_forever(i))?;
    }
    // Threaded children say "started" by closing their copy of the write
    // end once every thread is up: EOF on the read end means all are.
    let mut fds = [0; 2];
    // SAFETY: pipe() writes two fds into the array it is given.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    for i in 0..threaded {
        fork_child(|| {
            for t in 0..threads {
                let spawned = std::thread::Builder::new()
                    .stack_size(16 * 1024)
                    .spawn(move || sleep_forever(if t % 2 == 0 { 0 } else { 3 }));
                if let Err(e) = spawned {
                    eprintln!("kfast-nproc-guest: process {i}, thread {t}: {e}");
                    std::process::exit(1);
                }
            }
            // SAFETY: closing this process's own copies of the pipe.
            unsafe {
                libc::close(fds[0]);
                libc::close(fds[1]);
            }
            sleep_forever(i)
        })?;
    }
    // SAFETY: closing our write end; then a one-byte read until EOF.
    unsafe { libc::close(fds[1]) };
    let mut b = 0u8;
    // SAFETY: reads into a local byte; returns 0 once no writer is left.
    while unsafe { libc::read(fds[0], (&mut b as *mut u8).cast(), 1) } > 0 {}
    std::fs::write(ready, format!("{procs} {threaded} {threads}\n"))
        .map_err(|e| format!("{ready}: {e}"))?;
    loop {
        let mut status = 0;
        // SAFETY: wait() with a pointer to a local; children never exit
        // unless killed, and then this reaps them.
        if unsafe { libc::wait(&mut status) } < 0 {
            return Err("every child exited".into());
        }
    }
}
