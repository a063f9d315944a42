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
use nproc_genl::{task_bytes, task_number, task_string, Client, TaskRequest, TaskView};
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
        mut visit: impl FnMut(&Task) -> bool,
    ) -> Result<(), SourceError> {
        let req = TaskRequest {
            fields,
            scope,
            pid: None,
        };
        // The callback cannot stop the dump: the rest is read and dropped
        // (ps stops only on a write error, after which nothing is printed).
        let mut go = true;
        // One record for the whole dump: its strings keep their buffers.
        let mut task = Task::empty(0, 0);
        self.client
            .for_each_task_view(&req, |view| {
                // A task sent by its pid alone (its /proc files are not
                // readable to this reader, hidepid=noaccess): ps cannot
                // read its stat either, and skips it.
                if go && fill_task(&view, page_size, &mut task)? {
                    go = visit(&task);
                }
                Ok(())
            })
            .map_err(SourceError::Nproc)
    }
}

/// Makes `t` the [`Task`] of one `GET_TASKS` message (fields not asked
/// for as [`Task::empty`] has them), decoded in place: one dump carries
/// thousands of tasks, so no owned [`nproc_genl::Record`] is built in
/// between, and `t`'s string buffers are reused from task to task. Each
/// value is read as `nproc_proto`'s table types it, the table the kernel
/// itself compiles in, fixed when compiling ([`task_number`],
/// [`task_string`]): one dispatch on the id per value. A value of another
/// size, or a malformed message, is the error; ids nps does not read are
/// passed over. `false` when the message holds the tgid alone: the
/// kernel lists the task but its values are not the reader's to see.
pub fn fill_task(
    view: &TaskView<'_>,
    page_size: u64,
    t: &mut Task,
) -> Result<bool, nproc_genl::Error> {
    let mut comm = std::mem::take(&mut t.comm);
    let mut wchan = match std::mem::replace(&mut t.wchan, Wchan::Unreadable) {
        Wchan::Symbol(w) => w,
        _ => Vec::new(),
    };
    let mut cmdline = t.cmdline.take().unwrap_or_default();
    comm.clear();
    *t = Task {
        comm,
        ..Task::empty(0, 0)
    };
    let (mut tid, mut resident, mut locked) = (None, 0, 0);
    let mut values = false;
    // n!: the number of field `$id` in `$v`; s!: the same as an i32 (a
    // u32 or s32 field's 32 bits; signed values travel as two's
    // complement). The id only fixes the width checked and the name an
    // error gives.
    macro_rules! n {
        ($id:expr, $v:expr) => {
            task_number::<{ $id }>($v)?
        };
    }
    macro_rules! s {
        ($id:expr, $v:expr) => {
            task_number::<{ $id }>($v)? as u32 as i32
        };
    }
    view.for_each_raw(|id, v| {
        // One borrow of the whole record: a closure naming `t.tgid`,
        // `t.ppid`, ... captures a reference per field, all of them copied
        // in before every task's first value.
        let t = &mut *t;
        values |= id != f::TGID;
        match id {
            f::TGID => t.tgid = s!(f::TGID, v),
            f::TID => tid = Some(s!(f::TID, v)),
            f::PPID => t.ppid = s!(f::PPID, v),
            f::PGID => t.pgid = s!(f::PGID, v),
            f::SID => t.sid = s!(f::SID, v),
            f::TTY_NR => t.tty_nr = s!(f::TTY_NR, v),
            f::TPGID => t.tpgid = s!(f::TPGID, v),
            f::UID => t.uid[0] = n!(f::UID, v) as u32,
            f::EUID => t.uid[1] = n!(f::EUID, v) as u32,
            f::SUID => t.uid[2] = n!(f::SUID, v) as u32,
            f::FSUID => t.uid[3] = n!(f::FSUID, v) as u32,
            f::GID => t.gid[0] = n!(f::GID, v) as u32,
            f::EGID => t.gid[1] = n!(f::EGID, v) as u32,
            f::SGID => t.gid[2] = n!(f::SGID, v) as u32,
            f::FSGID => t.gid[3] = n!(f::FSGID, v) as u32,
            f::STATE => t.state = n!(f::STATE, v) as u8,
            f::FLAGS => t.flags = n!(f::FLAGS, v),
            f::COMM => {
                // The last one counts, should a message repeat it.
                let c = task_string::<{ f::COMM }>(v)?;
                t.comm.clear();
                t.comm.extend_from_slice(c);
            }
            f::NICE => t.nice = s!(f::NICE, v),
            f::PRIORITY => t.priority = s!(f::PRIORITY, v),
            f::RT_PRIORITY => t.rt_priority = n!(f::RT_PRIORITY, v) as u32,
            f::POLICY => t.policy = n!(f::POLICY, v) as u32,
            f::NR_THREADS => t.nlwp = s!(f::NR_THREADS, v),
            f::VSIZE => t.vsize = n!(f::VSIZE, v),
            f::RSS => t.rss = n!(f::RSS, v),
            f::MIN_FLT => t.min_flt = n!(f::MIN_FLT, v),
            f::MAJ_FLT => t.maj_flt = n!(f::MAJ_FLT, v),
            f::UTIME => t.utime = n!(f::UTIME, v),
            f::STIME => t.stime = n!(f::STIME, v),
            f::CUTIME => t.cutime = n!(f::CUTIME, v),
            f::CSTIME => t.cstime = n!(f::CSTIME, v),
            f::START_TIME => t.start_time = n!(f::START_TIME, v),
            f::RESIDENT => resident = n!(f::RESIDENT, v),
            f::LOCKED => locked = n!(f::LOCKED, v),
            f::PROCESSOR => t.processor = s!(f::PROCESSOR, v),
            f::WCHAN => {
                let w = task_string::<{ f::WCHAN }>(v)?;
                // proc_pid_wchan() prints nothing else for "no symbol".
                t.wchan = match w {
                    b"0" => Wchan::Zero,
                    _ => {
                        wchan.clear();
                        wchan.extend_from_slice(w);
                        Wchan::Symbol(std::mem::take(&mut wchan))
                    }
                };
            }
            f::CMDLINE => {
                cmdline.clear();
                cmdline.extend_from_slice(task_bytes::<{ f::CMDLINE }>(v));
                t.cmdline = Some(std::mem::take(&mut cmdline));
            }
            // What ps does not show, and ids of a newer kernel.
            _ => {}
        }
        Ok(())
    })?;
    t.tid = tid.unwrap_or(t.tgid);
    if let Some(b) = t.cmdline.take_if(|b| b.len() >= CMDLINE_MAX) {
        t.cmdline = reread_cmdline(t.tgid, t.tid, t.start_time).or(Some(b));
    }
    fill_kib(t, resident, locked, page_size);
    Ok(values)
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

/// A command line the kernel cut at [`CMDLINE_MAX`], read whole from
/// /proc as procps reads it; `None` when that fails (the task exited, or
/// there is no /proc) or when the pid now names another task: the
/// kernel's prefix is used then.
///
/// The pid is the dump's, read some time ago: it may have been reused.
/// The task's /proc directory is opened first (a descriptor of it keeps
/// naming that one task), its stat's start time compared with the
/// dump's `start_time`, and cmdline read through the same descriptor.
fn reread_cmdline(tgid: i32, tid: i32, start_time: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let dir = if tgid == tid {
        format!("/proc/{tgid}")
    } else {
        format!("/proc/{tgid}/task/{tid}")
    };
    let dir = std::fs::File::open(dir).ok()?;
    let at = |name: &str| format!("/proc/self/fd/{}/{name}", dir.as_raw_fd());
    let stat = std::fs::read(at("stat")).ok()?;
    if stat_start_time(&stat) != Some(start_time) {
        return None;
    }
    let mut buf = Vec::new();
    std::fs::File::open(at("cmdline"))
        .ok()?
        .take(crate::procfs::CMDLINE_MAX as u64)
        .read_to_end(&mut buf)
        .ok()?;
    Some(buf)
}

/// Field 22 of a stat line (start time, clock ticks since boot): counted
/// after the last `)`, as the comm may hold spaces and parentheses.
fn stat_start_time(stat: &[u8]) -> Option<u64> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    // Fields 3 (state) onwards; 22 is the 20th of them.
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
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
        for id in fields::IDENTITY {
            fields.set(*id);
        }
        if want.cmdline {
            fields.set(f::CMDLINE);
            // To tell a reused pid when a long command line is re-read.
            fields.set(f::START_TIME);
        }
        if want.wchan {
            fields.set(f::WCHAN);
        }
        match scope {
            Scope::Processes => self.dump(fields, page_size, nproc_proto::Scope::Processes, visit),
            Scope::Threads => {
                fields.set(f::TID);
                let mut leaders = Vec::new();
                self.dump(fields, page_size, nproc_proto::Scope::Processes, |t| {
                    leaders.push(t.clone());
                    true
                })?;
                let mut others: HashMap<i32, Vec<Task>> = HashMap::new();
                self.dump(fields, page_size, nproc_proto::Scope::Threads, |t| {
                    if t.tid != t.tgid {
                        others.entry(t.tgid).or_default().push(t.clone());
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
    use nproc_genl::Value;

    /// The attributes of a task nest as the kernel's nla_put*() lays them
    /// out (native endian, each padded to 4 bytes; strings with their NUL).
    fn nest(values: &[(u16, Value)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (id, v) in values {
            let payload = match v {
                Value::U32(n) => n.to_ne_bytes().to_vec(),
                Value::S32(n) => n.to_ne_bytes().to_vec(),
                Value::U64(n) => n.to_ne_bytes().to_vec(),
                Value::Str(s) => [s.as_slice(), b"\0"].concat(),
                Value::Bytes(b) | Value::Raw(b) => b.clone(),
            };
            let len = 4 + payload.len();
            out.extend_from_slice(&(len as u16).to_ne_bytes());
            out.extend_from_slice(&id.to_ne_bytes());
            out.extend_from_slice(&payload);
            out.resize(out.len().next_multiple_of(4), 0);
        }
        out
    }

    fn task(values: &[(u16, Value)]) -> Result<Task, nproc_genl::Error> {
        let mut t = Task::empty(0, 0);
        fill_task(&TaskView::from_nest(&nest(values)), 4096, &mut t)?;
        Ok(t)
    }

    #[test]
    fn a_task_sent_by_its_pid_alone_is_not_shown() {
        let mut t = Task::empty(0, 0);
        let pid_only = nest(&[(f::TGID, Value::U32(7))]);
        assert!(!fill_task(&TaskView::from_nest(&pid_only), 4096, &mut t).unwrap());
        let full = nest(&[
            (f::TGID, Value::U32(7)),
            (f::STATE, Value::U32(u32::from(b'S'))),
        ]);
        assert!(fill_task(&TaskView::from_nest(&full), 4096, &mut t).unwrap());
        assert_eq!((t.tgid, t.state), (7, b'S'));
    }

    #[test]
    fn start_time_is_field_22_after_the_last_parenthesis() {
        let stat = b"42 (a) b) c) S 1 42 42 0 -1 4194560 99 0 0 0 3 4 0 0 20 0 1 0 12345 999 1";
        assert_eq!(stat_start_time(stat), Some(12345));
        assert_eq!(stat_start_time(b"42 (x) S 1"), None);
        assert_eq!(stat_start_time(b"no parenthesis"), None);
    }

    #[test]
    fn a_reused_pid_is_not_reread() {
        // This process's own stat: the right start time reads its
        // cmdline, any other refuses.
        let me = std::process::id() as i32;
        let stat = std::fs::read(format!("/proc/{me}/stat")).unwrap();
        let start = stat_start_time(&stat).unwrap();
        assert!(reread_cmdline(me, me, start).is_some_and(|c| !c.is_empty()));
        assert_eq!(reread_cmdline(me, me, start + 1), None);
    }

    #[test]
    fn a_message_becomes_the_task_proc_would_give() {
        let t = task(&[
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
            (f::WCHAN, Value::Str(b"0".to_vec())),
            (f::RESIDENT, Value::U64(10)),
            (f::LOCKED, Value::U64(2)),
            (f::CMDLINE, Value::Bytes(b"sleep\x001000\x00".to_vec())),
        ])
        .unwrap();
        assert_eq!((t.tgid, t.tid, t.ppid, t.tpgid), (42, 42, 1, -1));
        assert_eq!(t.uid, [1000, 0, 0, 0]);
        assert_eq!((t.state, t.nice, t.nlwp), (b'S', -5, 3));
        assert_eq!(t.comm, b"sleep");
        assert_eq!((t.vm_size_kib, t.vm_rss_kib, t.vm_lck_kib), (8192, 40, 8));
        assert_eq!(t.rss, 9);
        assert_eq!(t.wchan, Wchan::Zero);
        assert_eq!(t.cmdline.as_deref(), Some(&b"sleep\x001000\x00"[..]));
    }

    #[test]
    fn a_reused_record_keeps_nothing_of_the_previous_task() {
        let mut t = Task::empty(0, 0);
        let first = nest(&[
            (f::TGID, Value::U32(7)),
            (f::COMM, Value::Str(b"first-name".to_vec())),
            (f::WCHAN, Value::Str(b"do_nanosleep".to_vec())),
            (f::CMDLINE, Value::Bytes(b"sleep\x001\x00".to_vec())),
        ]);
        fill_task(&TaskView::from_nest(&first), 4096, &mut t).unwrap();
        assert_eq!(t.wchan, Wchan::Symbol(b"do_nanosleep".to_vec()));
        let second = nest(&[
            (f::TGID, Value::U32(8)),
            (f::COMM, Value::Str(b"x".to_vec())),
        ]);
        fill_task(&TaskView::from_nest(&second), 4096, &mut t).unwrap();
        let mut want = Task::empty(8, 8);
        want.comm = b"x".to_vec();
        assert_eq!(t, want);
    }

    #[test]
    fn fields_not_asked_for_stay_empty() {
        let t = task(&[
            (f::TGID, Value::U32(7)),
            (f::TID, Value::U32(9)),
            (f::WCHAN, Value::Str(b"do_nanosleep".to_vec())),
        ])
        .unwrap();
        assert_eq!((t.tgid, t.tid), (7, 9));
        assert_eq!(t.wchan, Wchan::Symbol(b"do_nanosleep".to_vec()));
        assert_eq!(t.cmdline, None);
        assert_eq!((t.state, t.nlwp), (b'?', 1));
    }

    #[test]
    fn a_newer_kernels_field_is_ignored() {
        let t = task(&[
            (f::TGID, Value::U32(7)),
            (999, Value::Raw(vec![1, 2, 3, 4])),
        ])
        .unwrap();
        assert_eq!(t, Task::empty(7, 7));
    }

    #[test]
    fn a_malformed_value_is_an_error_naming_the_field() {
        // A u64 field sent as 4 bytes.
        let e = task(&[(f::TGID, Value::U32(7)), (f::VSIZE, Value::U32(1))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("field vsize"), "{e}");
        // A string without its NUL.
        let e = task(&[(f::COMM, Value::Bytes(b"sleep".to_vec()))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("comm"), "{e}");
    }
}
