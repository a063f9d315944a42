//! Standard output and error as procps's ps treats them: every write
//! error is remembered, none panics, and the end of the run reports them as
//! ps's `close_stdout()` (local/fileutils.c, run from `atexit`) does:
//!
//! - a failed write to stdout: `ARGV0: write error: STRERROR` on stderr
//!   (glibc's `error()`, which names `program_invocation_name`), exit 1;
//! - a failed write to stderr: exit 1, silently;
//! - a broken pipe on either: exit 0 at once, silently (ps's SIGPIPE
//!   handler `_exit(0)`s; nps ignores the signal and sees `EPIPE`).
//!
//! Writes go through `write(2)` directly: std's stdout and stderr treat
//! `EBADF` (a closed descriptor) as success, where ps reports it.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The first errno a write to stdout failed with (0: none).
static STDOUT_ERRNO: AtomicI32 = AtomicI32::new(0);
/// A write to stderr failed.
static STDERR_FAILED: AtomicBool = AtomicBool::new(false);

/// Makes sure descriptors 0, 1 and 2 are open before nps opens anything:
/// a closed one is taken by `/dev/null` opened read-only, so writes to it
/// still fail with `EBADF` (as on the closed descriptor), and no file or
/// netlink socket nps opens later lands on it and receives its output.
pub fn reserve_standard_fds() {
    for fd in 0..=2 {
        // SAFETY: fcntl(F_GETFD) only queries the descriptor table.
        let open = unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
        if !open {
            // SAFETY: the path is a NUL-terminated literal. The lowest free
            // descriptor is `fd`, as the lower ones are open.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        }
    }
}

/// Writes all of `buf` to `fd`, retrying on `EINTR` and short writes.
fn write_fd(fd: i32, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: buf is a live slice of buf.len() bytes.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::from(io::ErrorKind::WriteZero));
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// Standard output, unbuffered: callers hand it whole chunks. A failed
/// write is remembered for [`exit`] and returned, so that a listing can
/// stop early (nothing more would reach the reader; ps keeps going but
/// prints the same bytes and the same message).
pub struct Stdout;

impl io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        write_fd(1, buf).inspect_err(|e| {
            if e.raw_os_error() == Some(libc::EPIPE) {
                broken_pipe();
            }
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            let _ = STDOUT_ERRNO.compare_exchange(0, errno, Ordering::Relaxed, Ordering::Relaxed);
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A reader went away: ps's SIGPIPE handler exits 0 at once.
fn broken_pipe() -> ! {
    // SAFETY: _exit() ends the process; nothing is buffered.
    unsafe { libc::_exit(0) }
}

/// Writes `msg` to standard error, remembering a failure for [`exit`].
pub fn eprint(msg: &str) {
    if let Err(e) = write_fd(2, msg.as_bytes()) {
        if e.raw_os_error() == Some(libc::EPIPE) {
            broken_pipe();
        }
        STDERR_FAILED.store(true, Ordering::Relaxed);
    }
}

/// Writes `msg` to standard output through [`Stdout`].
pub fn print(msg: &str) {
    let _ = io::Write::write_all(&mut Stdout, msg.as_bytes());
}

/// The program name glibc's `error()` prints: `argv[0]` as given.
fn invocation_name() -> String {
    std::env::args_os()
        .next()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_else(|| "nps".into())
}

/// `strerror(errno)`: the text `error()` appends.
fn strerror(errno: i32) -> String {
    // SAFETY: strerror returns a pointer to a NUL-terminated string that
    // stays valid until the next strerror call; it is copied at once and
    // nps has one thread.
    let p = unsafe { libc::strerror(errno) };
    if p.is_null() {
        return format!("Unknown error {errno}");
    }
    // SAFETY: p is non-null and NUL-terminated (above).
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

/// The status ps's `close_stdout()` would leave: `status` when every write
/// worked, else 1 (with the message for stdout's error written first).
pub fn final_status(status: u8) -> u8 {
    let errno = STDOUT_ERRNO.load(Ordering::Relaxed);
    if errno != 0 {
        eprint(&format!(
            "{}: write error: {}\n",
            invocation_name(),
            strerror(errno)
        ));
        return 1;
    }
    if STDERR_FAILED.load(Ordering::Relaxed) {
        return 1;
    }
    status
}

/// Ends the process with [`final_status`]`(status)`, without returning.
///
/// It calls `_exit()`, not glibc's `exit()`: nps writes nothing through C
/// stdio and registers no exit handlers, so glibc's walk of both would only
/// run code to find nothing to do.
pub fn exit(status: u8) -> ! {
    let status = final_status(status);
    // SAFETY: _exit() ends the process; nothing is buffered (Stdout and
    // eprint write through at once) and no other thread exists.
    unsafe { libc::_exit(libc::c_int::from(status)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strerror_names_the_error() {
        assert_eq!(strerror(libc::ENOSPC), "No space left on device");
        assert_eq!(strerror(libc::EBADF), "Bad file descriptor");
    }

    #[test]
    fn a_closed_descriptor_fails_the_write() {
        // A descriptor far above any the test harness opens.
        let err = write_fd(1000, b"x").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EBADF));
    }
}
