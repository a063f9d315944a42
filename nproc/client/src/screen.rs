//! The screen ps works with: src/ps/global.c `set_screen_size()` and
//! src/ps/parser.c `choose_dimensions()`.

use crate::parser::strtol0;
use crate::render::columns::OUTBUF_SIZE;
use std::os::fd::AsRawFd;

/// Columns and rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Screen {
    /// `screen_cols`.
    pub cols: usize,
    /// `screen_rows`.
    pub rows: usize,
}

/// The size of the terminal on `fd`, if it is one with a size.
fn winsize(fd: i32) -> Option<(usize, usize)> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one struct winsize through the pointer,
    // which points to a live, properly aligned winsize.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
    (rc != -1 && ws.ws_col > 0 && ws.ws_row > 0).then_some((ws.ws_col.into(), ws.ws_row.into()))
}

/// A variable's value as set_screen_size() takes it: `strtol(.., 0)` of
/// all of it, in 1..OUTBUF_SIZE.
fn dimension(var: Option<&[u8]>) -> Option<usize> {
    let t = strtol0(var?)?;
    (t > 0 && t < OUTBUF_SIZE as i64).then_some(t as usize)
}

/// set_screen_size(): the terminal's size (stdout, stderr, stdin,
/// /dev/tty, else 80x24), every column when stdout is not a terminal,
/// then `COLUMNS` and `LINES`. The warning is ps's, for a size it thinks
/// bogus.
pub fn set_screen_size(columns: Option<&[u8]>, lines: Option<&[u8]>) -> (Screen, Option<String>) {
    let (mut cols, mut rows) = winsize(1)
        .or_else(|| winsize(2))
        .or_else(|| winsize(0))
        .or_else(|| {
            let tty = std::fs::File::open("/dev/tty").ok()?;
            winsize(tty.as_raw_fd())
        })
        .unwrap_or((80, 24));
    // SAFETY: isatty() only queries the descriptor.
    if unsafe { libc::isatty(1) } == 0 {
        cols = OUTBUF_SIZE;
    }
    if let Some(c) = dimension(columns) {
        cols = c;
    }
    if let Some(r) = dimension(lines) {
        rows = r;
    }
    let warning = (cols < 9 || rows < 2)
        .then(|| format!("your {cols}x{rows} screen size is bogus. expect trouble\n"));
    (Screen { cols, rows }, warning)
}

/// choose_dimensions(): `w` makes at least 132 columns, `ww` unlimited.
pub fn choose_dimensions(cols: usize, w_count: u32) -> usize {
    let mut cols = cols;
    if w_count > 0 && cols < 132 {
        cols = 132;
    }
    if w_count > 1 {
        cols = OUTBUF_SIZE;
    }
    cols
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_and_w() {
        let (s, w) = set_screen_size(Some(b"100"), Some(b"0x20"));
        assert_eq!((s.cols, s.rows), (100, 32));
        assert!(w.is_none());
        let (s, w) = set_screen_size(Some(b"5"), Some(b"30"));
        assert_eq!(s.cols, 5);
        assert_eq!(
            w.as_deref(),
            Some("your 5x30 screen size is bogus. expect trouble\n")
        );
        // Out of range or malformed values are ignored.
        let (s, _) = set_screen_size(Some(b"80x"), Some(b"10"));
        assert!(s.cols != 0 && s.rows == 10);
        assert_eq!(choose_dimensions(100, 1), 132);
        assert_eq!(choose_dimensions(200, 1), 200);
        assert_eq!(choose_dimensions(100, 2), OUTBUF_SIZE);
    }
}
