//! What each column prints: the `pr_*` functions of procps-ng 4.0.2's
//! src/ps/output.c behind the [`COLUMNS`] table.

use super::charset::Charset;
use super::clock;
use super::escape::{
    bracketed_command, comm_c_locale, lib_escape, lib_escape_array, ps_escape, ESC_ALL,
};
use super::names::Names;
use super::short::{Number, Short, SHORT};
use super::tty::TtyNamer;
use super::words::first_nul;
use crate::procfs::CMDLINE_MAX;
use crate::task::{Global, Task, Wchan};
use std::io::Write;

pub use super::table::{lookup, ColumnDef, COLUMNS};

/// ps's output buffer size (`OUTBUF_SIZE`, src/ps/common.h).
pub const OUTBUF_SIZE: usize = 2 * 64 * 1024;

/// Column justification (`CF_*` in src/ps/common.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Just {
    /// `CF_LEFT`.
    Left,
    /// `CF_RIGHT`.
    Right,
    /// `CF_UNLIMITED`: may run past its width when last.
    Unlimited,
    /// `CF_WCHAN`: left-aligned text.
    Wchan,
    /// `CF_USER`: left-aligned names (ps never sets `user_is_number`
    /// without BSD `n`, which nps does not take).
    User,
}

/// What a column prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `pr_procs`: the tgid.
    Tgid,
    /// `pr_tasks`: the tid.
    Tid,
    /// `pr_ppid`.
    Ppid,
    /// `pr_pgid`.
    Pgid,
    /// `pr_sess`.
    Sid,
    /// `pr_tpgid`.
    Tpgid,
    /// `pr_euid`.
    Euid,
    /// `pr_ruid`.
    Ruid,
    /// `pr_suid`.
    Suid,
    /// `pr_fuid`.
    Fuid,
    /// `pr_egid`.
    Egid,
    /// `pr_rgid`.
    Rgid,
    /// `pr_stat`: state plus `<NLsl+`.
    Stat,
    /// `pr_s`: the state letter.
    State,
    /// `pr_vsz`: status VmSize in KiB.
    Vsz,
    /// `pr_rss`: status VmRSS in KiB.
    Rss,
    /// `pr_sz`: VmSize in pages.
    Sz,
    /// `pr_pmem`: %MEM.
    Pmem,
    /// `pr_time`: `[dd-]hh:mm:ss` of user+system time.
    Time,
    /// `pr_times`: seconds of user+system time.
    Times,
    /// `pr_bsdtime`: `mmm:ss`.
    BsdTime,
    /// `pr_nlwp`.
    Nlwp,
    /// `pr_comm`: the escaped name.
    Comm,
    /// `pr_args`: the command line, or `[comm]`.
    Args,
    /// `pr_wchan`.
    Wchan,
    /// `pr_tty8`.
    Tty,
    /// `pr_nice`.
    Nice,
    /// `pr_pri`.
    Pri,
    /// `pr_opri`.
    Opri,
    /// `pr_priority`.
    Priority,
    /// `pr_psr`.
    Psr,
    /// `pr_flag`.
    Flag,
    /// `pr_class`.
    Class,
    /// `pr_rtprio`.
    Rtprio,
    /// `pr_sched`.
    Sched,
    /// `pr_minflt`.
    MinFlt,
    /// `pr_etime`.
    Etime,
    /// `pr_etimes`.
    Etimes,
    /// `pr_pcpu`.
    Pcpu,
    /// `pr_c`.
    C,
    /// `pr_cp`.
    Cp,
    /// `pr_stime`.
    Stime,
    /// `pr_start`.
    Start,
    /// `pr_bsdstart`.
    BsdStart,
    /// `pr_lstart`.
    Lstart,
    /// `pr_nop`: a column procps cannot fill, printed as `-`.
    Nop,
    /// `pr_euser`.
    Euser,
    /// `pr_ruser`.
    Ruser,
    /// `pr_suser`.
    Suser,
    /// `pr_fuser`.
    Fuser,
    /// `pr_egroup`.
    Egroup,
    /// `pr_rgroup`.
    Rgroup,
    /// `pr_sgroup`.
    Sgroup,
    /// `pr_fgroup`.
    Fgroup,
    /// `pr_majflt`.
    MajFlt,
}

