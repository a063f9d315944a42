// SPDX-License-Identifier: GPL-2.0

//! Entry points of the module notifier and of the loader's module indexing:
//! the only places module indexes are built (process context).

use core::sync::atomic::{AtomicU64, Ordering};

use crate::mod_index;
use crate::state::shim;
use crate::wchan::CACHE;

/// Module load/unload notifications seen.
pub(crate) static MODULE_EVENTS: AtomicU64 = AtomicU64::new(0);

/// Module notifier (under `kfs_mod_lock`): any module state change makes
/// cached answers stale; a module going live is indexed, a module coming or
/// going loses its index.
#[no_mangle]
pub(crate) extern "C" fn kfs_rust_modules_changed(event: u64, module: *const core::ffi::c_void) {
    CACHE.invalidate();
    MODULE_EVENTS.fetch_add(1, Ordering::Relaxed);
    mod_index::module_changed(event, module as usize, shim().map(|s| s.module_address));
}

/// The loader published the tables: index the modules live now (under
/// `kfs_mod_lock`).
#[no_mangle]
pub(crate) extern "C" fn kfs_rust_index_live_modules() {
    if let Some(s) = shim() {
        mod_index::index_live_modules(s.module_address);
    }
}
