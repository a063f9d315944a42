//! The nproc source: task records from the kernel's `nproc` generic
//! netlink family (`CONFIG_NPROC`) through `nproc-genl`, instead of one
//! directory of files per task.
//!
//! It fills the same [`Task`] and [`Global`] as the /proc reader, with the
//! kernel's own values (nproc serves what `/proc/PID/stat`, `status`,
//! `wchan` and `cmdline` show, for the same reader), and asks only for the
//! fields the columns need ([`fields`]).
//!
//! Two places where procps' way of reading /proc decides what a value is:
//! - `-L`: libproc2's `readeither()` reads a thread-group leader from
//!   `/proc/PID` (the whole group's sums) and the other threads from
//!   `/proc/PID/task/TID`. So a threads run makes two dumps, the processes
//!   scope for the leaders and the threads scope for the others, and
//!   lists each process's threads after its leader in tid order (the
//!   task directory lists them in creation order; the two differ only
//!   after pid numbers wrapped).
//! - the command line: the kernel sends its first
//!   [`nproc_proto::CMDLINE_MAX`] bytes; a value of exactly that length
//!   may be cut, and is read again from `/proc/PID/cmdline` as procps
//!   reads it (up to its 128 KiB).

pub mod fields;
pub mod list;

use crate::source::{Scope, Source, SourceError, Want};
use crate::task::{Global, Task, Wchan};
use nproc_genl::{Client, Record, TaskRequest, Value};
use nproc_proto::{field_id as f, global_id as g, FieldBitmap, CMDLINE_MAX};
use std::collections::HashMap;
use std::path::PathBuf;

/// Reads tasks from the kernel's nproc family.
pub struct NprocSource {
    client: Client,
    /// The page size of the last `global()`, which turns page counts into
    /// status' KiB; asked for when a dump comes first.
    page_size: Option<u64>,
}

impl NprocSource {
    /// Connects to the family: [`nproc_genl::Error::NoFamily`] (as a
    /// [`SourceError::Nproc`]) when the kernel has none.
    pub fn connect() -> Result<Self, SourceError> {
        Ok(Self {
            client: Client::connect().map_err(SourceError::Nproc)?,
            page_size: None,
        })
    }

    /// `GET_FIELDS`, for `nps --fields`.
    pub fn fields(&mut self) -> Result<Vec<nproc_genl::FieldInfo>, SourceError> {
        self.client.fields().map_err(SourceError::Nproc)
    }

    fn dump(
        &mut self,
        fields: FieldBitmap,
        page_size: u64,
        scope: nproc_proto::Scope,
        mut visit: impl FnMut(Task) -> bool,
    ) -> Result<(), SourceError> {
        let req = TaskRequest {
            fields,
            scope,
            pid: None,
        };
        // The callback cannot stop the dump: the rest is read and dropped
        // (ps stops only on a write error, after which nothing is printed).
        let mut go = true;
        let mut bad = None;
        self.client
            .for_each_task(&req, |r| {
                if !go || bad.is_some() {
                    return;
                }
                match task_of(r, page_size) {
                    Ok(t) => go = visit(t),
                    Err(e) => bad = Some(e),
                }
            })
            .map_err(SourceError::Nproc)?;
        bad.map_or(Ok(()), Err)
    }
}

fn num(r: &Record, id: u16) -> u64 {
    r.get(id).and_then(Value::as_u64).unwrap_or(0)
}

fn signed(r: &Record, id: u16) -> i32 {
    // S32 values widen as their two's complement; U32 ones (tids) fit.
    num(r, id) as u32 as i32
}

