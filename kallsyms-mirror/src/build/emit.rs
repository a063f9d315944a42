//! `write_src()`: the assembler text, and the same tables as
//! [`OwnedTables`].

use alloc::vec::Vec;

use super::sort::names_order;
use super::{BuildError, Compressed};
use crate::owned::OwnedTables;
use crate::tables::MARKER_STRIDE;

/// One `kallsyms_offsets` entry, with the tool's range checks.
fn offset(c: &Compressed, i: usize) -> Result<i32, BuildError> {
    let e = &c.entries[i];
    let (value, overflow) = if !c.absolute_percpu {
        let v = e.addr.wrapping_sub(c.relative_base) as i64;
        (v, v < 0 || v > u32::MAX as i64)
    } else if e.percpu_absolute {
        let v = e.addr as i64;
        (v, v < 0 || v > i32::MAX as i64)
    } else {
        let v = c.relative_base.wrapping_sub(e.addr).wrapping_sub(1) as i64;
        (v, v < i32::MIN as i64 || v >= 0)
    };
    if overflow {
        return Err(BuildError::OffsetOutOfRange {
            name: e.name().to_vec(),
            addr: e.addr,
            absolute: e.percpu_absolute,
        });
    }
    // `(int)offset`.
    Ok(value as u32 as i32)
}

/// The ULEB128 length prefix of a name record (one or two bytes; names are
/// at most `KSYM_NAME_LEN` bytes, far below the 0x3FFF limit).
fn len_prefix(len: usize) -> ([u8; 2], usize) {
    if len <= 0x7f {
        ([len as u8, 0], 1)
    } else {
        ([(len & 0x7f) as u8 | 0x80, ((len >> 7) & 0x7f) as u8], 2)
    }
}

/// `kallsyms_token_index`, as the tool computes it (before any 16-bit
/// truncation).
fn token_index(tokens: &[Vec<u8>]) -> Vec<usize> {
    let mut off = 0;
    tokens
        .iter()
        .map(|t| {
            let at = off;
            off += t.len() + 1;
            at
        })
        .collect()
}

/// The tables of `write_src()`, as [`OwnedTables`].
pub(super) fn to_tables(c: &Compressed) -> Result<OwnedTables, BuildError> {
    let n = c.entries.len();
    if n > 1 << 24 {
        return Err(BuildError::TooManySymbols { count: n });
    }
    let mut names = Vec::new();
    let mut markers = Vec::with_capacity(n.div_ceil(MARKER_STRIDE));
    for i in 0..n {
        if i % MARKER_STRIDE == 0 {
            let off =
                u32::try_from(names.len()).map_err(|_| BuildError::TooManySymbols { count: n })?;
            markers.push(off);
        }
        let data = c.packed.get(i);
        let (prefix, plen) = len_prefix(data.len());
        names.extend_from_slice(&prefix[..plen]);
        names.extend_from_slice(data);
    }
    let tokens = c.best.expand_all();
    let mut token_table = Vec::new();
    for t in &tokens {
        token_table.extend_from_slice(t);
        token_table.push(0);
    }
    let token_index = token_index(&tokens)
        .into_iter()
        .map(|o| {
            u16::try_from(o).map_err(|_| BuildError::TokenTableTooLarge {
                size: token_table.len(),
            })
        })
        .collect::<Result<Vec<u16>, _>>()?;
    let offsets = (0..n)
        .map(|i| offset(c, i))
        .collect::<Result<Vec<i32>, _>>()?;
    let mut seqs_of_names = Vec::with_capacity(3 * n);
    for pos in names_order(&c.entries) {
        seqs_of_names.extend_from_slice(&[(pos >> 16) as u8, (pos >> 8) as u8, pos as u8]);
    }
    Ok(OwnedTables {
        offsets,
        relative_base: c.relative_base,
        names,
        markers,
        token_table,
        token_index,
        seqs_of_names,
        absolute_percpu: c.absolute_percpu,
        sections: c.sections,
    })
}

/// A byte sink with the few `printf()` conversions `write_src()` uses.
struct Out(Vec<u8>);

const HEX: &[u8; 16] = b"0123456789abcdef";

impl Out {
    fn s(&mut self, s: &[u8]) {
        self.0.extend_from_slice(s);
    }

    /// `%u` / `%d` of a non-negative value.
    fn dec(&mut self, mut v: u64) {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.0.extend_from_slice(&tmp[i..]);
    }

    /// `%#x` / `%#llx`: `0x` and lower-case hex, but plain `0` for zero.
    fn alt_hex(&mut self, v: u64) {
        if v == 0 {
            self.0.push(b'0');
            return;
        }
        self.0.extend_from_slice(b"0x");
        let digits = (64 - v.leading_zeros()).div_ceil(4);
        for k in (0..digits).rev() {
            self.0.push(HEX[((v >> (4 * k)) & 0xf) as usize]);
        }
    }

