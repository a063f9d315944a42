//! Format and sort lists: a port of procps-ng 4.0.2's src/ps/sortformat.c
//! (`process_sf_options()`, `format_parse()`, the sort parsers,
//! `generate_sysv_list()`) for the default personality.
//!
//! Lists are kept in screen order (ps builds them backwards and reverses
//! them); what nps cannot print is recorded in [`Formats::unsupported`]
//! rather than refused here, so that ps's own errors keep their precedence.

use crate::parser::{ff, fm, tf, Options, SfCode};
use crate::render::known::{known, Print};
use crate::render::spec::{by_printer, macro_spec, one_spec};
use crate::render::{Column, Just, Kind};
use crate::sort::{supported, SortKey};

/// One column being built (`format_node`): its width is settled once
/// pid_max is known ([`Formats::columns`]).
#[derive(Clone, Debug)]
struct Node {
    col: Column,
    /// `CF_PIDMAX` and no `:width`: widened to pid_max's digits.
    pidmax: bool,
    /// Which lines of `-m` print it.
    print: Print,
}

/// The outcome of `process_sf_options()`.
#[derive(Clone, Debug, Default)]
pub struct Formats {
    nodes: Vec<Node>,
    /// The sort keys, in the order ps applies them (the last is primary).
    pub sort: Vec<SortKey>,
    /// Specifiers ps knows and nps cannot print or sort by.
    pub unsupported: Vec<String>,
}

/// What persists between ps's two parse passes: `format_parse()`'s static
/// error buffer (the first unknown specifier named stays named) and the
/// warnings already printed.
#[derive(Debug, Default)]
pub struct SfState {
    errbuf: Option<String>,
    /// ps's `catastrophic_failure()`: it ends ps at once (no second pass)
    /// with `ARGV0:src/ps/sortformat.c:LINE: MESSAGE` and status 1.
    pub fatal: Option<(u32, &'static str)>,
    /// `$PS_FORMAT ignored` warnings, in the order ps prints them.
    pub warnings: Vec<String>,
}

impl SfState {
    /// Records a catastrophic_failure() at `line` of sortformat.c.
    fn fatal(&mut self, line: u32, msg: &'static str) -> String {
        self.fatal = Some((line, msg));
        msg.to_string()
    }
}

impl Formats {
    /// The columns, with pid-like widths settled for `pid_len` digits.
    pub fn columns(&self, pid_len: usize) -> Vec<Column> {
        self.nodes
            .iter()
            .map(|n| {
                let mut c = n.col.clone();
                if n.pidmax {
                    c.width = c.width.max(pid_len);
                }
                c
            })
            .collect()
    }

    /// The columns as `-m`'s process lines (`thread` false) or thread
    /// lines print them: the other kind's columns print `-`.
    pub fn columns_for(&self, pid_len: usize, thread: bool) -> Vec<Column> {
        let mut cols = self.columns(pid_len);
        for (c, n) in cols.iter_mut().zip(&self.nodes) {
            let blank = match n.print {
                Print::Thread => !thread,
                Print::Process => thread,
                Print::Every | Print::AsNeeded => false,
            };
            if blank {
                c.kind = Kind::Nop;
            }
        }
        cols
    }

    fn push_spec(&mut self, spec: &str) {
        let nodes = do_one_spec(spec, None, &mut self.unsupported)
            .expect("ps's own format names are in its table");
        self.nodes.splice(0..0, nodes);
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.col.name == name.as_bytes())
    }

    /// fmt_add_after().
    fn add_after(&mut self, find: &str, spec: &str) -> bool {
        let Some(i) = self.find(find) else {
            return false;
        };
        let nodes = do_one_spec(spec, None, &mut self.unsupported)
            .expect("ps's own format names are in its table");
        self.nodes.splice(i + 1..i + 1, nodes);
        true
    }

    /// fmt_delete().
    fn delete(&mut self, name: &str) -> bool {
        match self.find(name) {
            Some(i) => {
                self.nodes.remove(i);
                true
            }
            None => false,
        }
    }
}

