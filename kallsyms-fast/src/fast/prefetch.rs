//! A cache-line prefetch hint for the lookup path.
//!
//! A core lookup is a chain of dependent loads (search-tree nodes, the
//! leaf block's `kallsyms_offsets`, name delta, name record, token slots);
//! on a table that is not in the L1/L2 caches each link costs a cache miss.
//! Where a later load's address is known early (the leaf block's name
//! deltas, as soon as the block is), a prefetch starts that miss while the
//! leaf's offsets are still being counted. A hint never changes a result: a
//! wrong guess costs one wasted line fill.

/// Asks the CPU to bring the cache line holding the first byte of `*p`
/// into the data cache.
///
/// On x86_64 and aarch64 this is one `prefetcht0` / `prfm pldl1keep`
/// instruction; elsewhere (and under Miri) it does nothing.
#[inline(always)]
pub fn prefetch_line<T>(p: &T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `prefetcht0` only hints the cache: it never faults, not even
    // on an unmapped address (here `p` is a live reference), writes no
    // register, memory or flag, and uses no stack.
    unsafe {
        core::arch::asm!(
            "prefetcht0 [{0}]",
            in(reg) core::ptr::from_ref(p),
            options(nostack, readonly, preserves_flags)
        );
    }
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: `prfm` is a hint with the same guarantees: no fault, no
    // architectural side effect, no stack.
    unsafe {
        core::arch::asm!(
            "prfm pldl1keep, [{0}]",
            in(reg) core::ptr::from_ref(p),
            options(nostack, readonly, preserves_flags)
        );
    }
    #[cfg(any(not(any(target_arch = "x86_64", target_arch = "aarch64")), miri))]
    let _ = p;
}
