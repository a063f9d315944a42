//! Symbol order: `sort_symbols()`/`compare_symbols()` (address order) and
//! `compare_names()` (the order of `kallsyms_seqs_of_names`).
//!
//! Both comparators end in a unique key (`seq`), so they are total orders
//! and any correct sort gives the `qsort()` result.

use alloc::vec::Vec;
use core::cmp::Ordering;

use super::filter::Entry;

/// `may_be_linker_script_provide_symbol()`: a guess for names a linker
/// script provides (`__start_X`, `__stop_X`, `__end_X`, `__X_start`,
/// `__X_end`).
fn may_be_linker_script_provided(name: &[u8]) -> bool {
    if name.len() < 8 || !name.starts_with(b"__") {
        return false;
    }
    let rest = &name[2..];
    rest.starts_with(b"start_")
        || rest.starts_with(b"stop_")
        || rest.starts_with(b"end_")
        || name.ends_with(b"_start")
        || name.ends_with(b"_end")
}

/// The number of leading underscores (`strspn(name, "_")`).
fn leading_underscores(name: &[u8]) -> usize {
    name.iter().take_while(|&&b| b == b'_').count()
}

/// The `compare_symbols()` key of one entry.
fn key(e: &Entry) -> (u64, bool, bool, usize, u32) {
    let weak = matches!(e.sym.first(), Some(b'w' | b'W'));
    let name = e.name();
    (
        e.addr,
        weak,
        may_be_linker_script_provided(name),
        leading_underscores(name),
        e.seq,
    )
}

/// `sort_symbols()`: by address, then non-weak before weak, then ordinary
/// names before linker-provided ones, then fewer leading underscores first,
/// then input order.
pub(super) fn sort_symbols(entries: &mut Vec<Entry>) {
    let mut keyed: Vec<_> = core::mem::take(entries)
        .into_iter()
        .map(|e| (key(&e), e))
        .collect();
    keyed.sort_unstable_by_key(|a| a.0);
    entries.extend(keyed.into_iter().map(|(_, e)| e));
}

/// `compare_names()` over address-order positions: by name (`strcmp`), then
/// address, then position. Returns the positions in name order.
pub(super) fn names_order(entries: &[Entry]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        let (ea, eb) = (&entries[a], &entries[b]);
        match ea.name().cmp(eb.name()) {
            Ordering::Equal => ea.addr.cmp(&eb.addr).then(a.cmp(&b)),
            o => o,
        }
    });
    order
}

/// `record_relative_base()`: the address of the first non-absolute symbol
/// of the sorted table (0 when there is none).
pub(super) fn record_relative_base(entries: &[Entry]) -> u64 {
    entries
        .iter()
        .find(|e| !e.percpu_absolute)
        .map_or(0, |e| e.addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linker_provided() {
        assert!(may_be_linker_script_provided(b"__start_foo"));
        assert!(may_be_linker_script_provided(b"__stop_foo"));
        assert!(may_be_linker_script_provided(b"__end_foo"));
        assert!(may_be_linker_script_provided(b"__foo_start"));
        assert!(may_be_linker_script_provided(b"__bss_end"));
        assert!(!may_be_linker_script_provided(b"__x_end"));
        assert!(!may_be_linker_script_provided(b"_foo_start"));
        assert!(!may_be_linker_script_provided(b"__foobar"));
    }
}
