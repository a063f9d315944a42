//! Byte-level scanning shared by the text parsers.
//!
//! Everything works on a `&[u8]` with a cursor; there is no per-line
//! allocation and no UTF-8 decoding except of the final name slices.

use super::error::{Field, ParseErrorKind};
use crate::KSYM_NAME_LEN;

/// Longest symbol name the kernel prints (`KSYM_NAME_LEN` minus the NUL).
pub(crate) const MAX_NAME: usize = KSYM_NAME_LEN - 1;

/// `MODULE_NAME_LEN` on 64-bit kernels (`64 - sizeof(unsigned long)`),
/// including the NUL.
pub(crate) const MODULE_NAME_LEN: usize = 56;

#[inline(always)]
pub(crate) fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

#[inline(always)]
fn is_eol(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// A cursor over one input buffer that counts lines.
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    /// 1-based number of the line the cursor is on.
    pub(crate) line: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Cursor {
            data,
            pos: 0,
            line: 1,
        }
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    /// Skips blank (empty or whitespace-only) lines. Returns `false` at the
    /// end of the input, `true` when positioned at the start of a non-blank
    /// line's content.
    #[inline]
    pub(crate) fn next_line(&mut self) -> bool {
        // The common case: the line starts with its content.
        if self.peek().is_some_and(|b| b > b' ') {
            return true;
        }
        loop {
            // Leading blanks are tolerated.
            self.skip_blanks();
            match self.peek() {
                None => return false,
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                }
                Some(b'\r') if self.data.get(self.pos + 1) == Some(&b'\n') => {
                    self.pos += 2;
                    self.line += 1;
                }
                Some(b'\r') if self.pos + 1 == self.data.len() => {
                    self.pos += 1;
                }
                Some(_) => return true,
            }
        }
    }

    #[inline(always)]
    pub(crate) fn skip_blanks(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            if !is_blank(b) {
                break;
            }
            self.pos += 1;
        }
    }

    /// True if the cursor is at the end of the current line.
    #[inline(always)]
    pub(crate) fn at_eol(&self) -> bool {
        match self.peek() {
            None | Some(b'\n') => true,
            Some(b'\r') => matches!(self.data.get(self.pos + 1), None | Some(b'\n')),
            Some(_) => false,
        }
    }

    /// Requires the rest of the line to be blank, then moves past the line
    /// terminator.
    #[inline]
    pub(crate) fn end_line(&mut self) -> Result<(), ParseErrorKind> {
        self.skip_blanks();
        match self.peek() {
            None => Ok(()),
            Some(b'\n') => {
                self.pos += 1;
                self.line += 1;
                Ok(())
            }
            Some(b'\r') => match self.data.get(self.pos + 1) {
                None => {
                    self.pos += 1;
                    Ok(())
                }
                Some(b'\n') => {
                    self.pos += 2;
                    self.line += 1;
                    Ok(())
                }
                Some(_) => Err(ParseErrorKind::Malformed {
                    field: Field::Trailing,
                    reason: "stray carriage return",
                }),
            },
            Some(_) => Err(ParseErrorKind::Malformed {
                field: Field::Trailing,
                reason: "unexpected text at the end of the line",
            }),
        }
    }

    /// Requires at least one blank, skips all of them, and requires more
    /// text on the line (else the line is truncated before `next`).
    #[inline]
    pub(crate) fn separator(&mut self, this: Field, next: Field) -> Result<(), ParseErrorKind> {
        match self.peek() {
            Some(b) if is_blank(b) => {}
            _ if self.at_eol() => return Err(ParseErrorKind::Truncated { missing: next }),
            _ => {
                return Err(ParseErrorKind::Malformed {
                    field: this,
                    reason: "not followed by a space or tab",
                })
            }
        }
        self.skip_blanks();
        if self.at_eol() {
            return Err(ParseErrorKind::Truncated { missing: next });
        }
        Ok(())
    }

    /// Takes one token: the bytes up to the next space, tab, line end or
    /// other control character (may be empty).
    #[inline(always)]
    pub(crate) fn token(&mut self) -> &'a [u8] {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        let n = find_delim(rest);
        self.pos += n;
        rest.get(..n).unwrap_or_default()
    }

    /// Parses a hex number with an optional `0x` prefix, ending at a blank or
    /// the end of the line.
    #[inline(always)]
    pub(crate) fn hex(&mut self, field: Field) -> Result<u64, ParseErrorKind> {
        let tok = self.token();
        if tok.is_empty() && !self.at_eol() && !self.peek().is_some_and(is_blank) {
            let junk = self.data.get(self.pos..).unwrap_or_default();
            let junk = junk.get(..find_eol(junk)).unwrap_or_default();
            return Err(ParseErrorKind::BadAddress {
                field,
                text: lossy_prefix(junk),
                reason: "not a hexadecimal number",
            });
        }
        parse_hex(tok, field)
    }

    /// One type character followed by a blank.
    #[inline(always)]
    pub(crate) fn type_char(&mut self) -> Result<u8, ParseErrorKind> {
        let tok = self.token();
        match tok {
            [b] if b.is_ascii_graphic() => Ok(*b),
            [_] => Err(ParseErrorKind::Malformed {
                field: Field::Type,
                reason: "not a printable ASCII character",
            }),
            _ => Err(ParseErrorKind::Malformed {
                field: Field::Type,
                reason: "must be a single character",
            }),
        }
    }

    /// A symbol name: checked for length and UTF-8.
    #[inline(always)]
    pub(crate) fn name(&mut self) -> Result<&'a [u8], ParseErrorKind> {
        let name = self.token();
        check_name(name)?;
        Ok(name)
    }

    /// Moves to the byte after `b` on the current line, returning the bytes
    /// before it, or `None` (cursor unchanged) if the line has no `b`.
    #[inline]
    pub(crate) fn until(&mut self, b: u8) -> Option<&'a [u8]> {
        let rest = self.data.get(self.pos..)?;
        for (i, &c) in rest.iter().enumerate() {
            if c == b {
                let out = rest.get(..i)?;
                self.pos += i + 1;
                return Some(out);
            }
            if c == b'\n' {
                return None;
            }
        }
        None
    }

    /// `nm`'s undefined-symbol lines: a lone `U`, `w` or `v` where the
    /// address should be.
    pub(crate) fn at_undefined(&self) -> bool {
        matches!(self.peek(), Some(b'U' | b'w' | b'v'))
            && matches!(self.data.get(self.pos + 1), Some(&b) if is_blank(b))
    }

    /// Moves past the end of the current line.
    pub(crate) fn skip_line(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            self.pos += 1;
            if b == b'\n' {
                self.line += 1;
                return;
            }
        }
    }

    /// The bytes from the cursor to the end of the input.
    #[inline(always)]
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or_default()
    }

    /// Moves `n` bytes forward, past the end of the current line if
    /// `newline` (the last of those bytes is its `\n`).
    #[inline(always)]
    pub(crate) fn advance(&mut self, n: usize, newline: bool) {
        self.pos += n;
        self.line += usize::from(newline);
    }

    #[inline(always)]
    pub(crate) fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
}

