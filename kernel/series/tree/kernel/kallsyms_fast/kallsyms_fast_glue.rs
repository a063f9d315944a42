// SPDX-License-Identifier: GPL-2.0

//! The C-callable side of `CONFIG_KALLSYMS_FAST`.
//!
//! The kernel's kallsyms answers every address lookup with a binary search
//! over `kallsyms_offsets` and a walk of up to 255 compressed name records
//! from the nearest marker. Here the kallsyms-fast crate answers the same
//! lookups (the same answers, byte for byte) from an index it builds once
//! over those very tables: see `core/fast/addr_index.rs` for its layout.
//!
//! # Lifetime
//!
//! The core index is built once, at `fs_initcall_sync` time, and never freed:
//! a lookup reads the published pointer and the index behind it, nothing
//! else, so it needs no lock, allocates nothing, sleeps never and queues
//! no work, and runs wherever a lookup runs (NMI, under scheduler locks,
//! inside printk). Until the index is published, and whenever it cannot
//! answer, the stock code answers (every function returns `false` then).

use core::ffi::{c_char, c_int, c_uint, c_ulong};
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering};

use kallsyms_fast::cache::DefaultWchanCache;
use kallsyms_fast::fast::{build_addr_index, AddrIndex, AddrIndexLayout, FastCore, TokenSlots};
use kallsyms_fast::{KallsymsTables, OffsetEncoding, Sections, KSYM_NAME_LEN};
use kernel::alloc::AllocError;
use kernel::prelude::*;
use kernel::{bindings, static_assert};

pub mod names;

// The crate's name buffers have the kernel's size, and its addresses are
// `unsigned long` (CONFIG_KALLSYMS_FAST depends on 64BIT).
static_assert!(KSYM_NAME_LEN == bindings::KSYM_NAME_LEN as usize);
static_assert!(core::mem::size_of::<c_ulong>() == core::mem::size_of::<u64>());

// The tables scripts/kallsyms.c emits (kernel/kallsyms_internal.h) and the
// section bounds (asm/sections.h). Arrays of unknown length are declared
// with length 0 and only ever read through slices whose lengths
// `kernel_tables()` derives.
extern "C" {
    static kallsyms_offsets: [i32; 0];
    static kallsyms_names: [u8; 0];
    static kallsyms_num_syms: c_uint;
    static kallsyms_relative_base: c_ulong;
    static kallsyms_token_table: [u8; 0];
    static kallsyms_token_index: [u16; 0];
    static kallsyms_markers: [c_uint; 0];
    static kallsyms_seqs_of_names: [u8; 0];
    static _stext: [u8; 0];
    static _etext: [u8; 0];
    static _sinittext: [u8; 0];
    static _einittext: [u8; 0];
    static _end: [u8; 0];
    static __init_begin: [u8; 0];
    static __init_end: [u8; 0];
}

/// The published core index: the crate's `FastCore` over the kernel's
/// tables and storage leaked at publication, so that a lookup borrows it as
/// it is (building a `FastCore` per call copied some 200 bytes on every
/// lookup: 15% of a core lookup on UML, measured with perf). Set once,
/// never freed.
static CORE: AtomicPtr<FastCore<'static>> = AtomicPtr::new(null_mut());

fn core_index() -> Option<&'static FastCore<'static>> {
    // SAFETY: a non-null `CORE` points at a fully built `FastCore` that is
    // never freed (`kallsyms_fast_build_core()` leaks it on publication).
    unsafe { CORE.load(Ordering::Acquire).as_ref() }
}

/// The elements of `v`, for as long as the kernel runs: the index is never
/// freed, so its storage is leaked rather than kept beside borrows of it.
fn leak_slice<T>(v: KVVec<T>) -> &'static [T] {
    let (ptr, len, _capacity) = v.into_raw_parts();
    // SAFETY: `ptr` and `len` come from a vector whose first `len`
    // elements are initialised (a dangling, aligned, non-null pointer when
    // `len` is 0); its allocation is never freed nor written again.
    unsafe { core::slice::from_raw_parts(ptr, len) }
}

fn addr_of<T>(p: *const T) -> u64 {
    p as usize as u64
}

