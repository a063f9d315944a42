//! The /proc reader: the baseline `nps` is compared against, and the
//! reference for the nproc family's field-parity tests.
//!
//! It walks `/proc` the way procps-ng 4.0.2's `simple_nextpid()`,
//! `simple_readproc()`, `simple_nexttid()` and `simple_readtask()` do
//! (library/readproc.c): directory order, `stat` then `status`, a task whose
//! directory or `stat` vanished is skipped silently, a missing `status` only
//! leaves its fields at their defaults.

mod global;
mod parse;

pub use parse::{parse_stat, parse_status};

use crate::source::{Scope, Source, SourceError, Want};
use crate::task::{Global, Task, Wchan};
use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// procps reads at most this much of `cmdline` (`MAX_BUFSZ` in readproc.c).
pub const CMDLINE_MAX: usize = 128 * 1024;

/// Reads tasks from a procfs mount.
pub struct ProcSource {
    root: PathBuf,
}

impl ProcSource {
    /// A reader of `/proc`.
    pub fn new() -> Self {
        Self::with_root("/proc")
    }

    /// A reader of a procfs (or a copy of one) mounted at `root`.
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        ProcSource { root: root.into() }
    }

    /// Reads one task from `dir` (`/proc/PID` or `/proc/PID/task/TID`).
    /// `Ok(None)` means the task vanished.
    fn read_task(
        &self,
        dir: &Path,
        tgid: i32,
        tid: i32,
        want: Want,
    ) -> Result<Option<Task>, SourceError> {
        let Ok(meta) = fs::metadata(dir) else {
            return Ok(None);
        };
        let mut task = Task::empty(tgid, tid);
        // simple_readproc: "need a way to get real uid"; status replaces it.
        task.uid = [0, meta.uid(), 0, 0];
        task.gid = [0, meta.gid(), 0, 0];
        let stat_path = dir.join("stat");
        let Ok(stat) = fs::read(&stat_path) else {
            return Ok(None);
        };
        if stat.is_empty() {
            return Ok(None);
        }
        parse_stat(&stat, &mut task).map_err(|what| SourceError::Parse {
            path: stat_path,
            what,
        })?;
        let status_path = dir.join("status");
        if let Ok(status) = fs::read(&status_path) {
            parse_status(&status, &mut task).map_err(|what| SourceError::Parse {
                path: status_path,
                what,
            })?;
        }
        if want.cmdline {
            task.cmdline = read_cmdline(&dir.join("cmdline"));
        }
        if want.wchan {
            // lookup_wchan() opens /proc/TID/wchan, not the task directory.
            task.wchan = read_wchan(&self.root.join(task.tid.to_string()).join("wchan"));
        }
        Ok(Some(task))
    }
}

impl Default for ProcSource {
    fn default() -> Self {
        Self::new()
    }
}

/// The numeric entries of a directory, in directory order. procps accepts a
/// name whose first byte is 1-9 and takes `strtoul()` of it.
fn numeric_entries(dir: &Path) -> std::io::Result<impl Iterator<Item = (i32, PathBuf)>> {
    Ok(fs::read_dir(dir)?.filter_map(|e| {
        let e = e.ok()?;
        let name = e.file_name();
        let name = name.to_str()?;
        if !matches!(name.as_bytes().first(), Some(b'1'..=b'9')) {
            return None;
        }
        Some((name.parse().ok()?, e.path()))
    }))
}

fn read_cmdline(path: &Path) -> Option<Vec<u8>> {
    let file = fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    file.take(CMDLINE_MAX as u64).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// lookup_wchan(): a buffer of 64 bytes, so at most 63 are read.
fn read_wchan(path: &Path) -> Wchan {
    let Ok(file) = fs::File::open(path) else {
        return Wchan::Unreadable;
    };
    let mut buf = Vec::new();
    if file.take(63).read_to_end(&mut buf).is_err() || buf.is_empty() {
        return Wchan::Unreadable;
    }
    if buf == b"0" {
        Wchan::Zero
    } else {
        Wchan::Symbol(buf)
    }
}

impl Source for ProcSource {
    fn global(&mut self) -> Result<Global, SourceError> {
        global::read_global(&self.root)
    }

    fn for_each_task(
        &mut self,
        scope: Scope,
        want: Want,
        visit: &mut dyn FnMut(&Task) -> bool,
    ) -> Result<(), SourceError> {
        let procs = numeric_entries(&self.root).map_err(|err| SourceError::Io {
            path: self.root.clone(),
            err,
        })?;
        for (tgid, dir) in procs {
            match scope {
                Scope::Processes => {
                    if let Some(task) = self.read_task(&dir, tgid, tgid, want)? {
                        if !visit(&task) {
                            return Ok(());
                        }
                    }
                }
                Scope::Threads => {
                    // readeither(): a vanished task directory ends this
                    // process; the leader is read from the process directory.
                    let Ok(tids) = numeric_entries(&dir.join("task")) else {
                        continue;
                    };
                    for (tid, tdir) in tids {
                        let from = if tid == tgid { &dir } else { &tdir };
                        match self.read_task(from, tgid, tid, want)? {
                            Some(task) => {
                                if !visit(&task) {
                                    return Ok(());
                                }
                            }
                            None => break,
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
