// SPDX-License-Identifier: GPL-2.0

//! kallsyms_fast_shim: serves `lookup_symbol_name()` (the `/proc/PID/wchan`
//! path) from the kallsyms-fast address index and wchan cache, over the
//! kernel's own kallsyms tables.
//!
//! Nothing the loader writes is trusted. Every address it passes is first
//! checked against the stock `sprint_symbol()`, which must print exactly
//! `<name>+0x0/0x<size>` for it: that proves the address and gives the size
//! of the object the kernel itself knows, so every later read stays inside
//! it. Then the tables pass `KallsymsTables::validate()`, the index is built,
//! and the index's answer for every symbol (its first and last byte) and for
//! every section boundary must equal the stock `sprint_symbol()` text. Only
//! then can the livepatch be enabled (`ctl`: `enable`); any refusal leaves
//! the stock path in charge.
//!
//! One file per job:
//! - `shim_main.rs`: module init and exit;
//! - `glue.rs`: the helpers `shim_glue.c` provides;
//! - `zeroed.rs`: zero-filled `KVVec`/`KVBox` storage;
//! - `loader.rs`: parsing the loader's `<symbol> <address>` lines;
//! - `verify.rs`: the `load` file: verification, core index, publication;
//! - `state.rs`: the published, verified state lookups read;
//! - `wchan.rs`: the `lookup_symbol_name()` replacement and wchan cache;
//! - `sprint.rs`: the `%pS` family;
//! - `mod_index.rs`: per-module indexes; `notify.rs`: module events;
//! - `check.rs`, `bench.rs`, `status.rs`: the `check`, `ctl bench` and
//!   `status` files.

// A `Refusal` carries its 256-byte reason by value: refusals are rare, and
// boxing it would need an allocation on the out-of-memory path too.
#![allow(clippy::result_large_err)]

use core::ffi::c_int;
use core::sync::atomic::Ordering;

use kernel::prelude::*;

mod bench;
mod check;
// A link to kernel/series/tree/kernel/kallsyms_fast/elf_symtab.rs: the
// series' own reader of a module's symtab.
mod elf_symtab;
mod glue;
mod loader;
mod mod_index;
mod notify;
mod sprint;
mod state;
mod status;
mod text;
mod verify;
mod wchan;
mod zeroed;

use glue::{kfs_glue_exit, kfs_glue_init};
use state::STATE;
// `sprint.rs` reaches these through the crate root.
pub(crate) use state::{shim, Shim};

module! {
    type: KallsymsFastShim,
    name: "kallsyms_fast_shim",
    description: "Fast kallsyms lookups and a wchan cache for /proc/PID/wchan",
    license: "GPL",
}

pub(crate) fn errno(e: Error) -> c_int {
    e.to_errno()
}

struct KallsymsFastShim;

impl kernel::Module for KallsymsFastShim {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: called once, from module init.
        let ret = unsafe { kfs_glue_init() };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        pr_info!("loaded; write the table addresses to kallsyms_fast/load\n");
        Ok(KallsymsFastShim)
    }
}

impl Drop for KallsymsFastShim {
    fn drop(&mut self) {
        // SAFETY: called once, from module exit; afterwards no debugfs
        // writer or notifier can run, and the patch (which holds a module
        // reference) is gone, so nothing uses STATE any more.
        unsafe { kfs_glue_exit() };
        mod_index::free_all();
        let p = STATE.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: `p` came from `KBox::into_raw` and is freed once.
            drop(unsafe { KBox::from_raw(p) });
        }
        pr_info!("unloaded\n");
    }
}