/// The kernel's own tables and section bounds.
///
/// scripts/kallsyms.c emits the tables in one .rodata block, in the order
/// num_syms, names, markers, token_table, token_index, offsets,
/// relative_base, seqs_of_names; the lengths of `kallsyms_names` and
/// `kallsyms_token_table`, which no symbol gives, are bounded by the next
/// table's start. `validate()` then checks every record and token within
/// those bounds before any index is built.
fn kernel_tables() -> Option<(KallsymsTables<'static>, Sections)> {
    // SAFETY: the `kallsyms_*` statics are emitted by scripts/kallsyms.c,
    // read-only and never written after the link.
    let (n, base) = unsafe { (kallsyms_num_syms, kallsyms_relative_base) };
    let n = usize::try_from(n).ok()?;
    let names = core::ptr::addr_of!(kallsyms_names).cast::<u8>();
    let markers = core::ptr::addr_of!(kallsyms_markers).cast::<c_uint>();
    let token_table = core::ptr::addr_of!(kallsyms_token_table).cast::<u8>();
    let token_index = core::ptr::addr_of!(kallsyms_token_index).cast::<u16>();
    let names_len = usize::try_from(addr_of(markers).checked_sub(addr_of(names))?).ok()?;
    let tokens_len =
        usize::try_from(addr_of(token_index).checked_sub(addr_of(token_table))?).ok()?;
    // SAFETY: every slice lies inside the .rodata block scripts/kallsyms.c
    // emits: `kallsyms_offsets` has `n` entries, `kallsyms_markers`
    // `n.div_ceil(256)`, `kallsyms_token_index` 256, `kallsyms_seqs_of_names`
    // `3 * n` bytes; `kallsyms_names` and `kallsyms_token_table` end at or
    // before the table emitted after them (see above). The memory is
    // immutable for the kernel's lifetime.
    let tables = unsafe {
        KallsymsTables {
            num_syms: u32::try_from(n).ok()?,
            offsets: core::slice::from_raw_parts(
                core::ptr::addr_of!(kallsyms_offsets).cast::<i32>(),
                n,
            ),
            encoding: OffsetEncoding::RelativeBase {
                base,
                absolute_percpu: cfg!(CONFIG_KALLSYMS_ABSOLUTE_PERCPU),
            },
            names: core::slice::from_raw_parts(names, names_len),
            markers: core::slice::from_raw_parts(markers, n.div_ceil(256)),
            token_table: core::slice::from_raw_parts(token_table, tokens_len),
            token_index: core::slice::from_raw_parts(token_index, 256),
            seqs_of_names: core::slice::from_raw_parts(
                core::ptr::addr_of!(kallsyms_seqs_of_names).cast::<u8>(),
                n.checked_mul(3)?,
            ),
        }
    };
    // Only the addresses of the linker symbols are taken.
    let sections = {
        Sections {
            stext: addr_of(core::ptr::addr_of!(_stext)),
            etext: addr_of(core::ptr::addr_of!(_etext)),
            sinittext: addr_of(core::ptr::addr_of!(_sinittext)),
            einittext: addr_of(core::ptr::addr_of!(_einittext)),
            end: addr_of(core::ptr::addr_of!(_end)),
            init_begin: addr_of(core::ptr::addr_of!(__init_begin)),
            init_end: addr_of(core::ptr::addr_of!(__init_end)),
            // The x86_64 vsyscall page (`in_gate_area_no_mm()`) is left to
            // the stock code: `is_ksym_addr()` here says no, and the
            // caller falls back.
            gate: None,
            all_symbols: cfg!(CONFIG_KALLSYMS_ALL),
        }
    };
    Some((tables, sections))
}

/// What building the core index can fail on.
enum BuildError {
    NoMemory,
    BadTables,
}

impl From<AllocError> for BuildError {
    fn from(_: AllocError) -> Self {
        BuildError::NoMemory
    }
}

