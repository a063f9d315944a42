//! The "sorted symtab" baseline: what the per-module index
//! ([`kallsyms_fast::fast::module_index`]) is held against.
//!
//! A patch posted on linux-modules in March 2026 ("module/kallsyms: sort
//! function symbols and use binary search", v2) makes
//! `find_kallsyms_symbol()` logarithmic without any extra memory: at
//! module load it moves the module's function symbols to the front of the
//! module's own symtab, sorts them there by address, and binary-searches
//! that prefix for addresses in module text. Livepatch modules keep their
//! symtab layout (their relocations name symbols by symtab index) and the
//! linear scan.
//!
//! This file mirrors that approach with answers equal to the 6.12 scan
//! ([`crate::module::find_kallsyms_symbol`]) for every symtab, layout and
//! address: [`sort_symtab`] is the load-time step, [`find_in_sorted`] the
//! lookup. The kernel reorders `mod->kallsyms->symtab` itself (zero extra
//! bytes); here the symtab is borrowed through [`ModuleSymtab`], so the
//! sort works on a caller-provided slice of `(value, symtab index)` pairs,
//! [`ModEntry`], 16 bytes per candidate symbol: that copy is the mirror's
//! cost, not the patch's. The index stored in each pair is the symbol's
//! original symtab index, so a hit names the same symtab entry the scan
//! names; in the kernel, where the entries themselves move, the name read
//! at the new position is the same string.
//!
//! What such a sort has to respect to keep every answer of the scan (the
//! mirror does all of it; a kernel patch must too):
//!
//! - **Which symbols are sorted.** The scan's candidates are every entry
//!   after the ELF null symbol that is defined (not `SHN_UNDEF`), named,
//!   and not a mapping symbol (`.L*`, `L0*`, `$*`):
//!   [`crate::module::symbol_is_candidate`]. No symbol type is looked at:
//!   an `STT_NOTYPE` assembler entry point or an `STT_OBJECT` in a text
//!   section bounds a text address's answer (as its best symbol or as the
//!   end of the previous symbol's size) exactly like an `STT_FUNC` does.
//!   So "function symbols" must mean every candidate whose value can lie
//!   in a text region, i.e. every candidate defined in an executable
//!   section, not `ELF_ST_TYPE() == STT_FUNC`. Without
//!   `CONFIG_KALLSYMS_ALL`, `is_core_symbol()` already keeps only symbols
//!   of executable sections in `core_kallsyms`, so there every candidate
//!   is one. Here every candidate is sorted, whatever region it lies in:
//!   an answer depends only on the candidates inside the address's region
//!   (a best value is `>= base`, a next value `< base + size`), so sorting
//!   more than the text symbols changes nothing, and data addresses
//!   (`CONFIG_KALLSYMS_ALL`) are answered from the same array, where the
//!   patch scans for them.
//! - **`__pfx_`/`__cfi_` symbols.** 6.12's module lookup gives them no
//!   special treatment: they are ordinary candidates (an address in a
//!   function's padding resolves to `__pfx_<fn>`). A sort that skipped
//!   them as "not functions" would answer such addresses with the
//!   previous function and a larger size.
//! - **Ties.** Among candidates at one value the scan keeps the lowest
//!   symtab index (`thisval > bestval` is strict). The sorted order is
//!   therefore by value, then by original index: the pairs compare so
//!   (`ModEntry`'s `Ord`), which makes the unstable `sort_unstable()` give
//!   the stable order. The kernel's `sort()` is a heapsort, not stable, and
//!   the moved `Elf_Sym`s carry no index, so its comparison needs a key
//!   that follows symtab order: in `core_kallsyms`, `add_kallsyms()`
//!   copies names into the core strtab in symtab order, so `st_name`
//!   strictly increases with the index and serves (in the module's full
//!   ELF symtab used during init, it does not). A lookup then takes the
//!   *first* entry of the last value at or below the address: a second
//!   binary search (aliases are kept: nothing can be deleted from a
//!   symtab, and each alias is still listed in `/proc/kallsyms`).
//! - **Bounds.** The search is bounded by the address's region as the scan
//!   is: a best value must be above `base - 1` and the size ends at the
//!   next sorted value or at `base + size`, whichever is lower, both with
//!   the scan's wrapping unsigned arithmetic (so a region at base 0 never
//!   answers, as `bestval = base - 1` makes the scan never answer).
//! - **The rest of the symtab.** Non-candidates (undefined, unnamed,
//!   mapping symbols) go after the sorted prefix in the kernel; the scan
//!   skips them, so only the prefix's length must be known to the lookup.
//!   Moving entries also moves what follows symtab order: the `typetab`
//!   array parallel to the symtab must be permuted with it (a swap
//!   function for `sort()`), `/proc/kallsyms` lists a module's symbols in
//!   the new order, and the name lookups (`module_kallsyms_lookup_name()`,
//!   which return the first defined match in symtab order) may pick a
//!   different one of two same-named symbols than before. Those are not address
//!   answers, and this mirror models the address side only.

