//! Where task records come from.

use crate::task::{Global, Task};
use std::fmt;
use std::path::PathBuf;

/// Which tasks a dump covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One record per thread group (what `ps` shows by default).
    Processes,
    /// One record per thread (`ps -L`, `ps H`): the leader's record comes
    /// from `/proc/PID`, the others from `/proc/PID/task/TID`, as procps's
    /// `readeither()` does.
    Threads,
}

/// Which of the costly parts of a record the caller will look at. A source
/// may fill more; it must fill at least these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Want {
    /// The nproc task fields the columns read (`crate::netlink::fields`);
    /// the /proc reader reads whole files and ignores it.
    pub fields: nproc_proto::FieldBitmap,
    /// `cmdline` (one more file per task).
    pub cmdline: bool,
    /// `wchan` (one more file per task).
    pub wchan: bool,
}

/// A source failed as a whole (a single task vanishing is not an error: it
/// is skipped, as procps skips it).
#[derive(Debug)]
pub enum SourceError {
    /// A system file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        err: std::io::Error,
    },
    /// The nproc family failed (missing, permission, unknown field...).
    Nproc(nproc_genl::Error),
    /// A system file said something unexpected.
    Parse {
        /// The file.
        path: PathBuf,
        /// What was wrong, with the line or field.
        what: String,
    },
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::Io { path, err } => write!(f, "{}: {}", path.display(), err),
            SourceError::Parse { path, what } => write!(f, "{}: {}", path.display(), what),
            SourceError::Nproc(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SourceError {}

/// A provider of task records.
pub trait Source {
    /// The system-wide block.
    fn global(&mut self) -> Result<Global, SourceError>;

    /// Calls `visit` once per task in `scope`, in the kernel's pid order
    /// (the order `/proc` lists them), and stops early when `visit` returns
    /// `false`.
    fn for_each_task(
        &mut self,
        scope: Scope,
        want: Want,
        visit: &mut dyn FnMut(&Task) -> bool,
    ) -> Result<(), SourceError>;
}