fn build_core() -> Result<KBox<FastCore<'static>>, BuildError> {
    let (tables, sections) = kernel_tables().ok_or(BuildError::BadTables)?;
    let mut scratch = KVVec::from_elem(0u64, tables.len().div_ceil(64), GFP_KERNEL)?;
    tables
        .validate(&mut scratch)
        .map_err(|_| BuildError::BadTables)?;
    drop(scratch);
    let layout = AddrIndexLayout::for_table(&tables, &sections);
    let mut buckets = KVVec::from_elem(0u32, layout.bucket_words, GFP_KERNEL)?;
    let mut name_delta = KVVec::from_elem(0u16, layout.delta_words, GFP_KERNEL)?;
    build_addr_index(&tables, layout, &mut buckets, &mut name_delta)
        .map_err(|_| BuildError::BadTables)?;
    // 4.3 KiB: zeroed by the allocator, never built on the stack. All-zero
    // bytes are a valid `TokenSlots` (plain byte arrays, its docs say so).
    let tokens = KVBox::<TokenSlots>::new_uninit(GFP_KERNEL | __GFP_ZERO)?;
    // SAFETY: see above.
    let mut tokens = unsafe { tokens.assume_init() };
    tokens.fill(&tables).ok_or(BuildError::BadTables)?;
    // Allocated before anything is leaked: no failure path after it.
    let slot = KBox::<FastCore<'static>>::new_uninit(GFP_KERNEL)?;
    let fast = FastCore {
        tables,
        sections,
        addr: AddrIndex::from_parts(layout, leak_slice(buckets), leak_slice(name_delta)),
        tokens: KVBox::leak(tokens),
    };
    Ok(KBox::write(slot, fast))
}

/// Builds and publishes the core index; stores its size in `*bytes`.
/// Returns 0, `-ENOMEM`, `-EINVAL` (tables that do not validate) or
/// `-EBUSY` (already built). Process context, once, at boot.
///
/// # Safety
///
/// `bytes` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kallsyms_fast_build_core(bytes: *mut usize) -> c_int {
    if core_index().is_some() {
        return EBUSY.to_errno();
    }
    let ix = match build_core() {
        Ok(ix) => ix,
        Err(BuildError::NoMemory) => return ENOMEM.to_errno(),
        Err(BuildError::BadTables) => return EINVAL.to_errno(),
    };
    let size = ix.addr.layout().bytes() + core::mem::size_of::<TokenSlots>();
    // Published for good: the index lives as long as the kernel.
    CORE.store(KBox::into_raw(ix), Ordering::Release);
    // SAFETY: the caller's contract.
    unsafe { *bytes = size };
    0
}

/// Writes `size` and `offset` through the C pointers that are not NULL.
///
/// # Safety
///
/// Each non-null pointer must be valid for a write.
unsafe fn put(p: *mut c_ulong, v: c_ulong) {
    // SAFETY: the caller's contract.
    if let Some(p) = unsafe { p.as_mut() } {
        *p = v;
    }
}

/// The core-kernel part of a lookup (`is_ksym_addr(addr)` is true): the
/// symbol's size and offset through the pointers that are not NULL, and
/// its name, NUL-terminated, into `namebuf` when it is not NULL. Returns
/// the name's length (what `strlen(namebuf)` would say; 0 without
/// `namebuf`), or -1 when the index is not built or cannot answer: the
/// caller then runs the stock code. Any context.
///
/// # Safety
///
/// `symbolsize` and `offset` must each be NULL or valid for a write;
/// `namebuf` NULL or `KSYM_NAME_LEN` writable bytes, not otherwise
/// referenced during the call.
#[no_mangle]
pub unsafe extern "C" fn kallsyms_fast_core_symbol(
    addr: c_ulong,
    symbolsize: *mut c_ulong,
    offset: *mut c_ulong,
    namebuf: *mut c_char,
) -> c_int {
    let Some(core) = core_index() else {
        return -1;
    };
    // SAFETY: the caller's contract: `namebuf` is NULL or KSYM_NAME_LEN
    // bytes that nothing else reads or writes during the call.
    let buf = unsafe { namebuf.cast::<[u8; KSYM_NAME_LEN]>().as_mut() };
    let found = match buf {
        None => core.symbol_pos(addr).map(|pos| (pos, 0)),
        Some(buf) => core.lookup_into(addr, buf).and_then(|(pos, n)| {
            // The name is at most KSYM_NAME_LEN - 1 bytes, and holds no
            // NUL (tokens are NUL-terminated strings): n is its strlen().
            *buf.get_mut(n)? = 0;
            Some((pos, c_int::try_from(n).ok()?))
        }),
    };
    let Some((pos, len)) = found else {
        return -1;
    };
    // SAFETY: the caller's contract.
    unsafe {
        put(symbolsize, pos.size);
        put(offset, pos.offset);
    }
    len
}

/// A module's symtab as the per-module indexes read it.
#[cfg(CONFIG_MODULES)]
mod elf_symtab;

