// SPDX-License-Identifier: GPL-2.0

//! Per-module address indexes: `find_kallsyms_symbol()`'s linear scan of a
//! module's whole symtab, replaced by a binary search over the sorted
//! candidates (`kallsyms_fast::fast::module_index`).
//!
//! # Lifetime rules
//!
//! - Indexes are built only in process context, never by a lookup: by the
//!   module notifier when a module goes `MODULE_STATE_LIVE`, and by the
//!   loader (`load`) for the modules already live then. A lookup runs in any
//!   context (`%pS` inside printk, under scheduler and workqueue locks, in
//!   NMI), so it must not allocate, lock or queue work: one that finds no
//!   usable index answers through the stock path.
//! - An index is built from the module's `core_kallsyms` and keyed by the
//!   module (`struct module *`) and `&mod->core_kallsyms`. `do_init_module()`
//!   sends the LIVE notification while `mod->kallsyms` still points at the
//!   full (init + core) symtab, and switches it to `core_kallsyms` later,
//!   under `module_mutex`, with no notification after it. `core_kallsyms`
//!   is complete from `add_kallsyms()` on (before COMING) and never changes,
//!   so the index can be built at LIVE and waits for the switch: a lookup
//!   uses it only inside one preempt-disabled section in which it reads
//!   `mod->kallsyms` and finds it equal to the key. Before the switch (the
//!   module's init symbols are still visible) the stock path answers, as it
//!   does for modules that are not live. The symtab and names a lookup reads
//!   cannot be freed before its section ends (`free_module()` waits for a
//!   grace period).
//! - Only `MODULE_STATE_LIVE` modules are indexed or served. A live module
//!   always passes through the `MODULE_STATE_GOING` notifier before it is
//!   freed, and that notifier drops its index, so no index outlives its
//!   module and a new module at the same address never meets an old index.
//!   (A module whose load fails before it goes live can be freed without a
//!   GOING event; it was never indexed.)
//! - The builders and the notifier run under one mutex (`kfs_mod_lock`), so
//!   a module being indexed cannot finish unloading meanwhile.
//! - A dropped or replaced index is freed after `synchronize_rcu()`.
//!
//! Module answers are not put in the wchan cache: the switch to
//! `core_kallsyms` changes a module's symtab with no notifier event after
//! it, so a cached module name could go stale unseen.

use core::ffi::c_void;
use core::mem::{offset_of, size_of};
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use kallsyms_fast::fast::{collect_module_candidates, find_in_index, sort_module_index, ModEntry};
use kallsyms_fast::module::{MemRegion, ModuleHit, ModuleLayout, MOD_MEM_NUM_TYPES};
use kallsyms_fast::KSYM_NAME_LEN;
use kernel::{bindings, static_assert};

use crate::elf_symtab::{c_str, ElfSymtab};
use crate::zeroed::kv_zeroed;

/// `__module_address()`: the module containing an address, or NULL.
pub(crate) type ModuleAddressFn = unsafe extern "C" fn(u64) -> *mut c_void;

extern "C" {
    fn kfs_preempt_disable();
    fn kfs_preempt_enable();
    fn kfs_synchronize_rcu();
    fn kfs_module_view(find: ModuleAddressFn, addr: u64, v: *mut ModView) -> bool;
    fn kfs_live_modules(find: ModuleAddressFn, out: *mut u64, max: usize) -> usize;
}

/// `struct kfs_mod_view` (shim_glue.h): the layout both sides check at
/// build time (below, and `static_assert`s in shim_glue.c).
#[repr(C)]
pub(crate) struct ModView {
    module: *const c_void,
    kallsyms: *const c_void,
    symtab: *const bindings::elf64_sym,
    strtab: *const u8,
    name: *const u8,
    num_symtab: u64,
    live: u64,
    serving: u64,
    mem: [[u64; 2]; MOD_MEM_NUM_TYPES],
}

// The layout of `struct kfs_mod_view`: eight 8-byte fields, then `mem`.
static_assert!(MOD_MEM_NUM_TYPES == bindings::mod_mem_type_MOD_MEM_NUM_TYPES as usize);
static_assert!(size_of::<ModView>() == 8 * 8 + 16 * MOD_MEM_NUM_TYPES);
static_assert!(offset_of!(ModView, module) == 0);
static_assert!(offset_of!(ModView, kallsyms) == 8);
static_assert!(offset_of!(ModView, symtab) == 16);
static_assert!(offset_of!(ModView, strtab) == 24);
static_assert!(offset_of!(ModView, name) == 32);
static_assert!(offset_of!(ModView, num_symtab) == 40);
static_assert!(offset_of!(ModView, live) == 48);
static_assert!(offset_of!(ModView, serving) == 56);
static_assert!(offset_of!(ModView, mem) == 64);

