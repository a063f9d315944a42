// SPDX-License-Identifier: GPL-2.0

//! The livepatch replacement of `lookup_symbol_name()`, the function behind
//! `/proc/PID/wchan`, with the wchan cache.

use core::ffi::c_int;

use kallsyms_fast::cache::DefaultWchanCache;
use kallsyms_fast::KSYM_NAME_LEN;
use kallsyms_fast_shared::format::SliceWriter;
use kernel::prelude::*;

use crate::errno;
use crate::mod_index::{self, ModAnswer};
use crate::state::{shim, Shim};
/// Shared by every CPU; 256 entries, 48 KiB, and a 4 KiB admission filter.
pub(crate) static CACHE: DefaultWchanCache = DefaultWchanCache::new();

/// The module path of `lookup_symbol_name()`: the module's index when it
/// has one, else the stock `lookup_module_symbol_name()`.
pub(crate) fn lookup_module_name(s: &Shim, addr: u64, out: &mut [u8; KSYM_NAME_LEN]) -> c_int {
    let answer = mod_index::lookup(s.module_address, addr, s.sections.all_symbols, |v, hit| {
        match hit {
            Some(h) => {
                mod_index::copy_name(v, &h, out);
                0
            }
            // The module holds `addr` but has no symbol there: the stock
            // answer is -ERANGE with an empty name.
            None => errno(ERANGE),
        }
    });
    match answer {
        ModAnswer::Indexed(r) => r,
        // Not in a module per the module tree: the stock list walk still
        // decides (it also sees a module's init region in the instant
        // between its removal from the tree and its zeroing).
        // SAFETY: `module_lookup` is `lookup_module_symbol_name` (verified
        // at load), called with a KSYM_NAME_LEN-byte buffer, as the stock
        // path does.
        ModAnswer::NotModule | ModAnswer::Stock => unsafe {
            (s.module_lookup)(addr, out.as_mut_ptr())
        },
    }
}

/// The livepatch replacement of `lookup_symbol_name()`: same contract,
/// same answers.
///
/// # Safety
///
/// `symname` must point at `KSYM_NAME_LEN` writable bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn kfs_lookup_symbol_name(addr: u64, symname: *mut u8) -> c_int {
    // SAFETY: the caller's contract (the kernel's for lookup_symbol_name).
    let out = unsafe { &mut *(symname as *mut [u8; KSYM_NAME_LEN]) };
    out[0] = 0;
    out[KSYM_NAME_LEN - 1] = 0;
    let Some(s) = shim() else {
        return errno(ERANGE);
    };
    if s.sections.is_ksym_addr(addr) {
        if CACHE.get_into(addr, out).is_some() {
            return 0;
        }
        let generation = CACHE.generation();
        if let Some(n) = core_name_into(s, addr, out) {
            // Inserted on its second miss only (the cache's admission).
            CACHE.insert_after_miss(addr, generation, || out.get(..n));
        }
        return 0;
    }
    lookup_module_name(s, addr, out)
}

/// The core name of `addr` straight into the caller's buffer (no copy),
/// NUL-terminated; its length.
pub(crate) fn core_name_into(s: &Shim, addr: u64, out: &mut [u8; KSYM_NAME_LEN]) -> Option<usize> {
    let (_, n) = s.core().lookup_into(addr, out)?;
    Some(SliceWriter::after(out, n).finish())
}

/// `kfs_lookup_symbol_name()` without the cache (for the bench).
pub(crate) fn lookup_nocache(s: &Shim, addr: u64, out: &mut [u8; KSYM_NAME_LEN]) -> c_int {
    if s.sections.is_ksym_addr(addr) {
        core_name_into(s, addr, out);
        return 0;
    }
    lookup_module_name(s, addr, out)
}