/// Per-module indexes; `struct mod_kallsyms` exists only with modules.
#[cfg(CONFIG_MODULES)]
pub mod modules {
    use super::*;
    use crate::elf_symtab::ElfSymtab;
    use core::ffi::c_long;
    use kallsyms_fast::fast::module_index::{find_in_region, module_index_capacity};
    use kallsyms_fast::fast::{collect_module_candidates, sort_module_index, ModEntry};
    use kallsyms_fast::module::MemRegion;

    /// One module's index: the candidate symbols of its `core_kallsyms`,
    /// sorted by address (`core/fast/module_index.rs`).
    ///
    /// Built when the module switches to `core_kallsyms` (`do_init_module()`,
    /// under `module_mutex`), published in `mod->kallsyms_fast`, and freed by
    /// `free_module()` after the grace period that follows the module's
    /// removal from the module list and tree, so no lookup can still hold it.
    /// Keyed by the `mod_kallsyms` it was built from: a lookup that finds the
    /// module on another symtab (never, after the switch) takes the stock path.
    pub struct ModuleIndex {
        pub(crate) kallsyms: *const bindings::mod_kallsyms,
        entries: KVVec<ModEntry>,
        len: usize,
        /// The name index of the same symtab (`names.rs`); `None` when
        /// out of memory: name lookups in the module are stock then.
        pub(crate) names: Option<crate::names::modules::ModuleNames>,
    }

    /// A module's symtab as `find_kallsyms_symbol()` reads it.
    ///
    /// Its names are read up to `name_max` bytes (`elf_symtab.rs`); `None`
    /// when the module has no symtab.
    ///
    /// # Safety
    ///
    /// `k` must be a module's `mod_kallsyms` whose symtab and strtab stay
    /// valid and unchanged for `'a`.
    pub(crate) unsafe fn module_symtab(
        k: &bindings::mod_kallsyms,
        name_max: usize,
    ) -> Option<ElfSymtab<'_>> {
        let n = usize::try_from(k.num_symtab).ok()?;
        // SAFETY: `symtab` holds `num_symtab` entries naming strings of
        // `strtab` (the module loader's invariant), valid for `'a` (the
        // caller's contract).
        unsafe { ElfSymtab::new(k.symtab, n, k.strtab.cast::<u8>(), name_max) }
    }

    fn build_module(k: &bindings::mod_kallsyms) -> Option<KBox<ModuleIndex>> {
        // SAFETY: `core_kallsyms` of a module in `do_init_module()`: complete
        // since `add_kallsyms()`, freed only with the module. Names as
        // `strscpy(symname, sym, KSYM_NAME_LEN)` keeps them.
        let symtab = unsafe { module_symtab(k, KSYM_NAME_LEN - 1) }?;
        let mut entries = KVVec::from_elem(
            ModEntry::default(),
            module_index_capacity(&symtab),
            GFP_KERNEL,
        )
        .ok()?;
        let count = collect_module_candidates(&symtab, &mut entries)?;
        let len = sort_module_index(entries.get_mut(..count)?);
        KBox::new(
            ModuleIndex {
                kallsyms: k,
                entries,
                len,
                names: crate::names::modules::build(k),
            },
            GFP_KERNEL,
        )
        .ok()
    }

    /// Builds the index of the module symtab `kallsyms` (a module's
    /// `core_kallsyms`); NULL when out of memory (lookups for that module then
    /// take the stock path). Process context.
    ///
    /// # Safety
    ///
    /// `kallsyms` must be the `core_kallsyms` of a module that cannot be freed
    /// during the call (its loader holds `module_mutex`).
    #[no_mangle]
    pub unsafe extern "C" fn kallsyms_fast_module_build(
        kallsyms: *const bindings::mod_kallsyms,
    ) -> *mut ModuleIndex {
        // SAFETY: the caller's contract.
        let Some(k) = (unsafe { kallsyms.as_ref() }) else {
            return null_mut();
        };
        build_module(k).map_or(null_mut(), KBox::into_raw)
    }

    /// Frees a module index (NULL is fine).
    ///
    /// # Safety
    ///
    /// `ix` must come from [`kallsyms_fast_module_build`], be unpublished, and
    /// no lookup may still read it (a grace period has passed since).
    #[no_mangle]
    pub unsafe extern "C" fn kallsyms_fast_module_free(ix: *mut ModuleIndex) {
        if !ix.is_null() {
            // SAFETY: the caller's contract.
            drop(unsafe { KBox::from_raw(ix) });
        }
    }

    /// `find_kallsyms_symbol()` from the module's index, once the memory region
    /// `[base, base + size)` holding `addr` is known: the symtab index of the
    /// best symbol (size and offset through the pointers that are not NULL),
    /// 0 when the module has no symbol there, -1 when the index cannot answer
    /// (none, or built from another symtab than `kallsyms`). Any context.
    ///
    /// # Safety
    ///
    /// `ix` must be NULL or a published index, and `kallsyms` the module's
    /// current symtab, both read inside the caller's RCU read-side section;
    /// `symbolsize` and `offset` NULL or valid for a write.
    #[no_mangle]
    pub unsafe extern "C" fn kallsyms_fast_module_find(
        ix: *const ModuleIndex,
        kallsyms: *const bindings::mod_kallsyms,
        addr: c_ulong,
        base: c_ulong,
        size: c_ulong,
        symbolsize: *mut c_ulong,
        offset: *mut c_ulong,
    ) -> c_long {
        // SAFETY: the caller's contract: a published index outlives the
        // caller's read-side section.
        let Some(ix) = (unsafe { ix.as_ref() }) else {
            return -1;
        };
        if !core::ptr::eq(ix.kallsyms, kallsyms) {
            return -1;
        }
        let region = MemRegion { base, size };
        let entries = ix.entries.get(..ix.len).unwrap_or(&[]);
        let Some(hit) = find_in_region(entries, region, addr) else {
            return 0;
        };
        // SAFETY: the caller's contract.
        unsafe {
            put(symbolsize, hit.size);
            put(offset, hit.offset);
        }
        // Candidates start at index 1 (the ELF null symbol is never one).
        c_long::try_from(hit.index).unwrap_or(-1)
    }
}

