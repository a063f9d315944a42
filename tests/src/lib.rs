//! Shared helpers for the integration suites: a plain table encoder and
//! random-table strategies.
//!
//! [`plain_tables`] encodes sorted symbols into valid kallsyms tables with the
//! trivial token table (token `b` expands to the byte `b`), independently of
//! the project's compressor, so the lookup suites do not depend on it.

use kallsyms_fast::owned::{OwnedTables, RawSymbol};
use kallsyms_fast::Sections;

/// Whether `addr` is encoded as an absolute per-CPU value (`--absolute-percpu`).
pub fn is_percpu(addr: u64) -> bool {
    addr < 0x8000_0000
}

/// Encodes `symbols` (already in kernel order: ascending address, aliases in
/// the wanted order) into kallsyms tables with one token per byte.
pub fn plain_tables(
    symbols: &[RawSymbol],
    absolute_percpu: bool,
    sections: Sections,
) -> OwnedTables {
    let mut t = OwnedTables {
        absolute_percpu,
        sections,
        ..Default::default()
    };
    // Token table: token b = the single byte b (token 0 = empty string).
    for b in 0..=255u16 {
        t.token_index.push(t.token_table.len() as u16);
        if b != 0 {
            t.token_table.push(b as u8);
        }
        t.token_table.push(0);
    }
    let relative_base = symbols
        .iter()
        .filter(|s| !(absolute_percpu && is_percpu(s.addr)))
        .map(|s| s.addr)
        .min()
        .unwrap_or(0);
    t.relative_base = relative_base;
    for (i, s) in symbols.iter().enumerate() {
        if i % 256 == 0 {
            t.markers.push(t.names.len() as u32);
        }
        let len = 1 + s.name.len();
        if len > 0x7f {
            t.names.push((len & 0x7f) as u8 | 0x80);
            t.names.push((len >> 7) as u8);
        } else {
            t.names.push(len as u8);
        }
        t.names.push(s.kind);
        t.names.extend_from_slice(&s.name);
        let off = if !absolute_percpu {
            (s.addr - relative_base) as u32 as i32
        } else if is_percpu(s.addr) {
            s.addr as i32
        } else {
            (relative_base as i64 - s.addr as i64 - 1) as i32
        };
        t.offsets.push(off);
    }
    let mut order: Vec<usize> = (0..symbols.len()).collect();
    order.sort_by(|&a, &b| {
        symbols[a]
            .name
            .cmp(&symbols[b].name)
            .then(symbols[a].addr.cmp(&symbols[b].addr))
            .then(a.cmp(&b))
    });
    for i in order {
        t.seqs_of_names
            .extend_from_slice(&[(i >> 16) as u8, (i >> 8) as u8, i as u8]);
    }
    t
}