/// do_one_spec(): a specifier (nps's column, or a placeholder recorded as
/// unsupported), else a macro's columns, else `None`.
fn do_one_spec(
    spec: &str,
    header: Option<&[u8]>,
    unsupported: &mut Vec<String>,
) -> Option<Vec<Node>> {
    if let Some(row) = known(spec) {
        let (col, pidmax) = match one_spec(spec, header).or_else(|| by_printer(row, header)) {
            Some(c) => c,
            None => {
                if !unsupported.iter().any(|s| s == spec) {
                    unsupported.push(spec.to_string());
                }
                let name = header.unwrap_or(row.head.as_bytes()).to_vec();
                let width = row.width.max(name.len());
                let col = Column {
                    name,
                    width,
                    just: Just::Right,
                    kind: Kind::Nop,
                };
                (col, false)
            }
        };
        return Some(vec![Node {
            col,
            pidmax,
            print: row.print,
        }]);
    }
    let list = macro_spec(spec)?;
    let mut out = Vec::new();
    for item in list.split([',', ' ']) {
        out.extend(do_one_spec(item, header, unsupported)?);
    }
    Some(out)
}

fn is_sep(b: u8) -> bool {
    matches!(b, b' ' | b',' | b'\t' | b'\n')
}

/// format_parse(): `spec[:width][=header]` items; one trailing separator
/// allowed; only the last header may hold separators. On an unknown
/// specifier with a `%` in the list, the AIX parse decides.
fn format_parse(
    list: &[u8],
    state: &mut SfState,
    unsupported: &mut Vec<String>,
) -> Result<Vec<Node>, String> {
    let mut out = Vec::new();
    let err = match format_items(list, state, unsupported, &mut out) {
        Ok(()) => return Ok(out),
        Err(e) => e,
    };
    if list.contains(&b'%') {
        aix_check(list)?;
        // The AIX descriptors name ordinary columns, but its literal text
        // columns have no printer in nps.
        unsupported.push(format!("AIX format '{}'", String::from_utf8_lossy(list)));
        return Ok(out);
    }
    Err(err)
}

fn format_items(
    list: &[u8],
    state: &mut SfState,
    unsupported: &mut Vec<String>,
    out: &mut Vec<Node>,
) -> Result<(), String> {
    let mut need_item = true;
    let mut items = 0;
    // do { switch (*walk) } while (*++walk): the first byte is looked at
    // even when it is the terminating NUL.
    let mut i = 0;
    loop {
        let b = list.get(i).copied().unwrap_or(0);
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
        if list.get(i).copied().unwrap_or(0) == 0 {
            break;
        }
    }
    // A NUL inside an argument cannot happen (argv strings end there).
    let mut buf = list;
    if need_item {
        buf = &list[..list.len() - 1];
    }
    let mut walk = Some(buf);
    while items > 0 {
        items -= 1;
        let w = walk.ok_or("improper format list")?;
        let sep = w.iter().position(|&b| is_sep(b));
        let (item, rest) = match sep {
            Some(p) if items > 0 => (&w[..p], Some(&w[p + 1..])),
            Some(p) => (w, Some(&w[p + 1..])),
            None => (w, None),
        };
        let (name_part, header) = match item.iter().position(|&b| b == b'=') {
            Some(p) => (&item[..p], Some(&item[p + 1..])),
            None => (item, None),
        };
        let (spec, width) = match name_part.iter().position(|&b| b == b':') {
            Some(p) => {
                let wd = &name_part[p + 1..];
                let ok = !wd.is_empty()
                    && wd.iter().all(u8::is_ascii_digit)
                    && wd[0] != b'0'
                    && atoi(wd) > 0;
                if !ok {
                    return Err("column widths must be unsigned decimal numbers".into());
                }
                (&name_part[..p], Some(atoi(wd) as usize))
            }
            None => (name_part, None),
        };
        let spec_s = String::from_utf8_lossy(spec);
        let Some(mut nodes) = do_one_spec(&spec_s, header, unsupported) else {
            let e = state.errbuf.get_or_insert_with(|| {
                // snprintf into ps's 80-byte buffer.
                let mut m = format!("unknown user-defined format specifier \"{spec_s}\"");
                if m.len() > 79 {
                    let mut cut = 79;
                    while !m.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    m.truncate(cut);
                }
                m
            });
            return Err(e.clone());
        };
        if let Some(w) = width {
            if nodes.len() > 1 {
                return Err("can not set width for a macro (multi-column) format specifier".into());
            }
            nodes[0].col.width = w;
            nodes[0].pidmax = false;
        }
        out.extend(nodes);
        walk = rest;
    }
    Ok(())
}

