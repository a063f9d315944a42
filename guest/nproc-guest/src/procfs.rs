//! The /proc side of the parity check: one task's stat, statm, status,
//! wchan and cmdline, and for every nproc field name the /proc text it must equal.
//!
//! [`source`] is the only place that maps field names to /proc: a field
//! the kernel or `nproc-proto` declares without an entry here fails the
//! parity run ("no /proc reader for field X"), so a new field cannot be
//! added without a check.

use std::fs;
use std::path::{Path, PathBuf};

/// Where a field's value is read in procfs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Field `n` of `stat`, numbered as in proc(5) (1 = pid, 2 = comm).
    Stat(usize),
    /// Field `n` of `statm` (1 = size).
    Statm(usize),
    /// Column `n` (1-based) after the key of a `status` line.
    Status(&'static str, usize),
    /// A `status` line in kB, converted to pages; no line (a task without
    /// mm, as a kernel thread) reads 0, as stat's vsize does.
    StatusKbToPages(&'static str),
    /// The `wchan` file.
    Wchan,
    /// The `cmdline` file: its first `nproc_proto::CMDLINE_MAX` bytes (what
    /// the kernel sends), escaped as `nproc-genl` shows bytes.
    Cmdline,
}

/// The /proc source of task field `name`; `None` when this checker has no
/// reader for it.
pub fn source(name: &str) -> Option<Source> {
    use Source::*;
    Some(match name {
        "tgid" => Status("Tgid:", 1),
        "tid" => Stat(1),
        "comm" => Stat(2),
        "state" => Stat(3),
        "ppid" => Stat(4),
        "pgid" => Stat(5),
        "sid" => Stat(6),
        "tty_nr" => Stat(7),
        "tpgid" => Stat(8),
        "flags" => Stat(9),
        "min_flt" => Stat(10),
        "cmin_flt" => Stat(11),
        "maj_flt" => Stat(12),
        "cmaj_flt" => Stat(13),
        "utime" => Stat(14),
        "stime" => Stat(15),
        "cutime" => Stat(16),
        "cstime" => Stat(17),
        "priority" => Stat(18),
        "nice" => Stat(19),
        "nr_threads" => Stat(20),
        "start_time" => Stat(22),
        "vsize" => Stat(23),
        "rss" => Stat(24),
        "rsslim" => Stat(25),
        "exit_signal" => Stat(38),
        "processor" => Stat(39),
        "rt_priority" => Stat(40),
        "policy" => Stat(41),
        "resident" => Statm(2),
        "shared" => Statm(3),
        "text" => Statm(4),
        "data" => Statm(6),
        "uid" => Status("Uid:", 1),
        "euid" => Status("Uid:", 2),
        "suid" => Status("Uid:", 3),
        "fsuid" => Status("Uid:", 4),
        "gid" => Status("Gid:", 1),
        "egid" => Status("Gid:", 2),
        "sgid" => Status("Gid:", 3),
        "fsgid" => Status("Gid:", 4),
        "locked" => StatusKbToPages("VmLck:"),
        "wchan" => Wchan,
        "cmdline" => Cmdline,
        _ => return None,
    })
}

/// One read of a task's five files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcTask {
    /// `stat` split into proc(5) fields: `[0]` unused, `[1]` pid,
    /// `[2]` comm (without parentheses), `[3]` state, ...
    stat: Vec<String>,
    statm: Vec<String>,
    status: String,
    wchan: String,
    cmdline: Vec<u8>,
}

/// The directory of a task: `/proc/TGID` (processes scope) or
/// `/proc/TGID/task/TID` (threads scope).
pub fn task_dir(root: &Path, tgid: u32, tid: Option<u32>) -> PathBuf {
    match tid {
        Some(tid) => root.join(format!("{tgid}/task/{tid}")),
        None => root.join(tgid.to_string()),
    }
}

/// Splits a `stat` line: the comm is everything between the first `(`
/// and the last `)`, as procps parses it (a comm may hold both).
fn split_stat(line: &str) -> Option<Vec<String>> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let mut v = vec![String::new(), line.get(..open)?.trim().to_string()];
    v.push(line.get(open + 1..close)?.to_string());
    v.extend(line.get(close + 1..)?.split_whitespace().map(String::from));
    Some(v)
}

impl ProcTask {
    /// Reads `dir`'s stat, statm, status, wchan and cmdline; `None` when
    /// the task is gone (or any file is unreadable).
    pub fn read(dir: &Path) -> Option<Self> {
        let r = |f: &str| fs::read_to_string(dir.join(f)).ok();
        let stat = split_stat(r("stat")?.trim_end())?;
        let statm = r("statm")?.split_whitespace().map(String::from).collect();
        Some(Self {
            stat,
            statm,
            status: r("status")?,
            wchan: r("wchan")?,
            cmdline: fs::read(dir.join("cmdline")).ok()?,
        })
    }

