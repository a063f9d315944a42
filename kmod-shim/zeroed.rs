// SPDX-License-Identifier: GPL-2.0

//! Zero-filled storage for the indexes, from the kernel crate's
//! `kvmalloc()`-backed `KVVec` and `KVBox`.

use kallsyms_fast::fast::TokenSlots;
use kernel::alloc::AllocError;
use kernel::prelude::*;

/// `n` zeroed (default) `T`s in kvmalloc'd memory.
pub(crate) fn kv_zeroed<T: Clone + Default>(n: usize) -> Result<KVVec<T>, AllocError> {
    KVVec::from_elem(T::default(), n, GFP_KERNEL)
}

/// Empty token slots in kvmalloc'd memory. `TokenSlots` is 4.5 KiB: it is
/// zeroed by the allocator (`__GFP_ZERO`), never built on the kernel stack.
pub(crate) fn kv_token_slots() -> Result<KVBox<TokenSlots>, AllocError> {
    let slots = KVBox::<TokenSlots>::new_uninit(GFP_KERNEL | __GFP_ZERO)?;
    // SAFETY: `__GFP_ZERO` zero-filled the allocation, and all-zero bytes
    // are a valid `TokenSlots` (`repr(C)` byte arrays; its docs promise
    // every bit pattern is valid).
    Ok(unsafe { slots.assume_init() })
}
