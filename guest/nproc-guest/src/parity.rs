//! Field parity: every field nproc serves equals what /proc shows the same
//! reader for the same task.
//!
//! Each round reads /proc for every task (P1), dumps with nproc (N), and
//! reads /proc again (P2); a value is equal when P1 = N = P2. Values that
//! moved are compared again in the next round, up to `rounds` rounds.
//! After the last round three documented tolerances remain, all races of
//! a task that ran, never of a wrong value:
//! - `utime`/`stime`: one clock tick (the task was charged a tick between
//!   the reads);
//! - `wchan`: the task ran between the two /proc reads (its state, CPU
//!   times or context switch counts moved, or the two reads differ), so it
//!   may sleep elsewhere;
//! - `comm` of a workqueue worker that ran: the workqueue after its name
//!   may change, its own name may not (see [`worker_name_moved`]).
//!
//! The checker's own process is left out: it runs during every read.
//! Every field the kernel's `GET_FIELDS` lists or `nproc-proto` declares
//! must have a reader in [`crate::procfs::source`].

use crate::procfs::{self, ProcTask, Source};
use nproc_genl::{Client, Record, TaskRequest, Value};
use nproc_proto::{field_id, global_id, task_field_by_name, FieldSet, Scope, Unit};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// A task: (tgid, tid), tid only in the threads scope.
type Key = (u32, Option<u32>);

/// What a parity run found.
#[derive(Debug, Default)]
pub struct Stats {
    /// Tasks compared (seen by nproc and both /proc reads at least once).
    pub tasks: usize,
    /// Fields compared per task.
    pub fields: usize,
    /// Values equal in the first round.
    pub first: usize,
    /// Values equal after re-reads.
    pub reread: usize,
    /// Values within the clock-tick tolerance.
    pub tick: usize,
    /// wchan values and workqueue worker names of tasks that ran.
    pub ran: usize,
    /// Values that differ: the failures, described.
    pub diffs: Vec<String>,
    /// Agreed wchan values "0" and symbols.
    pub wchan_zero: usize,
    /// Agreed wchan symbols.
    pub wchan_sym: usize,
    /// Tasks the mount lists (first round, before the dump).
    pub listed: usize,
    /// Tasks nproc sent as their pid alone (the mount lists them, their
    /// files are unreadable: hidepid=noaccess), first round.
    pub pid_only: usize,
}

/// The fields to compare: the kernel's task fields and the table's. A
/// field without a /proc reader, or one of the kernel's that
/// `nproc-proto` does not know, is an error.
fn field_list(client: &mut Client) -> Result<Vec<(u16, String, Source)>, Vec<String>> {
    let kernel: Vec<String> = match client.fields() {
        Ok(fields) => fields
            .into_iter()
            .filter(|f| f.set == Some(FieldSet::Task))
            .map(|f| f.name)
            .collect(),
        Err(e) => return Err(vec![format!("GET_FIELDS: {e}")]),
    };
    readers(kernel, nproc_proto::TASK_FIELDS.iter().map(|d| d.name))
}

