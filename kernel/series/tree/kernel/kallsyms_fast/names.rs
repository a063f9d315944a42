// SPDX-License-Identifier: GPL-2.0

//! Name lookups of `CONFIG_KALLSYMS_FAST`: `kallsyms_lookup_name()` and
//! `find_kallsyms_symbol_value()` from xxh64 name indexes
//! (`core/fast/name_index.rs`).
//!
//! The kernel binary-searches `kallsyms_seqs_of_names`, expanding a
//! compressed name (after a walk of up to 255 records) at every step, and
//! scans each module's whole symtab with `strcmp()`. Here a name's xxh64
//! hash picks a bucket of four to eight symbols, an 8-bit tag rejects
//! almost every other name in it, and one name is expanded and compared.
//!
//! The same answers: in a bucket, entries ascend by address-order position
//! (core) or symtab index (module), so the first match is the symbol the
//! kernel's search returns among duplicates: the lowest address, then the
//! earliest alias (the order scripts/kallsyms.c sorts names by), and the
//! lowest symtab index that is not `SHN_UNDEF`. 6.12 compares names
//! exactly (no `.llvm.` suffix is stripped any more), and so does this.
//!
//! # Lifetime
//!
//! The core name index is built right after the core address index, at
//! the same boot step, and never freed. A module's name index belongs to
//! its address index (`ModuleIndex`): built with it when the module
//! switches to `core_kallsyms`, freed with it after the grace period that
//! follows the module's removal. Lookups allocate nothing, take no lock.

use super::*;

use kallsyms_fast::fast::{build_name_index, NameIndex, NameIndexLayout};
use kallsyms_fast::name::NameBuf;

/// The core name index: a directory of buckets and one entry per symbol.
struct CoreNames {
    layout: NameIndexLayout,
    directory: KVVec<u32>,
    entries: KVVec<u32>,
}

/// The published core name index; set once, never freed.
static NAMES: AtomicPtr<CoreNames> = AtomicPtr::new(null_mut());

fn core_names() -> Option<&'static CoreNames> {
    // SAFETY: a non-null `NAMES` points at a fully built `CoreNames` that is
    // never freed (`kallsyms_fast_build_names()` leaks it on publication).
    unsafe { NAMES.load(Ordering::Acquire).as_ref() }
}

fn build_names(core: &FastCore<'static>) -> Result<KBox<CoreNames>, BuildError> {
    let n = core.tables.len();
    let layout = NameIndexLayout::for_len(n);
    let mut directory = KVVec::from_elem(0u32, layout.directory_words, GFP_KERNEL)?;
    let mut entries = KVVec::from_elem(0u32, layout.entry_words, GFP_KERNEL)?;
    // 8 bytes per symbol, for the build only.
    let mut scratch = KVVec::from_elem(0u64, n, GFP_KERNEL)?;
    build_name_index(
        &core.tables,
        layout,
        core.tokens,
        &mut directory,
        &mut entries,
        &mut scratch,
    )
    .map_err(|_| BuildError::BadTables)?;
    Ok(KBox::new(
        CoreNames {
            layout,
            directory,
            entries,
        },
        GFP_KERNEL,
    )?)
}

/// Builds and publishes the core name index over the published core
/// address index; stores its size in `*bytes`. Returns 0, `-ENOMEM`,
/// `-EINVAL` (a name record that does not expand), `-ENOENT` (no core
/// index) or `-EBUSY` (already built). Process context, once, at boot.
///
/// # Safety
///
/// `bytes` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kallsyms_fast_build_names(bytes: *mut usize) -> c_int {
    if core_names().is_some() {
        return EBUSY.to_errno();
    }
    let Some(core) = core_index() else {
        return ENOENT.to_errno();
    };
    let ix = match build_names(core) {
        Ok(ix) => ix,
        Err(BuildError::NoMemory) => return ENOMEM.to_errno(),
        Err(BuildError::BadTables) => return EINVAL.to_errno(),
    };
    let size = ix.layout.bytes();
    NAMES.store(KBox::into_raw(ix), Ordering::Release);
    // SAFETY: the caller's contract.
    unsafe { *bytes = size };
    0
}

/// The bytes of the C string `p` when it is shorter than `KSYM_NAME_LEN`;
/// `None` when it is not. No kallsyms name is that long (scripts/kallsyms.c
/// drops longer core names, and the module side reads at most that many
/// bytes of a name), so such a query is left to the stock code.
///
/// # Safety
///
/// `p` must be a NUL-terminated string.
unsafe fn query<'a>(p: *const c_char) -> Option<&'a [u8]> {
    let p = p.cast::<u8>();
    if p.is_null() {
        return None;
    }
    let mut n = 0;
    // SAFETY: the caller's contract: every byte up to the NUL is readable,
    // and the loop stops at the NUL.
    while unsafe { *p.add(n) } != 0 {
        n += 1;
        if n >= KSYM_NAME_LEN {
            return None;
        }
    }
    // SAFETY: the `n` bytes just read.
    Some(unsafe { core::slice::from_raw_parts(p, n) })
}