/// atoi() of an all-digit string: saturating at `int`, as glibc's strtol
/// cast to int is for the values that pass ps's `atoi(...) <= 0` test.
fn atoi(digits: &[u8]) -> i64 {
    let mut v: i64 = 0;
    for &d in digits {
        v = v.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    // glibc's atoi is (int)strtol: values past LONG_MAX saturate, then
    // the cast keeps the low 32 bits.
    (v as i32).into()
}

/// aix_format_parse()'s checks: `%` descriptors from its table, or single
/// text characters followed by blanks.
fn aix_check(list: &[u8]) -> Result<(), String> {
    const AIX: &[u8] = b"CGPUacgnprtuxyz";
    let at = |i: usize| list.get(i).copied().unwrap_or(0);
    let mut i = 0;
    let mut c = at(i);
    i += 1;
    let mut items = 0;
    'initial: loop {
        if c == b'%' {
            // get_desc
            items += 1;
            c = at(i);
            i += 1;
            if c != 0 && c != b' ' {
                continue 'initial;
            }
            return Err("missing AIX field descriptor".into());
        }
        if c == 0 {
            break;
        }
        items += 1;
        loop {
            c = at(i);
            i += 1;
            if c == b'%' {
                continue 'initial;
            }
            if c == b' ' {
                continue;
            }
            if c != 0 {
                return Err("improper AIX field descriptor".into());
            }
            break 'initial;
        }
    }
    // The parse proper: each '%' is followed by a descriptor letter.
    let mut w = 0;
    while items > 0 {
        items -= 1;
        if at(w) == b'%' {
            w += 1;
            if at(w) == b'%' {
                return Err("missing AIX field descriptor".into());
            }
            if !AIX.contains(&at(w)) {
                return Err("unknown AIX field descriptor".into());
            }
            w += 1;
        } else {
            while w < list.len() && list[w] != b'%' {
                w += 1;
            }
        }
    }
    Ok(())
}

/// do_one_sort_spec(): `[+|-]spec`.
fn one_sort_spec(spec: &[u8]) -> Option<SortKey> {
    let (order, name) = match spec.first() {
        Some(b'-') => (-1, &spec[1..]),
        Some(b'+') => (1, &spec[1..]),
        _ => (1, spec),
    };
    let row = known(std::str::from_utf8(name).ok()?)?;
    Some(SortKey { row, order })
}

/// long_sort_parse(): the keys in application order (last given first).
fn long_sort_parse(list: &[u8]) -> Result<Vec<SortKey>, String> {
    let mut need_item = true;
    let mut items = 0;
    let mut i = 0;
    loop {
        let b = list.get(i).copied().unwrap_or(0);
        if b == 0 || is_sep(b) {
            if need_item {
                return Err("improper sort list".into());
            }
            need_item = true;
        } else {
            if need_item {
                items += 1;
            }
            need_item = false;
        }
        i += 1;
        if list.get(i).copied().unwrap_or(0) == 0 {
            break;
        }
    }
    let buf = if need_item {
        &list[..list.len() - 1]
    } else {
        list
    };
    let mut keys = Vec::new();
    for item in buf.splitn(items, |&b| is_sep(b)).take(items) {
        keys.push(one_sort_spec(item).ok_or("unknown sort specifier")?);
    }
    keys.reverse();
    Ok(keys)
}

