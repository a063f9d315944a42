//! Placing columns on a line: procps-ng 4.0.2's `show_one_proc()` and
//! `check_header_width()` (src/ps/output.c), reproduced step for step,
//! including their unsigned arithmetic, because the exact spacing when a
//! value overflows its column is part of ps's output.
//!
//! Most cells are short ([`Kind::render_short`]): numbers, the state
//! letters, times, a wait channel, a name in the C locale. Those are
//! printed on the stack and copied into the line in fixed-size chunks;
//! every other cell (and the header) takes the general path, through a
//! `Vec`, that ps's buffer handling is written out for.

use super::columns::{Ctx, Just, Kind, OUTBUF_SIZE};
use super::short::SHORT;
use crate::task::Task;
use std::cell::RefCell;

/// `SPACE_AMOUNT`: at most this many spaces are written before a value.
const SPACE_AMOUNT: i64 = 144;

/// One column of the output (`format_node`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Header text.
    pub name: Vec<u8>,
    /// Width.
    pub width: usize,
    /// Justification.
    pub just: Just,
    /// Printer.
    pub kind: Kind,
}

/// The line geometry: columns and the usable width.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The columns, left to right (never empty).
    columns: Vec<Column>,
    /// What each column alone decides, in the same order.
    fixed: Vec<Fixed>,
    /// `active_cols`: the line width ps settled on.
    pub active_cols: usize,
    /// Buffers reused for every line, borrowed once per line.
    scratch: RefCell<Scratch>,
}

/// What show_one_proc() derives from a column alone, worked out once.
#[derive(Clone, Copy, Debug)]
struct Fixed {
    /// The printer.
    kind: Kind,
    /// The width.
    width: i64,
    /// `max_rightward` when the column is not the last: its width, through
    /// the unsigned clamp.
    max_rightward: usize,
    /// `CF_RIGHT`: padded on the left up to its width.
    right: bool,
    /// `CF_WCHAN` and `CF_UNLIMITED`: cut to one byte on a full line.
    may_cut: bool,
}

impl Fixed {
    fn new(col: &Column) -> Self {
        Fixed {
            kind: col.kind,
            width: col.width as i64,
            max_rightward: clamp_unsigned(col.width as i64),
            right: col.just == Just::Right,
            may_cut: matches!(col.just, Just::Wchan | Just::Unlimited),
        }
    }
}

/// What printing a line writes into besides `out`, kept between lines.
#[derive(Clone, Debug)]
struct Scratch {
    /// The bytes of the line being assembled (see [`Line`]).
    line: Vec<u8>,
    /// A short cell ([`Kind::render_short`]), before its leading spaces
    /// are known.
    short: [u8; SHORT],
    /// Any other cell, before its leading spaces are known.
    cell: Vec<u8>,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            line: Vec::new(),
            short: [0; SHORT],
            cell: Vec::new(),
        }
    }
}

/// `SPACE_AMOUNT` spaces: what a cell's padding is copied from.
const SPACES: [u8; SPACE_AMOUNT as usize] = [b' '; SPACE_AMOUNT as usize];

/// Padding up to this many spaces is written as one fixed-size chunk.
const SPACE_CHUNK: usize = 32;

/// A short cell up to this long is copied as a chunk of this size, a
/// longer one as a chunk of [`SHORT`].
const SMALL_CHUNK: usize = 16;

/// A line being assembled in `bytes`, with slack after it.
///
/// Padding and short cells are copied in whole fixed-size chunks (a few
/// vector moves instead of a `memcpy` call of their exact length): a
/// chunk may run past the line's end into the slack, where the next write
/// lands anyway. Only `bytes[..len]` is the line.
///
/// A `Line` lives for one line, as a local: `len` stays in a register
/// across the printers' calls, which it could not do in the `RefCell`.
struct Line<'a> {
    bytes: &'a mut Vec<u8>,
    len: usize,
}