use crate::fast::module_index::{collect_module_candidates, module_index_capacity, ModEntry};
use crate::module::{region_for, MemRegion, ModuleHit, ModuleLayout, ModuleSymtab};

/// How many entries [`sort_symtab`] needs at most for `symtab`: one per
/// symtab entry after the null symbol.
pub fn sorted_symtab_capacity<S: ModuleSymtab + ?Sized>(symtab: &S) -> usize {
    module_index_capacity(symtab)
}

/// The load-time step: writes the candidates of `symtab` into `out` and
/// sorts them by value, ties in symtab order. Returns how many there are
/// (the sorted prefix's length); `None` when `out` is shorter than
/// [`sorted_symtab_capacity`] needs.
///
/// Unlike [`crate::fast::build_module_index`], equal values are all kept: the
/// kernel cannot drop symtab entries.
pub fn sort_symtab<S: ModuleSymtab + ?Sized>(symtab: &S, out: &mut [ModEntry]) -> Option<usize> {
    let n = collect_module_candidates(symtab, out)?;
    sort_candidates(out.get_mut(..n)?);
    Some(n)
}

/// Sorts `(value, index)` pairs in place by value, then by index: the
/// order the scan's tie rule needs (see the module documentation).
#[inline]
pub fn sort_candidates(entries: &mut [ModEntry]) {
    entries.sort_unstable();
}

/// Same answer as `module::find_kallsyms_symbol()`, from the sorted
/// candidates of [`sort_symtab`].
#[inline]
pub fn find_in_sorted(
    sorted: &[ModEntry],
    layout: &ModuleLayout,
    addr: u64,
    all_symbols: bool,
) -> Option<ModuleHit> {
    find_in_sorted_region(sorted, region_for(layout, addr, all_symbols)?, addr)
}

/// `find_kallsyms_symbol()` once the region containing `addr` is known,
/// over candidates sorted by value then index (duplicates kept).
#[inline]
pub fn find_in_sorted_region(
    sorted: &[ModEntry],
    region: MemRegion,
    addr: u64,
) -> Option<ModuleHit> {
    let region_end = region.base.wrapping_add(region.size);
    let floor = region.base.wrapping_sub(1);
    // First entry above addr; the one before it holds the best value.
    let upper = sorted.partition_point(|e| e.value <= addr);
    let bestval = sorted.get(upper.checked_sub(1)?)?.value;
    if bestval <= floor {
        return None;
    }
    // Among equal values the lowest symtab index, which sorts first.
    let first = sorted.partition_point(|e| e.value < bestval);
    let best = sorted.get(first)?;
    let mut nextval = region_end;
    if let Some(next) = sorted.get(upper) {
        if next.value < nextval {
            nextval = next.value;
        }
    }
    Some(ModuleHit {
        index: usize::try_from(best.index).ok()?,
        size: nextval.wrapping_sub(bestval),
        offset: addr.wrapping_sub(bestval),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::{find_kallsyms_symbol, MOD_TEXT};

    /// A symtab of (value, name) entries after the null symbol.
    struct Tab(&'static [(u64, &'static [u8])]);

    impl ModuleSymtab for Tab {
        fn num_symtab(&self) -> usize {
            self.0.len() + 1
        }
        fn value(&self, i: usize) -> u64 {
            i.checked_sub(1)
                .and_then(|i| self.0.get(i))
                .map_or(0, |e| e.0)
        }
        fn is_undef(&self, i: usize) -> bool {
            i == 0 || self.0.get(i - 1).is_some_and(|e| e.1 == b"U")
        }
        fn name(&self, i: usize) -> &[u8] {
            i.checked_sub(1)
                .and_then(|i| self.0.get(i))
                .map_or(&[], |e| e.1)
        }
    }

    #[test]
    fn ties_keep_the_lowest_index_and_aliases_stay() {
        let tab = Tab(&[
            (0x130, b"c"),
            (0x110, b"b_alias"),
            (0x100, b"a"),
            (0x110, b"b"),
            (0x108, b"U"),
            (0x118, b"$x"),
            (0x120, b""),
        ]);
        let mut layout = ModuleLayout::default();
        layout[MOD_TEXT] = MemRegion {
            base: 0x100,
            size: 0x40,
        };
        let mut out = [ModEntry::default(); 7];
        let n = sort_symtab(&tab, &mut out).expect("fits");
        // a, b_alias, b, c: the undefined, mapping and unnamed are not sorted.
        assert_eq!(n, 4);
        let hit = find_in_sorted(&out[..n], &layout, 0x115, false).expect("hit");
        assert_eq!(
            (tab.name(hit.index), hit.offset, hit.size),
            (&b"b_alias"[..], 5, 0x20)
        );
        for addr in 0..0x200 {
            assert_eq!(
                find_in_sorted(&out[..n], &layout, addr, false),
                find_kallsyms_symbol(&tab, &layout, addr, false),
                "{addr:#x}"
            );
        }
    }

    #[test]
    fn short_output_is_refused() {
        let tab = Tab(&[(1, b"a"), (2, b"b")]);
        let mut out = [ModEntry::default(); 1];
        assert_eq!(sort_symtab(&tab, &mut out), None);
    }
}