/// `MODULE_NAME_LEN` on 64-bit kernels (shim_glue.c checks it).
const MODULE_NAME_LEN: usize = 56;

/// Preemption disabled: an RCU read-side section that also satisfies
/// `__module_address()`'s assertion.
struct NoPreempt;

impl NoPreempt {
    fn new() -> Self {
        // SAFETY: paired with the enable in `drop`.
        unsafe { kfs_preempt_disable() };
        NoPreempt
    }
}

impl Drop for NoPreempt {
    fn drop(&mut self) {
        // SAFETY: paired with the disable in `new`.
        unsafe { kfs_preempt_enable() };
    }
}

impl ModView {
    /// The module holding `addr`, read while `_guard` keeps it alive.
    fn read(find: ModuleAddressFn, addr: u64, _guard: &NoPreempt) -> Option<Self> {
        let mut v = ModView {
            module: core::ptr::null(),
            kallsyms: core::ptr::null(),
            symtab: core::ptr::null(),
            strtab: core::ptr::null(),
            name: core::ptr::null(),
            num_symtab: 0,
            live: 0,
            serving: 0,
            mem: [[0; 2]; MOD_MEM_NUM_TYPES],
        };
        // SAFETY: preemption is disabled (`_guard`); `find` is the verified
        // `__module_address`; `v` is a valid out-parameter.
        let found = unsafe { kfs_module_view(find, addr, &mut v) };
        (found && !v.symtab.is_null() && !v.strtab.is_null()).then_some(v)
    }

    fn layout(&self) -> ModuleLayout {
        let mut l = [MemRegion::default(); MOD_MEM_NUM_TYPES];
        for (r, m) in l.iter_mut().zip(self.mem.iter()) {
            *r = MemRegion {
                base: m[0],
                size: m[1],
            };
        }
        l
    }

    /// The module's symtab (`elf_symtab.rs`, the series' own reader), its
    /// names at most `KSYM_NAME_LEN - 1` bytes, as `strscpy(symname, sym,
    /// KSYM_NAME_LEN)` keeps; `None` if `num_symtab` does not fit.
    fn symtab(&self) -> Option<ElfSymtab<'_>> {
        let n = usize::try_from(self.num_symtab).ok()?;
        // SAFETY: `symtab` holds `num_symtab` entries naming strings of
        // `strtab` (the module loader's invariant), alive while the view's
        // preempt-disabled section lasts (the view never escapes it: every
        // `ModView` lives inside a `NoPreempt` scope).
        unsafe { ElfSymtab::new(self.symtab, n, self.strtab, KSYM_NAME_LEN - 1) }
    }

    /// Name of symtab entry `i` (empty when out of range).
    fn sym_name(&self, i: usize) -> &[u8] {
        self.symtab().map_or(&[][..], |s| s.name_of(i))
    }

    /// `mod->name`.
    pub(crate) fn module_name(&self) -> &[u8] {
        // SAFETY: `mod->name` is a NUL-terminated array of MODULE_NAME_LEN
        // bytes inside the live module.
        unsafe { c_str(self.name, MODULE_NAME_LEN) }
    }
}

/// One module's index.
struct ModIndex {
    module: usize,
    kallsyms: usize,
    num_symtab: u64,
    len: usize,
    entries: KVVec<ModEntry>,
}

impl ModIndex {
    fn entries(&self) -> &[ModEntry] {
        self.entries.get(..self.len).unwrap_or(&[])
    }
}

/// How many modules can be indexed at once; more are served by the stock
/// path.
const SLOTS: usize = 64;

// The initialisers below repeat named constants: an inline `const { }`
// block is rustc 1.79, and the kernel's minimum is 1.78. Each array
// element is a fresh value; the constants are never borrowed.
#[allow(clippy::declare_interior_mutable_const)]
const FREE_KEY: AtomicUsize = AtomicUsize::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const NO_INDEX: AtomicPtr<ModIndex> = AtomicPtr::new(null_mut());

/// Module identity (`struct module *`) per slot, 0 when free: what a lookup
/// scans (512 bytes) before touching an index.
static KEYS: [AtomicUsize; SLOTS] = [FREE_KEY; SLOTS];
/// The index per slot.
static INDEXES: [AtomicPtr<ModIndex>; SLOTS] = [NO_INDEX; SLOTS];
/// Indexes built so far, and modules refused for want of a slot or memory.
pub(crate) static BUILT: AtomicU64 = AtomicU64::new(0);
pub(crate) static NOT_BUILT: AtomicU64 = AtomicU64::new(0);