impl Line<'_> {
    /// The `N` bytes from the line's end on, growing the slack if needed.
    #[inline(always)]
    fn chunk<const N: usize>(&mut self) -> &mut [u8; N] {
        if self.bytes.len() < self.len + N {
            grow(self.bytes, self.len + N);
        }
        let end = self.len + N;
        (&mut self.bytes[self.len..end])
            .try_into()
            .expect("a slice of N bytes")
    }

    /// Appends `n` <= `SPACE_AMOUNT` spaces.
    #[inline(always)]
    fn spaces(&mut self, n: usize) {
        if n <= SPACE_CHUNK {
            *self.chunk::<SPACE_CHUNK>() = [b' '; SPACE_CHUNK];
            self.len += n;
        } else {
            self.extend(&SPACES[..n]);
        }
    }

    /// Appends the first `n` (<= `len`) bytes of a short cell of `len`
    /// bytes.
    #[inline(always)]
    fn short(&mut self, cell: &[u8; SHORT], len: usize, n: usize) {
        match cell.first_chunk::<SMALL_CHUNK>() {
            Some(small) if len <= SMALL_CHUNK => *self.chunk() = *small,
            _ => *self.chunk() = *cell,
        }
        self.len += n;
    }

    /// Appends `s`.
    #[inline(always)]
    fn extend(&mut self, s: &[u8]) {
        let end = self.len + s.len();
        if self.bytes.len() < end {
            grow(self.bytes, end);
        }
        self.bytes[self.len..end].copy_from_slice(s);
        self.len = end;
    }

    /// The line so far.
    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Makes `bytes` at least `need` long (its contents are slack).
#[cold]
#[inline(never)]
fn grow(bytes: &mut Vec<u8>, need: usize) {
    let want = need.max(2 * bytes.len()).max(256);
    bytes.resize(want, 0);
}

/// show_one_proc()'s running totals, in its (signed) arithmetic.
struct Cursor {
    /// Where the columns would end if every one kept to its width.
    correct: i64,
    /// Where the printed text ends.
    actual: i64,
    /// The spaces between two columns when nothing is to catch up.
    dospace: i64,
}

impl Layout {
    /// check_header_width(): the smallest multiple of `screen_cols` that
    /// holds every column (an unlimited last column counts 3), up to half
    /// the output buffer.
    pub fn new(columns: Vec<Column>, screen_cols: usize) -> Self {
        let mut total = 0usize;
        let mut was_normal = 0usize;
        let last = columns.len().saturating_sub(1);
        for (i, c) in columns.iter().enumerate() {
            total += match c.just {
                Just::Unlimited if i == last => 3,
                _ => c.width,
            };
            total += was_normal;
            was_normal = 1;
        }
        let screen_cols = screen_cols.max(1);
        let mut i = 0;
        let active_cols = loop {
            i += 1;
            let cols = screen_cols * i;
            if cols >= total || cols >= OUTBUF_SIZE / 2 {
                break cols;
            }
        };
        Layout {
            fixed: columns.iter().map(Fixed::new).collect(),
            columns,
            active_cols,
            scratch: RefCell::default(),
        }
    }

    /// The columns, left to right (never empty).
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Appends the header line (`task` = `None`) or one task's line to `out`.
    pub fn line(&self, task: Option<&Task>, ctx: &mut Ctx<'_>, out: &mut Vec<u8>) {
        self.line_with(task, ctx, out, true);
    }

    /// [`Layout::line`], printing every cell through [`Kind::render`]
    /// unless `short_cells`: what the short path is checked against.
    fn line_with(
        &self,
        task: Option<&Task>,
        ctx: &mut Ctx<'_>,
        out: &mut Vec<u8>,
        short_cells: bool,
    ) {
        let active = self.active_cols as i64;
        let mut cur = Cursor {
            correct: 0,
            actual: 0,
            dospace: 0,
        };
        let mut scratch = self.scratch.borrow_mut();
        let Scratch { line, short, cell } = &mut *scratch;
        let mut printer = Printer {
            line: Line {
                bytes: line,
                len: 0,
            },
            short,
            cell,
            task,
            short_task: task.filter(|_| short_cells),
        };
        let mut columns = self.columns.iter().zip(&self.fixed);
        let (last, last_fixed) = columns.next_back().expect("a layout has columns");
        for (col, fixed) in columns {
            // Not last: the room is the column's width, tmpspace is 0.
            let room = Room {
                max_rightward: fixed.max_rightward,
                one_byte: fixed.may_cut && (active - cur.actual) as u32 == 0,
            };
            let (space, amount) = printer.print(col, fixed, ctx, room, &cur);
            cur.advance(fixed, space, amount);
        }
        let tmpspace = cur.correct - cur.actual;
        let (wanted, tmpspace) = if tmpspace < 1 {
            (active - cur.actual - cur.dospace, cur.dospace)
        } else {
            (active - cur.correct.max(cur.actual), tmpspace)
        };
        let room = Room {
            max_rightward: clamp_unsigned(wanted),
            one_byte: last_fixed.may_cut && (active - cur.actual - tmpspace) as u32 == 0,
        };
        printer.print(last, last_fixed, ctx, room, &cur);
        let line = printer.line.as_bytes();
        out.reserve(line.len() + 1);
        out.extend_from_slice(line);
        out.push(b'\n');
    }
}

