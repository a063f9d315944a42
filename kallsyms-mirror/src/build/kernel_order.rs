//! Re-encoding a running kernel's table from `/proc/kallsyms`.
//!
//! `/proc/kallsyms` lists the core table already filtered and sorted, in
//! position order. Feeding it through [`compress`](super::compress) again is
//! not an identity: `read_symbol()` drops type `A` symbols, which is how the
//! per-CPU symbols of an `--absolute-percpu` kernel are printed. This entry
//! point keeps the list exactly as given (no filtering, no re-sorting) and
//! runs only the encoding half of `scripts/kallsyms`: the same token-table
//! optimisation, offsets encoding, markers and `seqs_of_names`, so that the
//! result has the kernel's positions and realistic record lengths.

use alloc::vec::Vec;

use super::filter::Entry;
use super::{sort, tokens, BuildError, CompressOptions, Compressed};
use crate::layout::KernelLayout;
use crate::owned::{OwnedTables, RawSymbol};
use crate::tables::{Sections, KSYM_NAME_LEN};

/// Encodes `symbols`, in the kernel's position order, into 6.12 tables.
///
/// With `absolute_percpu`, symbols between `__per_cpu_start` and
/// `__per_cpu_end` (inclusive, as `scripts/kallsyms` tests the range) are
/// stored as absolute values. `sections` is stored as given.
pub fn encode_kernel_order(
    symbols: &[RawSymbol],
    absolute_percpu: bool,
    sections: Sections,
) -> Result<OwnedTables, BuildError> {
    let opts = CompressOptions {
        absolute_percpu,
        ..Default::default()
    };
    encode_kernel_order_with(symbols, &opts, sections)
}

/// [`encode_kernel_order`] for the kernel `opts.layout` names, with its
/// offsets encoding: 6.12's (`opts.absolute_percpu`), or 7.3's
/// (`opts.pc_relative`, the table placed at `opts.offsets_addr`).
/// `all_symbols` and `reject_long_names` are ignored: nothing is filtered
/// and a name of `KSYM_NAME_LEN` bytes is always refused.
pub fn encode_kernel_order_with(
    symbols: &[RawSymbol],
    opts: &CompressOptions,
    sections: Sections,
) -> Result<OwnedTables, BuildError> {
    opts.check()?;
    let absolute_percpu = opts.absolute_percpu;
    let find = |n: &[u8]| symbols.iter().find(|s| s.name == n).map(|s| s.addr);
    let percpu = match (find(b"__per_cpu_start"), find(b"__per_cpu_end")) {
        (Some(s), Some(e)) if absolute_percpu => Some((s, e)),
        _ => None,
    };
    let mut entries = Vec::with_capacity(symbols.len());
    for (i, s) in symbols.iter().enumerate() {
        if s.name.len() >= KSYM_NAME_LEN {
            return Err(BuildError::NameTooLong {
                name: s.name.clone(),
                len: s.name.len(),
            });
        }
        let misplaced = i > 0 && symbols[i - 1].addr > s.addr;
        if s.name.is_empty() || s.name.contains(&0) || misplaced {
            let mut text = s.name.clone();
            text.extend_from_slice(if misplaced {
                b": below the previous symbol's address"
            } else {
                b": empty name or NUL byte"
            });
            return Err(BuildError::LineFormat { line: i + 1, text });
        }
        let mut sym = Vec::with_capacity(1 + s.name.len());
        sym.push(s.kind);
        sym.extend_from_slice(&s.name);
        entries.push(Entry {
            addr: s.addr,
            seq: i as u32,
            percpu_absolute: matches!(percpu, Some((a, b)) if s.addr >= a && s.addr <= b),
            sym,
        });
    }
    let relative_base = match opts.layout {
        KernelLayout::Linux6_12 => sort::record_relative_base(&entries),
        KernelLayout::Linux7_3 => 0,
    };
    let mut packed = tokens::Packed::new(&entries);
    let best = tokens::optimize_token_table(&mut packed);
    let c = Compressed {
        entries,
        packed,
        best,
        text: find(b"_text").unwrap_or(0),
        relative_base,
        sections,
        opts: *opts,
    };
    super::emit::to_tables(&c)
}
