//! Sorting as ps 4.0.2 sorts: `procps_pids_sort()` (library/pids.c), one
//! stable pass per key (glibc's `qsort_r` merges, so ties keep their
//! order), comparing the libproc2 item behind the key's specifier with that
//! item's own comparison (`sort_pids_*`).

use crate::render::columns::{command_line, wchan_name};
use crate::render::escape::lib_escape_array;
use crate::render::known::Known;
use crate::render::Ctx;
use crate::task::Task;
use std::cmp::Ordering;
use std::ffi::CString;

/// A sort key (`sort_node`): a `format_array` row's sort item, and the
/// order (1 ascending, -1 descending, 0: ps's short-sort leftover that
/// sorts nothing).
#[derive(Clone, Copy, Debug)]
pub struct SortKey {
    /// The row whose sort item is compared.
    pub row: &'static Known,
    /// `PIDS_SORT_ASCEND` (1), `PIDS_SORT_DESCEND` (-1), or 0.
    pub order: i32,
}

/// How an item compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `NUM_srt`: `order * (a - b)` in the item's C type (`s_int`,
    /// `s_ch`), which wraps as C's subtraction does.
    Diff,
    /// `REG_srt`: `<` and `>`.
    Ordered,
    /// `strcoll()`.
    Coll,
    /// `strverscmp()`.
    Version,
    /// `sort_pids_noop`: everything is equal.
    Noop,
}

/// The comparison of a libproc2 item (the `PIDS_` name without its prefix)
/// when nps can compute it, else `None`.
pub fn supported(item: &str) -> Option<Cmp> {
    Some(match item {
        "ID_PID" | "ID_TGID" | "ID_PPID" | "ID_PGRP" | "ID_SESSION" | "ID_TPGID" | "NICE"
        | "NLWP" | "PRIORITY" | "PRIORITY_RT" | "PROCESSOR" | "SCHED_CLASS" | "STATE" => Cmp::Diff,
        "ID_EUID" | "ID_RUID" | "ID_SUID" | "ID_FUID" | "ID_EGID" | "ID_RGID" | "FLAGS"
        | "FLT_MAJ" | "FLT_MIN" | "VM_RSS" | "VM_SIZE" | "VSIZE_BYTES" | "TICS_ALL"
        | "TICS_BEGAN" | "TIME_ALL" | "TIME_ELAPSED" | "UTILIZATION" => Cmp::Ordered,
        "CMD" | "CMDLINE" | "ID_EUSER" | "ID_RUSER" | "ID_SUSER" | "ID_FUSER" | "ID_EGROUP"
        | "ID_RGROUP" | "ID_SGROUP" | "ID_FGROUP" | "WCHAN_NAME" => Cmp::Coll,
        "TTY_NAME" => Cmp::Version,
        "noop" => Cmp::Noop,
        _ => return None,
    })
}

/// One task's value of an item.
#[derive(Clone, Debug, PartialEq, PartialOrd)]
enum Value {
    Int(i64),
    Unsigned(u64),
    Real(f64),
    Text(CString),
}