/// What show_one_proc() grants one cell.
#[derive(Clone, Copy)]
struct Room {
    /// `max_rightward`: the cells it may print.
    max_rightward: usize,
    /// `CF_WCHAN` and `CF_UNLIMITED`'s "(active_cols-actual-tmpspace)<1"
    /// in unsigned arithmetic (true only when exactly zero): the cell shows
    /// its first byte only, and keeps its width.
    one_byte: bool,
}

/// Where one line's cells are printed, and for what.
struct Printer<'a> {
    line: Line<'a>,
    short: &'a mut [u8; SHORT],
    cell: &'a mut Vec<u8>,
    /// The task; `None` for the header.
    task: Option<&'a Task>,
    /// The task when cells with a short form are printed short.
    short_task: Option<&'a Task>,
}

impl Printer<'_> {
    /// Prints the cell of `col` after its leading spaces and returns the
    /// spaces and the cell's width.
    #[inline(always)]
    fn print(
        &mut self,
        col: &Column,
        fixed: &Fixed,
        ctx: &mut Ctx<'_>,
        room: Room,
        cur: &Cursor,
    ) -> (usize, usize) {
        let short = self.short_task.and_then(|t| {
            fixed
                .kind
                .render_short(t, ctx, room.max_rightward, self.short)
                .map(|amount| (t, amount))
        });
        let Some((t, amount)) = short else {
            let (amount, shown) = general_cell(col, self.task, ctx, room, self.cell);
            let space = cur.space(fixed, amount);
            self.line.spaces(space);
            self.line.extend(&self.cell[..shown]);
            return (space, amount);
        };
        // A short cell is far below OUTBUF_SIZE: no cut.
        let space = cur.space(fixed, amount);
        let mut shown = if fixed.kind.may_print_nul(t) {
            up_to_nul(&self.short[..amount])
        } else {
            amount
        };
        if room.one_byte {
            shown = shown.min(1);
        }
        self.line.spaces(space);
        self.line.short(self.short, amount, shown);
        (space, amount)
    }
}

/// Prints the cell of `col` for `task` (the header when `None`) into `buf`
/// and returns its width and how many of its bytes are shown. Out of line,
/// to keep the loop over short cells small.
#[inline(never)]
fn general_cell(
    col: &Column,
    task: Option<&Task>,
    ctx: &mut Ctx<'_>,
    room: Room,
    buf: &mut Vec<u8>,
) -> (usize, usize) {
    // The cell's leading spaces are known only from its width: it is
    // printed into `buf` first.
    buf.clear();
    let mut amount = match task {
        Some(t) => col.kind.render(t, ctx, room.max_rightward, buf),
        None => {
            buf.extend_from_slice(&col.name);
            buf.len()
        }
    };
    if amount >= OUTBUF_SIZE {
        amount = OUTBUF_SIZE - 1;
        buf.truncate(amount);
    }
    if room.one_byte {
        buf.truncate(1);
    }
    // The cell is printed up to a NUL, as ps prints its buffer.
    let shown = match task {
        Some(t) if !col.kind.may_print_nul(t) => buf.len(),
        _ => up_to_nul(buf),
    };
    (amount, shown)
}

impl Cursor {
    /// The spaces show_one_proc() writes before a cell of `amount` cells
    /// in `col`: 0 <= space <= SPACE_AMOUNT.
    #[inline(always)]
    fn space(&self, col: &Fixed, amount: usize) -> usize {
        let leftpad = if col.right {
            (col.width - amount as i64).max(0)
        } else {
            0
        };
        let mut space = self.correct - self.actual + leftpad;
        if space < 1 {
            space = self.dospace;
        }
        // dospace is 0 or 1, so 0 <= space.
        space.min(SPACE_AMOUNT) as usize
    }

    /// Moves past a cell of `amount` cells after `space` spaces in `col`
    /// (not the last).
    fn advance(&mut self, col: &Fixed, space: usize, amount: usize) {
        self.actual += space as i64 + amount as i64;
        self.correct += col.width;
        // Every nps column has a printer, so ps's "neither is AIX
        // filler" test always holds.
        self.correct += 1;
        self.dospace = 1;
    }
}

