//! What can go wrong, worded for the person running the tool.

use std::fmt;
use std::io;

/// A client error.
#[derive(Debug)]
pub enum Error {
    /// The kernel has no `nproc` family: it was built without
    /// `CONFIG_NPROC` (or without generic netlink at all).
    NoFamily,
    /// A field name that `nproc-proto` does not know.
    UnknownField(String),
    /// The kernel refused the request for lack of privilege.
    PermissionDenied {
        /// The command.
        cmd: &'static str,
        /// The kernel's extended ack message, if it sent one.
        msg: Option<String>,
    },
    /// The kernel answered the request with an error.
    Kernel {
        /// The command.
        cmd: &'static str,
        /// The (positive) errno.
        errno: i32,
        /// The kernel's extended ack message, if it sent one.
        msg: Option<String>,
    },
    /// A socket call failed.
    Io {
        /// What was being done.
        what: &'static str,
        /// The error.
        err: io::Error,
    },
    /// A reply that does not follow the format.
    Decode(String),
}

impl Error {
    /// The error for a negative netlink error code and its extack message.
    pub(crate) fn from_kernel(cmd: &'static str, code: i32, msg: Option<String>) -> Self {
        let errno = code.saturating_neg();
        if errno == libc_errno::EPERM || errno == libc_errno::EACCES {
            Error::PermissionDenied { cmd, msg }
        } else {
            Error::Kernel { cmd, errno, msg }
        }
    }
}

/// The two errno values told apart (stable across Linux architectures).
mod libc_errno {
    pub const EPERM: i32 = 1;
    pub const EACCES: i32 = 13;
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoFamily => {
                write!(f, "kernel has no nproc family (CONFIG_NPROC): use ps")
            }
            Error::UnknownField(name) => {
                write!(f, "unknown field `{name}` (the kernel's fields: --fields)")
            }
            Error::PermissionDenied { cmd, msg } => {
                write!(f, "nproc {cmd}: permission denied")?;
                if let Some(m) = msg {
                    write!(f, ": {m}")?;
                }
                Ok(())
            }
            Error::Kernel { cmd, errno, msg } => {
                let e = io::Error::from_raw_os_error(*errno);
                write!(f, "nproc {cmd}: {e}")?;
                if let Some(m) = msg {
                    write!(f, ": {m}")?;
                }
                Ok(())
            }
            Error::Io { what, err } => write!(f, "{what}: {err}"),
            Error::Decode(m) => write!(f, "malformed nproc reply: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { err, .. } => Some(err),
            _ => None,
        }
    }
}