/// What printing a column may consult besides the task.
pub struct Ctx<'a> {
    /// The global block.
    pub global: &'a Global,
    /// Escaping rules.
    pub charset: Charset,
    /// Terminal names.
    pub tty: &'a mut TtyNamer,
    /// User and group names.
    pub names: &'a mut Names,
    /// `seconds_since_1970`, taken once per run.
    pub now: i64,
    /// The tree drawn before command columns (`-H`, `f`, `--forest`).
    pub forest: super::forest::Forest,
    /// BSD `e`: the environment after command columns.
    pub environ: bool,
}

impl Kind {
    /// Whether the column reads `cmdline`.
    pub fn wants_cmdline(self) -> bool {
        self == Kind::Args
    }

    /// Whether the column reads `wchan`.
    pub fn wants_wchan(self) -> bool {
        self == Kind::Wchan
    }

    /// Whether the column prints a time of day (`localtime_r`,
    /// `ctime_r`), so that the time zone must be set up first.
    pub fn wants_local_time(self) -> bool {
        matches!(
            self,
            Kind::Stime | Kind::Start | Kind::BsdStart | Kind::Lstart
        )
    }

    /// The value of a column that prints one number (`"%d"`, `"%u"`,
    /// `"%lu"`), or `None`.
    fn number(self, t: &Task, ctx: &Ctx<'_>) -> Option<Number> {
        use Number::{Signed as S, Unsigned as U};
        let ticks = || t.utime + t.stime;
        Some(match self {
            Kind::Tgid => S(t.tgid.into()),
            Kind::Tid => S(t.tid.into()),
            // pr_ppid/pr_pgid print a signed value with "%u".
            Kind::Ppid => U((t.ppid as u32).into()),
            Kind::Pgid => U((t.pgid as u32).into()),
            Kind::Sid => S(t.sid.into()),
            Kind::Tpgid => S(t.tpgid.into()),
            // pr_euid & co print an unsigned id with "%d".
            Kind::Euid => S((t.uid[1] as i32).into()),
            Kind::Ruid => S((t.uid[0] as i32).into()),
            Kind::Suid => S((t.uid[2] as i32).into()),
            Kind::Fuid => S((t.uid[3] as i32).into()),
            Kind::Egid => S((t.gid[1] as i32).into()),
            Kind::Rgid => S((t.gid[0] as i32).into()),
            Kind::Vsz => U(t.vm_size_kib),
            Kind::Rss => U(t.vm_rss_kib),
            Kind::Sz => U(t.vm_size_kib / (ctx.global.page_size / 1024).max(1)),
            Kind::Times => U(ticks() / ctx.global.hertz.max(1)),
            Kind::Nlwp => S(t.nlwp.into()),
            // pr_nice: only SCHED_OTHER (0) and SCHED_BATCH (3) have a
            // nice; the others print "-".
            Kind::Nice if matches!(t.policy, 0 | 3) => S(t.nice.into()),
            Kind::Pri => S((39 - t.priority).into()),
            Kind::Opri => S((60 + t.priority).into()),
            Kind::Priority => S(t.priority.into()),
            Kind::Psr => S(t.processor.into()),
            // "%o" of a value below 8: one octal digit.
            Kind::Flag => U((t.flags >> 6) & 7),
            // pr_rtprio: SCHED_OTHER prints "-".
            Kind::Rtprio if t.policy != 0 => U(t.rt_priority.into()),
            Kind::Sched => U(t.policy.into()),
            Kind::MinFlt => U(t.min_flt),
            Kind::MajFlt => U(t.maj_flt),
            _ => return None,
        })
    }

    /// Whether this column's cell for `t` may hold a NUL byte, where ps's
    /// `printf("%s")` of its buffer stops: only such cells are scanned for
    /// one.
    ///
    /// The others cannot: numbers and fixed text; comm, args and user and
    /// group names come out of ps_escape(), which stops at a NUL;
    /// wchan_name() cuts at the first one; a terminal's name has its
    /// controls made `?` (`abbreviate()`); dates are C strings from glibc.
    /// (`tests/hostile.rs` checks this on hostile tasks.)
    pub fn may_print_nul(self, t: &Task) -> bool {
        // The state byte is printed raw: a hostile source may send 0.
        matches!(self, Kind::Stat | Kind::State) && t.state == 0
    }