/// Index of the first byte `<= b' '` (space, tab, CR, LF, other control
/// characters) in `s`, or `s.len()`. Eight bytes at a time:
/// [`find_delim_ascii`] without its ASCII answer, whose bookkeeping the
/// compiler drops once both are inlined.
#[inline(always)]
pub(crate) fn find_delim(s: &[u8]) -> usize {
    find_delim_ascii(s).0
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Decodes 8 ASCII hex digits (first digit most significant), or `None` if
/// any byte is not `[0-9a-fA-F]`. Word-at-a-time: every byte is checked.
#[inline(always)]
pub(crate) fn hex8(b: [u8; 8]) -> Option<u32> {
    let x = u64::from_le_bytes(b);
    // Per-byte range checks below are exact only for bytes < 0x80 (no carry
    // leaves a byte), so reject the rest first.
    if x & HI != 0 {
        return None;
    }
    // High bit of each byte set iff that byte is in the range.
    let digit = x.wrapping_add(LO * (0x80 - u64::from(b'0')))
        & !x.wrapping_add(LO * (0x7f - u64::from(b'9')));
    let y = x | (LO * 0x20); // ASCII lower case
    let alpha = y.wrapping_add(LO * (0x80 - u64::from(b'a')))
        & !y.wrapping_add(LO * (0x7f - u64::from(b'f')));
    if (digit | alpha) & HI != HI {
        return None;
    }
    // Nibble values: low four bits, plus 9 for letters.
    let n = (x & (LO * 0x0f)) + ((alpha & HI) >> 7) * 9;
    // First digit (lowest byte) becomes the most significant.
    let n = n.swap_bytes();
    let n = (n | (n >> 4)) & 0x00ff_00ff_00ff_00ff;
    let n = (n | (n >> 8)) & 0x0000_ffff_0000_ffff;
    let n = (n | (n >> 16)) & 0x0000_0000_ffff_ffff;
    Some(n as u32)
}

/// Decodes exactly 16 ASCII hex digits, or `None` if any is not one.
#[inline(always)]
pub(crate) fn hex16(b: &[u8; 16]) -> Option<u64> {
    let (hi, lo) = b.split_at(8);
    let hi = hex8(hi.try_into().ok()?)?;
    let lo = hex8(lo.try_into().ok()?)?;
    Some((u64::from(hi) << 32) | u64::from(lo))
}

/// Like [`find_delim`], and also tells whether the bytes before the
/// delimiter are all ASCII (one pass over the name instead of two).
#[inline(always)]
pub(crate) fn find_delim_ascii(s: &[u8]) -> (usize, bool) {
    let mut chunks = s.chunks_exact(8);
    let mut i = 0;
    let mut acc = 0u64;
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w);
        let t = x.wrapping_sub(LO * 0x21) & !x & HI;
        if t != 0 {
            let k = t.trailing_zeros() / 8;
            // Bytes below the delimiter only.
            let below = (1u64 << (k * 8)) - 1;
            acc |= x & below;
            return (i + k as usize, acc & HI == 0);
        }
        acc |= x;
        i += 8;
    }
    for &b in chunks.remainder() {
        if b <= b' ' {
            break;
        }
        acc |= u64::from(b);
        i += 1;
    }
    (i, acc & HI == 0)
}