    /// `0x%02x` of a byte.
    fn byte(&mut self, b: u8) {
        self.0
            .extend_from_slice(&[b'0', b'x', HEX[(b >> 4) as usize], HEX[(b & 0xf) as usize]]);
    }

    /// `%s` of a (NUL-free) C string.
    fn cstr(&mut self, s: &[u8]) {
        let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        self.0.extend_from_slice(&s[..end]);
    }

    /// `output_label()`.
    fn label(&mut self, label: &[u8]) {
        self.s(b".globl ");
        self.s(label);
        self.s(b"\n\tALGN\n");
        self.s(label);
        self.s(b":\n");
    }
}

/// `write_src()`: the tool's stdout, byte for byte.
pub(super) fn write_asm(c: &Compressed) -> Result<Vec<u8>, BuildError> {
    let n = c.entries.len();
    // Offsets first: the tool fails there, and this must not return partial
    // output.
    let offsets = (0..n)
        .map(|i| offset(c, i))
        .collect::<Result<Vec<i32>, _>>()?;
    let total: usize = c.entries.iter().map(|e| e.sym.len()).sum();
    let mut o = Out(Vec::with_capacity(total * 12 + n * 80 + 8192));

    o.s(b"#include <asm/bitsperlong.h>\n");
    o.s(b"#if BITS_PER_LONG == 64\n");
    o.s(b"#define PTR .quad\n");
    o.s(b"#define ALGN .balign 8\n");
    o.s(b"#else\n");
    o.s(b"#define PTR .long\n");
    o.s(b"#define ALGN .balign 4\n");
    o.s(b"#endif\n");
    o.s(b"\t.section .rodata, \"a\"\n");

    o.label(b"kallsyms_num_syms");
    o.s(b"\t.long\t");
    o.dec(n as u32 as u64);
    o.s(b"\n\n");

    // Markers are unsigned int in the tool; they wrap at 4 GiB.
    let mut markers = Vec::with_capacity(n.div_ceil(MARKER_STRIDE));
    o.label(b"kallsyms_names");
    let mut off = 0u32;
    for (i, e) in c.entries.iter().enumerate() {
        if i % MARKER_STRIDE == 0 {
            markers.push(off);
        }
        let data = c.packed.get(i);
        let (prefix, plen) = len_prefix(data.len());
        o.s(b"\t.byte ");
        o.byte(prefix[0]);
        if plen == 2 {
            o.s(b", ");
            o.byte(prefix[1]);
        }
        off = off.wrapping_add(data.len() as u32 + plen as u32);
        for &b in data {
            o.s(b", ");
            o.byte(b);
        }
        // The expanded name is the original one.
        o.s(b"\t/* ");
        o.cstr(&e.sym);
        o.s(b" */\n");
    }
    o.s(b"\n");

    o.label(b"kallsyms_markers");
    for m in markers {
        o.s(b"\t.long\t");
        o.dec(m as u64);
        o.s(b"\n");
    }
    o.s(b"\n");

    let tokens = c.best.expand_all();
    o.label(b"kallsyms_token_table");
    for t in &tokens {
        o.s(b"\t.asciz\t\"");
        o.cstr(t);
        o.s(b"\"\n");
    }
    o.s(b"\n");

    o.label(b"kallsyms_token_index");
    for idx in token_index(&tokens) {
        o.s(b"\t.short\t");
        o.dec(idx as u64);
        o.s(b"\n");
    }
    o.s(b"\n");

    o.label(b"kallsyms_offsets");
    for (e, off) in c.entries.iter().zip(offsets) {
        o.s(b"\t.long\t");
        o.alt_hex(off as u32 as u64);
        o.s(b"\t/* ");
        o.cstr(&e.sym);
        o.s(b" */\n");
    }
    o.s(b"\n");

    o.label(b"kallsyms_relative_base");
    if c.text <= c.relative_base {
        o.s(b"\tPTR\t_text + ");
        o.alt_hex(c.relative_base - c.text);
    } else {
        o.s(b"\tPTR\t_text - ");
        o.alt_hex(c.text - c.relative_base);
    }
    o.s(b"\n\n");

    o.label(b"kallsyms_seqs_of_names");
    for pos in names_order(&c.entries) {
        o.s(b"\t.byte ");
        o.byte((pos >> 16) as u8);
        o.s(b", ");
        o.byte((pos >> 8) as u8);
        o.s(b", ");
        o.byte(pos as u8);
        o.s(b"\t/* ");
        o.cstr(&c.entries[pos].sym);
        o.s(b" */\n");
    }
    o.s(b"\n");
    Ok(o.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_forms() {
        let mut o = Out(Vec::new());
        o.alt_hex(0);
        o.s(b" ");
        o.alt_hex(0x1f);
        o.s(b" ");
        o.alt_hex(u64::MAX);
        o.s(b" ");
        o.dec(0);
        o.s(b" ");
        o.dec(1234567);
        o.s(b" ");
        o.byte(0x0a);
        assert_eq!(o.0, b"0 0x1f 0xffffffffffffffff 0 1234567 0x0a");
    }
}
