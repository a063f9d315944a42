// SPDX-License-Identifier: GPL-2.0

//! The `check` file: the shim's `%pS` text against the stock
//! `sprint_symbol()` for any addresses userspace writes.

use core::ffi::c_int;
use core::fmt::Write;

use kallsyms_fast_shared::format::KSYM_SYMBOL_LEN;
use kernel::prelude::*;

use crate::errno;
use crate::glue::resched;
use crate::sprint::{sprint_indexed, Indexed};
use crate::state::{shim, SPRINT_BUF};
use crate::status::KfsLock;
use crate::verify::stock_sprint;

/// `check` write: whitespace-separated hex addresses. For each, the `%pS`
/// text built from the shim's indexes (core, or a live module's index:
/// the `%pS` hook's own `sprint_indexed()`) must equal the stock
/// `sprint_symbol()`; an address the indexes cannot answer (a module
/// without an index) counts as unserved. Counts go to
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
    let mut out = [0u8; KSYM_SYMBOL_LEN];
    let mut stock = [0u8; SPRINT_BUF];
    for word in text.split_ascii_whitespace() {
        let Ok(addr) = u64::from_str_radix(word.strip_prefix("0x").unwrap_or(word), 16) else {
            return errno(EINVAL);
        };
        // The hook's own index path, into a KSYM_SYMBOL_LEN buffer as the
        // hook's callers pass.
        let (n, served) = sprint_indexed(s, &mut out, addr, 0, true);
        st.check.total += 1;
        match served {
            Indexed::Stock => {
                st.check.unserved += 1;
                continue;
            }
            Indexed::Module | Indexed::NoSymbol => st.check.module += 1,
            Indexed::NotModule => st.check.outside += 1,
            Indexed::Core => {}
        }
        let ours = out.get(..n).unwrap_or(&[]);
        let theirs = stock_sprint(addr, &mut stock);
        if ours != theirs {
            st.check.mismatches += 1;
            if st.check.first.is_empty() {
                let ours = core::str::from_utf8(ours).unwrap_or("<non-utf8>");
                let theirs = core::str::from_utf8(theirs).unwrap_or("<non-utf8>");
                let _ = write!(
                    st.check.first,
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