    /// Appends the value of this column for `t` to `out` and returns its
    /// width in screen cells. `max_rightward` is the room ps grants the
    /// column (its width, or the rest of the line for the last column).
    pub fn render(
        self,
        t: &Task,
        ctx: &mut Ctx<'_>,
        max_rightward: usize,
        out: &mut Vec<u8>,
    ) -> usize {
        if (ctx.forest.active() || ctx.environ) && matches!(self, Kind::Comm | Kind::Args) {
            // pr_comm(), pr_args(): the art first (forest_helper() draws
            // it in at most OUTBUF_SIZE - 1 cells), then the command in
            // the room left, then (BSD e) a blank and the environment
            // while more than one cell is left.
            let art = ctx.forest.art(max_rightward.min(OUTBUF_SIZE - 1), out);
            let forest = std::mem::take(&mut ctx.forest);
            let environ = std::mem::replace(&mut ctx.environ, false);
            let used = self.render(t, ctx, max_rightward - art, out);
            ctx.forest = forest;
            ctx.environ = environ;
            let mut room = max_rightward - art - used;
            let mut extra = 0;
            if environ && room > 1 {
                let env = environ_line(t, ctx.charset);
                if env != b"-" {
                    out.push(b' ');
                    room -= 1;
                    extra = 1 + ps_escape(out, &env, OUTBUF_SIZE, room, ctx.charset);
                }
            }
            return art + used + extra;
        }
        let mut buf = [0; SHORT];
        if let Some(n) = self.render_short(t, ctx, max_rightward, &mut buf) {
            out.extend_from_slice(&buf[..n]);
            return n;
        }
        let start = out.len();
        match self {
            Kind::Comm => {
                let (cmd, len) = lib_escape_array::<64>(&t.comm, ctx.charset);
                let cmd = cmd.get(..len).unwrap_or_default();
                return ps_escape(out, cmd, OUTBUF_SIZE, max_rightward, ctx.charset);
            }
            Kind::Args if ctx.charset == Charset::Bytes => {
                return args_c_locale(t, max_rightward, out);
            }
            Kind::Args => {
                let line = command_line(t, ctx.charset);
                return ps_escape(out, &line, OUTBUF_SIZE, max_rightward, ctx.charset);
            }
            Kind::Tty => ctx.tty.push_name(t.tty_nr, t.tid, out),
            Kind::Etime => out.extend_from_slice(clock::etime(t, ctx.global).as_bytes()),
            Kind::Etimes => out.extend_from_slice(clock::etimes(t, ctx.global).as_bytes()),
            Kind::Pcpu => out.extend_from_slice(clock::pcpu(t, ctx.global).as_bytes()),
            Kind::C => write!(out, "{:2}", clock::share(t, ctx.global, 100).min(99))
                .expect("writing to a Vec cannot fail"),
            Kind::Cp => write!(out, "{:3}", clock::share(t, ctx.global, 1000).min(999))
                .expect("writing to a Vec cannot fail"),
            Kind::Stime => out.extend_from_slice(&clock::stime(t, ctx.global, ctx.now)),
            Kind::Start => out.extend_from_slice(&clock::start(t, ctx.global, ctx.now)),
            Kind::BsdStart => out.extend_from_slice(&clock::bsdstart(t, ctx.global, ctx.now)),
            Kind::Lstart => out.extend_from_slice(&clock::lstart(t, ctx.global)),
            Kind::Euser => return name_column(ctx, t.uid[1], false, max_rightward, out),
            Kind::Ruser => return name_column(ctx, t.uid[0], false, max_rightward, out),
            Kind::Suser => return name_column(ctx, t.uid[2], false, max_rightward, out),
            Kind::Fuser => return name_column(ctx, t.uid[3], false, max_rightward, out),
            Kind::Egroup => return name_column(ctx, t.gid[1], true, max_rightward, out),
            Kind::Rgroup => return name_column(ctx, t.gid[0], true, max_rightward, out),
            Kind::Sgroup => return name_column(ctx, t.gid[2], true, max_rightward, out),
            Kind::Fgroup => return name_column(ctx, t.gid[3], true, max_rightward, out),
            _ => unreachable!("{self:?} has a short form"),
        }
        out.len() - start
    }