/// How much of `cell` ps prints: up to its first NUL.
fn up_to_nul(cell: &[u8]) -> usize {
    cell.iter().position(|&b| b == 0).unwrap_or(cell.len())
}

fn clamp_unsigned(v: i64) -> usize {
    let u = v as u32 as i64;
    if u == 0 {
        0
    } else if u >= OUTBUF_SIZE as i64 || v < 0 {
        OUTBUF_SIZE - 1
    } else {
        u as usize
    }
}

#[cfg(test)]
mod tests {
    use super::super::charset::Charset;
    use super::super::columns::{lookup, COLUMNS};
    use super::super::tty::TtyNamer;
    use super::super::with_test_ctx;
    use super::*;
    use crate::task::{Global, Wchan};
    use proptest::prelude::*;

    fn col(spec: &str) -> Column {
        let d = lookup(spec).unwrap();
        Column {
            name: d.head.into(),
            width: d.width,
            just: d.just,
            kind: d.kind,
        }
    }

    fn global() -> Global {
        Global {
            hertz: 100,
            page_size: 4096,
            boot_time: 0,
            mem_total_kib: 1,
            uptime_centis: 0,
            pid_max: None,
        }
    }

    fn render(specs: &[&str], screen: usize, t: Option<&Task>) -> String {
        let layout = Layout::new(specs.iter().map(|s| col(s)).collect(), screen);
        let mut out = Vec::new();
        with_test_ctx(&global(), |ctx| layout.line(t, ctx, &mut out));
        String::from_utf8(out).unwrap()
    }

    fn task() -> Task {
        let mut t = Task::empty(1234567, 1234567);
        t.comm = b"averyveryverylongname".to_vec();
        t.state = b'S';
        t.nlwp = 12;
        t
    }

    #[test]
    fn header_alignment() {
        assert_eq!(
            render(&["pid", "tname", "time", "ucmd"], OUTBUF_SIZE, None),
            "  PID TTY          TIME CMD\n"
        );
        assert_eq!(
            render(&["pid", "stat", "wchan", "comm"], OUTBUF_SIZE, None),
            "  PID STAT WCHAN  COMMAND\n"
        );
    }

    #[test]
    fn overflowing_value_pushes_and_is_caught_up() {
        // A 7-digit pid overflows its 5 cells; the next right-aligned column
        // absorbs the overflow instead of shifting the rest of the line.
        let t = task();
        assert_eq!(
            render(&["pid", "nlwp", "comm"], OUTBUF_SIZE, Some(&t)),
            "1234567 12 averyveryverylongname\n"
        );
        // Not last: comm is cut to its 15 cells.
        assert_eq!(
            render(&["comm", "nlwp"], OUTBUF_SIZE, Some(&t)),
            "averyveryverylo   12\n"
        );
    }

    #[test]
    fn narrow_screen_cuts_the_last_column() {
        let t = task();
        // 20 columns: "1234567 " leaves 12 cells for the name.
        assert_eq!(
            render(&["pid", "comm"], 20, Some(&t)),
            "1234567 averyveryver\n"
        );
    }

    /// Prints `t` through both paths, checks they agree, returns the line.
    fn both_paths(cols: &[(&str, usize)], screen: usize, t: &Task) -> String {
        let cols = cols
            .iter()
            .map(|&(spec, width)| Column { width, ..col(spec) })
            .collect();
        let layout = Layout::new(cols, screen);
        let (mut short, mut general) = (Vec::new(), Vec::new());
        with_test_ctx(&global(), |ctx| {
            layout.line_with(Some(t), ctx, &mut short, true);
            layout.line_with(Some(t), ctx, &mut general, false);
        });
        assert_eq!(short, general);
        String::from_utf8(short).unwrap()
    }

    #[test]
    fn a_full_line_cuts_wchan_to_one_byte() {
        // The 8-digit pid fills the 8 active columns exactly: the wchan
        // cell keeps one byte but still counts its 6.
        let mut t = task();
        t.tgid = 12345678;
        t.wchan = Wchan::Symbol(b"do_nanosleep".to_vec());
        assert_eq!(
            both_paths(&[("pid", 0), ("wchan", 6), ("nlwp", 0)], 1, &t),
            "12345678 d 12\n"
        );
    }

