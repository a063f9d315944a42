//! procps's two escapers.
//!
//! Text passes through both: libproc2 escapes `comm` and `cmdline` when it
//! reads them (library/escape.c `escape_str()`, `escape_command()`), then ps
//! escapes again while fitting the text into its column (src/ps/output.c
//! `escape_str()`). Both are reproduced byte for byte.

use super::charset::{self, Charset};
use super::words::{all_printable, copy_words};

/// library/escape.c `ESC_tab` applied by `esc_all()`: controls become `.`,
/// bytes >= 0x80 become `?`.
const fn esc_all_byte(b: u8) -> u8 {
    match b {
        0x20..=0x7e => b,
        0x80..=0xff => b'?',
        _ => b'.',
    }
}

/// [`esc_all_byte`] of every byte: one load per byte instead of branches.
pub(super) const ESC_ALL: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = esc_all_byte(b as u8);
        b += 1;
    }
    table
};

/// library/escape.c `UTF_tab`: the length a lead byte announces, or `None`.
fn utf_len(b: u8) -> Option<usize> {
    match b {
        0x00..=0x7f => Some(1),
        0xc2..=0xdf => Some(2),
        0xe0..=0xef => Some(3),
        0xf0..=0xf4 => Some(4),
        _ => None,
    }
}

/// libproc2's `escape_str(dst, src, bufsize)`: copies at most `bufsize - 1`
/// bytes (up to the first NUL), then replaces non-printing bytes.
pub fn lib_escape(src: &[u8], bufsize: usize, charset: Charset) -> Vec<u8> {
    if bufsize == 0 {
        return Vec::new();
    }
    let mut dst = kept(src, bufsize).to_vec();
    escape_in_place(&mut dst, charset);
    dst
}

/// What `snprintf(dst, bufsize, "%s", src)` keeps of `src`: up to its
/// first NUL and at most `bufsize - 1` bytes (`bufsize` > 0).
fn kept(src: &[u8], bufsize: usize) -> &[u8] {
    let end = src.iter().position(|&b| b == 0).unwrap_or(src.len());
    &src[..end.min(bufsize.saturating_sub(1))]
}

/// The comm column in the C locale ([`Charset::Bytes`]): libproc2's
/// escaping into 64 bytes ([`lib_escape_array`]) then ps's into
/// `max_cells` ([`ps_escape`]), in one pass into `dst`. Returns the bytes
/// written, which are also the cells.
///
/// In this locale both escapers map every byte through `esc_all_byte()`
/// up to the first NUL; the second meets only printable ASCII, which the
/// map keeps. So the cell is the map of the bytes before the first NUL,
/// at most 63 (the first buffer) and at most `max_cells`.
pub fn comm_c_locale(comm: &[u8], max_cells: usize, dst: &mut [u8]) -> usize {
    let src = &comm[..comm.len().min(max_cells).min(63)];
    let dst = &mut dst[..src.len()];
    if src.len() >= 8 && all_printable(src) {
        // The common name: no NUL, nothing to map.
        copy_words(src, dst);
        return src.len();
    }
    let mut n = 0;
    for (d, &b) in dst.iter_mut().zip(src) {
        if b == 0 {
            break;
        }
        *d = ESC_ALL[usize::from(b)];
        n += 1;
    }
    n
}

/// [`lib_escape`] with `bufsize` = `N`, into an array: a `comm` (escaped
/// with 64) without an allocation. Returns the array and the length used.
pub fn lib_escape_array<const N: usize>(src: &[u8], charset: Charset) -> ([u8; N], usize) {
    let mut dst = [0u8; N];
    let src = kept(src, N);
    let len = src.len();
    dst[..len].copy_from_slice(src);
    escape_in_place(&mut dst[..len], charset);
    (dst, len)
}