/// The value of `item` for `t`, as libproc2 computes it.
fn value(item: &str, t: &Task, ctx: &mut Ctx<'_>) -> Value {
    use Value::{Int, Real, Unsigned as U};
    let g = ctx.global;
    let hz = g.hertz.max(1) as f64;
    // pids_oldproc_open(): uptime (in seconds, as /proc/uptime gives it)
    // times Hertz.
    let boot_tics = g.uptime_centis as f64 / 100.0 * hz;
    let text = |b: &[u8]| {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        Value::Text(CString::new(&b[..end]).expect("cut at the first NUL"))
    };
    match item {
        "ID_PID" => Int(t.tid.into()),
        "ID_TGID" => Int(t.tgid.into()),
        "ID_PPID" => Int(t.ppid.into()),
        "ID_PGRP" => Int(t.pgid.into()),
        "ID_SESSION" => Int(t.sid.into()),
        "ID_TPGID" => Int(t.tpgid.into()),
        "NICE" => Int(t.nice.into()),
        "NLWP" => Int(t.nlwp.into()),
        "PRIORITY" => Int(t.priority.into()),
        "PRIORITY_RT" => Int(t.rt_priority.into()),
        "PROCESSOR" => Int(t.processor.into()),
        "SCHED_CLASS" => Int(t.policy.into()),
        // s_ch: the state letter as a signed char.
        "STATE" => Int((t.state as i8).into()),
        "ID_RUID" => Int(t.uid[0].into()),
        "ID_EUID" => Int(t.uid[1].into()),
        "ID_SUID" => Int(t.uid[2].into()),
        "ID_FUID" => Int(t.uid[3].into()),
        "ID_RGID" => Int(t.gid[0].into()),
        "ID_EGID" => Int(t.gid[1].into()),
        "FLAGS" => U(t.flags),
        "FLT_MAJ" => U(t.maj_flt),
        "FLT_MIN" => U(t.min_flt),
        "VM_RSS" => U(t.vm_rss_kib),
        "VM_SIZE" => U(t.vm_size_kib),
        "VSIZE_BYTES" => U(t.vsize),
        "TICS_ALL" => U(t.utime.wrapping_add(t.stime)),
        "TICS_BEGAN" => U(t.start_time),
        "TIME_ALL" => Real((t.utime as f64 + t.stime as f64) / hz),
        "TIME_ELAPSED" => {
            let e = boot_tics - t.start_time as f64;
            Real(if e > 0.0 { e / hz } else { 0.0 })
        }
        "UTILIZATION" => {
            let e = boot_tics - t.start_time as f64;
            // `(utime + stime) * 100.0f`: the ticks as a float.
            let busy = ((t.utime + t.stime) as f32 * 100.0f32) as f64;
            Real(if e > 0.0 { busy / e } else { 0.0 })
        }
        "CMD" => {
            let (c, n) = lib_escape_array::<64>(&t.comm, ctx.charset);
            text(&c[..n])
        }
        "CMDLINE" => text(&command_line(t, ctx.charset)),
        "ID_EUSER" => text(ctx.names.user(t.uid[1])),
        "ID_RUSER" => text(ctx.names.user(t.uid[0])),
        "ID_SUSER" => text(ctx.names.user(t.uid[2])),
        "ID_FUSER" => text(ctx.names.user(t.uid[3])),
        "ID_EGROUP" => text(ctx.names.group(t.gid[1])),
        "ID_RGROUP" => text(ctx.names.group(t.gid[0])),
        "ID_SGROUP" => text(ctx.names.group(t.gid[2])),
        "ID_FGROUP" => text(ctx.names.group(t.gid[3])),
        "WCHAN_NAME" => text(wchan_name(&t.wchan)),
        "TTY_NAME" => {
            let mut name = Vec::new();
            ctx.tty.push_name(t.tty_nr, t.tid, &mut name);
            text(&name)
        }
        _ => Int(0),
    }
}

extern "C" {
    /// glibc's version-aware comparison (string.h, `_GNU_SOURCE`).
    fn strverscmp(a: *const libc::c_char, b: *const libc::c_char) -> libc::c_int;
}

/// `a` against `b` as `cmp` compares them, ascending.
fn compare(cmp: Cmp, a: &Value, b: &Value) -> Ordering {
    match (cmp, a, b) {
        // NUM_srt: the sign of the C subtraction (s_int wraps).
        (Cmp::Diff, Value::Int(x), Value::Int(y)) => (*x as i32).wrapping_sub(*y as i32).cmp(&0),
        (Cmp::Ordered, Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Cmp::Ordered, Value::Unsigned(x), Value::Unsigned(y)) => x.cmp(y),
        (Cmp::Ordered, Value::Real(x), Value::Real(y)) => {
            x.partial_cmp(y).unwrap_or(Ordering::Equal)
        }
        (Cmp::Coll, Value::Text(x), Value::Text(y)) => {
            // SAFETY: both are NUL-terminated strings.
            unsafe { libc::strcoll(x.as_ptr(), y.as_ptr()) }.cmp(&0)
        }
        (Cmp::Version, Value::Text(x), Value::Text(y)) => {
            // SAFETY: both are NUL-terminated strings.
            unsafe { strverscmp(x.as_ptr(), y.as_ptr()) }.cmp(&0)
        }
        _ => Ordering::Equal,
    }
}

