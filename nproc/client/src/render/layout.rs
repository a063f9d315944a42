//! Placing columns on a line: procps-ng 4.0.2's `show_one_proc()` and
//! `check_header_width()` (src/ps/output.c), reproduced step for step,
//! including their unsigned arithmetic, because the exact spacing when a
//! value overflows its column is part of ps's output.

use super::columns::{Ctx, Just, Kind, OUTBUF_SIZE};
use crate::task::Task;
use std::cell::RefCell;

/// `SPACE_AMOUNT`: at most this many spaces are written before a value.
const SPACE_AMOUNT: i64 = 144;

/// One column of the output (`format_node`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Header text.
    pub name: String,
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
    pub columns: Vec<Column>,
    /// `active_cols`: the line width ps settled on.
    pub active_cols: usize,
    /// One cell as its printer wrote it, before its leading spaces are
    /// known: a buffer reused for every cell of every line.
    cell: RefCell<Vec<u8>>,
}

/// `SPACE_AMOUNT` spaces: what a cell's padding is copied from.
const SPACES: [u8; SPACE_AMOUNT as usize] = [b' '; SPACE_AMOUNT as usize];

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
            columns,
            active_cols,
            cell: RefCell::default(),
        }
    }

    /// Appends the header line (`task` = `None`) or one task's line to `out`.
    pub fn line(&self, task: Option<&Task>, ctx: &mut Ctx<'_>, out: &mut Vec<u8>) {
        let active = self.active_cols as i64;
        let mut correct: i64 = 0;
        let mut actual: i64 = 0;
        let mut dospace: i64 = 0;
        let n = self.columns.len();
        // Borrowed only for the moment of taking and returning it.
        let mut cell = self.cell.take();
        for (i, col) in self.columns.iter().enumerate() {
            let last = i + 1 == n;
            let (wanted, tmpspace) = if !last {
                (col.width as i64, 0)
            } else {
                let tmpspace = correct - actual;
                if tmpspace < 1 {
                    (active - actual - dospace, dospace)
                } else {
                    (active - correct.max(actual), tmpspace)
                }
            };
            // max_rightward is unsigned: a negative room wraps to a huge
            // value and is then clamped to OUTBUF_SIZE-1.
            let max_rightward = clamp_unsigned(wanted);

            // The cell's leading spaces are known only from its width:
            // it is printed into `cell` first.
            cell.clear();
            let mut amount = match task {
                Some(t) => col.kind.render(t, ctx, max_rightward, &mut cell),
                None => {
                    cell.extend_from_slice(col.name.as_bytes());
                    cell.len()
                }
            };
            if amount >= OUTBUF_SIZE {
                amount = OUTBUF_SIZE - 1;
                cell.truncate(amount);
            }
            let leftpad = match col.just {
                Just::Left | Just::User => 0,
                Just::Right => (col.width as i64 - amount as i64).max(0),
                Just::Wchan | Just::Unlimited => {
                    // "(active_cols-actual-tmpspace)<1" in unsigned
                    // arithmetic: true only when exactly zero.
                    if (active - actual - tmpspace) as u32 == 0 {
                        cell.truncate(1);
                    }
                    0
                }
            };
            let mut space = correct - actual + leftpad;
            if space < 1 {
                space = dospace;
            }
            space = space.min(SPACE_AMOUNT);
            // The cell is printed up to a NUL, as ps prints its buffer.
            let shown = cell.iter().position(|&b| b == 0).unwrap_or(cell.len());
            // 0 <= space <= SPACE_AMOUNT.
            out.extend_from_slice(SPACES.get(..space.max(0) as usize).unwrap_or_default());
            out.extend_from_slice(&cell[..shown]);
            if last {
                out.push(b'\n');
                break;
            }
            actual += space + amount as i64;
            correct += col.width as i64;
            // Every nps column has a printer, so ps's "neither is AIX
            // filler" test always holds.
            correct += 1;
            dospace = 1;
        }
        self.cell.replace(cell);
    }
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
    use super::super::columns::lookup;
    use super::super::tty::TtyNamer;
    use super::*;
    use crate::task::Global;

    fn col(spec: &str) -> Column {
        let d = lookup(spec).unwrap();
        Column {
            name: d.head.to_string(),
            width: d.width,
            just: d.just,
            kind: d.kind,
        }
    }

    fn render(specs: &[&str], screen: usize, t: Option<&Task>) -> String {
        let g = Global {
            hertz: 100,
            page_size: 4096,
            boot_time: 0,
            mem_total_kib: 1,
            uptime_centis: 0,
            pid_max: None,
        };
        let mut tty = TtyNamer::new("/nonexistent");
        let mut names = super::super::names::Names::new();
        let mut ctx = Ctx {
            global: &g,
            charset: Charset::Bytes,
            tty: &mut tty,
            names: &mut names,
            now: 0,
        };
        let layout = Layout::new(specs.iter().map(|s| col(s)).collect(), screen);
        let mut out = Vec::new();
        layout.line(t, &mut ctx, &mut out);
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

    #[test]
    fn active_cols_grows_in_screen_multiples() {
        let cols = ["pid", "ppid", "pgid", "sid", "tname", "time", "ucmd"]
            .map(col)
            .to_vec();
        // 5+1+5+1+5+1+5+1+8+1+8+1+3 = 45 > 40: two screens.
        assert_eq!(Layout::new(cols, 40).active_cols, 80);
    }
}