    /// The value of this column for `t` as a short cell: printed into
    /// `buf`, returning its length, which is also its width in screen
    /// cells. `None` when the column has no short form (or none for this
    /// task); [`Kind::render`] prints those.
    #[inline(always)]
    pub fn render_short(
        self,
        t: &Task,
        ctx: &Ctx<'_>,
        max_rightward: usize,
        buf: &mut [u8; SHORT],
    ) -> Option<usize> {
        if (ctx.forest.active() || ctx.environ) && matches!(self, Kind::Comm | Kind::Args) {
            return None;
        }
        let mut cell = Short::new(buf);
        // Most columns are one number: printed by one inlined copy of the
        // digit loop.
        if let Some(n) = self.number(t, ctx) {
            cell.number(n);
            return Some(cell.len());
        }
        let out = &mut cell;
        // snprintf-style printers: their length is their cell count.
        match self {
            Kind::Stat => stat_letters(t, out),
            Kind::State => out.byte(t.state),
            Kind::Pmem => {
                // pr_pmem: per mille of MemTotal, capped at 99.9, "%2u.%u".
                let pmem = (t.vm_rss_kib * 1000)
                    .checked_div(ctx.global.mem_total_kib)
                    .unwrap_or(0)
                    .min(999);
                out.right(pmem / 10, 2);
                out.byte(b'.');
                out.unsigned(pmem % 10);
            }
            Kind::Time => {
                // TIME_ALL is (utime+stime)/hertz as a double, truncated:
                // the same as integer division below 2^53 ticks.
                let s = (t.utime + t.stime) / ctx.global.hertz.max(1);
                let (dd, hh, mm, ss) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
                if dd != 0 {
                    out.unsigned(dd);
                    out.byte(b'-');
                }
                out.two_digits(hh);
                out.byte(b':');
                out.two_digits(mm);
                out.byte(b':');
                out.two_digits(ss);
            }
            Kind::BsdTime => {
                // "%3lu:%02u"
                let u = (t.utime + t.stime) / ctx.global.hertz.max(1);
                out.right(u / 60, 3);
                out.byte(b':');
                out.two_digits(u % 60);
            }
            // No terminal: TtyNamer::push_name()'s "?", without a lookup.
            Kind::Tty if t.tty_nr as u32 == 0 => out.byte(b'?'),
            // pr_nice: only SCHED_OTHER (0) and SCHED_BATCH (3) have a nice.
            Kind::Nice => out.byte(b'-'),
            Kind::Class => out.bytes(match t.policy {
                0 => b"TS",
                1 => b"FF",
                2 => b"RR",
                3 => b"B",
                4 => b"ISO",
                5 => b"IDL",
                6 => b"DLN",
                7 => b"#7",
                8 => b"#8",
                9 => b"#9",
                _ => b"?",
            }),
            Kind::Rtprio => out.byte(b'-'),
            Kind::Nop => out.byte(b'-'),
            Kind::Comm if ctx.charset == Charset::Bytes => {
                out.fill(|rest| comm_c_locale(&t.comm, max_rightward, rest));
            }
            Kind::Wchan => {
                // wchan_name() keeps at most 63 bytes.
                let name = wchan_name(&t.wchan);
                out.bytes(&name[..name.len().min(max_rightward)]);
            }
            _ => return None,
        }
        Some(cell.len())
    }
}

/// do_pr_name(): the escaped name when it fits; else cut to one cell less
/// plus `+` when the byte at the cut is ASCII; else the number.
fn name_column(
    ctx: &mut Ctx<'_>,
    id: u32,
    group: bool,
    max_rightward: usize,
    out: &mut Vec<u8>,
) -> usize {
    let charset = ctx.charset;
    let name = if group {
        ctx.names.group(id)
    } else {
        ctx.names.user(id)
    };
    let mut buf = Vec::new();
    let len = ps_escape(&mut buf, name, OUTBUF_SIZE, OUTBUF_SIZE, charset);
    if len <= max_rightward {
        out.extend_from_slice(&buf);
        return len;
    }
    if max_rightward >= 1 && buf.get(max_rightward - 1).is_some_and(|&b| b < 127) {
        out.extend_from_slice(&buf[..max_rightward - 1]);
        out.push(b'+');
        return max_rightward;
    }
    let s = id.to_string();
    out.extend_from_slice(s.as_bytes());
    s.len()
}

