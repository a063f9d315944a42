// SPDX-License-Identifier: GPL-2.0

//! Entry points of the module notifier and of the module index build work.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::mod_index;
use crate::state::shim;
use crate::wchan::CACHE;
/// Module load/unload notifications seen.
pub(crate) static MODULE_EVENTS: AtomicU64 = AtomicU64::new(0);

/// Module notifier (under `kfs_mod_lock`): any module state change makes
/// cached answers stale; a module coming or going loses its index.
#[no_mangle]
pub(crate) extern "C" fn kfs_rust_modules_changed(event: u64, module: *const core::ffi::c_void) {
    CACHE.invalidate();
    MODULE_EVENTS.fetch_add(1, Ordering::Relaxed);
    mod_index::module_changed(event, module as usize);
}

/// The build work item (under `kfs_mod_lock`).
#[no_mangle]
pub(crate) extern "C" fn kfs_rust_build_pending() {
    if let Some(s) = shim() {
        mod_index::build_pending(s.module_address);
    }
}
