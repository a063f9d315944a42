// SPDX-License-Identifier: GPL-2.0

//! The `%pS` family: replacements of `sprint_symbol()`,
//! `sprint_symbol_no_offset()` and `sprint_backtrace()` (and their
//! `_build_id` twins when the kernel has no build IDs), which print what
//! `__sprint_symbol()` prints, from the core and module indexes.
//!
//! Anything the indexes do not answer (a module not indexed yet or with no
//! symbol at the address, BPF images, ftrace's maps of freed module init
//! text, no symbol at all) goes to the stock `kallsyms_lookup()`, which
//! runs the stock chain, and the result is formatted the same way.
//!
//! These run in any context, NMI included (a `%pS` in an NMI backtrace):
//! no locks, no allocation, no sleeping; the name is written straight into
//! the caller's `KSYM_SYMBOL_LEN` buffer, so the extra stack is small. The
//! only deferred work, a module index build, is not queued from NMI.
//!
//! The text is kallsyms-fast-shared's: `kallsyms_fast_shared::format::sprint_into()`,
//! the very writer the userspace differential suites test, after the
//! core crate's `FastCore::lookup_into()` or a module index has written
//! the name at the start of the buffer.

use kallsyms_fast::KSYM_NAME_LEN;
use kallsyms_fast_shared::format::{sprint_into, Hit, MODULE_NAME_LEN};

use crate::mod_index::{self, ModAnswer};
use crate::{shim, Shim};

/// `kallsyms_lookup()`: `const char *(unsigned long addr, unsigned long
/// *symbolsize, unsigned long *offset, char **modname, char *namebuf)`.
pub(crate) type KallsymsLookupFn =
    unsafe extern "C" fn(u64, *mut u64, *mut u64, *mut *const u8, *mut u8) -> *const u8;

/// `__sprint_symbol(buffer, address, symbol_offset, add_offset, 0)`.
/// Returns the length written, without the NUL.
///
/// # Safety
///
/// `buffer` must point at `len` writable bytes, `len >= KSYM_NAME_LEN`.
#[no_mangle]
pub(crate) unsafe extern "C" fn kfs_rust_sprint(
    buffer: *mut u8,
    len: usize,
    address: u64,
    symbol_offset: i64,
    add_offset: bool,
) -> core::ffi::c_int {
    // SAFETY: the caller's contract.
    let buf = unsafe { core::slice::from_raw_parts_mut(buffer, len) };
    let n = match shim() {
        Some(s) => sprint(s, buf, address, symbol_offset, add_offset),
        // Unreachable while patched (enabling needs verified tables).
        None => sprint_into(buf, address, symbol_offset, None, add_offset),
    };
    // n < len <= KSYM_SYMBOL_LEN-sized buffers: it fits.
    core::ffi::c_int::try_from(n).unwrap_or(core::ffi::c_int::MAX)
}

/// The hook: the indexes' text when they know the address, else the stock
/// chain's.
fn sprint(s: &Shim, buf: &mut [u8], address: u64, symbol_offset: i64, add_offset: bool) -> usize {
    match sprint_indexed(s, buf, address, symbol_offset, add_offset) {
        (n, Indexed::Core | Indexed::Module) => n,
        // No symbol in the module's region, or no module: the stock chain
        // goes on to BPF and ftrace's maps, so it decides.
        (_, Indexed::NoSymbol | Indexed::NotModule | Indexed::Stock) => {
            stock(s, buf, address, symbol_offset, add_offset)
        }
    }
}

/// Which index answered [`sprint_indexed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Indexed {
    /// The core index (the address is a core-kernel one).
    Core,
    /// A module's index found a symbol.
    Module,
    /// A module's index: the module has no symbol at the address.
    NoSymbol,
    /// No module holds the address.
    NotModule,
    /// The module is not indexed: nothing was written.
    Stock,
}

