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

use core::fmt::Write;

use kallsyms_fast::KSYM_NAME_LEN;

use crate::mod_index::{self, ModAnswer};
use crate::{shim, Shim, SliceText};

/// `kallsyms_lookup()`: `const char *(unsigned long addr, unsigned long
/// *symbolsize, unsigned long *offset, char **modname, char *namebuf)`.
pub(crate) type KallsymsLookupFn =
    unsafe extern "C" fn(u64, *mut u64, *mut u64, *mut *const u8, *mut u8) -> *const u8;

/// `MODULE_NAME_LEN` on 64-bit kernels.
const MODULE_NAME_LEN: usize = 56;

/// What a lookup found; the name is already at the start of the buffer.
struct Hit {
    name_len: usize,
    size: u64,
    offset: u64,
    module_len: Option<usize>,
}

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
        None => write_hex(buf, address),
    };
    n as core::ffi::c_int
}

fn sprint(s: &Shim, buf: &mut [u8], address: u64, symbol_offset: i64, add_offset: bool) -> usize {
    let addr = address.wrapping_add(symbol_offset as u64);
    let mut module = [0u8; MODULE_NAME_LEN];
    let hit = lookup(s, addr, buf, &mut module);
    let Some(hit) = hit.filter(|h| h.name_len > 0) else {
        return write_hex(buf, address);
    };
    let (body, _) = buf.split_at_mut(buf.len().saturating_sub(1));
    let mut w = SliceText {
        buf: body,
        len: hit.name_len,
    };
    if add_offset {
        // The kernel's "%#lx" prints 0x0 for zero, as Rust's {:#x} does.
        let offset = hit.offset.wrapping_sub(symbol_offset as u64);
        let _ = write!(w, "+{offset:#x}/{:#x}", hit.size);
    }
    if let Some(m) = hit.module_len {
        let _ = w.write_str(" [");
        let _ = w.write_bytes(module.get(..m).unwrap_or(&[]));
        let _ = w.write_str("]");
    }
    let end = w.len;
    if let Some(b) = buf.get_mut(end) {
        *b = 0;
    }
    end
}

/// The name of `addr` into `buf`, with size and offset (and the module's
/// name into `module`).
fn lookup(s: &Shim, addr: u64, buf: &mut [u8], module: &mut [u8; MODULE_NAME_LEN]) -> Option<Hit> {
    let name = buf.first_chunk_mut::<KSYM_NAME_LEN>()?;
    name[0] = 0;
    name[KSYM_NAME_LEN - 1] = 0;
    if s.sections.is_ksym_addr(addr) {
        let (p, n) = s.lookup_core_into(addr, name)?;
        return Some(Hit {
            name_len: n,
            size: p.size,
            offset: p.offset,
            module_len: None,
        });
    }
    let answer = mod_index::lookup(s.module_address, addr, s.sections.all_symbols, |v, hit| {
        let h = hit?;
        let n = mod_index::copy_name(v, &h, name);
        let m = v.module_name();
        let ml = m.len().min(MODULE_NAME_LEN);
        module[..ml].copy_from_slice(&m[..ml]);
        Some(Hit {
            name_len: n,
            size: h.size,
            offset: h.offset,
            module_len: Some(ml),
        })
    });
    match answer {
        ModAnswer::Indexed(Some(hit)) => Some(hit),
        // No symbol in the module's region: the stock chain goes on to BPF
        // and ftrace's maps, so it decides.
        ModAnswer::Indexed(None) | ModAnswer::NotModule | ModAnswer::Stock => {
            stock_lookup(s, addr, buf, module)
        }
    }
}

/// The stock `kallsyms_lookup()`, its result laid out as [`lookup`]'s.
fn stock_lookup(
    s: &Shim,
    addr: u64,
    buf: &mut [u8],
    module: &mut [u8; MODULE_NAME_LEN],
) -> Option<Hit> {
    if buf.len() < KSYM_NAME_LEN {
        return None;
    }
    let (mut size, mut offset) = (0u64, 0u64);
    let mut modname: *const u8 = core::ptr::null();
    // SAFETY: `kallsyms_lookup` was verified at load; `buf` has at least
    // KSYM_NAME_LEN bytes for the name, the others are valid out-params.
    let ret = unsafe {
        (s.kallsyms_lookup)(addr, &mut size, &mut offset, &mut modname, buf.as_mut_ptr())
    };
    if ret.is_null() {
        return None;
    }
    if ret != buf.as_ptr() {
        // SAFETY: a NUL-terminated name the stock lookup returned.
        let name = unsafe { crate::mod_index::c_str(ret, KSYM_NAME_LEN - 1) };
        buf[..name.len()].copy_from_slice(name);
        buf[name.len()] = 0;
    }
    let name_len = buf.iter().take(KSYM_NAME_LEN).position(|&b| b == 0)?;
    let module_len = if modname.is_null() {
        None
    } else {
        // SAFETY: `mod->name`, NUL-terminated, of a module the caller
        // vouches for (as the stock `__sprint_symbol()` relies on too).
        let m = unsafe { crate::mod_index::c_str(modname, MODULE_NAME_LEN) };
        module[..m.len()].copy_from_slice(m);
        Some(m.len())
    };
    Some(Hit {
        name_len,
        size,
        offset,
        module_len,
    })
}

/// `sprintf(buffer, "0x%lx", address)`.
fn write_hex(buf: &mut [u8], address: u64) -> usize {
    let (body, _) = buf.split_at_mut(buf.len().saturating_sub(1));
    let mut w = SliceText { buf: body, len: 0 };
    let _ = write!(w, "{address:#x}");
    let end = w.len;
    if let Some(b) = buf.get_mut(end) {
        *b = 0;
    }
    end
}