/// A [`Task`] from one `GET_TASKS` record (fields not asked for stay as
/// [`Task::empty`] has them). The record is consumed: its strings move
/// into the task, uncopied.
fn task_of(mut r: Record, page_size: u64) -> Result<Task, SourceError> {
    let r = &mut r;
    let tgid = signed(r, f::TGID);
    let tid = match r.get(f::TID) {
        Some(_) => signed(r, f::TID),
        None => tgid,
    };
    let mut t = Task::empty(tgid, tid);
    t.ppid = signed(r, f::PPID);
    t.pgid = signed(r, f::PGID);
    t.sid = signed(r, f::SID);
    t.tty_nr = signed(r, f::TTY_NR);
    t.tpgid = signed(r, f::TPGID);
    t.uid = [f::UID, f::EUID, f::SUID, f::FSUID].map(|id| num(r, id) as u32);
    t.gid = [f::GID, f::EGID, f::SGID, f::FSGID].map(|id| num(r, id) as u32);
    if r.get(f::STATE).is_some() {
        t.state = num(r, f::STATE) as u8;
    }
    t.flags = num(r, f::FLAGS);
    if let Some(Value::Str(s)) = r.take(f::COMM) {
        t.comm = s;
    }
    t.nice = signed(r, f::NICE);
    t.priority = signed(r, f::PRIORITY);
    t.rt_priority = num(r, f::RT_PRIORITY) as u32;
    t.policy = num(r, f::POLICY) as u32;
    if r.get(f::NR_THREADS).is_some() {
        t.nlwp = signed(r, f::NR_THREADS);
    }
    t.vsize = num(r, f::VSIZE);
    t.rss = num(r, f::RSS);
    t.min_flt = num(r, f::MIN_FLT);
    t.maj_flt = num(r, f::MAJ_FLT);
    t.utime = num(r, f::UTIME);
    t.stime = num(r, f::STIME);
    t.cutime = num(r, f::CUTIME);
    t.cstime = num(r, f::CSTIME);
    t.start_time = num(r, f::START_TIME);
    fill_kib(&mut t, num(r, f::RESIDENT), num(r, f::LOCKED), page_size);
    t.processor = signed(r, f::PROCESSOR);
    t.wchan = match r.take(f::WCHAN) {
        None => Wchan::Unreadable,
        // proc_pid_wchan() prints nothing else for "no symbol".
        Some(Value::Str(s)) if s == b"0" => Wchan::Zero,
        Some(Value::Str(s)) => Wchan::Symbol(s),
        Some(v) => return Err(bad_value("wchan", &v)),
    };
    t.cmdline = match r.take(f::CMDLINE) {
        None => None,
        Some(Value::Bytes(b)) if b.len() >= CMDLINE_MAX => reread_cmdline(tgid, tid).or(Some(b)),
        Some(Value::Bytes(b)) => Some(b),
        Some(v) => return Err(bad_value("cmdline", &v)),
    };
    Ok(t)
}

/// The status-derived sizes, from the page size the kernel gave:
/// status prints `VmSize` as `total_vm << (PAGE_SHIFT - 10)` (stat's
/// `vsize` is `total_vm * PAGE_SIZE`), `VmRSS` and `VmLck` as pages
/// shifted the same way. `VmRSS` is the `resident` field (the per-CPU
/// counters summed), not stat's `rss`, which reads them without the
/// per-CPU parts and may differ by a few dozen pages.
fn fill_kib(t: &mut Task, resident_pages: u64, locked_pages: u64, page_size: u64) {
    let kib = page_size / 1024;
    t.vm_size_kib = t.vsize / 1024;
    t.vm_rss_kib = resident_pages * kib;
    t.vm_lck_kib = locked_pages * kib;
}

fn bad_value(name: &str, v: &Value) -> SourceError {
    SourceError::Parse {
        path: PathBuf::from("nproc GET_TASKS"),
        what: format!("field {name}: unexpected value {v:?}"),
    }
}

/// A command line the kernel cut at [`CMDLINE_MAX`], read whole from
/// /proc as procps reads it; `None` when that fails (the task exited, or
/// there is no /proc): the kernel's prefix is used then.
fn reread_cmdline(tgid: i32, tid: i32) -> Option<Vec<u8>> {
    use std::io::Read;
    let path = if tgid == tid {
        format!("/proc/{tgid}/cmdline")
    } else {
        format!("/proc/{tgid}/task/{tid}/cmdline")
    };
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(crate::procfs::CMDLINE_MAX as u64)
        .read_to_end(&mut buf)
        .ok()?;
    Some(buf)
}

impl Source for NprocSource {
    fn global(&mut self) -> Result<Global, SourceError> {
        let items = self.client.global().map_err(SourceError::Nproc)?;
        let get = |id| {
            items
                .iter()
                .find(|(i, _)| *i == id)
                .and_then(|(_, v)| v.as_u64())
        };
        let need = |id, name: &str| {
            get(id).ok_or_else(|| SourceError::Parse {
                path: PathBuf::from("nproc GET_GLOBAL"),
                what: format!("no {name} item"),
            })
        };
        let page_size = need(g::PAGE_SIZE, "page_size")?;
        self.page_size = Some(page_size);
        Ok(Global {
            hertz: need(g::CLK_TCK, "clk_tck")?,
            page_size,
            boot_time: need(g::BOOT_TIME, "boot_time")?,
            mem_total_kib: need(g::MEM_TOTAL, "mem_total")?,
            // /proc/uptime truncates to hundredths; so does this.
            uptime_centis: need(g::UPTIME, "uptime")? / 10_000_000,
            // A kernel before the item: ps then sizes columns as without
            // /proc/sys/kernel/pid_max.
            pid_max: get(g::PID_MAX),
        })
    }

