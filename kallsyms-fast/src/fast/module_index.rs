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
    /// Symtab index. A `u32` would not make the entry smaller: `value`'s
    /// 8-byte alignment pads it to 16 bytes either way.
    pub index: u64,
}

/// How many entries an index of `symtab` needs at most.
pub fn module_index_capacity<S: ModuleSymtab + ?Sized>(symtab: &S) -> usize {
    symtab.num_symtab().saturating_sub(1)
}

/// The first half of an index build (`kallsyms-mirror`'s
/// `build_module_index` does both): copies the candidates of
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

/// The second half of an index build: sorts the collected entries
/// and keeps the first (lowest index) entry of each value, in place.
/// Returns how many entries remain.
pub fn sort_module_index(entries: &mut [ModEntry]) -> usize {
    heapsort(entries);
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

/// Sorts `v` in place with constant stack and no allocation (a heapsort).
///
/// Not `sort_unstable()`: in the kernel the index is built on a 16 KiB
/// task stack, and core's quicksort, as rustc 1.85.1 compiles it (the
/// rustc of Debian's 7.3 kernel), recurses with frames of over 800 bytes:
/// sorting xfs's symbols hit the stack guard page.
fn heapsort(v: &mut [ModEntry]) {
    let n = v.len();
    let mut start = n >> 1;
    while start > 0 {
        start = start.saturating_sub(1);
        sift_down(v, start, n);
    }
    let mut end = n;
    while end > 1 {
        end = end.saturating_sub(1);
        // 0 < end < n: both in bounds.
        v.swap(0, end);
        sift_down(v, 0, end);
    }
}

/// Moves `v[root]` down the max-heap `v[..end]` (`end <= v.len()`).
fn sift_down(v: &mut [ModEntry], mut root: usize, end: usize) {
    loop {
        let Some(left) = root.checked_mul(2).and_then(|x| x.checked_add(1)) else {
            return;
        };
        if left >= end {
            return;
        }
        let right = left.saturating_add(1);
        // Every index below is < end <= v.len(), so each get() is Some.
        let child = if right < end && v.get(right) > v.get(left) {
            right
        } else {
            left
        };
        if v.get(child) <= v.get(root) {
            return;
        }
        v.swap(root, child);
        root = child;
    }
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

#[cfg(test)]
mod tests {
    use super::{heapsort, ModEntry};

    /// The heapsort orders exactly as `sort_unstable()` does, over sizes
    /// around the heap's edge cases and many equal values.
    #[test]
    fn heapsort_is_a_sort() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for n in (0..40).chain([255, 256, 257, 1000, 4099]) {
            let mut v: [ModEntry; 4099] = [ModEntry::default(); 4099];
            for (i, e) in v.iter_mut().take(n).enumerate() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *e = ModEntry {
                    value: x % 97,
                    index: i as u64,
                };
            }
            let mut want = v;
            want[..n].sort_unstable();
            heapsort(&mut v[..n]);
            assert_eq!(&v[..n], &want[..n], "n = {n}");
        }
    }
}
