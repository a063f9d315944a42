//! Parsers for the text of `/proc/PID/stat` and `/proc/PID/status`.
//!
//! They read what procps-ng 4.0.2's `stat2proc()` and `status2proc()`
//! (library/readproc.c) read, with the same precedence: `status` is read
//! after `stat`, so its `State`, `PPid`, `Threads`, `Tgid` and `Pid` lines win
//! over the `stat` fields when present.

use crate::task::Task;

/// Fills `task` from the text of a `stat` file. The error names the field
/// that was missing or malformed.
pub fn parse_stat(text: &[u8], task: &mut Task) -> Result<(), String> {
    // The name may contain anything, even ") "; the kernel prints it between
    // the first '(' and the last ')' (stat2proc: strchr + strrchr).
    let open = text
        .iter()
        .position(|&b| b == b'(')
        .ok_or("no '(' before the command name")?;
    let close = text
        .iter()
        .rposition(|&b| b == b')')
        .filter(|&c| c > open)
        .ok_or("no ')' after the command name")?;
    if close + 1 >= text.len() {
        return Err("nothing after the command name".into());
    }
    task.comm = text[open + 1..close].to_vec();
    let rest = &text[close + 1..];
    let rest = std::str::from_utf8(rest).map_err(|_| "fields after the name are not text")?;
    let mut fields = rest.split_ascii_whitespace();
    let mut next = |name: &str| fields.next().ok_or_else(|| format!("field {name} missing"));
    let state = next("state")?;
    task.state = state.as_bytes()[0];
    task.ppid = num(next("ppid")?, "ppid")?;
    task.pgid = num(next("pgrp")?, "pgrp")?;
    task.sid = num(next("session")?, "session")?;
    task.tty_nr = num(next("tty_nr")?, "tty_nr")?;
    task.tpgid = num(next("tpgid")?, "tpgid")?;
    task.flags = num(next("flags")?, "flags")?;
    task.min_flt = num(next("minflt")?, "minflt")?;
    next("cminflt")?;
    task.maj_flt = num(next("majflt")?, "majflt")?;
    next("cmajflt")?;
    task.utime = num(next("utime")?, "utime")?;
    task.stime = num(next("stime")?, "stime")?;
    task.cutime = num(next("cutime")?, "cutime")?;
    task.cstime = num(next("cstime")?, "cstime")?;
    task.priority = num(next("priority")?, "priority")?;
    task.nice = num(next("nice")?, "nice")?;
    task.nlwp = num(next("num_threads")?, "num_threads")?;
    next("itrealvalue")?;
    task.start_time = num(next("starttime")?, "starttime")?;
    task.vsize = num(next("vsize")?, "vsize")?;
    task.rss = num(next("rss")?, "rss")?;
    for name in [
        "rsslim",
        "startcode",
        "endcode",
        "startstack",
        "kstkesp",
        "kstkeip",
        "signal",
        "blocked",
        "sigignore",
        "sigcatch",
        "wchan",
        "nswap",
        "cnswap",
        "exit_signal",
    ] {
        next(name)?;
    }
    task.processor = num(next("processor")?, "processor")?;
    task.rt_priority = num(next("rt_priority")?, "rt_priority")?;
    task.policy = num(next("policy")?, "policy")?;
    // stat2proc: "if(!P->nlwp) P->nlwp = 1;"
    if task.nlwp == 0 {
        task.nlwp = 1;
    }
    Ok(())
}

fn num<T: std::str::FromStr>(s: &str, name: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("field {name}: {s:?} is not a number"))
}