/// The core part of `kallsyms_lookup_name()` for a non-empty `name`: 1 and
/// the address of the symbol the stock search picks in `*addr`; 0 when no
/// core symbol has that name (the caller asks the modules); -1 when the
/// index cannot answer (not built): the caller runs the stock search.
/// Any context.
///
/// # Safety
///
/// `name` must be a NUL-terminated string and `addr` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kallsyms_fast_lookup_name(
    name: *const c_char,
    addr: *mut c_ulong,
) -> c_int {
    let (Some(core), Some(names)) = (core_index(), core_names()) else {
        return -1;
    };
    // SAFETY: the caller's contract.
    let Some(name) = (unsafe { query(name) }) else {
        // Longer than any core name: none matches.
        return 0;
    };
    let names = NameIndex::from_parts(names.layout, &names.directory, &names.entries);
    // The expanded candidate names, as the stock search's `namebuf`: the
    // same KSYM_NAME_LEN bytes of stack.
    let mut scratch = NameBuf::new();
    match core.lookup_name(&names, name, &mut scratch) {
        Some(a) => {
            // SAFETY: the caller's contract.
            unsafe { *addr = a };
            1
        }
        None => 0,
    }
}

/// Per-module name indexes.
#[cfg(CONFIG_MODULES)]
pub mod modules {
    use super::*;
    use kallsyms_fast::fast::{build_module_name_index, module_name_index_capacity};
    use kallsyms_fast::module::ModuleSymtab;

    /// One module's name index, part of its `ModuleIndex`.
    pub struct ModuleNames {
        layout: NameIndexLayout,
        directory: KVVec<u32>,
        entries: KVVec<u32>,
    }

    /// Builds the name index of `k` (a module's `core_kallsyms`, complete
    /// and unchanging); `None` when out of memory.
    pub(crate) fn build(k: &bindings::mod_kallsyms) -> Option<ModuleNames> {
        // SAFETY: see `kallsyms_fast_module_build()`: `core_kallsyms` of a
        // module in `do_init_module()`, freed only with the module.
        // Names are read up to `KSYM_NAME_LEN` bytes: a longer one then
        // reads as `KSYM_NAME_LEN` bytes, which no query answered here has
        // (`query()`).
        let symtab = unsafe { crate::modules::module_symtab(k, KSYM_NAME_LEN) }?;
        let cap = module_name_index_capacity(&symtab);
        let layout = NameIndexLayout::for_len(cap);
        let mut directory = KVVec::from_elem(0u32, layout.directory_words, GFP_KERNEL).ok()?;
        let mut entries = KVVec::from_elem(0u32, cap, GFP_KERNEL).ok()?;
        let mut scratch = KVVec::from_elem(0u64, cap, GFP_KERNEL).ok()?;
        build_module_name_index(&symtab, layout, &mut directory, &mut entries, &mut scratch)
            .ok()?;
        Some(ModuleNames {
            layout,
            directory,
            entries,
        })
    }

    /// `__find_kallsyms_symbol_value()` from a module's name index: `true`
    /// with the value of the first defined symbol named `name` (0 when
    /// there is none, as the kernel returns) in `*value`; `false` when the
    /// index cannot answer: none, built from another symtab than
    /// `kallsyms` (the module is still on its init-time symtab), or a
    /// query of `KSYM_NAME_LEN` bytes or more. Any context.
    ///
    /// # Safety
    ///
    /// `ix` must be NULL or a published module index and `kallsyms` the
    /// module's current symtab, both read inside the caller's RCU
    /// read-side section; `name` a NUL-terminated string; `value` valid
    /// for a write.
    #[no_mangle]
    pub unsafe extern "C" fn kallsyms_fast_module_find_name(
        ix: *const crate::modules::ModuleIndex,
        kallsyms: *const bindings::mod_kallsyms,
        name: *const c_char,
        value: *mut c_ulong,
    ) -> bool {
        // SAFETY: the caller's contract: a published index outlives the
        // caller's read-side section.
        let Some(ix) = (unsafe { ix.as_ref() }) else {
            return false;
        };
        let Some(names) = ix.names.as_ref() else {
            return false;
        };
        if !core::ptr::eq(ix.kallsyms, kallsyms) {
            return false;
        }
        // SAFETY: the caller's contract.
        let Some(name) = (unsafe { query(name) }) else {
            return false;
        };
        // SAFETY: `kallsyms` is the symtab the index was built from, valid
        // while the module is (the caller's contract).
        let Some(symtab) = (unsafe {
            kallsyms
                .as_ref()
                .and_then(|k| crate::modules::module_symtab(k, KSYM_NAME_LEN))
        }) else {
            return false;
        };
        let index = NameIndex::from_parts(names.layout, &names.directory, &names.entries);
        let v = index
            .lookup_module(&symtab, name)
            .map_or(0, |i| symtab.value(i));
        // SAFETY: the caller's contract.
        unsafe { *value = v };
        true
    }
}
