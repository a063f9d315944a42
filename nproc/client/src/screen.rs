//! The line width ps works with: src/ps/global.c `set_screen_size()` and
//! src/ps/parser.c `choose_dimensions()`.

use crate::render::columns::OUTBUF_SIZE;
use std::io::IsTerminal;
use std::os::fd::AsRawFd;

/// The width of the terminal on `fd`, if it is one with a size.
fn winsize_cols(fd: i32) -> Option<usize> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one struct winsize through the pointer,
    // which points to a live, properly aligned winsize.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
    (rc != -1 && ws.ws_col > 0 && ws.ws_row > 0).then_some(ws.ws_col as usize)
}

/// `screen_cols`: the terminal's width (stdout, stderr, stdin, /dev/tty,
/// else 80), everything when stdout is not a terminal, `COLUMNS` over both,
/// then `w` (at least 132) and `ww` (everything).
pub fn screen_cols(columns_env: Option<&str>, w_count: u32) -> usize {
    let mut cols = winsize_cols(1)
        .or_else(|| winsize_cols(2))
        .or_else(|| winsize_cols(0))
        .or_else(|| {
            let tty = std::fs::File::open("/dev/tty").ok()?;
            winsize_cols(tty.as_raw_fd())
        })
        .unwrap_or(80);
    if !std::io::stdout().is_terminal() {
        cols = OUTBUF_SIZE;
    }
    if let Some(t) = columns_env.and_then(strtol0) {
        if t > 0 && t < OUTBUF_SIZE as i64 {
            cols = t as usize;
        }
    }
    if w_count > 0 && cols < 132 {
        cols = 132;
    }
    if w_count > 1 {
        cols = OUTBUF_SIZE;
    }
    cols
}

/// strtol(s, &end, 0) that must consume all of a non-empty string.
fn strtol0(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if t.len() > 1 && t.starts_with('0') {
        i64::from_str_radix(&t[1..], 8).ok()?
    } else {
        t.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_variable() {
        assert_eq!(strtol0("100"), Some(100));
        assert_eq!(strtol0("0x50"), Some(80));
        assert_eq!(strtol0("80x"), None);
        assert_eq!(screen_cols(Some("100"), 0), 100);
        assert_eq!(screen_cols(Some("100"), 1), 132);
        assert_eq!(screen_cols(Some("100"), 2), OUTBUF_SIZE);
        // Out of range values are ignored.
        assert!(screen_cols(Some("0"), 0) > 0);
    }
}