    fn for_each_task(
        &mut self,
        scope: Scope,
        want: Want,
        visit: &mut dyn FnMut(&Task) -> bool,
    ) -> Result<(), SourceError> {
        let mut fields = want.fields;
        let page_size = match self.page_size {
            Some(p) => p,
            None => self.global()?.page_size,
        };
        for id in fields::BASE {
            fields.set(*id);
        }
        if want.cmdline {
            fields.set(f::CMDLINE);
        }
        if want.wchan {
            fields.set(f::WCHAN);
        }
        match scope {
            Scope::Processes => self.dump(fields, page_size, nproc_proto::Scope::Processes, |t| {
                visit(&t)
            }),
            Scope::Threads => {
                fields.set(f::TID);
                let mut leaders = Vec::new();
                self.dump(fields, page_size, nproc_proto::Scope::Processes, |t| {
                    leaders.push(t);
                    true
                })?;
                let mut others: HashMap<i32, Vec<Task>> = HashMap::new();
                self.dump(fields, page_size, nproc_proto::Scope::Threads, |t| {
                    if t.tid != t.tgid {
                        others.entry(t.tgid).or_default().push(t);
                    }
                    true
                })?;
                for leader in &leaders {
                    if !visit(leader) {
                        return Ok(());
                    }
                    let Some(mut threads) = others.remove(&leader.tgid) else {
                        continue;
                    };
                    threads.sort_by_key(|t| t.tid);
                    for t in &threads {
                        if !visit(t) {
                            return Ok(());
                        }
                    }
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(values: Vec<(u16, Value)>) -> Record {
        let mut values = values;
        values.sort_by_key(|(id, _)| *id);
        Record { values }
    }

    #[test]
    fn a_record_becomes_the_task_proc_would_give() {
        let r = record(vec![
            (f::TGID, Value::U32(42)),
            (f::PPID, Value::S32(1)),
            (f::TPGID, Value::S32(-1)),
            (f::UID, Value::U32(1000)),
            (f::EUID, Value::U32(0)),
            (f::STATE, Value::U32(u32::from(b'S'))),
            (f::COMM, Value::Str(b"sleep".to_vec())),
            (f::NICE, Value::S32(-5)),
            (f::NR_THREADS, Value::U32(3)),
            (f::VSIZE, Value::U64(8192 * 1024)),
            (f::RSS, Value::U64(9)),
            (f::RESIDENT, Value::U64(10)),
            (f::LOCKED, Value::U64(2)),
            (f::WCHAN, Value::Str(b"0".to_vec())),
            (f::CMDLINE, Value::Bytes(b"sleep\x001000\x00".to_vec())),
        ]);
        let t = task_of(r, 4096).unwrap();
        assert_eq!((t.tgid, t.tid, t.ppid, t.tpgid), (42, 42, 1, -1));
        assert_eq!(t.uid, [1000, 0, 0, 0]);
        assert_eq!((t.state, t.nice, t.nlwp), (b'S', -5, 3));
        assert_eq!(t.comm, b"sleep");
        assert_eq!((t.vm_size_kib, t.vm_rss_kib, t.vm_lck_kib), (8192, 40, 8));
        assert_eq!(t.wchan, Wchan::Zero);
        assert_eq!(t.cmdline.as_deref(), Some(&b"sleep\x001000\x00"[..]));
    }

    #[test]
    fn fields_not_asked_for_stay_empty() {
        let r = record(vec![
            (f::TGID, Value::U32(7)),
            (f::TID, Value::U32(9)),
            (f::WCHAN, Value::Str(b"do_nanosleep".to_vec())),
        ]);
        let t = task_of(r, 4096).unwrap();
        assert_eq!((t.tgid, t.tid), (7, 9));
        assert_eq!(t.wchan, Wchan::Symbol(b"do_nanosleep".to_vec()));
        assert_eq!(t.cmdline, None);
        assert_eq!((t.state, t.nlwp), (b'?', 1));
    }

    #[test]
    fn a_value_of_the_wrong_type_is_an_error_naming_the_field() {
        let r = record(vec![(f::TGID, Value::U32(7)), (f::CMDLINE, Value::U32(1))]);
        let e = task_of(r, 4096).unwrap_err().to_string();
        assert!(e.contains("field cmdline"), "{e}");
    }
}
