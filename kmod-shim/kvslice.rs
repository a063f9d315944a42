// SPDX-License-Identifier: GPL-2.0

//! Zero-initialised `kvzalloc()` storage for the indexes.

use kallsyms_fast::fast::TokenSlots;
use kernel::prelude::*;

use crate::glue::{kfs_kvfree, kfs_kvzalloc};
/// Zero-initialised storage from `kvzalloc()`.
pub(crate) struct KvSlice<T: Zeroed> {
    ptr: *mut T,
    len: usize,
}

/// Types for which all-zero bytes are a valid value.
///
/// # Safety
///
/// Implementors must be plain data valid when zeroed, alignment <= 8.
pub(crate) unsafe trait Zeroed {}
// SAFETY: integers are valid when zeroed.
unsafe impl Zeroed for u16 {}
// SAFETY: as above.
unsafe impl Zeroed for u32 {}
// SAFETY: as above.
unsafe impl Zeroed for u64 {}
// SAFETY: `TokenSlots` is `repr(C)` byte arrays; zero is valid (documented).
unsafe impl Zeroed for TokenSlots {}

impl<T: Zeroed> KvSlice<T> {
    pub(crate) fn zeroed(len: usize) -> Result<Self> {
        let bytes = len.checked_mul(core::mem::size_of::<T>()).ok_or(ENOMEM)?;
        // SAFETY: plain allocation; kvzalloc memory is at least 8-byte
        // aligned, enough for every `Zeroed` type.
        let ptr = unsafe { kfs_kvzalloc(bytes.max(1)) }.cast::<T>();
        if ptr.is_null() {
            return Err(ENOMEM);
        }
        Ok(Self { ptr, len })
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` zero-initialised (hence valid) `T`s.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, and `&mut self` makes it unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Zeroed> Drop for KvSlice<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `kfs_kvzalloc` and is freed once.
        unsafe { kfs_kvfree(self.ptr.cast()) };
    }
}

// SAFETY: the storage is only written while building, before publication.
unsafe impl<T: Zeroed> Sync for KvSlice<T> {}
// SAFETY: as above; ownership moves freely.
unsafe impl<T: Zeroed> Send for KvSlice<T> {}