    /// The text of `src` in this read; `page_kb` is the page size in KiB.
    pub fn value(&self, src: Source, page_kb: u64) -> Option<String> {
        match src {
            Source::Stat(n) => self.stat.get(n).cloned(),
            Source::Statm(n) => self.statm.get(n.checked_sub(1)?).cloned(),
            Source::Status(key, col) => self
                .status_line(key)?
                .split_whitespace()
                .nth(col)
                .map(String::from),
            Source::StatusKbToPages(key) => match self.status_line(key) {
                None => Some("0".into()),
                Some(l) => {
                    let kb: u64 = l.split_whitespace().nth(1)?.parse().ok()?;
                    Some((kb / page_kb.max(1)).to_string())
                }
            },
            Source::Wchan => Some(self.wchan.clone()),
            Source::Cmdline => {
                let n = self.cmdline.len().min(nproc_proto::CMDLINE_MAX);
                Some(self.cmdline[..n].escape_ascii().to_string())
            }
        }
    }

    fn status_line(&self, key: &str) -> Option<&str> {
        self.status.lines().find(|l| l.starts_with(key))
    }

    /// The start time (stat field 22) of the task in `dir`, from its stat
    /// alone: with the pid, a task's identity.
    pub fn read_start(dir: &Path) -> Option<String> {
        let stat = fs::read_to_string(dir.join("stat")).ok()?;
        split_stat(stat.trim_end())?.get(22).cloned()
    }

    /// The start time (stat field 22): with the pid, a task's identity.
    pub fn start(&self) -> Option<&str> {
        self.stat.get(22).map(String::as_str)
    }

    /// Whether the task ran between two reads: its state, CPU times or
    /// context switch counts moved (a task that ran may sleep somewhere
    /// else afterwards). CPU times move by whole ticks, so a kworker that
    /// ran one short work item shows only in its switch counts.
    pub fn ran_since(&self, earlier: &Self) -> bool {
        // state, utime, stime.
        let stat = [3, 14, 15]
            .iter()
            .any(|&i| self.stat.get(i) != earlier.stat.get(i));
        let switches = ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"]
            .iter()
            .any(|k| self.status_line(k) != earlier.status_line(k));
        stat || switches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(state: &str, nvcsw: u32) -> ProcTask {
        ProcTask {
            stat: split_stat(&format!("9 (kworker/0:1-events) {state} 2 0 0 0 -1 0 0 0 0 0 3 4"))
                .unwrap(),
            statm: vec![],
            status: format!("Name:\tkworker/0:1-events\nvoluntary_ctxt_switches:\t{nvcsw}\nnonvoluntary_ctxt_switches:\t0\n"),
            wchan: "0".into(),
            cmdline: vec![],
        }
    }

    #[test]
    fn a_task_ran_when_its_switch_count_moved() {
        // Same state and CPU times: only the switch count tells.
        assert!(task("I", 8).ran_since(&task("I", 7)));
        assert!(task("R", 7).ran_since(&task("I", 7)));
        assert!(!task("I", 7).ran_since(&task("I", 7)));
    }

    #[test]
    fn comm_with_parentheses_and_spaces() {
        let v = split_stat("42 (a) b (c) S 1 42 42 0").unwrap();
        assert_eq!(v[1], "42");
        assert_eq!(v[2], "a) b (c");
        assert_eq!(v[3], "S");
        assert_eq!(v[4], "1");
    }

    #[test]
    fn sources_of_the_table() {
        // Every field of this proto version has a reader; the run checks
        // the kernel's list too.
        for d in nproc_proto::TASK_FIELDS.iter() {
            assert!(source(d.name).is_some(), "no /proc reader for {}", d.name);
        }
        assert_eq!(source("nosuch"), None);
    }

    #[test]
    fn values_of_a_read() {
        let t = ProcTask {
            stat: split_stat("7 (sh) S 1 7 7 0 -1 4194560 10 0 0 0 3 4").unwrap(),
            statm: "100 20 10 5 0 30 0".split(' ').map(String::from).collect(),
            status: "Name:\tsh\nUid:\t0\t1\t2\t3\nVmLck:\t      8 kB\n".into(),
            wchan: "do_wait".into(),
            cmdline: b"sh\0-c\0x\n\0".to_vec(),
        };
        assert_eq!(t.value(Source::Stat(2), 4).as_deref(), Some("sh"));
        assert_eq!(t.value(Source::Stat(8), 4).as_deref(), Some("-1"));
        assert_eq!(t.value(Source::Statm(3), 4).as_deref(), Some("10"));
        assert_eq!(t.value(Source::Status("Uid:", 3), 4).as_deref(), Some("2"));
        let lck = Source::StatusKbToPages("VmLck:");
        assert_eq!(t.value(lck, 4).as_deref(), Some("2"));
        let no_mm = ProcTask {
            status: "Name:\tkthreadd\n".into(),
            ..t.clone()
        };
        assert_eq!(no_mm.value(lck, 4).as_deref(), Some("0"));
        assert_eq!(t.value(Source::Stat(99), 4), None);
        assert_eq!(
            t.value(Source::Cmdline, 4).as_deref(),
            Some("sh\\x00-c\\x00x\\n\\x00")
        );
        let long = ProcTask {
            cmdline: vec![b'a'; nproc_proto::CMDLINE_MAX + 10],
            ..t.clone()
        };
        assert_eq!(
            long.value(Source::Cmdline, 4).map(|v| v.len()),
            Some(nproc_proto::CMDLINE_MAX)
        );
    }
}
