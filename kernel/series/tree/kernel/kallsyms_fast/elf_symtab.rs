// SPDX-License-Identifier: GPL-2.0

//! A module's ELF symtab and strtab as `find_kallsyms_symbol()` reads them.
//!
//! The one [`ModuleSymtab`] through which kallsyms-fast reads a module: the
//! address index (`kallsyms_fast_glue.rs`) and the name index (`names.rs`)
//! build from it, and the out-of-tree kmod-shim compiles this same file
//! for its own module indexes.

use kallsyms_fast::module::ModuleSymtab;
use kernel::bindings;

/// A module's symtab, its names read up to `name_max` bytes.
///
/// # Invariants
///
/// For `'a`, `syms` is the module's symtab, and for each of its entries
/// `strtab + st_name` points at a NUL-terminated string, or at `name_max`
/// readable bytes; neither changes.
pub(crate) struct ElfSymtab<'a> {
    syms: &'a [bindings::elf64_sym],
    strtab: *const u8,
    name_max: usize,
}

impl<'a> ElfSymtab<'a> {
    /// The symtab of `num` entries at `symtab`, its names in `strtab`;
    /// `None` when either is NULL.
    ///
    /// # Safety
    ///
    /// `symtab` must hold `num` entries and `strtab` the strings they name
    /// (the module loader's invariant for a module's symtab), both valid
    /// and unchanged for `'a`.
    pub(crate) unsafe fn new(
        symtab: *const bindings::elf64_sym,
        num: usize,
        strtab: *const u8,
        name_max: usize,
    ) -> Option<Self> {
        if symtab.is_null() || strtab.is_null() {
            return None;
        }
        // INVARIANT: the caller's contract.
        Some(ElfSymtab {
            // SAFETY: `symtab` holds `num` entries (the caller's contract).
            syms: unsafe { core::slice::from_raw_parts(symtab, num) },
            strtab,
            name_max,
        })
    }

    /// The name of entry `i` (empty when out of range), at most `name_max`
    /// bytes, for `'a`.
    pub(crate) fn name_of(&self, i: usize) -> &'a [u8] {
        let Some(off) = self
            .syms
            .get(i)
            .and_then(|s| usize::try_from(s.st_name).ok())
        else {
            return &[];
        };
        // SAFETY: by the type's invariants, `strtab + st_name` is a string
        // or `name_max` readable bytes, valid for `'a`.
        unsafe { c_str(self.strtab.wrapping_add(off), self.name_max) }
    }
}

impl ModuleSymtab for ElfSymtab<'_> {
    fn num_symtab(&self) -> usize {
        self.syms.len()
    }

    fn value(&self, i: usize) -> u64 {
        // kallsyms_symbol_value(): st_value, on every arch that has Rust.
        self.syms.get(i).map_or(0, |s| s.st_value)
    }

    fn is_undef(&self, i: usize) -> bool {
        // SHN_UNDEF; an entry out of range is never a candidate.
        self.syms
            .get(i)
            .map_or(true, |s| u32::from(s.st_shndx) == bindings::SHN_UNDEF)
    }

    fn name(&self, i: usize) -> &[u8] {
        self.name_of(i)
    }
}

/// The bytes of the C string at `p`, at most `max`.
///
/// # Safety
///
/// `p` must point at a NUL-terminated string or at `max` readable bytes,
/// valid for `'a`.
pub(crate) unsafe fn c_str<'a>(p: *const u8, max: usize) -> &'a [u8] {
    let mut n = 0;
    // SAFETY: the caller's contract: bytes up to the NUL, at most `max`,
    // are readable.
    while n < max && unsafe { *p.add(n) } != 0 {
        n += 1;
    }
    // SAFETY: the `n` bytes just read.
    unsafe { core::slice::from_raw_parts(p, n) }
}
