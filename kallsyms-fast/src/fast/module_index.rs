//! Per-module address index replacing `find_kallsyms_symbol()`'s linear scan.
//!
//! The candidates `find_kallsyms_symbol()` would consider (defined, named,
//! not mapping symbols) are sorted by value; at each value only the lowest
//! symtab index is kept, because the kernel's strict `thisval > bestval`
//! keeps the first of equal values. A lookup is then one binary search:
//! the best symbol is the last entry at or below the address (if it lies in
//! the address's memory region), the size ends at the next entry or the
//! region's end, whichever comes first — the kernel's bounds exactly.
//!
//! Memory: 16 bytes per candidate symbol (value and index).

use crate::module::{
    region_for, symbol_is_candidate, MemRegion, ModuleHit, ModuleLayout, ModuleSymtab,
};

/// One candidate symbol: its value and symtab index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ModEntry {
    /// `kallsyms_symbol_value()`.
    pub value: u64,
    /// Symtab index.
    pub index: u64,
}

/// How many entries [`build_module_index`] needs at most for `symtab`.
pub fn module_index_capacity<S: ModuleSymtab + ?Sized>(symtab: &S) -> usize {
    symtab.num_symtab().saturating_sub(1)
}

/// Fills `out` with the sorted, de-duplicated candidates of `symtab`;
/// returns how many were written. `out` must hold
/// [`module_index_capacity`] entries; extra candidates are refused (`None`).
pub fn build_module_index<S: ModuleSymtab + ?Sized>(
    symtab: &S,
    out: &mut [ModEntry],
) -> Option<usize> {
    let n = collect_module_candidates(symtab, out)?;
    Some(sort_module_index(out.get_mut(..n)?))
}

/// The first half of [`build_module_index`]: copies the candidates of
/// `symtab`, in symtab order, into `out` and returns how many there are.
///
/// Split out for the kernel, which must read a live symtab inside an RCU
/// read-side section but need not sort inside one.
pub fn collect_module_candidates<S: ModuleSymtab + ?Sized>(
    symtab: &S,
    out: &mut [ModEntry],
) -> Option<usize> {
    let mut n = 0usize;
    for i in 1..symtab.num_symtab() {
        if !symbol_is_candidate(symtab, i) {
            continue;
        }
        let slot = out.get_mut(n)?;
        *slot = ModEntry {
            value: symtab.value(i),
            index: i as u64,
        };
        // n < out.len() (the slot above exists): no overflow.
        n = n.saturating_add(1);
    }
    Some(n)
}

/// The second half of [`build_module_index`]: sorts the collected entries
/// and keeps the first (lowest index) entry of each value, in place.
/// Returns how many entries remain.
pub fn sort_module_index(entries: &mut [ModEntry]) -> usize {
    entries.sort_unstable();
    // w <= r throughout, so every `get` below succeeds.
    let mut w = 0usize;
    for r in 0..entries.len() {
        let Some(&e) = entries.get(r) else { break };
        let kept = w.checked_sub(1).and_then(|p| entries.get(p));
        if kept.map_or(true, |k| k.value != e.value) {
            if let Some(slot) = entries.get_mut(w) {
                *slot = e;
            }
            w = w.saturating_add(1);
        }
    }
    w
}

/// Same answer as `module::find_kallsyms_symbol()`, from the sorted entries.
#[inline]
pub fn find_in_index(
    entries: &[ModEntry],
    layout: &ModuleLayout,
    addr: u64,
    all_symbols: bool,
) -> Option<ModuleHit> {
    find_in_region(entries, region_for(layout, addr, all_symbols)?, addr)
}

/// `find_kallsyms_symbol()` once the region containing `addr` is known:
/// the search is bounded by `bestval = base - 1` and `nextval = base + size`
/// (both wrapping, as the kernel's unsigned arithmetic does).
#[inline]
pub fn find_in_region(entries: &[ModEntry], region: MemRegion, addr: u64) -> Option<ModuleHit> {
    let region_end = region.base.wrapping_add(region.size);
    let floor = region.base.wrapping_sub(1);
    let upper = entries.partition_point(|e| e.value <= addr);
    let best = entries.get(upper.checked_sub(1)?)?;
    if best.value <= floor {
        return None;
    }
    let mut nextval = region_end;
    if let Some(next) = entries.get(upper) {
        if next.value < nextval {
            nextval = next.value;
        }
    }
    Some(ModuleHit {
        index: usize::try_from(best.index).ok()?,
        size: nextval.wrapping_sub(best.value),
        offset: addr.wrapping_sub(best.value),
    })
}

/// No module owns a [`RegionSpan`].
pub const SPAN_NO_MODULE: u32 = u32::MAX;
/// The owning module has no region of a type `find_kallsyms_symbol()` may
/// search here (a data region without `CONFIG_KALLSYMS_ALL`).
pub const SPAN_NO_TYPE: u8 = u8::MAX;

/// One piece of the address space partition built from every module's
/// regions: from `start` up to the next span's start (or the top of the
/// address space), addresses belong to `module` (its index in module-list
/// order, [`SPAN_NO_MODULE`] for none) and are searched in its region of
/// type `ty` ([`SPAN_NO_TYPE`] for none).
///
/// The partition answers exactly what the kernel's walk does even for
/// input a kernel never produces (overlapping modules or regions, a region
/// wrapping past 2^64): the owner is the first module in list order with
/// any region containing the address (`within_module()`), the type the
/// first of that module's types containing it (`find_kallsyms_symbol()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionSpan {
    /// First address of the span.
    pub start: u64,
    /// Owning module, or [`SPAN_NO_MODULE`].
    pub module: u32,
    /// `enum mod_mem_type` searched, or [`SPAN_NO_TYPE`].
    pub ty: u8,
}

/// The span containing `addr` in a partition sorted by `start` whose first
/// span starts at 0: `(module, type)`, `None` where no module owns `addr`.
#[inline]
pub fn span_owner(spans: &[RegionSpan], addr: u64) -> Option<(usize, Option<usize>)> {
    let i = spans.partition_point(|s| s.start <= addr).checked_sub(1)?;
    let s = spans.get(i)?;
    if s.module == SPAN_NO_MODULE {
        return None;
    }
    let ty = (s.ty != SPAN_NO_TYPE).then_some(s.ty as usize);
    Some((s.module as usize, ty))
}
