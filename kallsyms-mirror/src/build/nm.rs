//! `nm -n` parsing: the line-format half of `read_symbol()`.

use alloc::vec::Vec;

use super::BuildError;
use crate::owned::RawSymbol;

/// Parses `nm -n` output (or `/proc/kallsyms`) as `scripts/kallsyms`'s
/// `read_symbol()` does.
///
/// Lines are split like `getline()`: a final line without newline counts,
/// the empty remainder after a final newline does not. Each line must be
/// `ADDR ' ' TYPE ' ' NAME`: `ADDR` as `strtoull(.., 16)` reads it (leading
/// white space, an optional sign and `0x` prefix; an overflowing value
/// saturates), exactly one space, an ASCII type byte, exactly one space.
/// `NAME` is the rest of the line up to its first NUL byte; it may be empty
/// and is not otherwise checked. Anything else, an empty line included, is
/// [`BuildError::LineFormat`], where the tool prints "line format error" and
/// exits.
///
/// Every well-formed line is returned, including the ones the tool then
/// drops (types `u`/`n`/`A`, names of `KSYM_NAME_LEN` bytes or more, whose
/// warning the tool prints without stopping): [`super::compress`] applies
/// those rules, since `_text` is recorded from the raw input first.
pub fn read_nm(text: &[u8]) -> Result<Vec<RawSymbol>, BuildError> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut line_no = 0usize;
    while !rest.is_empty() {
        line_no += 1;
        let (line, next) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        let sym = parse_line(line).ok_or_else(|| BuildError::LineFormat {
            line: line_no,
            text: line.to_vec(),
        })?;
        out.push(sym);
    }
    Ok(out)
}

/// `isspace()` in the C locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn hex_val(b: u8) -> Option<u64> {
    match b {
        b'0'..=b'9' => Some((b - b'0') as u64),
        b'a'..=b'f' => Some((b - b'a' + 10) as u64),
        b'A'..=b'F' => Some((b - b'A' + 10) as u64),
        _ => None,
    }
}

/// glibc `strtoull(s, &end, 16)`: returns the value and the end index, or
/// `None` when no digits were read (`end == s`).
fn strtoull16(s: &[u8]) -> Option<(u64, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = 0;
    while is_c_space(at(i)) {
        i += 1;
    }
    let mut neg = false;
    if at(i) == b'-' || at(i) == b'+' {
        neg = at(i) == b'-';
        i += 1;
    }
    if at(i) == b'0' && (at(i + 1) | 0x20) == b'x' && hex_val(at(i + 2)).is_some() {
        i += 2;
    }
    let start = i;
    let mut value = 0u64;
    let mut overflow = false;
    while let Some(d) = hex_val(at(i)) {
        match value.checked_mul(16).and_then(|v| v.checked_add(d)) {
            Some(v) => value = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return None;
    }
    let value = if overflow {
        u64::MAX
    } else if neg {
        value.wrapping_neg()
    } else {
        value
    };
    Some((value, i))
}

/// One line of `read_symbol()`, newline already stripped.
fn parse_line(line: &[u8]) -> Option<RawSymbol> {
    // The C string ends at the first NUL; bytes past the line read as NUL.
    let cstr = match line.iter().position(|&b| b == 0) {
        Some(n) => &line[..n],
        None => line,
    };
    let (addr, mut p) = strtoull16(cstr)?;
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    if at(p) != b' ' {
        return None;
    }
    p += 1;
    let kind = at(p);
    // Past the end of the line the tool reads its buffer's terminator (or,
    // on an unterminated last line, stale bytes): treat it as malformed.
    if p >= line.len() || !kind.is_ascii() {
        return None;
    }
    p += 1;
    if at(p) != b' ' || p >= line.len() {
        return None;
    }
    p += 1;
    let tail = line.get(p..).unwrap_or(&[]);
    let name = match tail.iter().position(|&b| b == 0) {
        Some(n) => &tail[..n],
        None => tail,
    };
    Some(RawSymbol {
        addr,
        kind,
        name: name.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoull_forms() {
        assert_eq!(strtoull16(b"ff "), Some((0xff, 2)));
        assert_eq!(strtoull16(b"  0x10 "), Some((0x10, 6)));
        assert_eq!(strtoull16(b"0xg"), Some((0, 1)));
        assert_eq!(strtoull16(b"-1"), Some((u64::MAX, 2)));
        assert_eq!(strtoull16(b"11112222333344445"), Some((u64::MAX, 17)));
        assert_eq!(strtoull16(b" x"), None);
        assert_eq!(strtoull16(b""), None);
    }

    #[test]
    fn lines() {
        let v = read_nm(b"ffffffff81000000 T _text\n0 t \nabc A x\0y").unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].name, b"_text");
        assert_eq!(v[1].name, b"");
        assert_eq!(v[2].name, b"x");
        assert!(matches!(
            read_nm(b"1 T a\n\n"),
            Err(BuildError::LineFormat { line: 2, .. })
        ));
        assert!(read_nm(b"1 T").is_err());
        assert!(read_nm(b"1  T a").is_err());
        assert!(read_nm(b"1 \xc3 a").is_err());
        assert!(read_nm(b"").unwrap().is_empty());
    }
}