/// pr_stat(): the state letter, then `<` (nice < 0), `N` (nice > 0), `L`
/// (locked pages), `s` (session leader), `l` (threads), `+` (foreground).
fn stat_letters(t: &Task, out: &mut Short<'_>) {
    out.byte(t.state);
    if t.nice < 0 {
        out.byte(b'<');
    }
    if t.nice > 0 {
        out.byte(b'N');
    }
    if t.vm_lck_kib != 0 {
        out.byte(b'L');
    }
    if t.sid == t.tgid {
        out.byte(b's');
    }
    if t.nlwp > 1 {
        out.byte(b'l');
    }
    if t.pgid == t.tpgid {
        out.byte(b'+');
    }
}

/// lookup_wchan() (library/wchan.c): `?` when unreadable, `-` for "0", else
/// the name without a leading `.` and leading underscores, up to a NUL.
pub fn wchan_name(w: &Wchan) -> &[u8] {
    match w {
        Wchan::Unreadable => b"?",
        Wchan::Zero => b"-",
        Wchan::Symbol(raw) => {
            let raw = &raw[..raw.len().min(63)];
            let raw = &raw[..first_nul(raw).unwrap_or(raw.len())];
            if raw.is_empty() {
                return b"?";
            }
            let raw = raw.strip_prefix(b".").unwrap_or(raw);
            let skip = raw.iter().take_while(|&&b| b == b'_').count();
            &raw[skip..]
        }
    }
}

/// The args column in the C locale ([`Charset::Bytes`]): ps_escape() of
/// [`command_line`] into `max_cells`, appended to `out` in one pass
/// without the intermediate buffers. Returns the cells, which are also
/// the bytes.
///
/// In this locale each escaper maps bytes through `esc_all_byte()`, whose
/// output (printable ASCII) the next one keeps as it is; what remains of
/// fill_cmdline_cvt() is which bytes make the line and that NULs and
/// newlines among them become spaces.
pub fn args_c_locale(t: &Task, max_cells: usize, out: &mut Vec<u8>) -> usize {
    // ps_escape(): nothing in no room, and at most bufsize - 1 bytes.
    let cells = max_cells.min(OUTBUF_SIZE - 1);
    if cells == 0 {
        return 0;
    }
    let raw = t.cmdline.as_deref().unwrap_or_default();
    let n = raw.len().min(CMDLINE_MAX - 1);
    if n == 0 {
        return bracketed_c_locale(t, cells, out);
    }
    let raw = &raw[..n];
    // Trailing NULs stay NULs and end the string; else a last space (or
    // newline, made a space) is dropped.
    let kept = raw.len() - raw.iter().rev().take_while(|&&b| b == 0).count();
    let line = match raw[n - 1] {
        _ if kept < n => &raw[..kept],
        b' ' | b'\n' => &raw[..n - 1],
        _ => raw,
    };
    if line.is_empty() {
        out.push(b'?');
        return 1;
    }
    let line = &line[..line.len().min(cells)];
    out.extend(line.iter().map(|&b| match b {
        0 | b'\n' => b' ',
        _ => ESC_ALL[usize::from(b)],
    }));
    line.len()
}

/// [`args_c_locale`] of a task without a command line: `[comm]`, and
/// ` <defunct>` after it for a zombie, cut to `cells` (> 0).
fn bracketed_c_locale(t: &Task, cells: usize, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.push(b'[');
    let mut name = [0; 64];
    let len = comm_c_locale(&t.comm, 63, &mut name);
    out.extend_from_slice(&name[..len]);
    out.push(b']');
    if t.state == b'Z' {
        out.extend_from_slice(b" <defunct>");
    }
    out.truncate(start + cells.min(out.len() - start));
    out.len() - start
}

