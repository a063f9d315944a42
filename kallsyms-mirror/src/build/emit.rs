//! `write_src()`: the assembler text, and the same tables as
//! [`OwnedTables`].

use alloc::vec::Vec;

use super::sort::names_order;
use super::{BuildError, Compressed};
use crate::layout::KernelLayout;
use crate::owned::OwnedTables;
use crate::tables::{OffsetEncoding, MARKER_STRIDE};

/// One `kallsyms_offsets` entry as the tool prints it, with its range
/// checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Printed {
    /// 6.12 (`%#x` of the `int`), and 7.3 without `--pc-relative` (`%#x`
    /// of the address as `unsigned int`): the entry's bits.
    Value(i32),
    /// 7.3 `--pc-relative`: `_text - . + (%d)` of `addr - _text`.
    TextRelative(i32),
}

/// One `kallsyms_offsets` entry as printed, with the tool's range checks.
fn printed(c: &Compressed, i: usize) -> Result<Printed, BuildError> {
    let e = &c.entries[i];
    if c.opts.layout == KernelLayout::Linux7_3 {
        if !c.opts.pc_relative {
            // `(unsigned int)table[i]->addr`, no check.
            return Ok(Printed::Value(e.addr as u32 as i32));
        }
        // `long long offset = table[i]->addr - _text;`
        let v = e.addr.wrapping_sub(c.text) as i64;
        return match i32::try_from(v) {
            Ok(v) => Ok(Printed::TextRelative(v)),
            Err(_) => Err(BuildError::OffsetOutOfRange {
                name: e.name().to_vec(),
                addr: e.addr,
                absolute: false,
            }),
        };
    }
    let (value, overflow) = if !c.opts.absolute_percpu {
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
    Ok(Printed::Value(value as u32 as i32))
}

/// One `kallsyms_offsets` entry in memory: the printed value, or for a
/// PC-relative one what the assembler and linker make of `_text - . + N`
/// with the entry at `offsets_addr + 4 * i`: `addr - &entry`, which must
/// fit the 32-bit relocation.
fn offset(c: &Compressed, i: usize) -> Result<i32, BuildError> {
    match printed(c, i)? {
        Printed::Value(v) => Ok(v),
        Printed::TextRelative(_) => {
            let e = &c.entries[i];
            let entry = c.opts.offsets_addr.wrapping_add(4 * i as u64);
            i32::try_from(e.addr.wrapping_sub(entry) as i64).map_err(|_| {
                BuildError::PcRelativeOutOfRange {
                    name: e.name().to_vec(),
                    addr: e.addr,
                    entry,
                }
            })
        }
    }
}

/// The encoding of the tables [`to_tables`] builds.
fn encoding(c: &Compressed) -> OffsetEncoding {
    match c.opts.layout {
        KernelLayout::Linux6_12 => OffsetEncoding::RelativeBase {
            base: c.relative_base,
            absolute_percpu: c.opts.absolute_percpu,
        },
        KernelLayout::Linux7_3 if c.opts.pc_relative => OffsetEncoding::PcRelative {
            table_addr: c.opts.offsets_addr,
        },
        // `return (u32)kallsyms_offsets[idx];`
        KernelLayout::Linux7_3 => OffsetEncoding::RelativeBase {
            base: 0,
            absolute_percpu: false,
        },
    }
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
        encoding: encoding(c),
        names,
        markers,
        token_table,
        token_index,
        seqs_of_names,
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

    /// `%d` of an `int`.
    fn signed(&mut self, v: i32) {
        if v < 0 {
            self.0.push(b'-');
        }
        self.dec(u64::from(v.unsigned_abs()));
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

    /// `output_label()`: 6.12 aligns with the `ALGN` macro of its
    /// preamble, 7.3 with `.balign 4`.
    fn label(&mut self, label: &[u8], layout: KernelLayout) {
        self.s(b".globl ");
        self.s(label);
        self.s(match layout {
            KernelLayout::Linux6_12 => b"\n\tALGN\n",
            KernelLayout::Linux7_3 => b"\n\t.balign 4\n",
        });
        self.s(label);
        self.s(b":\n");
    }

    /// 7.3's `.size <label>, . - <label>` line (6.12 prints none).
    fn size(&mut self, label: &[u8], layout: KernelLayout) {
        if layout == KernelLayout::Linux7_3 {
            self.s(b".size ");
            self.s(label);
            self.s(b", . - ");
            self.s(label);
            self.s(b"\n");
        }
    }
}

/// `write_src()`: the tool's stdout, byte for byte.
pub(super) fn write_asm(c: &Compressed) -> Result<Vec<u8>, BuildError> {
    let n = c.entries.len();
    // Offsets first: the tool fails there, and this must not return partial
    // output.
    let offsets = (0..n)
        .map(|i| printed(c, i))
        .collect::<Result<Vec<Printed>, _>>()?;
    let layout = c.opts.layout;
    let total: usize = c.entries.iter().map(|e| e.sym.len()).sum();
    let mut o = Out(Vec::with_capacity(total * 12 + n * 80 + 8192));

    if layout == KernelLayout::Linux6_12 {
        o.s(b"#include <asm/bitsperlong.h>\n");
        o.s(b"#if BITS_PER_LONG == 64\n");
        o.s(b"#define PTR .quad\n");
        o.s(b"#define ALGN .balign 8\n");
        o.s(b"#else\n");
        o.s(b"#define PTR .long\n");
        o.s(b"#define ALGN .balign 4\n");
        o.s(b"#endif\n");
    }
    o.s(b"\t.section .rodata, \"a\"\n");

    o.label(b"kallsyms_num_syms", layout);
    o.s(b"\t.long\t");
    o.dec(n as u32 as u64);
    o.s(b"\n\n");

    // Markers are unsigned int in the tool; they wrap at 4 GiB.
    let mut markers = Vec::with_capacity(n.div_ceil(MARKER_STRIDE));
    o.label(b"kallsyms_names", layout);
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
    o.size(b"kallsyms_names", layout);
    o.s(b"\n");

    o.label(b"kallsyms_markers", layout);
    for m in markers {
        o.s(b"\t.long\t");
        o.dec(m as u64);
        o.s(b"\n");
    }
    o.size(b"kallsyms_markers", layout);
    o.s(b"\n");

    let tokens = c.best.expand_all();
    o.label(b"kallsyms_token_table", layout);
    for t in &tokens {
        o.s(b"\t.asciz\t\"");
        o.cstr(t);
        o.s(b"\"\n");
    }
    o.size(b"kallsyms_token_table", layout);
    o.s(b"\n");

    o.label(b"kallsyms_token_index", layout);
    for idx in token_index(&tokens) {
        o.s(b"\t.short\t");
        o.dec(idx as u64);
        o.s(b"\n");
    }
    o.s(b"\n");

    o.label(b"kallsyms_offsets", layout);
    for (e, off) in c.entries.iter().zip(offsets) {
        match off {
            Printed::Value(v) => {
                o.s(b"\t.long\t");
                o.alt_hex(v as u32 as u64);
            }
            Printed::TextRelative(v) => {
                o.s(b"\t.long\t_text - . + (");
                o.signed(v);
                o.s(b")");
            }
        }
        o.s(b"\t/* ");
        o.cstr(&e.sym);
        o.s(b" */\n");
    }
    o.size(b"kallsyms_offsets", layout);
    o.s(b"\n");

    if layout == KernelLayout::Linux6_12 {
        o.label(b"kallsyms_relative_base", layout);
        if c.text <= c.relative_base {
            o.s(b"\tPTR\t_text + ");
            o.alt_hex(c.relative_base - c.text);
        } else {
            o.s(b"\tPTR\t_text - ");
            o.alt_hex(c.text - c.relative_base);
        }
        o.s(b"\n\n");
    }

    o.label(b"kallsyms_seqs_of_names", layout);
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
        o.s(b" ");
        o.signed(i32::MIN);
        o.s(b" ");
        o.signed(-5);
        o.s(b" ");
        o.signed(0);
        assert_eq!(
            o.0,
            b"0 0x1f 0xffffffffffffffff 0 1234567 0x0a -2147483648 -5 0".as_slice()
        );
    }
}