/// The replacing half of libproc2's `escape_str()`, on the copied bytes.
fn escape_in_place(dst: &mut [u8], charset: Charset) {
    match charset {
        Charset::Bytes => dst.iter_mut().for_each(|b| *b = ESC_ALL[usize::from(*b)]),
        Charset::Utf8 => {
            // esc_ctl(): trust lead bytes; on a bad one (or one running past
            // the end) esc_all() the rest of the string.
            let len = dst.len();
            let mut i = 0;
            while i < len {
                match utf_len(dst[i]) {
                    Some(n) if i + n <= len => {
                        if dst[i] < 0x20 || dst[i] == 0x7f {
                            dst[i] = b'?';
                        }
                        i += n;
                    }
                    _ => {
                        dst[i..].iter_mut().for_each(|b| *b = esc_all_byte(*b));
                        break;
                    }
                }
            }
        }
    }
}

/// libproc2's `escape_command()` with `ESC_BRACKETS | ESC_DEFUNCT`: the
/// command line of a task without one, `[comm]` (and ` <defunct>` for a
/// zombie). `comm` is the already-escaped name.
pub fn bracketed_command(comm: &[u8], zombie: bool, bytes: usize, charset: Charset) -> Vec<u8> {
    let overhead = 2 + if zombie { 10 } else { 0 };
    if overhead + 1 >= bytes {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(comm.len() + overhead);
    out.push(b'[');
    out.extend_from_slice(&lib_escape(comm, bytes - overhead, charset));
    out.push(b']');
    if zombie {
        out.extend_from_slice(b" <defunct>");
    }
    out
}

/// ps's `escape_str(dst, src, bufsize, &maxcells)`: appends to `out` the
/// part of `src` that fits in `max_cells` screen cells and `bufsize - 1`
/// bytes, and returns the cells used.
pub fn ps_escape(
    out: &mut Vec<u8>,
    src: &[u8],
    bufsize: usize,
    max_cells: usize,
    charset: Charset,
) -> usize {
    // SECURE_ESCAPE_ARGS
    if bufsize == 0 || max_cells == 0 {
        return 0;
    }
    let mut cells = 0;
    let mut bytes = 0;
    match charset {
        Charset::Bytes => {
            // One cell per byte, up to a NUL, the cells and the buffer.
            let src = &src[..src.len().min(max_cells).min(bufsize - 1)];
            let src = &src[..src.iter().position(|&c| c == 0).unwrap_or(src.len())];
            out.extend(src.iter().map(|&c| ESC_ALL[usize::from(c)]));
            cells = src.len();
        }
        Charset::Utf8 => {
            let mut i = 0;
            loop {
                if cells >= max_cells || bytes + 1 >= bufsize {
                    break;
                }
                let Some(&lead) = src.get(i) else { break };
                if lead == 0 {
                    break;
                }
                match decode(&src[i..]) {
                    None => {
                        // mbrtowc() failed: one '?' per bad byte.
                        out.push(b'?');
                        i += 1;
                        cells += 1;
                        bytes += 1;
                    }
                    Some((_, 1)) => {
                        // isprint() in a UTF-8 locale: printable ASCII.
                        out.push(if (0x20..0x7f).contains(&lead) {
                            lead
                        } else {
                            b'?'
                        });
                        i += 1;
                        cells += 1;
                        bytes += 1;
                    }
                    Some((c, len)) if !charset::is_printable(c) => {
                        out.push(b'?');
                        i += len;
                        cells += 1;
                        bytes += 1;
                    }
                    Some((c, len)) => {
                        let w = charset::width(c);
                        if w > (max_cells - cells) as i32 || len >= bufsize - (bytes + 1) {
                            break;
                        }
                        out.extend_from_slice(&src[i..i + len]);
                        i += len;
                        bytes += len;
                        if w > 0 {
                            cells += w as usize;
                        }
                    }
                }
            }
        }
    }
    cells
}

/// One character as glibc's UTF-8 `mbrtowc()` decodes it: `None` for an
/// invalid or truncated sequence (the C string would end with a NUL there).
fn decode(s: &[u8]) -> Option<(char, usize)> {
    let len = utf_len(s[0])?;
    let seq = s.get(..len)?;
    let c = std::str::from_utf8(seq).ok()?.chars().next()?;
    Some((c, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const OUTBUF: usize = 128 * 1024;

    fn ps(src: &[u8], cells: usize, cs: Charset) -> (Vec<u8>, usize) {
        let mut out = Vec::new();
        let n = ps_escape(&mut out, src, 128 * 1024, cells, cs);
        (out, n)
    }

    #[test]
    fn library_escape_bytes() {
        assert_eq!(
            lib_escape(b"a\tb\x7f\xc3\xa9", 64, Charset::Bytes),
            b"a.b.??"
        );
        // snprintf into 64 bytes keeps 63; a NUL ends the string.
        assert_eq!(lib_escape(&[b'x'; 80], 64, Charset::Bytes).len(), 63);
        assert_eq!(lib_escape(b"ab\0cd", 64, Charset::Bytes), b"ab");
    }

    #[test]
    fn library_escape_into_an_array_is_the_same() {
        let inputs: [&[u8]; 6] = [
            b"a\tb\x7f\xc3\xa9",
            &[b'x'; 80],
            b"ab\0cd",
            b"a\xff\tb\xc3\xa9",
            b"ab\xe2\x82",
            b"",
        ];
        for src in inputs {
            for cs in [Charset::Bytes, Charset::Utf8] {
                let (a, n) = lib_escape_array::<64>(src, cs);
                assert_eq!(&a[..n], lib_escape(src, 64, cs), "{src:?}");
                let (a, n) = lib_escape_array::<4>(src, cs);
                assert_eq!(&a[..n], lib_escape(src, 4, cs), "{src:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn comm_in_the_c_locale_is_both_escapers(
            comm in proptest::collection::vec(
                prop_oneof![
                    8 => 0x20u8..0x7f,
                    1 => Just(0u8),
                    1 => prop_oneof![Just(0x1f), Just(0x7f), Just(0x80), Just(0xff)],
                    1 => any::<u8>(),
                ],
                0..90,
            ),
            cells in prop_oneof![0usize..20, Just(OUTBUF)],
        ) {
            let (esc, len) = lib_escape_array::<64>(&comm, Charset::Bytes);
            let mut want = Vec::new();
            let want_cells = ps_escape(&mut want, &esc[..len], OUTBUF, cells, Charset::Bytes);
            let mut got = [b'#'; 64];
            let n = comm_c_locale(&comm, cells, &mut got);
            prop_assert_eq!(&got[..n], &want[..]);
            prop_assert_eq!(n, want_cells);
        }
    }

    #[test]
    fn library_escape_utf8() {
        // Controls become '?', valid lead bytes pass untouched.
        assert_eq!(
            lib_escape(b"a\tb\xc3\xa9", 64, Charset::Utf8),
            b"a?b\xc3\xa9"
        );
        // A bad lead byte esc_all()s the rest, controls included ('.').
        assert_eq!(
            lib_escape(b"a\xff\tb\xc3\xa9", 64, Charset::Utf8),
            b"a?.b??"
        );
        // A sequence cut by the end of the buffer is esc_all()ed too.
        assert_eq!(lib_escape(b"ab\xe2\x82", 64, Charset::Utf8), b"ab??");
    }

    #[test]
    fn brackets_and_defunct() {
        assert_eq!(
            bracketed_command(b"kthreadd", false, 1 << 17, Charset::Bytes),
            b"[kthreadd]"
        );
        assert_eq!(
            bracketed_command(b"sh", true, 1 << 17, Charset::Bytes),
            b"[sh] <defunct>"
        );
        assert_eq!(bracketed_command(b"sh", true, 12, Charset::Bytes), b"");
    }

    #[test]
    fn ps_escape_cuts_at_cells() {
        assert_eq!(ps(b"sleep 1000", 5, Charset::Bytes), (b"sleep".to_vec(), 5));
        assert_eq!(ps(b"a\x01\xe9", 10, Charset::Bytes), (b"a.?".to_vec(), 3));
        assert_eq!(ps(b"abc", 0, Charset::Bytes), (Vec::new(), 0));
        // ASCII and broken sequences need no locale tables.
        assert_eq!(ps(b"a\x01\xe9z", 10, Charset::Utf8), (b"a??z".to_vec(), 4));
        assert_eq!(
            ps(b"ab\xed\xa0\x80", 10, Charset::Utf8),
            (b"ab???".to_vec(), 5)
        );
    }
}