/// read_unvectored() (library/readproc.c) of a file's first `n` bytes
/// (n > 0), then libproc2's escape: NULs and newlines before the trailing
/// NULs become spaces, a last space is dropped.
fn unvectored(raw: &[u8], charset: Charset) -> Vec<u8> {
    let n = raw.len();
    let mut dst = raw.to_vec();
    let mut i = n;
    while i > 0 && dst[i - 1] == 0 {
        i -= 1;
    }
    for b in &mut dst[..i] {
        if *b == b'\n' || *b == 0 {
            *b = b' ';
        }
    }
    if dst[n - 1] == b' ' {
        dst[n - 1] = 0;
    }
    lib_escape(&dst, CMDLINE_MAX, charset)
}

/// fill_environ_cvt() (library/readproc.c): the environment as
/// `unvectored()` makes it, or `-` when there is none (or it could not be
/// read).
pub fn environ_line(t: &Task, charset: Charset) -> Vec<u8> {
    let raw = t.environ.as_deref().unwrap_or_default();
    let n = raw.len().min(CMDLINE_MAX - 1);
    let line = if n == 0 {
        Vec::new()
    } else {
        unvectored(&raw[..n], charset)
    };
    if line.is_empty() {
        b"-".to_vec()
    } else {
        line
    }
}