/// shortsort_array.
fn short_sort_spec(c: u8) -> Option<&'static str> {
    Some(match c {
        b'C' => "pcpu",
        b'G' => "tpgid",
        b'J' => "cstime",
        b'M' => "maj_flt",
        b'N' => "cmaj_flt",
        b'P' => "ppid",
        b'R' => "resident",
        b'S' => "share",
        b'T' => "start_time",
        b'U' => "uid",
        b'c' => "cmd",
        b'f' => "flags",
        b'g' => "pgrp",
        b'j' => "cutime",
        b'k' => "utime",
        b'm' => "min_flt",
        b'n' => "cmin_flt",
        b'o' => "session",
        b'p' => "pid",
        b'r' => "rss",
        b's' => "size",
        b't' => "tty",
        b'u' => "user",
        b'v' => "vsize",
        b'y' => "priority",
        _ => return None,
    })
}

/// verify_short_sort().
fn verify_short_sort(arg: &[u8], forest: bool) -> Result<(), String> {
    const ALL: &[u8] = b"CGJKMNPRSTUcfgjkmnoprstuvy+-";
    let bad = || Err("bad sorting code".to_string());
    if !arg.iter().all(|b| ALL.contains(b)) {
        return bad();
    }
    let mut seen = [false; 256];
    for (i, &c) in arg.iter().enumerate() {
        match c {
            b'+' | b'-' => match arg.get(i + 1) {
                None | Some(b'+' | b'-') => return bad(),
                _ => {}
            },
            _ => {
                if c == b'P' && forest {
                    return Err("PPID sort and forest output conflict".into());
                }
                if seen[c as usize] {
                    return bad();
                }
                seen[c as usize] = true;
            }
        }
    }
    Ok(())
}

/// short_sort_parse(): stops quietly at a letter it cannot map (ps
/// ignores its error). After the first key, a key without its own sign
/// gets order 0.
fn short_sort_parse(arg: &[u8]) -> Vec<SortKey> {
    let mut direction = 1;
    let mut keys = Vec::new();
    for &c in arg {
        match c {
            b'+' => direction = 1,
            b'-' => direction = -1,
            _ => {
                let Some(mut key) = short_sort_spec(c).and_then(|s| one_sort_spec(s.as_bytes()))
                else {
                    break;
                };
                key.order = direction;
                keys.push(key);
                direction = 0;
            }
        }
    }
    keys.reverse();
    keys
}

/// O_wrap(): PID, the user's columns, then the trailer.
fn o_wrap(user: Vec<Node>, bsd: bool, unsupported: &mut Vec<String>) -> Vec<Node> {
    let trailer = if bsd { "END_BSD" } else { "END_SYS5" };
    let mut out = do_one_spec("pid", None, unsupported).expect("pid is a column");
    out.extend(user);
    out.extend(do_one_spec(trailer, None, unsupported).expect("trailers are macros"));
    out
}