/// `__sprint_symbol()` from the indexes alone: the text (and a NUL) into
/// `buf`, its length, and which index answered. For
/// [`Indexed::NoSymbol`] and [`Indexed::NotModule`] the text is the plain
/// `0x...` form.
pub(crate) fn sprint_indexed(
    s: &Shim,
    buf: &mut [u8],
    address: u64,
    symbol_offset: i64,
    add_offset: bool,
) -> (usize, Indexed) {
    // `address += symbol_offset`: the int, sign-extended, modulo 2^64.
    let addr = address.wrapping_add_signed(symbol_offset);
    if s.sections.is_ksym_addr(addr) {
        let n = sprint_core(s, buf, address, symbol_offset, add_offset);
        return (n, Indexed::Core);
    }
    let answer = mod_index::lookup(s.module_address, addr, s.sections.all_symbols, |v, hit| {
        let found = hit.and_then(|h| {
            let name = buf.first_chunk_mut::<KSYM_NAME_LEN>()?;
            Some(Hit {
                name_len: mod_index::copy_name(v, &h, name),
                size: h.size,
                offset: h.offset,
                module: Some(v.module_name()),
            })
        });
        let how = if found.is_some() {
            Indexed::Module
        } else {
            Indexed::NoSymbol
        };
        // Inside the module's preempt-disabled section: its name is valid.
        let n = sprint_into(buf, address, symbol_offset, found.as_ref(), add_offset);
        (n, how)
    });
    match answer {
        ModAnswer::Indexed(r) => r,
        ModAnswer::NotModule => (
            sprint_into(buf, address, symbol_offset, None, add_offset),
            Indexed::NotModule,
        ),
        ModAnswer::Stock => (0, Indexed::Stock),
    }
}

/// The core-kernel part of [`sprint_indexed`]: `FastCore::lookup_into()`
/// writes the name at the start of `buf` (`0x...` when `address +
/// symbol_offset` is not a core-kernel address).
pub(crate) fn sprint_core(
    s: &Shim,
    buf: &mut [u8],
    address: u64,
    symbol_offset: i64,
    add_offset: bool,
) -> usize {
    let addr = address.wrapping_add_signed(symbol_offset);
    let hit = buf
        .first_chunk_mut::<KSYM_NAME_LEN>()
        .and_then(|name| s.core().lookup_into(addr, name))
        .map(|(p, n)| Hit {
            name_len: n,
            size: p.size,
            offset: p.offset,
            module: None,
        });
    sprint_into(buf, address, symbol_offset, hit.as_ref(), add_offset)
}

/// The stock `kallsyms_lookup()` into `buf`, formatted by the same writer.
fn stock(s: &Shim, buf: &mut [u8], address: u64, symbol_offset: i64, add_offset: bool) -> usize {
    let addr = address.wrapping_add_signed(symbol_offset);
    let Some(name) = buf.first_chunk_mut::<KSYM_NAME_LEN>() else {
        return sprint_into(buf, address, symbol_offset, None, add_offset);
    };
    let (mut size, mut offset) = (0u64, 0u64);
    let mut modname: *const u8 = core::ptr::null();
    // SAFETY: `kallsyms_lookup` was verified at load; `name` has
    // KSYM_NAME_LEN bytes, the others are valid out-params.
    let ret = unsafe {
        (s.kallsyms_lookup)(
            addr,
            &mut size,
            &mut offset,
            &mut modname,
            name.as_mut_ptr(),
        )
    };
    if ret.is_null() {
        return sprint_into(buf, address, symbol_offset, None, add_offset);
    }
    if ret != name.as_ptr() {
        // SAFETY: a NUL-terminated name the stock lookup returned, not in
        // `name` (checked just above).
        let other = unsafe { crate::elf_symtab::c_str(ret, KSYM_NAME_LEN - 1) };
        if let Some(dst) = name.get_mut(..other.len()) {
            dst.copy_from_slice(other);
        }
        if let Some(b) = name.get_mut(other.len()) {
            *b = 0;
        }
    }
    let name_len = name
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(KSYM_NAME_LEN - 1);
    let module = if modname.is_null() {
        None
    } else {
        // SAFETY: `mod->name`, NUL-terminated, of a module valid until we
        // reschedule (kallsyms_lookup()'s promise, which the stock
        // `__sprint_symbol()` relies on too).
        Some(unsafe { crate::elf_symtab::c_str(modname, MODULE_NAME_LEN) })
    };
    let hit = Hit {
        name_len,
        size,
        offset,
        module,
    };
    sprint_into(buf, address, symbol_offset, Some(&hit), add_offset)
}