/// fill_cmdline_cvt() (library/readproc.c): the command line with NULs and
/// newlines as spaces (`read_unvectored()`), escaped; `[comm]` when there
/// is none; `?` when that is empty too.
pub fn command_line(t: &Task, charset: Charset) -> Vec<u8> {
    let raw = t.cmdline.as_deref().unwrap_or_default();
    // read_unvectored() filled a MAX_BUFSZ buffer: the last byte makes room
    // for the NUL.
    let n = raw.len().min(CMDLINE_MAX - 1);
    let line = if n == 0 {
        let comm = lib_escape(&t.comm, 64, charset);
        bracketed_command(&comm, t.state == b'Z', CMDLINE_MAX, charset)
    } else {
        unvectored(&raw[..n], charset)
    };
    if line.is_empty() {
        b"?".to_vec()
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn global() -> Global {
        Global {
            hertz: 100,
            page_size: 4096,
            boot_time: 0,
            mem_total_kib: 1000,
            uptime_centis: 0,
            pid_max: Some(32768),
        }
    }

    fn show(kind: Kind, t: &Task, room: usize) -> (String, usize) {
        let mut out = Vec::new();
        let cells =
            super::super::with_test_ctx(&global(), |ctx| kind.render(t, ctx, room, &mut out));
        (String::from_utf8(out).unwrap(), cells)
    }

    fn task() -> Task {
        let mut t = Task::empty(100, 100);
        t.comm = b"sleep".to_vec();
        t.state = b'S';
        t
    }

    #[test]
    fn stat_flags_in_procps_order() {
        let mut t = task();
        t.sid = 100;
        t.pgid = 100;
        t.tpgid = 100;
        t.nice = -5;
        t.nlwp = 3;
        t.vm_lck_kib = 4;
        assert_eq!(show(Kind::Stat, &t, 4).0, "S<Lsl+");
        t.nice = 19;
        t.sid = 1;
        t.tpgid = -1;
        t.nlwp = 1;
        t.vm_lck_kib = 0;
        assert_eq!(show(Kind::Stat, &t, 4).0, "SN");
    }

    #[test]
    fn times() {
        let mut t = task();
        t.utime = 100 * 86400 + 100 * 3723;
        t.stime = 50;
        assert_eq!(show(Kind::Time, &t, 8).0, "1-01:02:03");
        assert_eq!(show(Kind::BsdTime, &t, 6).0, "1502:03");
        t.utime = 0;
        t.stime = 99;
        assert_eq!(show(Kind::Time, &t, 8).0, "00:00:00");
        assert_eq!(show(Kind::BsdTime, &t, 6).0, "  0:00");
    }

    #[test]
    fn wchan_rules() {
        assert_eq!(wchan_name(&Wchan::Zero), b"-");
        assert_eq!(wchan_name(&Wchan::Unreadable), b"?");
        assert_eq!(
            wchan_name(&Wchan::Symbol(b"__x64_sys_pause".to_vec())),
            b"x64_sys_pause"
        );
        assert_eq!(wchan_name(&Wchan::Symbol(b".__foo".to_vec())), b"foo");
        let mut t = task();
        t.wchan = Wchan::Symbol(b"do_nanosleep".to_vec());
        assert_eq!(show(Kind::Wchan, &t, 6), ("do_nan".into(), 6));
    }

    #[test]
    fn args_and_brackets() {
        let mut t = task();
        t.cmdline = Some(b"sleep\x001000\x00".to_vec());
        assert_eq!(show(Kind::Args, &t, 100).0, "sleep 1000");
        assert_eq!(show(Kind::Args, &t, 7), ("sleep 1".into(), 7));
        t.cmdline = Some(b"a\nb".to_vec());
        assert_eq!(show(Kind::Args, &t, 100).0, "a b");
        t.cmdline = Some(Vec::new());
        assert_eq!(show(Kind::Args, &t, 100).0, "[sleep]");
        t.state = b'Z';
        assert_eq!(show(Kind::Args, &t, 100).0, "[sleep] <defunct>");
        t.cmdline = Some(b"\0".to_vec());
        assert_eq!(show(Kind::Args, &t, 100).0, "?");
    }

    #[test]
    fn numbers_as_procps_prints_them() {
        let mut t = task();
        t.policy = 1;
        t.rt_priority = 50;
        t.priority = -51;
        assert_eq!(show(Kind::Nice, &t, 3).0, "-");
        assert_eq!(show(Kind::Class, &t, 3).0, "FF");
        assert_eq!(show(Kind::Rtprio, &t, 6).0, "50");
        assert_eq!(show(Kind::Pri, &t, 3).0, "90");
        t.uid = [0, u32::MAX, 0, 0];
        assert_eq!(show(Kind::Euid, &t, 5).0, "-1");
        t.ppid = -1;
        assert_eq!(show(Kind::Ppid, &t, 5).0, "4294967295");
        t.flags = 0x40 | 0x100;
        assert_eq!(show(Kind::Flag, &t, 1).0, "5");
        t.vm_rss_kib = 123;
        assert_eq!(show(Kind::Pmem, &t, 4).0, "12.3");
        assert_eq!(show(Kind::Tty, &t, 8).0, "?");
    }

    fn arg_bytes(n: usize) -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            Just(0u8),
            Just(b' '),
            Just(b'\n'),
            Just(b'a'),
            Just(0x7f),
            Just(0xe9),
            any::<u8>()
        ];
        proptest::collection::vec(byte, 0..n)
    }

    proptest! {
        /// The C locale's one pass prints what command_line() and
        /// ps_escape() print.
        #[test]
        fn args_in_the_c_locale_as_both_escapers(
            cmdline in proptest::option::of(arg_bytes(120)),
            comm in arg_bytes(80),
            zombie in any::<bool>(),
            cells in prop_oneof![0usize..30, Just(OUTBUF_SIZE - 1)],
        ) {
            let mut t = task();
            t.cmdline = cmdline;
            t.comm = comm;
            if zombie {
                t.state = b'Z';
            }
            let line = command_line(&t, Charset::Bytes);
            let mut want = b"x".to_vec();
            let want_cells = ps_escape(&mut want, &line, OUTBUF_SIZE, cells, Charset::Bytes);
            let mut got = b"x".to_vec();
            let got_cells = args_c_locale(&t, cells, &mut got);
            prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
            prop_assert_eq!(got_cells, want_cells);
        }
    }

    #[test]
    fn names_fit_or_get_a_plus() {
        let mut t = task();
        t.uid = [0; 4];
        assert_eq!(show(Kind::Euser, &t, 8), ("root".into(), 4));
        assert_eq!(show(Kind::Euser, &t, 3), ("ro+".into(), 3));
        t.uid = [4_000_000_000; 4];
        // pwcache names an unknown id by its number, which is then cut
        // like any name.
        assert_eq!(show(Kind::Ruser, &t, 10).0, "4000000000");
        assert_eq!(show(Kind::Ruser, &t, 8).0, "4000000+");
    }
}
