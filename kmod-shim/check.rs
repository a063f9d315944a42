// SPDX-License-Identifier: GPL-2.0

//! The `check` file: the shim's `%pS` text against the stock
//! `sprint_symbol()` for any addresses userspace writes.

use core::ffi::c_int;
use core::fmt::Write;

use kallsyms_fast::format::{sprint_symbol, Found, SymbolBuf};
use kallsyms_fast::name::NameBuf;
use kallsyms_fast::KSYM_NAME_LEN;
use kernel::prelude::*;

use crate::errno;
use crate::glue::resched;
use crate::mod_index::{self, ModAnswer};
use crate::state::{shim, Shim, SPRINT_BUF};
use crate::status::{KfsLock, Text};
use crate::verify::{shim_sprint, stock_sprint};
/// Where [`shim_sprint_any`] found an address.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Served {
    Core,
    Module,
    /// Neither core nor any module: the plain `0x...` form.
    Outside,
}

/// The `%pS` text of `addr` from the shim's indexes: core, or a live
/// module with an index. `None` when the index cannot answer.
pub(crate) fn shim_sprint_any(
    s: &Shim,
    addr: u64,
    out: &mut SymbolBuf,
    name: &mut NameBuf,
) -> Option<Served> {
    if s.sections.is_ksym_addr(addr) {
        shim_sprint(s, addr, out, name);
        return Some(Served::Core);
    }
    let answer =
        mod_index::lookup(
            s.module_address,
            addr,
            s.sections.all_symbols,
            |v, hit| match hit {
                Some(h) => {
                    let mut buf = [0u8; KSYM_NAME_LEN];
                    let n = mod_index::copy_name(v, &h, &mut buf);
                    let f = Found {
                        name: buf.get(..n).unwrap_or(&[]),
                        size: h.size,
                        offset: h.offset,
                        module: Some(v.module_name()),
                    };
                    sprint_symbol(out, addr, Some(&f), true);
                }
                None => sprint_symbol(out, addr, None, true),
            },
        );
    match answer {
        ModAnswer::Indexed(()) => Some(Served::Module),
        ModAnswer::NotModule => {
            sprint_symbol(out, addr, None, true);
            Some(Served::Outside)
        }
        ModAnswer::Stock => None,
    }
}

/// `check` write: whitespace-separated hex addresses. For each, the `%pS`
/// text built from the shim's indexes (core, or a live module's index)
/// must equal the stock `sprint_symbol()`; an address the indexes cannot
/// answer (a module without an index) counts as unserved. Counts go to
/// `status`. Called under `kfs_lock`.
#[no_mangle]
pub(crate) extern "C" fn kfs_rust_check(text: *const u8, len: usize) -> c_int {
    // SAFETY: the glue calls this under `kfs_lock`, and this is the
    // call's only token.
    let mut held = unsafe { KfsLock::assume_held() };
    let Some(s) = shim() else {
        return errno(ENOENT);
    };
    // SAFETY: the glue passes a kernel buffer of `len` bytes it owns.
    let text = unsafe { core::slice::from_raw_parts(text, len) };
    let Ok(text) = core::str::from_utf8(text) else {
        return errno(EINVAL);
    };
    let st = held.status();
    let mut out = SymbolBuf::new();
    let mut name = NameBuf::new();
    let mut stock = [0u8; SPRINT_BUF];
    for word in text.split_ascii_whitespace() {
        let Ok(addr) = u64::from_str_radix(word.strip_prefix("0x").unwrap_or(word), 16) else {
            return errno(EINVAL);
        };
        out.clear();
        let served = shim_sprint_any(s, addr, &mut out, &mut name);
        st.check.total += 1;
        match served {
            None => {
                st.check.unserved += 1;
                continue;
            }
            Some(Served::Module) => st.check.module += 1,
            Some(Served::Outside) => st.check.outside += 1,
            Some(Served::Core) => {}
        }
        let theirs = stock_sprint(addr, &mut stock);
        if out.as_bytes() != theirs {
            st.check.mismatches += 1;
            if st.check.first.is_empty() {
                let ours = core::str::from_utf8(out.as_bytes()).unwrap_or("<non-utf8>");
                let theirs = core::str::from_utf8(theirs).unwrap_or("<non-utf8>");
                let _ = write!(
                    Text(&mut st.check.first),
                    "{addr:#x}: shim \"{ours}\", sprint_symbol() \"{theirs}\""
                );
            }
        }
        if st.check.total % 16 == 0 {
            resched();
        }
    }
    0
}