/// The wchan cache (`core/cache.rs`): 256 entries (48 KiB) and a 4 KiB
/// admission filter, shared by every CPU, lock-free;
/// `lookup_symbol_name()` consults it first.
static WCHAN_CACHE: DefaultWchanCache = DefaultWchanCache::new();

/// Copies the cached name of `addr`, NUL-terminated, into `symname`;
/// `false` on a miss. Any context.
///
/// # Safety
///
/// `symname` must be `KSYM_NAME_LEN` writable bytes, not otherwise
/// referenced during the call.
#[no_mangle]
pub unsafe extern "C" fn kallsyms_fast_cache_get(addr: c_ulong, symname: *mut c_char) -> bool {
    // SAFETY: the caller's contract.
    let Some(out) = (unsafe { symname.cast::<[u8; KSYM_NAME_LEN]>().as_mut() }) else {
        return false;
    };
    WCHAN_CACHE.get_into(addr, out).is_some()
}

/// The cache generation: read it before resolving an address, and pass it
/// to [`kallsyms_fast_cache_put`] with the answer.
#[no_mangle]
pub extern "C" fn kallsyms_fast_cache_generation() -> u64 {
    WCHAN_CACHE.generation()
}

/// Caches the NUL-terminated `symname` for `addr`, resolved while the
/// generation was `generation` (dropped if it has moved on since), when
/// `addr` missed recently before: a first miss only leaves its tag in the
/// cache's admission filter (one-off names are never inserted).
///
/// # Safety
///
/// `symname` must be `KSYM_NAME_LEN` readable bytes holding a NUL.
#[no_mangle]
pub unsafe extern "C" fn kallsyms_fast_cache_put(
    addr: c_ulong,
    generation: u64,
    symname: *const c_char,
) {
    // SAFETY: the caller's contract.
    let Some(name) = (unsafe { symname.cast::<[u8; KSYM_NAME_LEN]>().as_ref() }) else {
        return;
    };
    // The name is measured only when it will be inserted.
    WCHAN_CACHE.insert_after_miss(addr, generation, || {
        name.get(..name.iter().position(|&b| b == 0).unwrap_or(0))
    });
}

/// Makes every cached name stale: a module's symbols changed (it switched
/// to `core_kallsyms`, or it is going away).
#[no_mangle]
pub extern "C" fn kallsyms_fast_cache_invalidate() {
    WCHAN_CACHE.invalidate();
}