fn index_of<'g>(module: usize, _guard: &'g NoPreempt) -> Option<&'g ModIndex> {
    let slot = KEYS
        .iter()
        .position(|k| k.load(Ordering::Acquire) == module)?;
    let p = INDEXES.get(slot)?.load(Ordering::Acquire);
    // SAFETY: a published index is freed only after it is unpublished and a
    // grace period has passed; `_guard` holds one open.
    let ix = unsafe { p.as_ref() }?;
    (ix.module == module).then_some(ix)
}

/// What the index says about a module address.
pub(crate) enum ModAnswer<R> {
    /// The address is in a live, indexed module: `f`'s result.
    Indexed(R),
    /// No module holds the address (as `__module_address()` sees it).
    NotModule,
    /// The index cannot answer (module not live, or still on its init-time
    /// symtab, or not indexed): ask the stock path.
    Stock,
}

/// Looks `addr` up in its module's index and hands the view and the hit
/// (`None`: the module has no symbol there) to `f`, inside the
/// preempt-disabled section. Any context, NMI included: no lock, no
/// allocation, no queued work. `all_symbols` is `CONFIG_KALLSYMS_ALL`.
pub(crate) fn lookup<R>(
    find: ModuleAddressFn,
    addr: u64,
    all_symbols: bool,
    f: impl FnOnce(&ModView, Option<ModuleHit>) -> R,
) -> ModAnswer<R> {
    let guard = NoPreempt::new();
    let Some(v) = ModView::read(find, addr, &guard) else {
        return ModAnswer::NotModule;
    };
    if v.live == 0 || v.serving == 0 {
        return ModAnswer::Stock;
    }
    let ix = index_of(v.module as usize, &guard);
    let Some(ix) =
        ix.filter(|ix| ix.kallsyms == v.kallsyms as usize && ix.num_symtab == v.num_symtab)
    else {
        return ModAnswer::Stock;
    };
    let hit = find_in_index(ix.entries(), &v.layout(), addr, all_symbols);
    // Built from this symtab, so in range; checked anyway.
    let hit = hit.filter(|h| (h.index as u64) < v.num_symtab);
    ModAnswer::Indexed(f(&v, hit))
}

/// Copies the name of `hit` into `out` as `strscpy(out, name,
/// KSYM_NAME_LEN)` does; returns its length.
pub(crate) fn copy_name(v: &ModView, hit: &ModuleHit, out: &mut [u8; KSYM_NAME_LEN]) -> usize {
    let name = v.sym_name(hit.index);
    let n = name.len().min(KSYM_NAME_LEN - 1);
    out[..n].copy_from_slice(&name[..n]);
    out[n] = 0;
    n
}

/// Most modules the loader indexes at once (the slots bound them anyway).
const LIVE_MAX: usize = SLOTS;

/// Indexes every module live now. The loader, once the tables are
/// published: modules that went live before that had no notifier run that
/// could index them. Process context, under `kfs_mod_lock`.
pub(crate) fn index_live_modules(find: ModuleAddressFn) {
    let mut mods = [0u64; LIVE_MAX];
    // SAFETY: `find` is the verified `__module_address`; `mods` has
    // LIVE_MAX slots.
    let n = unsafe { kfs_live_modules(find, mods.as_mut_ptr(), LIVE_MAX) };
    for &m in mods.iter().take(n) {
        build(find, m);
    }
}