/// process_sf_options() for the default personality.
pub fn process_sf_options(o: &Options, state: &mut SfState) -> Result<Formats, String> {
    let mut f = Formats::default();
    let have_gnu_sort = o.sf_list.iter().any(|(_, c)| *c == SfCode::Sort);
    let mut parsed_sort = false;
    let mut parsed_format = false;
    let mut lists: Vec<Node> = Vec::new();
    let mut sort: Vec<SortKey> = Vec::new();
    let unsupported = &mut f.unsupported;
    for (arg, code) in &o.sf_list {
        match code {
            SfCode::BsdLowerO | SfCode::Format | SfCode::LowerO => {
                lists.extend(format_parse(arg, state, unsupported)?);
                parsed_format = true;
            }
            SfCode::UpperO => {
                if parsed_format {
                    return Err("option -O can not follow other format options".into());
                }
                let user = format_parse(arg, state, unsupported)?;
                parsed_format = true;
                lists.extend(o_wrap(user, false, unsupported));
            }
            SfCode::BsdO => {
                let err = if have_gnu_sort || parsed_sort {
                    Err("multiple sort options".to_string())
                } else {
                    verify_short_sort(arg, o.forest_type != 0)
                };
                let err = match err {
                    Ok(()) => {
                        sort = short_sort_parse(arg);
                        parsed_sort = true;
                        continue;
                    }
                    Err(e) => e,
                };
                if parsed_format {
                    return Err("option O is neither first format nor sort order".into());
                }
                match format_parse(arg, state, unsupported) {
                    Ok(user) => {
                        parsed_format = true;
                        lists.extend(o_wrap(user, true, unsupported));
                    }
                    Err(_) => return Err(err),
                }
            }
            SfCode::Sort => {
                if parsed_sort {
                    return Err("multiple sort options".into());
                }
                sort = long_sort_parse(arg)?;
                parsed_sort = true;
            }
        }
    }
    for key in &sort {
        if supported(key.row.sort).is_none() {
            unsupported.push(format!("sort key '{}'", key.row.spec));
        }
    }
    f.sort = sort;
    if o.format_flags == 0 && o.format_modifiers == 0 && lists.is_empty() {
        if let Some(env) = std::env::var_os("PS_FORMAT").filter(|v| !v.is_empty()) {
            if o.thread_flags & tf::MUST_USE != 0 {
                return Err(
                    "tell <procps@freelists.org> what you want (-L/-T, -m/m/H, and $PS_FORMAT)"
                        .into(),
                );
            }
            use std::os::unix::ffi::OsStrExt;
            let mut scratch = Vec::new();
            match format_parse(env.as_bytes(), state, &mut scratch) {
                Ok(nodes) => {
                    f.unsupported.extend(scratch);
                    f.nodes = nodes;
                    return Ok(f);
                }
                Err(e) => state
                    .warnings
                    .push(format!("warning: $PS_FORMAT ignored. ({e})")),
            }
        }
    }
    if !lists.is_empty() {
        if o.format_flags != 0 {
            return Err("conflicting format options".into());
        }
        if o.format_modifiers != 0 {
            return Err("can not use output modifiers with user-defined output".into());
        }
        if o.thread_flags & tf::MUST_USE != 0 {
            return Err("-L/-T with H/m/-m and -o/-O/o/O is nonsense".into());
        }
        f.nodes = lists;
        return Ok(f);
    }
    let spec = match o.format_flags {
        0 | ff::UF | ff::UL => None,
        x if x == ff::UF | ff::UL => None,
        ff::BJ => Some("OL_j"),
        ff::BL => Some("OL_l"),
        ff::BS => Some("OL_s"),
        ff::BU => Some("OL_u"),
        ff::BV => Some("OL_v"),
        ff::LX => Some("OL_X"),
        ff::LM => Some("OL_m"),
        ff::FC => Some("FLASK_context"),
        _ => return Err("conflicting format options".into()),
    };
    let Some(spec) = spec else {
        generate_sysv_list(o, &mut f)?;
        return Ok(f);
    };
    f.push_spec(spec);
    modifiers(o, &mut f, state)?;
    Ok(f)
}

/// The modifiers applied to a named format (the tail of
/// process_sf_options()).
fn modifiers(o: &Options, f: &mut Formats, state: &mut SfState) -> Result<(), String> {
    let m = o.format_modifiers;
    if m & fm::J != 0 {
        if !f.add_after("PPID", "pgid") && !f.add_after("PID", "pgid") {
            return Err(state.fatal(885, "internal error: no PID or PPID for -j option"));
        }
        if !f.add_after("PGID", "sid") {
            return Err("lost my PGID".into());
        }
    }
    if m & fm::Y != 0 {
        f.delete("F");
        if f.add_after("ADDR", "rss") {
            f.delete("ADDR");
        }
    }
    if m & fm::C != 0 {
        for name in ["%CPU", "CPU", "CP", "C", "NI"] {
            f.delete(name);
        }
        if !f.add_after("PRI", "class") {
            return Err(state.fatal(900, "internal error: no PRI for -c option"));
        }
        f.delete("PRI");
        if !f.add_after("CLS", "pri") {
            return Err("lost my CLS".into());
        }
    }
    let t = o.thread_flags;
    if t & tf::U_T != 0 && !f.add_after("PID", "spid") && t & tf::MUST_USE != 0 {
        return Err("-T with H/-m/m but no PID for SPID to follow".into());
    }
    if t & tf::U_L != 0 {
        let placed = ["SID", "SESS", "PGID", "PGRP", "PPID", "PID"]
            .iter()
            .any(|n| f.add_after(n, "lwp"));
        if !placed && t & tf::MUST_USE != 0 {
            return Err("-L with H/-m/m but no PID/PGID/SID/SESS for NLWP to follow".into());
        }
        if placed {
            f.add_after("%CPU", "nlwp");
        }
    }
    if m & fm::M != 0 {
        f.push_spec("label");
    }
    Ok(())
}

