// SPDX-License-Identifier: GPL-2.0

//! The verified state every lookup reads: the kernel's kallsyms tables, the
//! core index and the stock functions, published once by the loader.

use core::ffi::c_int;
use core::sync::atomic::{AtomicPtr, Ordering};

use kallsyms_fast::fast::{AddrIndex, AddrIndexLayout, FastCore, TokenSlots};
use kallsyms_fast::{KallsymsTables, Sections, KSYM_NAME_LEN};
use kernel::prelude::*;
use kernel::{bindings, static_assert};

use crate::mod_index::ModuleAddressFn;
use crate::sprint::KallsymsLookupFn;
/// `int (*)(unsigned long addr, char *symname)`: the signature of
/// `lookup_symbol_name()` and `lookup_module_symbol_name()`.
pub(crate) type LookupFn = unsafe extern "C" fn(u64, *mut u8) -> c_int;

/// Buffer size the C side guarantees for `sprint_symbol()` (it checks
/// `KSYM_SYMBOL_LEN` against it at build time).
pub(crate) const SPRINT_BUF: usize = 1024;

// The core crate's name buffers have the kernel's size.
static_assert!(KSYM_NAME_LEN == bindings::KSYM_NAME_LEN as usize);

/// The verified state; published once, freed at module exit only.
pub(crate) static STATE: AtomicPtr<Shim> = AtomicPtr::new(core::ptr::null_mut());

/// Everything a lookup needs, verified.
pub(crate) struct Shim {
    pub(crate) tables: KallsymsTables<'static>,
    pub(crate) sections: Sections,
    pub(crate) layout: AddrIndexLayout,
    pub(crate) buckets: KVVec<u32>,
    pub(crate) name_delta: KVVec<u16>,
    pub(crate) tokens: KVBox<TokenSlots>,
    pub(crate) module_lookup: LookupFn,
    pub(crate) stock_lookup: LookupFn,
    pub(crate) module_address: ModuleAddressFn,
    pub(crate) kallsyms_lookup: KallsymsLookupFn,
}

impl Shim {
    pub(crate) fn index(&self) -> AddrIndex<'_> {
        AddrIndex::from_parts(self.layout, &self.buckets, &self.name_delta)
    }

    pub(crate) fn tokens(&self) -> &TokenSlots {
        &self.tokens
    }

    /// The core crate's fast path over the verified tables and index:
    /// the same `FastCore::lookup_into()` the userspace mirror runs.
    pub(crate) fn core(&self) -> FastCore<'_> {
        FastCore {
            tables: self.tables,
            sections: self.sections,
            addr: self.index(),
            tokens: self.tokens(),
        }
    }

    pub(crate) fn index_bytes(&self) -> usize {
        self.layout.bytes() + core::mem::size_of::<TokenSlots>()
    }
}

pub(crate) fn shim() -> Option<&'static Shim> {
    let p = STATE.load(Ordering::Acquire);
    // SAFETY: a non-null STATE points at a leaked, fully built `Shim` that
    // is only freed in module exit, after the patch (the only other user)
    // is gone.
    unsafe { p.as_ref() }
}

/// Whether verified tables are in place.
#[no_mangle]
pub(crate) extern "C" fn kfs_rust_ready() -> bool {
    shim().is_some()
}