/// Applies `keys` in order (the last ends up primary), each a stable sort
/// of `tasks`. A key of order 0 sorts nothing, as libproc2 refuses it.
pub fn sort_tasks(tasks: &mut [&Task], keys: &[SortKey], ctx: &mut Ctx<'_>) {
    if keys
        .iter()
        .any(|k| supported(k.row.sort) == Some(Cmp::Coll))
    {
        // ps runs setlocale(LC_ALL, ""): strcoll follows LC_COLLATE.
        // SAFETY: the argument is a NUL-terminated literal; one thread.
        unsafe { libc::setlocale(libc::LC_COLLATE, c"".as_ptr()) };
    }
    for key in keys {
        let Some(cmp) = supported(key.row.sort) else {
            continue;
        };
        if key.order == 0 || cmp == Cmp::Noop {
            continue;
        }
        let mut keyed: Vec<(Value, &Task)> = tasks
            .iter()
            .map(|t| (value(key.row.sort, t, ctx), *t))
            .collect();
        keyed.sort_by(|a, b| {
            let o = compare(cmp, &a.0, &b.0);
            if key.order < 0 {
                o.reverse()
            } else {
                o
            }
        });
        for (slot, (_, t)) in tasks.iter_mut().zip(keyed) {
            *slot = t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::known::known;
    use crate::render::with_test_ctx;
    use crate::task::Global;

    fn global() -> Global {
        Global {
            hertz: 100,
            page_size: 4096,
            boot_time: 0,
            mem_total_kib: 1,
            uptime_centis: 100_000,
            pid_max: None,
        }
    }

    fn key(spec: &str, order: i32) -> SortKey {
        SortKey {
            row: known(spec).unwrap(),
            order,
        }
    }

    #[test]
    fn keys_apply_in_order_and_stably() {
        let mut ts: Vec<Task> = (1..=4).map(|i| Task::empty(i, i)).collect();
        ts[0].vm_rss_kib = 5;
        ts[1].vm_rss_kib = 9;
        ts[2].vm_rss_kib = 5;
        ts[3].vm_rss_kib = 1;
        let mut refs: Vec<&Task> = ts.iter().collect();
        with_test_ctx(&global(), |ctx| {
            sort_tasks(&mut refs, &[key("pid", -1), key("rss", -1)], ctx)
        });
        let order: Vec<i32> = refs.iter().map(|t| t.tgid).collect();
        assert_eq!(order, vec![2, 3, 1, 4]);
        // Order 0 sorts nothing.
        let mut refs: Vec<&Task> = ts.iter().collect();
        with_test_ctx(&global(), |ctx| {
            sort_tasks(&mut refs, &[key("rss", 0)], ctx)
        });
        assert_eq!(refs[0].tgid, 1);
    }

    /// Plan::want() asks the nproc source for a sort item's fields through
    /// an nps column sorting by the same item: every item nps sorts by
    /// has one.
    #[test]
    fn every_sort_item_has_a_column() {
        use crate::render::columns::COLUMNS;
        use crate::render::known::KNOWN;
        for k in KNOWN.iter().filter(|k| supported(k.sort).is_some()) {
            if k.sort == "noop" {
                continue;
            }
            assert!(
                COLUMNS
                    .iter()
                    .any(|c| known(c.spec).is_some_and(|r| r.sort == k.sort)),
                "{} sorts by {}",
                k.spec,
                k.sort
            );
        }
    }

    #[test]
    fn names_compare_as_text() {
        let mut a = Task::empty(1, 1);
        a.comm = b"zsh".to_vec();
        let mut b = Task::empty(2, 2);
        b.comm = b"bash".to_vec();
        let mut refs = vec![&a, &b];
        with_test_ctx(&global(), |ctx| {
            sort_tasks(&mut refs, &[key("comm", 1)], ctx)
        });
        assert_eq!(refs[0].tgid, 2);
        assert_eq!(supported("CGROUP"), None);
    }
}