/// The id and /proc source of every field named by the kernel or the
/// table; the errors name each field that has none.
fn readers<'a>(
    kernel: Vec<String>,
    table: impl Iterator<Item = &'a str>,
) -> Result<Vec<(u16, String, Source)>, Vec<String>> {
    let mut names: BTreeSet<String> = kernel.into_iter().collect();
    names.extend(table.map(String::from));
    let mut out = Vec::new();
    let mut errs = Vec::new();
    for n in names {
        let Some(d) = task_field_by_name(&n) else {
            errs.push(format!("kernel field {n} is unknown to nproc-proto"));
            continue;
        };
        match procfs::source(&n) {
            Some(s) => out.push((d.id, n, s)),
            None => errs.push(format!("no /proc reader for field {n}")),
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(errs)
    }
}

/// The /proc text of an nproc value.
fn render(id: u16, v: &Value) -> String {
    let is_char = nproc_proto::task_field(id).is_some_and(|d| d.unit == Unit::Char);
    match v {
        Value::U32(c) if is_char => char::from_u32(*c).map_or_else(|| c.to_string(), String::from),
        v => v.to_string(),
    }
}

fn u32_of(r: &Record, id: u16) -> Option<u32> {
    r.get(id)?.as_u64().and_then(|v| u32::try_from(v).ok())
}

/// One read of a procfs mount: what it lists, and what it lets the reader
/// read.
struct ProcRead {
    /// Every task listed (`/proc/PID`, or `/proc/PID/task/TID`).
    listed: BTreeSet<Key>,
    /// The listed tasks whose files could be read, read once.
    read: BTreeMap<Key, ProcTask>,
}

/// Every task the procfs mounted at `root` lists, read once.
fn read_all(root: &Path, threads: bool) -> ProcRead {
    let mut r = ProcRead {
        listed: BTreeSet::new(),
        read: BTreeMap::new(),
    };
    for tgid in numeric_dirs(root) {
        let tids: Vec<Option<u32>> = if threads {
            // Empty when /proc/PID is unreadable: so are its threads.
            numeric_dirs(&root.join(format!("{tgid}/task")))
                .into_iter()
                .map(Some)
                .collect()
        } else {
            vec![None]
        };
        for tid in tids {
            r.listed.insert((tgid, tid));
            if let Some(t) = ProcTask::read(&procfs::task_dir(root, tgid, tid)) {
                r.read.insert((tgid, tid), t);
            }
        }
    }
    r
}

/// The numeric entries of a directory (pids).
pub fn numeric_dirs(dir: &Path) -> Vec<u32> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// How one value compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// /proc before, nproc and /proc after agree.
    Equal,
    /// They do not (yet): compare again next round.
    Again,
    /// Last round: utime/stime within a clock tick.
    Tick,
    /// Last round: the wchan of a task that ran, or the name of a
    /// workqueue worker that ran (see [`worker_name_moved`]).
    Ran,
    /// Last round: a real difference.
    Differ,
}

/// Compares nproc's value `n` of field `name` with the /proc reads `a`
/// (before the dump) and `b` (after); `ran`: the task ran between /proc
/// reads in some round; `last`: no round follows.
fn judge(
    name: &str,
    n: Option<&str>,
    a: Option<&str>,
    b: Option<&str>,
    ran: bool,
    last: bool,
) -> Verdict {
    if n.is_some() && n == a && a == b {
        return Verdict::Equal;
    }
    if !last {
        return Verdict::Again;
    }
    let (n, a, b) = (n.unwrap_or("-"), a.unwrap_or("-"), b.unwrap_or("-"));
    if (name == "utime" || name == "stime") && (is_tick(n, a) || is_tick(n, b)) {
        Verdict::Tick
    } else if (ran || a != b) && (name == "wchan" || name == "comm" && worker_name_moved(n, a)) {
        Verdict::Ran
    } else {
        Verdict::Differ
    }
}

/// Whether `n` and `a` are one workqueue worker's names: /proc shows a
/// kworker as its own name, "-" and the workqueue of the work item it runs
/// or last ran (fs/proc/array.c proc_task_name(), wq_worker_comm()), which
/// changes whenever it runs another queue's work. The worker's own name,
/// up to the first "-", must still be the same.
fn worker_name_moved(n: &str, a: &str) -> bool {
    n.starts_with("kworker/") && n.split('-').next() == a.split('-').next()
}

fn is_tick(a: &str, b: &str) -> bool {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.abs_diff(y) <= 1,
        _ => false,
    }
}

/// Whether `rec` is a task sent by its pid alone: asked for every field,
/// it has no tid.
fn pid_only(rec: &Record) -> bool {
    rec.get(field_id::TID).is_none()
}

/// The first round's visibility rules: nproc lists exactly the tasks the
/// mount lists, with fields exactly where the mount's files are readable.
/// Tasks born or gone during the round (in one /proc read only) are not
/// judged.
fn check_visibility(p1: &ProcRead, p2: &ProcRead, sent: &BTreeMap<Key, bool>, st: &mut Stats) {
    let listed = |k: &Key| p1.listed.contains(k) || p2.listed.contains(k);
    let both_listed = |k: &Key| p1.listed.contains(k) && p2.listed.contains(k);
    let both_read = |k: &Key| p1.read.contains_key(k) && p2.read.contains_key(k);
    let never_read = |k: &Key| !p1.read.contains_key(k) && !p2.read.contains_key(k);
    for (key, &only_pid) in sent {
        if !listed(key) {
            st.diffs.push(format!(
                "nproc sent task {key:?}, which the mount does not list"
            ));
        } else if !only_pid && both_listed(key) && never_read(key) {
            st.diffs.push(format!(
                "nproc sent the fields of task {key:?}, whose files the mount refuses"
            ));
        } else if only_pid && both_read(key) {
            st.diffs.push(format!(
                "nproc sent task {key:?} by its pid alone, but the mount lets its files be read"
            ));
        }
    }
    for key in p1.listed.intersection(&p2.listed) {
        if !sent.contains_key(key) {
            st.diffs.push(format!(
                "the mount lists task {key:?} before and after the dump, nproc does not"
            ));
        }
    }
}