/// Fills `task` from the text of a `status` file. Lines procps does not
/// read are ignored; the error names the line that was malformed.
pub fn parse_status(text: &[u8], task: &mut Task) -> Result<(), String> {
    let mut threads = 0i32;
    let mut tgid = 0i32;
    let mut pid = 0i32;
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let key = &line[..colon];
        let value = &line[colon + 1..];
        let bad = |what: &str| format!("line {}: {}: {what}", n + 1, String::from_utf8_lossy(key));
        match key {
            b"State" => {
                if let Some(&c) = value.iter().find(|b| !b.is_ascii_whitespace()) {
                    task.state = c;
                }
            }
            b"Tgid" => tgid = first(value).ok_or_else(|| bad("not a number"))?,
            b"Pid" => pid = first(value).ok_or_else(|| bad("not a number"))?,
            b"PPid" => task.ppid = first(value).ok_or_else(|| bad("not a number"))?,
            b"Threads" => threads = first(value).ok_or_else(|| bad("not a number"))?,
            b"Uid" => task.uid = four(value).ok_or_else(|| bad("want 4 ids"))?,
            b"Gid" => task.gid = four(value).ok_or_else(|| bad("want 4 ids"))?,
            b"VmSize" => task.vm_size_kib = first(value).ok_or_else(|| bad("not a number"))?,
            b"VmRSS" => task.vm_rss_kib = first(value).ok_or_else(|| bad("not a number"))?,
            b"VmLck" => task.vm_lck_kib = first(value).ok_or_else(|| bad("not a number"))?,
            _ => {}
        }
    }
    // status2proc: only kernels with "Threads" have trustworthy Tgid/Pid.
    if threads != 0 {
        task.nlwp = threads;
        task.tgid = tgid;
        task.tid = pid;
    }
    Ok(())
}

fn words(value: &[u8]) -> impl Iterator<Item = &str> {
    value
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .filter_map(|w| std::str::from_utf8(w).ok())
}

fn first<T: std::str::FromStr>(value: &[u8]) -> Option<T> {
    words(value).next()?.parse().ok()
}

fn four(value: &[u8]) -> Option<[u32; 4]> {
    let mut w = words(value);
    let mut ids = [0u32; 4];
    for id in &mut ids {
        *id = w.next()?.parse().ok()?;
    }
    Some(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &[u8] = b"1234 (a) b) c) S 1 1234 1234 34816 1300 4194304 110 0 2 0 7 3 0 0 20 0 1 0 5000 10817536 900 18446744073709551615 1 1 0 0 0 0 0 0 65536 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    #[test]
    fn stat_name_with_parens_and_fields() {
        let mut t = Task::empty(1234, 1234);
        parse_stat(STAT, &mut t).unwrap();
        assert_eq!(t.comm, b"a) b) c");
        assert_eq!(t.state, b'S');
        assert_eq!(
            (t.ppid, t.pgid, t.sid, t.tty_nr, t.tpgid),
            (1, 1234, 1234, 34816, 1300)
        );
        assert_eq!(t.flags, 4194304);
        assert_eq!((t.min_flt, t.maj_flt, t.utime, t.stime), (110, 2, 7, 3));
        assert_eq!((t.priority, t.nice, t.nlwp), (20, 0, 1));
        assert_eq!((t.start_time, t.vsize, t.rss), (5000, 10817536, 900));
        assert_eq!((t.processor, t.rt_priority, t.policy), (3, 0, 0));
    }

    #[test]
    fn stat_truncated_names_the_field() {
        let mut t = Task::empty(1, 1);
        let err = parse_stat(b"1 (x) S 0 1 1 0 -1 4194560", &mut t).unwrap_err();
        assert_eq!(err, "field minflt missing");
        let err = parse_stat(b"1 (x)", &mut t).unwrap_err();
        assert_eq!(err, "nothing after the command name");
        let err = parse_stat(b"1 x S", &mut t).unwrap_err();
        assert_eq!(err, "no '(' before the command name");
    }

    #[test]
    fn status_overrides_and_ids() {
        let mut t = Task::empty(7, 7);
        let status = b"Name:\tbash\nState:\tT (stopped)\nTgid:\t7\nPid:\t9\nPPid:\t3\nUid:\t1000\t1001\t1002\t1003\nGid:\t5\t6\t7\t8\nVmSize:\t    2048 kB\nVmLck:\t       4 kB\nVmRSS:\t     512 kB\nThreads:\t2\n";
        parse_status(status, &mut t).unwrap();
        assert_eq!(t.state, b'T');
        assert_eq!((t.tgid, t.tid, t.ppid, t.nlwp), (7, 9, 3, 2));
        assert_eq!(t.uid, [1000, 1001, 1002, 1003]);
        assert_eq!(t.gid, [5, 6, 7, 8]);
        assert_eq!((t.vm_size_kib, t.vm_rss_kib, t.vm_lck_kib), (2048, 512, 4));
    }

    #[test]
    fn status_bad_line_is_named() {
        let mut t = Task::empty(7, 7);
        let err = parse_status(b"Name:\tx\nUid:\t1 2\n", &mut t).unwrap_err();
        assert_eq!(err, "line 2: Uid: want 4 ids");
    }
}
