//! Building the column list: `-o` lists (src/ps/sortformat.c
//! `format_parse()` and `do_one_spec()`) and the default formats
//! (`generate_sysv_list()`).

use super::columns::lookup;
use super::layout::Column;

/// procps_pid_length(): the digits of pid_max, 5 when unknown.
pub fn pid_length(pid_max: Option<u64>) -> usize {
    pid_max.map_or(5, |m| m.to_string().len())
}

/// do_one_spec(): one column, its width widened to pid_max's digits for
/// PID-like columns and to a header override's length.
pub fn one_spec(spec: &str, header: Option<&str>, pid_len: usize) -> Option<Column> {
    let def = lookup(spec)?;
    let w1 = if def.pidmax {
        pid_len.max(def.head.len())
    } else {
        def.width
    };
    let (name, width) = match header {
        Some(h) => (h.to_string(), w1.max(h.len())),
        None => (def.head.to_string(), w1),
    };
    Some(Column {
        name,
        width,
        just: def.just,
        kind: def.kind,
    })
}

fn is_sep(b: u8) -> bool {
    matches!(b, b' ' | b',' | b'\t' | b'\n')
}

/// format_parse(): a list of `spec[:width][=header]` items separated by
/// blanks or commas; one trailing separator is allowed. Only the last item's
/// header may contain separators. The error text is procps's.
pub fn parse_list(list: &str, pid_len: usize) -> Result<Vec<Column>, String> {
    let bytes = list.as_bytes();
    // Count items; a separator where an item is due (or an empty list) is
    // "improper".
    let mut need_item = true;
    let mut items = 0;
    let mut i = 0;
    loop {
        let b = bytes.get(i).copied().unwrap_or(0);
        if b == 0 || is_sep(b) {
            if need_item {
                return Err("improper format list".into());
            }
            need_item = true;
        } else {
            if need_item {
                items += 1;
            }
            need_item = false;
        }
        i += 1;
        if i >= bytes.len() {
            break;
        }
    }
    let mut buf = list;
    if need_item {
        buf = &list[..list.len() - 1];
    }
    let mut out = Vec::new();
    let mut walk = Some(buf);
    while items > 0 {
        items -= 1;
        let Some(w) = walk else {
            return Err("improper format list".into());
        };
        let sep = w.bytes().position(is_sep);
        let (item, rest) = match sep {
            Some(p) if items > 0 => (&w[..p], Some(&w[p + 1..])),
            Some(p) => (w, Some(&w[p + 1..])),
            None => (w, None),
        };
        let (name_part, header) = match item.split_once('=') {
            Some((n, h)) => (n, Some(h)),
            None => (item, None),
        };
        let (spec, width) = match name_part.split_once(':') {
            Some((s, wd)) => {
                let ok = !wd.is_empty()
                    && wd.bytes().all(|b| b.is_ascii_digit())
                    && !wd.starts_with('0');
                let n: usize = if ok { wd.parse().unwrap_or(0) } else { 0 };
                if n == 0 {
                    return Err("column widths must be unsigned decimal numbers".into());
                }
                (s, Some(n))
            }
            None => (name_part, None),
        };
        let mut col = one_spec(spec, header, pid_len)
            .ok_or_else(|| format!("unknown user-defined format specifier \"{spec}\""))?;
        if let Some(n) = width {
            col.width = n;
        }
        out.push(col);
        walk = rest;
    }
    Ok(out)
}

/// BSD `u` (`bsd_u_format` = "OL_u" in src/ps/global.c).
pub fn bsd_user_list(pid_len: usize) -> Vec<Column> {
    [
        "user",
        "pid",
        "pcpu",
        "pmem",
        "vsz",
        "rss",
        "tname",
        "stat",
        "start_time",
        "bsdtime",
        "args",
    ]
    .into_iter()
    .map(|s| one_spec(s, None, pid_len).expect("OL_u columns are in the table"))
    .collect()
}

/// The standard-syntax format options that shape the default list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SysvFlags {
    /// `-f`: full format.
    pub full: bool,
    /// `-l`: long format.
    pub long: bool,
}

