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
    buf: Vec<u8>,
}

/// Reads a whole procfs file into `buf` (cleared first), at most `limit`
/// bytes. Like libproc2's `file2str()`, a read that leaves room in the
/// buffer is taken as the end: procfs's seq_file answers a read with all it
/// has up to the size asked, so one read per small file is enough (std's
/// `fs::read` would first stat the file, whose size is 0, then read in
/// growing steps).
fn read_file(path: &Path, buf: &mut Vec<u8>, limit: usize) -> std::io::Result<()> {
    let mut file = fs::File::open(path)?;
    buf.clear();
    let mut want = 4096.min(limit);
    loop {
        let start = buf.len();
        buf.resize(want, 0);
        let n = loop {
            match file.read(&mut buf[start..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r,
            }
        };
        let n = match n {
            Ok(n) => n,
            Err(e) => {
                buf.truncate(start);
                return Err(e);
            }
        };
        buf.truncate(start + n);
        if n == 0 || buf.len() < want || want >= limit {
            return Ok(());
        }
        want = (want * 4).min(limit);
    }
}

impl ProcSource {
    /// A reader of `/proc`.
    pub fn new() -> Self {
        Self::with_root("/proc")
    }

    /// A reader of a procfs (or a copy of one) mounted at `root`.
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        ProcSource {
            root: root.into(),
            buf: Vec::with_capacity(4096),
        }
    }

    /// Reads one task from `dir` (`/proc/PID` or `/proc/PID/task/TID`).
    /// `Ok(None)` means the task vanished.
    fn read_task(
        &mut self,
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
        if read_file(&stat_path, &mut self.buf, usize::MAX).is_err() || self.buf.is_empty() {
            return Ok(None);
        }
        parse_stat(&self.buf, &mut task).map_err(|what| SourceError::Parse {
            path: stat_path,
            what,
        })?;
        let status_path = dir.join("status");
        if read_file(&status_path, &mut self.buf, usize::MAX).is_ok() {
            parse_status(&self.buf, &mut task).map_err(|what| SourceError::Parse {
                path: status_path,
                what,
            })?;
        }
        if want.cmdline {
            task.cmdline = read_file(&dir.join("cmdline"), &mut self.buf, CMDLINE_MAX)
                .ok()
                .map(|()| self.buf.clone());
        }
        if want.wchan {
            // lookup_wchan() opens /proc/TID/wchan, not the task directory,
            // and reads at most 63 bytes.
            let path = self.root.join(task.tid.to_string()).join("wchan");
            task.wchan = match read_file(&path, &mut self.buf, 63) {
                Err(_) => Wchan::Unreadable,
                Ok(()) if self.buf.is_empty() => Wchan::Unreadable,
                Ok(()) if self.buf == b"0" => Wchan::Zero,
                Ok(()) => Wchan::Symbol(self.buf.clone()),
            };
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
                        let from = if tid == tgid { dir.clone() } else { tdir };
                        match self.read_task(&from, tgid, tid, want)? {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_whole_files_up_to_a_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let data: Vec<u8> = (0..20000u32).map(|i| i as u8).collect();
        fs::write(&p, &data).unwrap();
        let mut buf = Vec::new();
        read_file(&p, &mut buf, usize::MAX).unwrap();
        assert_eq!(buf, data);
        read_file(&p, &mut buf, 63).unwrap();
        assert_eq!(buf, &data[..63]);
        read_file(&p, &mut buf, 5000).unwrap();
        assert_eq!(buf, &data[..5000]);
        assert!(read_file(&dir.path().join("none"), &mut buf, 10).is_err());
    }

    #[test]
    fn fake_proc_tree() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("42");
        fs::create_dir_all(t.join("task/42")).unwrap();
        fs::write(t.join("stat"), "42 (x y) S 1 42 42 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99 4096 1 0 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n").unwrap();
        fs::write(
            t.join("status"),
            "Name:\tx y\nUid:\t1\t2\t3\t4\nGid:\t5\t6\t7\t8\nThreads:\t1\nTgid:\t42\nPid:\t42\n",
        )
        .unwrap();
        fs::write(t.join("cmdline"), "x\0y\0").unwrap();
        fs::write(t.join("wchan"), "do_wait").unwrap();
        // A directory without stat (a task that vanished) is skipped.
        fs::create_dir_all(dir.path().join("43")).unwrap();
        // A garbled stat is an error naming the file and the field.
        let mut src = ProcSource::with_root(dir.path());
        let want = Want {
            cmdline: true,
            wchan: true,
            ..Want::default()
        };
        let mut seen = Vec::new();
        src.for_each_task(Scope::Processes, want, &mut |t| {
            seen.push(t.clone());
            true
        })
        .unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].comm, b"x y");
        assert_eq!(seen[0].uid, [1, 2, 3, 4]);
        assert_eq!(seen[0].cmdline.as_deref(), Some(&b"x\0y\0"[..]));
        assert_eq!(seen[0].wchan, Wchan::Symbol(b"do_wait".to_vec()));
        fs::write(t.join("stat"), "42 (x) S 1 2").unwrap();
        let err = src
            .for_each_task(Scope::Threads, want, &mut |_| true)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{}: field session missing", t.join("stat").display())
        );
    }
}