/// generate_sysv_list() for the default personality, in screen order.
fn generate_sysv_list(o: &Options, f: &mut Formats) -> Result<(), String> {
    let (flags, m, t) = (o.format_flags, o.format_modifiers, o.thread_flags);
    if m & fm::Y != 0 && flags & ff::UL == 0 {
        return Err("modifier -y without format -l makes no sense".into());
    }
    let mut rev: Vec<&str> = Vec::new();
    if o.prefer_bsd_defaults {
        rev.push(if flags != 0 { "cmd" } else { "args" });
        rev.push("bsdtime");
        if flags & ff::UL == 0 {
            rev.push("stat");
        }
    } else {
        rev.push(if flags & ff::UF != 0 { "cmd" } else { "ucmd" });
        rev.push("time");
    }
    rev.push("tname");
    if flags & ff::UF != 0 {
        rev.push("stime");
    }
    if m & fm::F != 0 {
        if m & fm::P == 0 {
            rev.push("psr");
        }
        if !(flags & ff::UL != 0 && m & fm::Y != 0) {
            rev.push("rss");
        }
    }
    if flags & ff::UL != 0 {
        rev.push("wchan");
    }
    if m & fm::F != 0 || flags & ff::UL != 0 {
        rev.push("sz");
    }
    if flags & ff::UL != 0 {
        rev.push(if m & fm::Y != 0 { "rss" } else { "addr_1" });
    }
    if m & fm::C != 0 {
        rev.push("pri");
        rev.push("class");
    } else if flags & ff::UL != 0 {
        rev.push("ni");
        rev.push("opri");
    }
    if t & tf::U_L != 0 && flags & ff::UF != 0 {
        rev.push("nlwp");
    }
    if flags & (ff::UF | ff::UL) != 0 && m & fm::C == 0 {
        rev.push("c");
    }
    if m & fm::P != 0 {
        rev.push("psr");
    }
    if t & tf::U_L != 0 {
        rev.push("lwp");
    }
    if m & fm::J != 0 {
        rev.push("sid");
        rev.push("pgid");
    }
    if flags & (ff::UF | ff::UL) != 0 {
        rev.push("ppid");
    }
    if t & tf::U_T != 0 {
        rev.push("spid");
    }
    rev.push("pid");
    if flags & ff::UF != 0 {
        rev.push("uid_hack");
    } else if flags & ff::UL != 0 {
        rev.push("uid");
    }
    if flags & ff::UL != 0 {
        rev.push("s");
        if m & fm::Y == 0 {
            rev.push("f");
        }
    }
    if m & fm::M != 0 {
        rev.push("label");
    }
    for spec in rev {
        f.push_spec(spec);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::{arg_parse, Parsed};

    fn formats(args: &[&str]) -> Result<Formats, String> {
        let mut v = vec![b"ps".to_vec()];
        v.extend(args.iter().map(|a| a.as_bytes().to_vec()));
        let mut state = SfState::default();
        let mut out = None;
        let r = arg_parse(&v, &mut |o: &mut Options| {
            out = Some(process_sf_options(o, &mut state)?);
            Ok(())
        });
        match r {
            Ok(Parsed::Run(_)) => Ok(out.unwrap()),
            Ok(p) => Err(format!("{p:?}")),
            Err(e) => Err(e.0),
        }
    }

    fn heads(args: &[&str]) -> String {
        let f = formats(args).unwrap();
        f.columns(5)
            .iter()
            .map(|c| String::from_utf8_lossy(&c.name).into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn default_formats() {
        assert_eq!(heads(&[]), "PID TTY TIME CMD");
        assert_eq!(heads(&["ax"]), "PID TTY STAT TIME COMMAND");
        assert_eq!(heads(&["-ef"]), "UID PID PPID C STIME TTY TIME CMD");
        assert_eq!(
            heads(&["-eF"]),
            "UID PID PPID C SZ RSS PSR STIME TTY TIME CMD"
        );
        assert_eq!(
            heads(&["-ely"]),
            "S UID PID PPID C PRI NI RSS SZ WCHAN TTY TIME CMD"
        );
        assert_eq!(heads(&["-j"]), "PID PGID SID TTY TIME CMD");
        assert_eq!(
            heads(&["-eLf"]),
            "UID PID PPID LWP C NLWP STIME TTY TIME CMD"
        );
        assert_eq!(heads(&["-T"]), "PID SPID TTY TIME CMD");
        assert_eq!(
            heads(&["aux"]),
            "USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND"
        );
        assert_eq!(
            heads(&["axj"]),
            "PPID PID PGID SID TTY TPGID STAT UID TIME COMMAND"
        );
        assert_eq!(heads(&["-O", "rss"]), "PID RSS S TTY TIME COMMAND");
        assert_eq!(heads(&["O", "rss"]), "PID RSS S TTY TIME COMMAND");
        assert_eq!(
            heads(&["-lc"]),
            "F S UID PID PPID CLS PRI ADDR SZ WCHAN TTY TIME CMD"
        );
        assert_eq!(heads(&["u", "-L"]).split(' ').nth(2), Some("LWP"));
    }

    #[test]
    fn sort_lists() {
        let f = formats(&["--sort=-rss,pid"]).unwrap();
        let keys: Vec<_> = f.sort.iter().map(|k| (k.row.spec, k.order)).collect();
        assert_eq!(keys, vec![("pid", 1), ("rss", -1)]);
        let f = formats(&["k", "-rss"]).unwrap();
        assert_eq!(f.sort.len(), 1);
        let f = formats(&["O", "pr"]).unwrap();
        let keys: Vec<_> = f.sort.iter().map(|k| (k.row.spec, k.order)).collect();
        assert_eq!(keys, vec![("rss", 0), ("pid", 1)]);
        assert_eq!(
            formats(&["--sort", "nope"]).unwrap_err(),
            "unknown sort specifier"
        );
        assert_eq!(
            formats(&["--sort", "pid", "k", "rss"]).unwrap_err(),
            "multiple sort options"
        );
    }

    #[test]
    fn errors_and_refusals() {
        assert_eq!(
            formats(&["-o", "pid,nope"]).unwrap_err(),
            "unknown user-defined format specifier \"nope\""
        );
        assert_eq!(
            formats(&["u", "-l"]).unwrap_err(),
            "conflicting format options"
        );
        assert_eq!(
            formats(&["-y"]).unwrap_err(),
            "modifier -y without format -l makes no sense"
        );
        assert_eq!(
            formats(&["-o", "DefSysV:5"]).unwrap_err(),
            "can not set width for a macro (multi-column) format specifier"
        );
        let f = formats(&["-o", "pid,label,cgroup"]).unwrap();
        assert_eq!(f.unsupported, vec!["label", "cgroup"]);
        assert_eq!(heads(&["-o", "DefSysV"]), "PID TTY TIME CMD");
        assert!(formats(&["-o", "%p"]).unwrap().unsupported[0].starts_with("AIX"));
        // ps ends at once on these (catastrophic_failure()).
        assert_eq!(
            formats(&["u", "-c"]).unwrap_err(),
            "internal error: no PRI for -c option"
        );
        assert_eq!(
            formats(&["-o", "%q"]).unwrap_err(),
            "unknown AIX field descriptor"
        );
    }
}
