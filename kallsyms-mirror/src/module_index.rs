//! The mirror's additions to the kernel crate's module index
//! ([`kallsyms_fast::fast::module_index`]): [`build_module_index`], which
//! does in one call what the kernel does in two (it collects a live
//! symtab's candidates under RCU and sorts them outside), and the
//! partition of the address space by module regions that the mirror's
//! fast module path walks instead of the module list.

use kallsyms_fast::fast::module_index::{collect_module_candidates, sort_module_index, ModEntry};
use kallsyms_fast::module::ModuleSymtab;

/// Fills `out` with the sorted, de-duplicated candidates of `symtab`;
/// returns how many were written. `out` must hold
/// [`module_index_capacity`](kallsyms_fast::fast::module_index::module_index_capacity) entries; extra candidates are refused (`None`).
pub fn build_module_index<S: ModuleSymtab + ?Sized>(
    symtab: &S,
    out: &mut [ModEntry],
) -> Option<usize> {
    let n = collect_module_candidates(symtab, out)?;
    Some(sort_module_index(out.get_mut(..n)?))
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