    #[test]
    fn a_nul_state_prints_nothing_but_counts() {
        // "\0l+" and "\0" still count 3 and 1 cells.
        let mut t = task();
        t.state = 0;
        t.nlwp = 3;
        assert_eq!(
            both_paths(&[("stat", 4), ("s", 1), ("nlwp", 3)], 80, &t),
            "     3\n"
        );
    }

    fn hostile_task() -> impl Strategy<Value = Task> {
        let bytes = |n| proptest::collection::vec(any::<u8>(), 0..n);
        (
            (bytes(80), proptest::option::of(bytes(200)), bytes(80)),
            (
                any::<[i32; 8]>(),
                any::<[u64; 4]>(),
                prop_oneof![Just(0), Just(b'S'), any::<u8>()],
            ),
            (0u32..12, any::<u64>(), prop_oneof![Just(0), any::<i32>()]),
        )
            .prop_map(
                |((comm, cmdline, wchan), (n, big, state), (policy, flags, tty))| {
                    let mut t = Task::empty(n[0], n[1]);
                    t.comm = comm;
                    t.cmdline = cmdline;
                    t.wchan = match wchan.first() {
                        Some(0) => Wchan::Zero,
                        Some(1) => Wchan::Unreadable,
                        _ => Wchan::Symbol(wchan),
                    };
                    (t.ppid, t.pgid, t.sid, t.tpgid) = (n[2], n[3], n[4], n[5]);
                    (t.nice, t.nlwp, t.processor) = (n[6] % 40, n[7], n[6]);
                    t.priority = n[7] % 1000;
                    t.uid = [n[2] as u32, n[3] as u32, n[4] as u32, n[5] as u32];
                    t.gid = t.uid;
                    t.state = state;
                    t.policy = policy;
                    t.rt_priority = n[5] as u32;
                    t.flags = flags;
                    t.tty_nr = tty;
                    (t.utime, t.stime) = (big[0] >> 12, big[1] >> 12);
                    (t.start_time, t.vm_rss_kib) = (big[2] >> 12, big[3] >> 12);
                    (t.vm_size_kib, t.vm_lck_kib) = (big[3] >> 20, big[2] & 1);
                    (t.min_flt, t.maj_flt) = (big[0], big[1]);
                    t
                },
            )
    }

    /// A column list with any widths, often narrow, and often holding a
    /// column whose cell a full line cuts to one byte.
    fn columns() -> impl Strategy<Value = Vec<Column>> {
        let spec = prop_oneof![
            Just("wchan"),
            Just("comm"),
            Just("args"),
            Just("stat"),
            (0..COLUMNS.len()).prop_map(|i| COLUMNS[i].spec),
        ];
        let width = prop_oneof![0usize..8, 0usize..40];
        proptest::collection::vec((spec, width), 1..9).prop_map(|picks| {
            picks
                .into_iter()
                .map(|(spec, width)| Column { width, ..col(spec) })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Short cells placed in chunks print the bytes the general path
        /// prints, in any column list, width and screen.
        #[test]
        fn short_cells_print_what_render_prints(
            t in hostile_task(),
            cols in columns(),
            screen in prop_oneof![1usize..40, 1usize..300],
            utf8 in any::<bool>(),
        ) {
            let layout = Layout::new(cols, screen);
            let g = global();
            let mut tty = TtyNamer::new("/nonexistent");
            let mut names = super::super::names::Names::new();
            let mut ctx = Ctx {
                global: &g,
                charset: if utf8 { Charset::Utf8 } else { Charset::Bytes },
                tty: &mut tty,
                names: &mut names,
                now: 1_800_000_000, forest: Default::default(),
        environ: false,
            };
            let (mut short, mut general) = (b"x".to_vec(), b"x".to_vec());
            for task in [None, Some(&t), Some(&t)] {
                layout.line_with(task, &mut ctx, &mut short, true);
                layout.line_with(task, &mut ctx, &mut general, false);
            }
            prop_assert_eq!(String::from_utf8_lossy(&short), String::from_utf8_lossy(&general));
            prop_assert_eq!(short, general);
        }
    }

    #[test]
    fn active_cols_grows_in_screen_multiples() {
        let cols = ["pid", "ppid", "pgid", "sid", "tname", "time", "ucmd"]
            .map(col)
            .to_vec();
        // 5+1+5+1+5+1+5+1+8+1+8+1+3 = 45 > 40: two screens.
        assert_eq!(Layout::new(cols, 40).active_cols, 80);
    }
}