/// Builds the index of the live module holding `addr`, from its
/// `core_kallsyms`, unless it has a current one. Process context, under
/// `kfs_mod_lock`.
pub(crate) fn build(find: ModuleAddressFn, addr: u64) {
    // 1. Which module and symtab version, and how big.
    let (module, kallsyms, num) = {
        let guard = NoPreempt::new();
        let Some(v) = ModView::read(find, addr, &guard) else {
            return;
        };
        if v.live == 0 {
            return;
        }
        if let Some(ix) = index_of(v.module as usize, &guard) {
            if ix.kallsyms == v.kallsyms as usize && ix.num_symtab == v.num_symtab {
                return;
            }
        }
        (v.module as usize, v.kallsyms as usize, v.num_symtab)
    };
    let Ok(mut entries) = kv_zeroed::<ModEntry>(num.saturating_sub(1) as usize) else {
        NOT_BUILT.fetch_add(1, Ordering::Relaxed);
        return;
    };
    // 2. Copy the candidates from the same symtab. The module cannot have
    // been freed since step 1: its GOING notifier waits for `kfs_mod_lock`,
    // which the caller holds.
    let count = {
        let guard = NoPreempt::new();
        let Some(v) = ModView::read(find, addr, &guard) else {
            return;
        };
        if v.live == 0
            || v.module as usize != module
            || v.kallsyms as usize != kallsyms
            || v.num_symtab != num
        {
            return;
        }
        v.symtab()
            .and_then(|s| collect_module_candidates(&s, &mut entries))
    };
    let Some(count) = count else {
        return;
    };
    // 3. Sort outside the section: the entries are ours.
    let Some(used) = entries.get_mut(..count) else {
        return;
    };
    let len = sort_module_index(used);
    let ix = ModIndex {
        module,
        kallsyms,
        num_symtab: num,
        len,
        entries,
    };
    let Ok(ix) = KBox::new(ix, GFP_KERNEL) else {
        NOT_BUILT.fetch_add(1, Ordering::Relaxed);
        return;
    };
    publish(KBox::into_raw(ix));
}

use kernel::prelude::{KBox, KVVec, GFP_KERNEL};

/// Publishes `ix`, replacing the module's older index if any. Under
/// `kfs_mod_lock`.
fn publish(ix: *mut ModIndex) {
    // SAFETY: `ix` is ours until published.
    let module = unsafe { (*ix).module };
    let slot = KEYS
        .iter()
        .position(|k| k.load(Ordering::Relaxed) == module)
        .or_else(|| KEYS.iter().position(|k| k.load(Ordering::Relaxed) == 0));
    let Some(slot) = slot else {
        NOT_BUILT.fetch_add(1, Ordering::Relaxed);
        // SAFETY: never published.
        drop(unsafe { KBox::from_raw(ix) });
        return;
    };
    // Index first, then key: a reader that sees the key sees an index
    // (and checks its module field anyway).
    let old = INDEXES[slot].swap(ix, Ordering::AcqRel);
    KEYS[slot].store(module, Ordering::Release);
    BUILT.fetch_add(1, Ordering::Relaxed);
    free_after_grace_period(old);
}

fn free_after_grace_period(old: *mut ModIndex) {
    if old.is_null() {
        return;
    }
    // SAFETY: process context; waits for every reader that may hold `old`.
    unsafe { kfs_synchronize_rcu() };
    // SAFETY: `old` came from `KBox::into_raw`, is unpublished, and no
    // reader is left.
    drop(unsafe { KBox::from_raw(old) });
}

/// Module notifier (under `kfs_mod_lock`): a module going live is indexed
/// (`find`: the verified `__module_address`, once tables are loaded); a
/// module coming or going loses its index.
pub(crate) fn module_changed(event: u64, module: usize, find: Option<ModuleAddressFn>) {
    const LIVE: u64 = bindings::module_state_MODULE_STATE_LIVE as u64;
    const COMING: u64 = bindings::module_state_MODULE_STATE_COMING as u64;
    const GOING: u64 = bindings::module_state_MODULE_STATE_GOING as u64;
    match (event, find) {
        // `struct module` lies in its module's own memory
        // (`.gnu.linkonce.this_module`), so its address finds it.
        (LIVE, Some(find)) => build(find, module as u64),
        (COMING | GOING, _) => drop_module(module),
        _ => {}
    }
}

fn drop_module(module: usize) {
    let Some(slot) = KEYS
        .iter()
        .position(|k| k.load(Ordering::Relaxed) == module)
    else {
        return;
    };
    KEYS[slot].store(0, Ordering::Release);
    let old = INDEXES[slot].swap(null_mut(), Ordering::AcqRel);
    free_after_grace_period(old);
}

/// Frees every index. Module exit only, when no lookup can run.
pub(crate) fn free_all() {
    for (k, p) in KEYS.iter().zip(INDEXES.iter()) {
        k.store(0, Ordering::Relaxed);
        let old = p.swap(null_mut(), Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: from `KBox::into_raw`; nothing can read it any more.
            drop(unsafe { KBox::from_raw(old) });
        }
    }
}

/// Number of modules indexed and their total entries.
pub(crate) fn stats() -> (usize, usize) {
    let guard = NoPreempt::new();
    let mut modules = 0;
    let mut entries = 0;
    for k in KEYS.iter() {
        let m = k.load(Ordering::Acquire);
        if m != 0 {
            if let Some(ix) = index_of(m, &guard) {
                modules += 1;
                entries += ix.len;
            }
        }
    }
    (modules, entries)
}