/// Index of the first `\n` or `\r` in `s`, or `s.len()`.
fn find_eol(s: &[u8]) -> usize {
    s.iter().position(|&b| is_eol(b)).unwrap_or(s.len())
}

/// Hex digit values; 0xff for non-digits.
static HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Checks a symbol name's length and encoding.
#[inline(always)]
pub(crate) fn check_name(name: &[u8]) -> Result<(), ParseErrorKind> {
    if name.is_empty() {
        return Err(ParseErrorKind::Truncated {
            missing: Field::Name,
        });
    }
    if name.len() > MAX_NAME {
        return Err(ParseErrorKind::NameTooLong { len: name.len() });
    }
    if !name.is_ascii() && core::str::from_utf8(name).is_err() {
        return Err(ParseErrorKind::NonUtf8Name);
    }
    Ok(())
}

/// Parses `[0x]hex`: 1 to 16 hex digits.
#[inline(always)]
pub(crate) fn parse_hex(tok: &[u8], field: Field) -> Result<u64, ParseErrorKind> {
    let digits = match tok {
        [b'0', b'x' | b'X', rest @ ..] => rest,
        _ => tok,
    };
    let bad = |reason: &'static str| ParseErrorKind::BadAddress {
        field,
        text: lossy_prefix(tok),
        reason,
    };
    if digits.is_empty() {
        return Err(if tok.is_empty() {
            ParseErrorKind::Truncated { missing: field }
        } else {
            bad("no hex digits")
        });
    }
    if digits.len() > 16 {
        return Err(bad("more than 16 hex digits"));
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = HEX[usize::from(c)];
        if d > 15 {
            return Err(bad("not a hexadecimal number"));
        }
        v = (v << 4) | u64::from(d);
    }
    Ok(v)
}

/// Parses a decimal `u64`.
pub(crate) fn parse_dec(tok: &[u8], field: Field) -> Result<u64, ParseErrorKind> {
    if tok.is_empty() {
        return Err(ParseErrorKind::Truncated { missing: field });
    }
    let mut v: u64 = 0;
    for &c in tok {
        if !c.is_ascii_digit() {
            return Err(ParseErrorKind::Malformed {
                field,
                reason: "not a decimal number",
            });
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(c - b'0')))
            .ok_or(ParseErrorKind::Malformed {
                field,
                reason: "number too large",
            })?;
    }
    Ok(v)
}

/// The first few bytes of `b`, for error messages.
pub(crate) fn lossy_prefix(b: &[u8]) -> std::string::String {
    let cut = b.get(..40).unwrap_or(b);
    let mut s = std::string::String::from_utf8_lossy(cut).into_owned();
    if cut.len() < b.len() {
        s.push_str("...");
    }
    s
}

/// Validates a module name as the kernel would print it.
pub(crate) fn module_name(b: &[u8]) -> Result<&str, ParseErrorKind> {
    let bad = |reason| ParseErrorKind::Malformed {
        field: Field::Module,
        reason,
    };
    if b.is_empty() {
        return Err(bad("empty module name"));
    }
    if b.len() >= MODULE_NAME_LEN {
        return Err(bad("longer than MODULE_NAME_LEN - 1 (55) bytes"));
    }
    if b.iter()
        .any(|&c| c <= b' ' || c == b'[' || c == b']' || c == b'/')
    {
        return Err(bad("contains whitespace, '[', ']' or '/'"));
    }
    core::str::from_utf8(b).map_err(|_| bad("not UTF-8"))
}