/// Runs the parity check of one scope against the procfs mounted at
/// `root` (the mount `client` names in its requests); `rounds` >= 1.
pub fn run(client: &mut Client, root: &Path, threads: bool, rounds: usize) -> Stats {
    let mut st = Stats::default();
    let fields = match field_list(client) {
        Ok(f) => f,
        Err(e) => {
            st.diffs = e;
            return st;
        }
    };
    st.fields = fields.len();
    let page_kb = client
        .global()
        .ok()
        .and_then(|g| g.into_iter().find(|(id, _)| *id == global_id::PAGE_SIZE))
        .and_then(|(_, v)| v.as_u64())
        .map_or(4, |b| b / 1024);
    let names: Vec<&str> = fields.iter().map(|(_, n, _)| n.as_str()).collect();
    let scope = if threads {
        Scope::Threads
    } else {
        Scope::Processes
    };
    let req = match TaskRequest::from_names(&names, scope) {
        Ok(r) => r,
        Err(e) => {
            st.diffs.push(e.to_string());
            return st;
        }
    };
    let me = std::process::id();
    // (task, field index) still to settle; None = every field (round 0).
    let mut pending: Option<BTreeMap<Key, BTreeSet<usize>>> = None;
    let mut ran_ever: BTreeSet<Key> = BTreeSet::new();
    for round in 0..rounds.max(1) {
        let last = round + 1 == rounds.max(1);
        let mut r1 = read_all(root, threads);
        let dump = match client.tasks(&req) {
            Ok(d) => d,
            Err(e) => {
                st.diffs.push(format!("GET_TASKS: {e}"));
                return st;
            }
        };
        let mut r2 = read_all(root, threads);
        if round == 0 {
            let mut sent = BTreeMap::new();
            for rec in &dump {
                let Some(tgid) = u32_of(rec, field_id::TGID) else {
                    continue; // a diff below
                };
                let key = (tgid, threads.then(|| u32_of(rec, field_id::TID)).flatten());
                if tgid != me {
                    sent.insert(key, pid_only(rec));
                }
            }
            // The checker itself is left out, as everywhere here.
            r1.listed.retain(|k| k.0 != me);
            r2.listed.retain(|k| k.0 != me);
            st.listed = r1.listed.len();
            st.pid_only = sent.values().filter(|&&p| p).count();
            check_visibility(&r1, &r2, &sent, &mut st);
        }
        let (p1, p2) = (&r1.read, &r2.read);
        let mut next: BTreeMap<Key, BTreeSet<usize>> = BTreeMap::new();
        for rec in &dump {
            let Some(tgid) = u32_of(rec, field_id::TGID) else {
                st.diffs.push(format!("a record without tgid: {rec:?}"));
                continue;
            };
            let key = (tgid, threads.then(|| u32_of(rec, field_id::TID)).flatten());
            if tgid == me || pid_only(rec) {
                continue;
            }
            let todo: Vec<usize> = match &pending {
                None => (0..fields.len()).collect(),
                Some(p) => match p.get(&key) {
                    Some(s) => s.iter().copied().collect(),
                    None => continue,
                },
            };
            let (Some(a), Some(b)) = (p1.get(&key), p2.get(&key)) else {
                continue; // born or gone during the round
            };
            if round == 0 {
                st.tasks += 1;
            }
            if b.ran_since(a) {
                ran_ever.insert(key);
            }
            for i in todo {
                let (id, name, src) = &fields[i];
                let n = rec.get(*id).map(|v| render(*id, v));
                let (va, vb) = (a.value(*src, page_kb), b.value(*src, page_kb));
                let ran = ran_ever.contains(&key);
                match judge(name, n.as_deref(), va.as_deref(), vb.as_deref(), ran, last) {
                    Verdict::Equal => {
                        if round == 0 {
                            st.first += 1;
                        } else {
                            st.reread += 1;
                        }
                        if name == "wchan" {
                            if n.as_deref() == Some("0") {
                                st.wchan_zero += 1;
                            } else {
                                st.wchan_sym += 1;
                            }
                        }
                    }
                    Verdict::Again => {
                        next.entry(key).or_default().insert(i);
                    }
                    Verdict::Tick => st.tick += 1,
                    Verdict::Ran => st.ran += 1,
                    Verdict::Differ => st.diffs.push(format!(
                        "task {key:?} field {name}: nproc {n:?}, /proc {va:?} then {vb:?}"
                    )),
                }
            }
        }
        // A task /proc listed before and after the dump must be in it.
        let seen: BTreeSet<Key> = dump
            .iter()
            .filter_map(|r| {
                let tgid = u32_of(r, field_id::TGID)?;
                Some((tgid, threads.then(|| u32_of(r, field_id::TID)).flatten()))
            })
            .collect();
        for key in p1.keys().filter(|k| p2.contains_key(k) && k.0 != me) {
            let same = p1.get(key).map(ProcTask::start) == p2.get(key).map(ProcTask::start);
            if same && !seen.contains(key) {
                st.diffs.push(format!(
                    "task {key:?} lived through the dump but is not in it"
                ));
            }
        }
        // Tasks still pending but missing from this round are gone: what
        // they did is no longer comparable.
        if next.is_empty() {
            break;
        }
        pending = Some(next);
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_only_when_all_three_agree() {
        let j = |n, a, b, last| judge("vsize", n, a, b, false, last);
        assert_eq!(j(Some("5"), Some("5"), Some("5"), true), Verdict::Equal);
        assert_eq!(j(Some("5"), Some("6"), Some("6"), false), Verdict::Again);
        assert_eq!(j(Some("5"), Some("6"), Some("6"), true), Verdict::Differ);
        // A field nproc did not send, or /proc could not read, differs.
        assert_eq!(j(None, None, None, true), Verdict::Differ);
        assert_eq!(j(Some("5"), None, None, true), Verdict::Differ);
    }

    #[test]
    fn a_worker_that_ran_may_name_another_queue() {
        let c = |n, a, b, ran| judge("comm", Some(n), Some(a), Some(b), ran, true);
        let (x, y) = ("kworker/0:1-events", "kworker/0:1-mm_percpu_wq");
        assert_eq!(c(x, y, x, false), Verdict::Ran);
        assert_eq!(c(x, y, y, true), Verdict::Ran);
        // Not before the last round, not for another worker or task.
        assert_eq!(
            judge("comm", Some(x), Some(y), Some(x), true, false),
            Verdict::Again
        );
        assert_eq!(c(x, "kworker/0:2-events", x, true), Verdict::Differ);
        assert_eq!(c("sleep", "sleeq", "sleeq", true), Verdict::Differ);
        // A worker whose name did not move while it did not run differs.
        assert_eq!(c(x, y, y, false), Verdict::Differ);
    }

    #[test]
    fn tolerances_are_narrow() {
        let s = |n, a, b| judge("stime", Some(n), Some(a), Some(b), false, true);
        assert_eq!(s("10", "11", "11"), Verdict::Tick);
        assert_eq!(s("10", "12", "12"), Verdict::Differ);
        // A tick on a field that is not a CPU time is a difference.
        let v = judge("min_flt", Some("10"), Some("11"), Some("11"), true, true);
        assert_eq!(v, Verdict::Differ);
        let w = |a, b, ran| judge("wchan", Some("x"), Some(a), Some(b), ran, true);
        assert_eq!(w("y", "y", false), Verdict::Differ);
        assert_eq!(w("y", "y", true), Verdict::Ran);
        assert_eq!(w("y", "z", false), Verdict::Ran);
        // A guarded "0" against a symbol is never excused by a tick.
        let g = judge(
            "utime",
            Some("0"),
            Some("do_wait"),
            Some("do_wait"),
            true,
            true,
        );
        assert_eq!(g, Verdict::Differ);
    }

    #[test]
    fn every_field_needs_a_reader() {
        let table = || nproc_proto::TASK_FIELDS.iter().map(|d| d.name);
        let all = readers(vec!["tgid".into()], table()).unwrap();
        assert_eq!(all.len(), nproc_proto::TASK_FIELDS.len());
        // A kernel newer than the table. (A table field without a reader
        // fails procfs::tests::sources_of_the_table on the host already.)
        let errs = readers(vec!["cmdline_new".into()], table()).unwrap_err();
        assert_eq!(errs, ["kernel field cmdline_new is unknown to nproc-proto"]);
    }

    #[test]
    fn state_letters_render_as_proc_prints_them() {
        assert_eq!(render(field_id::STATE, &Value::U32(u32::from(b'S'))), "S");
        assert_eq!(render(field_id::PGID, &Value::S32(-1)), "-1");
        assert_eq!(render(field_id::COMM, &Value::Str(b"sh".to_vec())), "sh");
    }
}