/// The format ps picks when no `-o` was given: `generate_sysv_list()`
/// (src/ps/sortformat.c) for the default personality, without the -F, -c,
/// -j, -y, -P, -M modifiers nps does not take. It pushes columns onto the
/// front of the list, so it is written here backwards too.
pub fn default_list(bsd: bool, flags: SysvFlags, lwp: bool, pid_len: usize) -> Vec<Column> {
    let (f, l) = (flags.full, flags.long);
    let mut rev: Vec<&str> = Vec::new();
    if bsd {
        rev.push(if f || l { "cmd" } else { "args" });
        rev.push("bsdtime");
        if !l {
            rev.push("stat");
        }
    } else {
        rev.push(if f { "cmd" } else { "ucmd" });
        rev.push("time");
    }
    rev.push("tname");
    if f {
        rev.push("stime");
    }
    if l {
        rev.extend(["wchan", "sz", "addr_1", "ni", "opri"]);
    }
    if lwp && f {
        rev.push("nlwp");
    }
    if f || l {
        rev.push("c");
    }
    if lwp {
        rev.push("lwp");
    }
    if f || l {
        rev.push("ppid");
    }
    rev.push("pid");
    if f {
        rev.push("uid_hack");
    } else if l {
        rev.push("uid");
    }
    if l {
        rev.extend(["s", "f"]);
    }
    rev.into_iter()
        .rev()
        .map(|s| one_spec(s, None, pid_len).expect("default columns are in the table"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(cols: &[Column]) -> Vec<(String, usize)> {
        cols.iter().map(|c| (c.name.clone(), c.width)).collect()
    }

    #[test]
    fn lists_and_overrides() {
        let c = parse_list("pid,tid,ppid,uid,stat,vsz,rss,time,nlwp,comm,wchan", 7).unwrap();
        assert_eq!(c.len(), 11);
        assert_eq!(c[0].width, 7);
        assert_eq!(c[3].width, 5);
        let c = parse_list("pid:3,comm=NAME_OF_IT_ALL_LONG", 5).unwrap();
        assert_eq!(
            names(&c),
            vec![("PID".into(), 3), ("NAME_OF_IT_ALL_LONG".into(), 19)]
        );
        // procps counts the blanks of a header as separators, so even a
        // lone "comm=NAME OF IT" fails (as `ps -o 'comm=NAME OF IT'` does).
        assert_eq!(
            parse_list("comm=NAME OF IT", 5).unwrap_err(),
            "unknown user-defined format specifier \"OF\""
        );
        let c = parse_list("pid comm,", 5).unwrap();
        assert_eq!(c.len(), 2);
        let c = parse_list("pid=", 5).unwrap();
        assert_eq!(names(&c), vec![("".into(), 5)]);
    }

    #[test]
    fn errors_say_which() {
        assert_eq!(
            parse_list("pid,bogus", 5).unwrap_err(),
            "unknown user-defined format specifier \"bogus\""
        );
        assert_eq!(
            parse_list("pid,,comm", 5).unwrap_err(),
            "improper format list"
        );
        assert_eq!(parse_list("", 5).unwrap_err(), "improper format list");
        assert_eq!(
            parse_list("pid:0", 5).unwrap_err(),
            "column widths must be unsigned decimal numbers"
        );
        // A header with a separator ends the list only when it is last.
        assert_eq!(
            parse_list("comm=A B,pid", 5).unwrap_err(),
            "unknown user-defined format specifier \"B\""
        );
    }

    #[test]
    fn defaults() {
        let n = |v: Vec<Column>| v.into_iter().map(|c| c.name).collect::<Vec<_>>().join(" ");
        let none = SysvFlags::default();
        let f = SysvFlags {
            full: true,
            long: false,
        };
        let l = SysvFlags {
            full: false,
            long: true,
        };
        let fl = SysvFlags {
            full: true,
            long: true,
        };
        assert_eq!(
            n(default_list(true, none, false, 5)),
            "PID TTY STAT TIME COMMAND"
        );
        assert_eq!(n(default_list(false, none, false, 5)), "PID TTY TIME CMD");
        assert_eq!(
            n(default_list(false, none, true, 5)),
            "PID LWP TTY TIME CMD"
        );
        assert_eq!(
            n(default_list(false, f, false, 5)),
            "UID PID PPID C STIME TTY TIME CMD"
        );
        assert_eq!(
            n(default_list(false, f, true, 5)),
            "UID PID PPID LWP C NLWP STIME TTY TIME CMD"
        );
        assert_eq!(
            n(default_list(false, l, false, 5)),
            "F S UID PID PPID C PRI NI ADDR SZ WCHAN TTY TIME CMD"
        );
        assert_eq!(
            n(default_list(false, fl, false, 5)),
            "F S UID PID PPID C PRI NI ADDR SZ WCHAN STIME TTY TIME CMD"
        );
        assert_eq!(
            n(bsd_user_list(5)),
            "USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND"
        );
        assert_eq!(pid_length(Some(4194304)), 7);
        assert_eq!(pid_length(None), 5);
    }
}
