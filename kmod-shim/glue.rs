// SPDX-License-Identifier: GPL-2.0

//! The helpers `shim_glue.c` exports to the Rust side, and safe wrappers of
//! the ones with no precondition.

use core::ffi::c_int;
extern "C" {
    pub(crate) fn kfs_indirect_call_ok(addr: u64) -> bool;
    pub(crate) fn kfs_sprint_symbol(buf: *mut u8, addr: u64) -> c_int;
    pub(crate) fn kfs_cond_resched();
    pub(crate) fn kfs_ktime_ns() -> u64;
    pub(crate) fn kfs_cycles() -> u64;
    pub(crate) fn kfs_collect_stack_addrs(out: *mut u64, max: usize) -> usize;
    pub(crate) fn kfs_glue_init() -> c_int;
    pub(crate) fn kfs_glue_exit();
    pub(crate) fn kfs_index_live_modules();
}

/// `cond_resched()`: bench and check loops run in process context (a
/// debugfs write) holding only the sleeping `kfs_lock`.
pub(crate) fn resched() {
    // SAFETY: process context, no spinlock or RCU read section held.
    unsafe { kfs_cond_resched() };
}

pub(crate) fn now() -> u64 {
    // SAFETY: plain clock read.
    unsafe { kfs_ktime_ns() }
}

pub(crate) fn cycles() -> u64 {
    // SAFETY: plain counter read.
    unsafe { kfs_cycles() }
}
