//! Module memory regions (`mod->mem[type]`) derived from what userspace can
//! see: `/proc/modules`, `/sys/module/<name>/sections/*` and the module's
//! own `/proc/kallsyms` symbols. A `kallsyms-fast/module_layout` file, when
//! a capture has one, is exact and wins (see [`machine_layouts`]).
//!
//! # How Linux 6.12 lays a module out (`kernel/module/main.c`)
//!
//! - `layout_sections()` walks the `SHF_ALLOC` sections once per flag mask,
//!   in this order: executable; alloc-not-write; `SHF_RO_AFTER_INIT` (set by
//!   the loader on `.data..ro_after_init` and `__jump_table`); write. They go
//!   to `MOD_TEXT`, `MOD_RODATA`, `MOD_RO_AFTER_INIT`, `MOD_DATA`, or, for
//!   names starting with `.init`, to `MOD_INIT_TEXT`, `MOD_INIT_RODATA`,
//!   `MOD_INIT_DATA`. Each section is placed at the type's running size
//!   aligned to `sh_addralign`, so the first section of a type sits at
//!   offset 0 (x86 has no `arch_mod_section_prepend()`).
//! - `layout_symtab()` appends the core symtab (24-byte `Elf64_Sym` per
//!   kept symbol plus the null entry, 8-aligned), its strtab (names plus
//!   NULs, one NUL for the null entry) and the typetab (one byte per entry)
//!   at the END of `MOD_DATA`, after the last data section, and puts the full
//!   `.symtab`/`.strtab` (marked `SHF_ALLOC`) in `MOD_INIT_DATA`.
//! - `module_memory_alloc()` gives each non-empty type its own
//!   `execmem_alloc()` (vmalloc) of `PAGE_ALIGN(size)` bytes and stores that
//!   aligned size: regions are page aligned, disjoint, and (vmalloc adds a
//!   guard page to every area) at least one page apart. `move_module()`
//!   allocates nothing for an empty type and leaves its base NULL: a
//!   module without text (Debian 7.3's `nls_ucs2_utils`, tables only) has
//!   no `MOD_TEXT`, and `/proc/modules` prints base 0 for it (see
//!   [`parse_proc_modules_with`](super::modules::parse_proc_modules_with)
//!   for how that is told from hidden addresses).
//! - `do_init_module()` zeroes the init regions once the module is live.
//! - `/proc/modules` prints the sum of all regions' sizes (so, for a live
//!   module, of the core ones) and `mem[MOD_TEXT].base`; sysfs lists every
//!   `SHF_ALLOC` section with a non-zero size, init ones included (their
//!   addresses go stale once init memory is freed).
//!
//! # What userspace cannot know, and what is chosen
//!
//! - Section flags and sizes. A section's type comes from its name
//!   ([`classify`]: the loader's own name rules for `.init*`,
//!   `.data..ro_after_init` and `__jump_table`, the toolchain's and the
//!   kernel's usual flags for the rest); an unknown name goes to the region
//!   whose base is the highest at or below its address, which is right
//!   whenever the region's first section has a known name.
//! - Region bases other than `MOD_TEXT` (printed by `/proc/modules`): the
//!   lowest page-aligned section of the type.
//! - Region ends. Lower bound: the page boundary at or above the last thing
//!   known to lie in the region (a section start or symbol, plus one byte;
//!   for `MOD_DATA`, the core symtab, strtab and typetab computed from the
//!   module's `/proc/kallsyms` symbols). Upper bound: one guard page below
//!   the next allocation known to be live (any module's region or section).
//!   The pages `/proc/modules`' total has left over after the lower bounds
//!   go, within those upper bounds, first to `MOD_DATA` (its last section
//!   is usually `.bss`, whose size nothing shows), then `MOD_TEXT`,
//!   `MOD_RODATA`, `MOD_RO_AFTER_INIT`: when the total leaves nothing over,
//!   as it does for most modules, the ends are exact. (A module still
//!   loading gives `MOD_INIT_DATA`, home of the full symtab, the first
//!   pick.)
//! - The page size: captures do not record it. [`DEFAULT_PAGE_SIZE`] (4 KiB,
//!   x86_64's only page size) is used.
//! - `CONFIG_MODULE_UNLOAD` is assumed (every distribution enables it), so
//!   `.exit*` sections are core.
//! - A module in the `Loading` state still has its init regions, derived
//!   the same way. Modules without sysfs sections get `MOD_TEXT` only, up
//!   to the page after its last symbol (the total also counts regions that
//!   cannot be placed then); modules in neither
//!   `/proc/modules` nor sysfs, a `MOD_TEXT` spanning their text symbols.
//!   A module without text (base 0) and without sysfs sections gets no
//!   region: where its data lies is unknown.
//!
//! # What Linux 7.3 changes ([`machine_layouts_for`] with `Linux7_3`)
//!
//! - On x86_64 only ([`Loader`]): `module_mark_ro_after_init()`
//!   (kernel/module/strict_rwx.c) also puts `.static_call_sites` in
//!   `MOD_RO_AFTER_INIT` (`CONFIG_HAVE_STATIC_CALL_INLINE`):
//!   [`classify_for`];
//! - on x86_64 only, with `CONFIG_ARCH_HAS_EXECMEM_ROX` (selected with
//!   `STRICT_MODULE_RWX`, on in Debian's 7.3), `module_memory_alloc()`
//!   takes text from `EXECMEM_MODULE_TEXT`, whose cache (mm/execmem.c)
//!   carves page-aligned pieces out of shared 2 MiB ROX areas: one
//!   module's text may end right where another's starts, with no guard
//!   page between them. Data types are vmalloc areas as in 6.12.
//!
//! In 7.3 only arch/x86 selects `ARCH_HAS_EXECMEM_ROX` and
//! `HAVE_STATIC_CALL_INLINE`; a UML 7.3 kernel lays modules out as 6.12
//! does (its `uml-test --base 7.3` failed on one module's data region
//! while these two were applied to it).
//!
//! `find_kallsyms_symbol()`, `within_module_mem_type()` and the empty
//! types without memory (`move_module()`) are unchanged.

use std::collections::HashMap;
use std::vec::Vec;

use super::layout::{ModuleLayout, MOD_MEM_NUM_TYPES};
use super::machine::{Machine, MachineModule};
use super::modules::ModuleState;
use crate::layout::KernelLayout;

/// The page size assumed for region alignment (x86_64 has only 4 KiB).
pub const DEFAULT_PAGE_SIZE: u64 = 4096;

/// `enum mod_mem_type` indexes (6.12).
const MOD_TEXT: usize = 0;
const MOD_DATA: usize = 1;
const MOD_RODATA: usize = 2;
const MOD_RO_AFTER_INIT: usize = 3;
const MOD_INIT_TEXT: usize = 4;
const MOD_INIT_DATA: usize = 5;
const MOD_INIT_RODATA: usize = 6;

/// `sizeof(Elf64_Sym)`.
const ELF64_SYM_SIZE: u64 = 24;
/// `struct module_memory.size` is an `unsigned int`.
const MAX_REGION_SIZE: u64 = u32::MAX as u64;

/// Order in which left-over pages of `/proc/modules`' total are handed out
/// (for a module still loading, `MOD_INIT_DATA` first: it holds the full
/// symtab and strtab, whose sizes nothing shows).
const SLACK_ORDER: [usize; 5] = [
    MOD_INIT_DATA,
    MOD_DATA,
    MOD_TEXT,
    MOD_RODATA,
    MOD_RO_AFTER_INIT,
];

/// [`SLACK_ORDER`] on 7.3 x86_64 (`CONFIG_ARCH_HAS_EXECMEM_ROX`): module text
/// is packed into shared ROX areas, so the text's upper bound (the next
/// module's text, no guard page) is no limit and its symbols already
/// bound it: it comes last. The regions whose last section shows only
/// where it starts come first: ro_after_init (`.static_call_sites`, big
/// in kvm) and the read-only data (`.orc_unwind`, `.call_sites`, ...).
/// On a capture of Debian's 7.3 kernel with btrfs, xfs, mac80211,
/// nf_tables and kvm (`cargo xtask debian-shim-test`), module answers
/// were 98.71% exact with 6.12's order, 99.60% with this one.
const SLACK_ORDER_ROX: [usize; 5] = [
    MOD_INIT_DATA,
    MOD_RO_AFTER_INIT,
    MOD_RODATA,
    MOD_DATA,
    MOD_TEXT,
];

/// Where a module's regions came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutSource {
    /// The capture's `kallsyms-fast/module_layout` file: exact.
    Exact,
    /// Derived by this module's rules from `/proc/modules` and sysfs.
    Derived,
    /// Neither `/proc/modules` nor sysfs know the module: `MOD_TEXT` from
    /// its text symbols only.
    SymbolsOnly,
}

/// The module loader whose rules placed a machine's modules: its kernel's
/// version and, because two of 7.3's rules come from options only x86
/// selects, whether it is an x86_64 kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loader {
    /// The kernel: 6.12 or 7.3.
    pub layout: KernelLayout,
    /// An x86_64 kernel: `CONFIG_HAVE_STATIC_CALL_INLINE` and
    /// `CONFIG_ARCH_HAS_EXECMEM_ROX` (with `STRICT_MODULE_RWX`, which every
    /// distribution enables) are selected by arch/x86 alone.
    pub x86_64: bool,
}

impl Loader {
    /// The loader of `machine`'s kernel `layout` names. x86_64 is told by
    /// its syscall entry, `entry_SYSCALL_64` (arch/x86/entry/entry_64.S),
    /// which every x86_64 kernel's `/proc/kallsyms` lists and no other
    /// architecture's (UML's included) has.
    pub fn of(machine: &Machine, layout: KernelLayout) -> Self {
        Self {
            layout,
            x86_64: machine.core.iter().any(|s| s.name == b"entry_SYSCALL_64"),
        }
    }

    /// `.static_call_sites` is ro_after_init (7.3, x86_64).
    fn static_call_sites_ro(self) -> bool {
        self.layout == KernelLayout::Linux7_3 && self.x86_64
    }

    /// Module text is carved from shared ROX areas, no guard page between
    /// two modules' text (7.3, x86_64).
    fn rox_text(self) -> bool {
        self.layout == KernelLayout::Linux7_3 && self.x86_64
    }
}

/// [`classify`] under `loader`'s rules. Linux 7.3 on x86_64
/// (`CONFIG_HAVE_STATIC_CALL_INLINE`) adds `.static_call_sites` to the
/// sections `module_mark_ro_after_init()` (kernel/module/strict_rwx.c)
/// moves to `MOD_RO_AFTER_INIT`; 6.12, and 7.3 elsewhere, leave it in
/// `MOD_DATA`.
pub fn classify_for(name: &str, loader: Loader) -> Option<usize> {
    if loader.static_call_sites_ro() && name == ".static_call_sites" {
        return Some(MOD_RO_AFTER_INIT);
    }
    classify(name)
}

/// The `enum mod_mem_type` a section of this name is laid out in on Linux
/// 6.12, if the name says it; `None` for names this table does not know.
///
/// Exact for what the loader decides by name (`.init*`, the
/// ro_after_init pair, `.symtab`/`.strtab`); for the rest, the flags the
/// kernel's headers and the toolchain give these sections on x86_64.
pub fn classify(name: &str) -> Option<usize> {
    if name == ".symtab" || name == ".strtab" {
        return Some(MOD_INIT_DATA);
    }
    if let Some(rest) = name.strip_prefix(".init") {
        return Some(if rest.contains("text") {
            MOD_INIT_TEXT
        } else if rest.starts_with(".rodata") {
            MOD_INIT_RODATA
        } else {
            MOD_INIT_DATA
        });
    }
    if name == ".data..ro_after_init" || name == "__jump_table" {
        return Some(MOD_RO_AFTER_INIT);
    }
    const TEXT: [&str; 3] = [".altinstr_replacement", ".fixup", ".static_call.text"];
    if name == ".text" || name.starts_with(".text.") || name.ends_with(".text") {
        return Some(MOD_TEXT);
    }
    if TEXT.contains(&name) {
        return Some(MOD_TEXT);
    }
    const RODATA_PREFIX: [&str; 5] = [".rodata", "__ksymtab", "__kcrctab", ".note", ".orc_"];
    const RODATA: [&str; 16] = [
        "__param",
        "__modver",
        "__ex_table",
        "__mcount_loc",
        ".retpoline_sites",
        ".return_sites",
        ".call_sites",
        ".ibt_endbr_seal",
        ".cfi_sites",
        ".altinstructions",
        ".parainstructions",
        ".smp_locks",
        "__tracepoints_strings",
        "__tracepoints_ptrs",
        ".BTF",
        ".BTF_ids",
    ];
    if RODATA_PREFIX.iter().any(|p| name.starts_with(p)) || RODATA.contains(&name) {
        return Some(MOD_RODATA);
    }
    const DATA_PREFIX: [&str; 4] = [".data", ".bss", "__dyndbg", ".exit.data"];
    // GCC's -fpatchable-function-entry emits __patchable_function_entries
    // "awo" (writable): MOD_DATA, as a capture of Debian's 7.3 kernel shows
    // (btrfs, nf_tables: in the data region, before `.bss`).
    const DATA: [&str; 10] = [
        "__patchable_function_entries",
        ".gnu.linkonce.this_module",
        "__tracepoints",
        "_ftrace_events",
        "_ftrace_eval_map",
        "__bug_table",
        ".static_call_sites",
        "__bpf_raw_tp_map",
        "__verbose",
        ".ref.data",
    ];
    if DATA_PREFIX.iter().any(|p| name.starts_with(p)) || DATA.contains(&name) {
        return Some(MOD_DATA);
    }
    None
}

fn is_init_type(ty: usize) -> bool {
    ty >= MOD_INIT_TEXT
}

/// `PAGE_ALIGN()` without wrapping: `None` past the top of memory.
fn page_align(x: u64, page: u64) -> Option<u64> {
    x.checked_add(page - 1).map(|v| v & !(page - 1))
}

/// Live allocation starts of every module, sorted: `/proc/modules` bases
/// and the addresses of sections that are not stale init sections.
fn live_starts(machine: &Machine, loader: Loader) -> Vec<u64> {
    let mut v = Vec::new();
    for m in &machine.modules {
        let live = module_is_live(m);
        // Base 0: a module without text, no allocation.
        if let Some(p) = m.proc.as_ref().filter(|p| p.base != 0) {
            v.push(p.base);
        }
        for (name, addr) in &m.sections {
            if *addr != 0 && !(live && classify_for(name, loader).is_some_and(is_init_type)) {
                v.push(*addr);
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

fn module_is_live(m: &MachineModule) -> bool {
    m.proc.as_ref().is_none_or(|p| p.state == ModuleState::Live)
}

/// One region being derived.
#[derive(Clone, Copy, Debug)]
struct Work {
    base: u64,
    /// One past the last byte known to be used.
    content: u64,
}

/// Derives one module's regions; `starts` is [`live_starts`] of the whole
/// machine, `page` the page size (a power of two), `loader` the loader
/// that placed them.
fn derive_one(
    m: &MachineModule,
    starts: &[u64],
    page: u64,
    loader: Loader,
) -> (ModuleLayout, LayoutSource) {
    let mut out: ModuleLayout = [None; MOD_MEM_NUM_TYPES];
    let live = module_is_live(m);
    let aligned = |a: u64| a & (page - 1) == 0;

    // Sections that still exist, by address.
    let mut secs: Vec<(Option<usize>, u64)> = m
        .sections
        .iter()
        .map(|(n, a)| (classify_for(n, loader), *a))
        .filter(|(c, a)| *a != 0 && !(live && c.is_some_and(is_init_type)))
        .collect();
    secs.sort_by_key(|s| s.1);

    // Region bases: MOD_TEXT from /proc/modules; each other type at its
    // lowest section, walked down over unknown names to a page boundary.
    let mut bases: [Option<u64>; MOD_MEM_NUM_TYPES] = [None; MOD_MEM_NUM_TYPES];
    bases[MOD_TEXT] = m.proc.as_ref().map(|p| p.base);
    // A module without text has no MOD_TEXT allocation (`move_module()`
    // leaves its base NULL, 6.12 and 7.3 alike), and /proc/modules prints
    // 0. Its sysfs sections then place the regions it has.
    if bases[MOD_TEXT] == Some(0) {
        bases[MOD_TEXT] = None;
    }
    for (ty, slot) in bases.iter_mut().enumerate() {
        if slot.is_some() {
            continue;
        }
        let Some(first) = secs.iter().position(|(c, _)| *c == Some(ty)) else {
            continue;
        };
        let mut i = first;
        let mut found = aligned(secs[i].1).then_some(secs[i].1);
        while found.is_none() && i > 0 && secs[i - 1].0.is_none() {
            i -= 1;
            found = aligned(secs[i].1).then_some(secs[i].1);
        }
        *slot = found;
    }
    if bases.iter().all(Option::is_none) {
        // Not in /proc/modules (or there without text) and no sections:
        // text symbols only. (A module without text has none: nothing of
        // it can be placed, and none of its addresses resolves.)
        let text = m.symbols.iter().filter(|s| matches!(s.kind, b't' | b'T'));
        let lo = text.clone().map(|s| s.addr).min();
        let hi = text.map(|s| s.addr).max();
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let end = hi.checked_add(1).and_then(|e| page_align(e, page));
            let size = end.map_or(0u64.wrapping_sub(lo), |e| e - lo);
            out[MOD_TEXT] = Some((lo, size.min(MAX_REGION_SIZE)));
        }
        return (out, LayoutSource::SymbolsOnly);
    }

    // Sorted (base, type) for "the region at or below this address".
    let mut by_base: Vec<(u64, usize)> = bases
        .iter()
        .enumerate()
        .filter_map(|(t, b)| b.map(|b| (b, t)))
        .collect();
    by_base.sort_unstable();
    by_base.dedup_by_key(|(b, _)| *b);
    let owner = |addr: u64| -> Option<usize> {
        let i = by_base
            .partition_point(|(b, _)| *b <= addr)
            .checked_sub(1)?;
        by_base.get(i).map(|(_, t)| *t)
    };
    let mut work: [Option<Work>; MOD_MEM_NUM_TYPES] = [None; MOD_MEM_NUM_TYPES];
    for &(b, t) in &by_base {
        work[t] = Some(Work {
            base: b,
            content: b.saturating_add(1),
        });
    }
    let note = |addr: u64, work: &mut [Option<Work>; MOD_MEM_NUM_TYPES]| {
        if let Some(w) = owner(addr).and_then(|t| work[t].as_mut()) {
            w.content = w.content.max(addr.saturating_add(1));
        }
    };
    for &(_, a) in &secs {
        note(a, &mut work);
    }
    // A symbol counts for a region only below the next allocation known to
    // be live: one past it lies in a hole (another module's memory, a
    // per-CPU address), which says nothing about this module's regions.
    let mut cap = [0u64; MOD_MEM_NUM_TYPES];
    for (t, w) in work.iter().enumerate() {
        let Some(w) = w else { continue };
        let own = by_base.iter().map(|(b, _)| *b).find(|b| *b > w.base);
        let other = starts
            .get(starts.partition_point(|&x| x < w.content))
            .copied();
        cap[t] = own.unwrap_or(u64::MAX).min(other.unwrap_or(u64::MAX));
    }
    for s in &m.symbols {
        // Without sections, data symbols above the text cannot be told
        // from text: only text symbols bound MOD_TEXT then.
        if s.kind == b'U' || (secs.is_empty() && !matches!(s.kind, b't' | b'T')) {
            continue;
        }
        if owner(s.addr).is_some_and(|t| s.addr < cap[t]) {
            note(s.addr, &mut work);
        }
    }
    if let Some(w) = work[MOD_DATA].as_mut() {
        // The core symtab, strtab and typetab follow the data sections.
        let n = m.symbols.len() as u64 + 1;
        let strtab: u64 = 1 + m
            .symbols
            .iter()
            .map(|s| s.name.len() as u64 + 1)
            .sum::<u64>();
        w.content = w
            .content
            .checked_add(7)
            .map(|c| c & !7)
            .and_then(|c| {
                c.checked_add(n.saturating_mul(ELF64_SYM_SIZE + 1).saturating_add(strtab))
            })
            .unwrap_or(u64::MAX);
    }

    // Lower and upper bounds of each region's (page-aligned) end.
    let mut lo = [0u64; MOD_MEM_NUM_TYPES];
    let mut hi = [0u64; MOD_MEM_NUM_TYPES];
    for t in 0..MOD_MEM_NUM_TYPES {
        let Some(w) = work[t] else { continue };
        let top = w.base.saturating_add(MAX_REGION_SIZE) & !(page - 1);
        lo[t] = page_align(w.content, page).unwrap_or(top).min(top);
        let next = starts[starts.partition_point(|&x| x < w.content)..]
            .first()
            .copied()
            .unwrap_or(top);
        // 7.3 with CONFIG_ARCH_HAS_EXECMEM_ROX (x86_64): text regions are
        // carved page by page out of shared 2 MiB ROX areas
        // (mm/execmem.c's cache), so the next module's text may start on
        // the very next page: no guard page below it. Data regions are
        // still vmalloc areas with one.
        let packed = loader.rox_text() && matches!(t, MOD_TEXT | MOD_INIT_TEXT);
        let guarded = if packed {
            next
        } else {
            next.saturating_sub(page)
        };
        hi[t] = if guarded >= lo[t] {
            guarded
        } else {
            next.max(lo[t])
        }
        .min(top);
    }
    let mut size = [0u64; MOD_MEM_NUM_TYPES];
    for t in 0..MOD_MEM_NUM_TYPES {
        if let Some(w) = work[t] {
            size[t] = lo[t].saturating_sub(w.base);
        }
    }
    // Without sections only MOD_TEXT is known, and the total's other pages
    // belong to regions that cannot be placed (every module has data, its
    // struct module at least): the text keeps its lower bound.
    if let Some(p) = m.proc.as_ref().filter(|_| !secs.is_empty()) {
        let counted = |t: usize| !live || !is_init_type(t);
        let known: u64 = (0..MOD_MEM_NUM_TYPES)
            .filter(|&t| counted(t))
            .map(|t| size[t])
            .sum();
        let mut slack = p.size.saturating_sub(known) & !(page - 1);
        let order = if loader.rox_text() {
            SLACK_ORDER_ROX
        } else {
            SLACK_ORDER
        };
        for t in order {
            if work[t].is_none() || slack == 0 || !counted(t) {
                continue;
            }
            let give = slack.min(hi[t].saturating_sub(lo[t]));
            size[t] += give;
            slack -= give;
        }
    }
    for t in 0..MOD_MEM_NUM_TYPES {
        if let Some(w) = work[t] {
            out[t] = Some((w.base, size[t]));
        }
    }
    (out, LayoutSource::Derived)
}

/// Every module's regions, in `machine.modules` order: the capture's exact
/// layout where it lists the module, else derived (see the module docs),
/// with `page` as the page size (a power of two; [`DEFAULT_PAGE_SIZE`]).
pub fn machine_layouts(machine: &Machine, page: u64) -> Vec<(ModuleLayout, LayoutSource)> {
    machine_layouts_for(machine, page, KernelLayout::Linux6_12)
}

/// [`machine_layouts`] with the loader rules of the kernel `layout` names
/// ([`Loader::of`]): 6.12's, or 7.3's (no `MOD_TEXT` for a module without
/// text; on x86_64 also `.static_call_sites` in ro_after_init and module
/// text packed into shared ROX areas without guard pages).
pub fn machine_layouts_for(
    machine: &Machine,
    page: u64,
    layout: KernelLayout,
) -> Vec<(ModuleLayout, LayoutSource)> {
    let page = if page.is_power_of_two() {
        page
    } else {
        DEFAULT_PAGE_SIZE
    };
    let loader = Loader::of(machine, layout);
    let starts = live_starts(machine, loader);
    machine
        .modules
        .iter()
        .map(|m| match m.layout {
            Some(l) => (l, LayoutSource::Exact),
            None => derive_one(m, &starts, page, loader),
        })
        .collect()
}

/// How many modules of `layouts` have each [`LayoutSource`].
pub fn count_sources(layouts: &[(ModuleLayout, LayoutSource)]) -> HashMap<&'static str, usize> {
    let mut h = HashMap::new();
    for (_, s) in layouts {
        let k = match s {
            LayoutSource::Exact => "exact",
            LayoutSource::Derived => "derived",
            LayoutSource::SymbolsOnly => "symbols-only",
        };
        *h.entry(k).or_default() += 1;
    }
    h
}

#[cfg(test)]
mod tests {
    //! A small model of the 6.12 loader (`layout_sections()`,
    //! `layout_symtab()`, `module_memory_alloc()`) produces what userspace
    //! sees of a module; the derivation must give back the regions.

    use super::*;
    use crate::owned::RawSymbol;
    use crate::parse::modules::ProcModule;
    use std::path::PathBuf;
    use std::string::ToString;
    use std::vec;

    const PAGE: u64 = 4096;
    /// The loaders the tests model: 6.12 and 7.3 on x86_64, 7.3 on UML.
    const V6_12: Loader = Loader {
        layout: KernelLayout::Linux6_12,
        x86_64: true,
    };
    const X86_7_3: Loader = Loader {
        layout: KernelLayout::Linux7_3,
        x86_64: true,
    };
    const UML_7_3: Loader = Loader {
        layout: KernelLayout::Linux7_3,
        x86_64: false,
    };
    const MODS: u64 = 0xffff_ffff_c000_0000;

    /// One ELF section: name, executable, writable, size, alignment, and
    /// symbols at offsets.
    struct Sec {
        name: &'static str,
        exec: bool,
        write: bool,
        size: u64,
        align: u64,
        syms: Vec<(u64, &'static str, u8)>,
    }

    fn sec(name: &'static str, flags: &str, size: u64, align: u64) -> Sec {
        Sec {
            name,
            exec: flags.contains('x'),
            write: flags.contains('w'),
            size,
            align,
            syms: Vec::new(),
        }
    }

    fn with(mut s: Sec, syms: &[(u64, &'static str, u8)]) -> Sec {
        s.syms = syms.to_vec();
        s
    }

    /// The loader's type for a section (`__layout_sections()` masks), on
    /// 6.12 or 7.3 (`module_mark_ro_after_init()` there also takes
    /// `.static_call_sites`).
    fn mem_type_for(s: &Sec, loader: Loader) -> usize {
        let init = s.name.starts_with(".init");
        let ro_after_init = s.name == ".data..ro_after_init"
            || s.name == "__jump_table"
            || (loader.static_call_sites_ro() && s.name == ".static_call_sites");
        match (init, s.exec, ro_after_init, s.write) {
            (false, true, ..) => MOD_TEXT,
            (false, false, true, _) => MOD_RO_AFTER_INIT,
            (false, false, false, false) => MOD_RODATA,
            (false, ..) => MOD_DATA,
            (true, true, ..) => MOD_INIT_TEXT,
            (true, false, _, false) => MOD_INIT_RODATA,
            (true, ..) => MOD_INIT_DATA,
        }
    }

    /// Lays `secs` out at `bases` (by type; the test picks disjoint ones)
    /// and returns what userspace sees plus the true layout.
    fn load(
        secs: &[Sec],
        bases: [u64; MOD_MEM_NUM_TYPES],
        state: ModuleState,
    ) -> (MachineModule, ModuleLayout) {
        load_for(secs, bases, state, V6_12)
    }

    fn load_for(
        secs: &[Sec],
        bases: [u64; MOD_MEM_NUM_TYPES],
        state: ModuleState,
        loader: Loader,
    ) -> (MachineModule, ModuleLayout) {
        let mem_type = |s: &Sec| mem_type_for(s, loader);
        let mut size = [0u64; MOD_MEM_NUM_TYPES];
        let mut offs = Vec::new();
        // Mask order: exec, alloc-not-write, ro_after_init, write.
        let rank = |s: &Sec| match mem_type(s) {
            MOD_TEXT | MOD_INIT_TEXT => 0,
            MOD_RODATA | MOD_INIT_RODATA => 1,
            MOD_RO_AFTER_INIT => 2,
            _ => 3,
        };
        let mut order: Vec<usize> = (0..secs.len()).collect();
        order.sort_by_key(|&i| rank(&secs[i]));
        offs.resize(secs.len(), 0);
        for i in order {
            let t = mem_type(&secs[i]);
            let off = size[t].next_multiple_of(secs[i].align);
            offs[i] = off;
            size[t] = off + secs[i].size;
        }
        let mut symbols = Vec::new();
        let mut sections = Vec::new();
        for (i, s) in secs.iter().enumerate() {
            let t = mem_type(s);
            let addr = bases[t] + offs[i];
            if s.size != 0 {
                sections.push((s.name.to_string(), addr));
            }
            if t < MOD_INIT_TEXT {
                for &(o, n, k) in &s.syms {
                    symbols.push(RawSymbol {
                        addr: addr + o,
                        kind: k,
                        name: n.as_bytes().to_vec(),
                    });
                }
            }
        }
        // layout_symtab(): the core symtab, strtab and typetab.
        let n = symbols.len() as u64 + 1;
        let strtab = 1 + symbols.iter().map(|s| s.name.len() as u64 + 1).sum::<u64>();
        size[MOD_DATA] = size[MOD_DATA].next_multiple_of(8) + n * 24 + strtab + n;
        // The full .symtab/.strtab go to init data (and show in sysfs).
        let symtab_off = size[MOD_INIT_DATA].next_multiple_of(8);
        size[MOD_INIT_DATA] = symtab_off + 0x600;
        sections.push((".symtab".to_string(), bases[MOD_INIT_DATA] + symtab_off));
        sections.push((
            ".strtab".to_string(),
            bases[MOD_INIT_DATA] + symtab_off + 0x400,
        ));
        sections.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        let mut truth: ModuleLayout = [None; MOD_MEM_NUM_TYPES];
        let mut total = 0;
        for t in 0..MOD_MEM_NUM_TYPES {
            let live_init = state == ModuleState::Live && is_init_type(t);
            if size[t] != 0 && !live_init {
                let s = size[t].next_multiple_of(PAGE);
                truth[t] = Some((bases[t], s));
                total += s;
            }
        }
        let m = MachineModule {
            name: "m".into(),
            symbols,
            proc: Some(ProcModule {
                name: "m".into(),
                size: total,
                state,
                base: bases[MOD_TEXT],
            }),
            sections,
            layout: None,
        };
        (m, truth)
    }

    fn derive(mods: Vec<MachineModule>) -> Vec<(ModuleLayout, LayoutSource)> {
        derive_for(mods, V6_12)
    }

    /// Derives on a machine of `loader`'s kind: an x86_64 one lists
    /// `entry_SYSCALL_64`, as every x86_64 kernel does.
    fn derive_for(mods: Vec<MachineModule>, loader: Loader) -> Vec<(ModuleLayout, LayoutSource)> {
        let entry = RawSymbol {
            addr: 0xffff_ffff_8100_0000,
            kind: b'T',
            name: b"entry_SYSCALL_64".to_vec(),
        };
        let machine = Machine {
            core: if loader.x86_64 {
                vec![entry]
            } else {
                Vec::new()
            },
            modules: mods,
            pseudo: Vec::new(),
            root: PathBuf::new(),
        };
        assert_eq!(Loader::of(&machine, loader.layout), loader);
        machine_layouts_for(&machine, PAGE, loader.layout)
    }

    /// 7.3 lays `.static_call_sites` out in ro_after_init: derived with
    /// 7.3's rules the regions come back exact, with 6.12's they do not.
    #[test]
    fn static_call_sites_move_to_ro_after_init_on_7_3() {
        assert_eq!(classify(".static_call_sites"), Some(MOD_DATA));
        let v73 = X86_7_3;
        assert_eq!(
            classify_for(".static_call_sites", v73),
            Some(MOD_RO_AFTER_INIT)
        );
        assert_eq!(classify_for(".data", v73), Some(MOD_DATA));
        // Big enough to need a second ro_after_init page, and a symbol in
        // it (the region's start moves below the data sections otherwise).
        let extra = with(
            sec(".static_call_sites", "aw", 0x1800, 8),
            &[(0x17f0, "site", b'd')],
        );
        let (m, truth) = load_for(&typical(0x80, Some(extra)), bases(), ModuleState::Live, v73);
        assert_eq!(truth[MOD_RO_AFTER_INIT].unwrap().1, 0x2000);
        let got73 = derive_for(vec![m.clone()], v73);
        assert_eq!(got73[0].0, truth);
        let got612 = derive_for(vec![m], V6_12);
        assert_ne!(got612[0].0, truth, "6.12's rule must not fit a 7.3 module");
    }

    /// 7.3's ROX text areas: the next module's text starts on the page
    /// right after this one's, with no guard page; the page the text's
    /// symbols do not reach is still this module's (the /proc/modules
    /// total says so), which 6.12's guard-page rule would refuse.
    #[test]
    fn rox_text_packed_without_guard_page_on_7_3() {
        let v73 = X86_7_3;
        let secs = || {
            vec![
                with(sec(".text", "ax", 0x1800, 16), &[(0, "f1", b't')]),
                with(sec(".rodata", "a", 0x100, 32), &[(0x20, "table", b'r')]),
                with(sec(".data", "aw", 0x100, 32), &[(0x10, "state", b'd')]),
                with(
                    sec(".data..ro_after_init", "aw", 0x20, 8),
                    &[(0, "ops", b'd')],
                ),
                with(
                    sec(".gnu.linkonce.this_module", "aw", 0x500, 64),
                    &[(0, "__this_module", b'D')],
                ),
            ]
        };
        let a_bases = bases();
        let (a, ta) = load_for(&secs(), a_bases, ModuleState::Live, v73);
        assert_eq!(ta[MOD_TEXT], Some((MODS, 0x2000)));
        // B: text on the page after A's text; every other region one guard
        // page above A's (vmalloc areas keep theirs).
        let mut b_bases = a_bases;
        for t in [MOD_TEXT, MOD_DATA, MOD_RODATA, MOD_RO_AFTER_INIT] {
            let (base, size) = ta[t].unwrap();
            b_bases[t] = base + size + if t == MOD_TEXT { 0 } else { PAGE };
        }
        for t in [MOD_INIT_TEXT, MOD_INIT_DATA, MOD_INIT_RODATA] {
            b_bases[t] = a_bases[t] + 0x10_0000;
        }
        let (mut b, _) = load_for(&secs(), b_bases, ModuleState::Live, v73);
        b.name = "b".into();
        let got73 = derive_for(vec![a.clone(), b.clone()], v73);
        assert_eq!(got73[0].0, ta);
        let got612 = derive_for(vec![a, b], V6_12);
        assert_ne!(got612[0].0[MOD_TEXT], ta[MOD_TEXT]);
    }

    /// A module without text (Debian 7.3's `nls_ucs2_utils`): `move_module()`
    /// allocates no `MOD_TEXT`, /proc/modules prints base 0, and its other
    /// regions come from sysfs as for any module; 6.12 and 7.3 alike. A
    /// `.bss` nothing shows the size of takes the pages the total leaves.
    #[test]
    fn no_text_module_has_no_text_region() {
        let secs = || {
            vec![
                with(sec(".rodata", "a", 0x900, 32), &[(0x20, "table", b'r')]),
                with(sec(".data", "aw", 0x40, 32), &[(0, "state", b'd')]),
                with(
                    sec(".gnu.linkonce.this_module", "aw", 0x500, 64),
                    &[(0, "__this_module", b'D')],
                ),
                sec(".bss", "aw", 0x1800, 32),
            ]
        };
        let mut b = bases();
        b[MOD_TEXT] = 0;
        // Data one guard page above the one-page rodata, as vmalloc packs
        // them: the rodata has no room to grow (7.3 x86_64 offers the
        // left-over pages to rodata before data).
        b[MOD_DATA] = b[MOD_RODATA] + 0x2000;
        for loader in [V6_12, X86_7_3, UML_7_3] {
            let (m, truth) = load_for(&secs(), b, ModuleState::Live, loader);
            assert_eq!(truth[MOD_TEXT], None);
            assert_eq!(truth[MOD_DATA].unwrap().1, 0x2000);
            assert_eq!(m.proc.as_ref().unwrap().base, 0);
            // Beside a module with text, which it must not disturb.
            let (mut t, tt) = load_for(&typical(0x80, None), bases(), ModuleState::Live, loader);
            t.name = "t".into();
            let mut m = m;
            for (_, a) in &mut m.sections {
                *a += 0x40000;
            }
            for s in &mut m.symbols {
                s.addr += 0x40000;
            }
            let mut truth = truth;
            for r in truth.iter_mut().flatten() {
                r.0 += 0x40000;
            }
            let got = derive_for(vec![t, m], loader);
            assert_eq!(got[0].0, tt, "{loader:?}");
            assert_eq!(got[1], (truth, LayoutSource::Derived), "{loader:?}");
        }
    }

    /// 7.3 on UML (or any arch but x86_64) has neither ROX text nor inline
    /// static calls: `.static_call_sites` stays in data, and the pages a
    /// `.bss` leaves unseen go to `MOD_DATA` first, as on 6.12. With
    /// x86_64's order the left-over page went to ro_after_init: the one
    /// module region `uml-test --base 7.3` got wrong (`ksym_many`).
    #[test]
    fn uml_7_3_keeps_6_12_rules() {
        assert_eq!(classify_for(".static_call_sites", UML_7_3), Some(MOD_DATA));
        let (m, truth) = load_for(&typical(0x3000, None), bases(), ModuleState::Live, UML_7_3);
        assert!(truth[MOD_DATA].unwrap().1 >= 0x4000);
        let got = derive_for(vec![m.clone()], UML_7_3);
        assert_eq!(got[0].0, truth);
        let x86 = derive_for(vec![m], X86_7_3);
        assert_ne!(x86[0].0[MOD_DATA], truth[MOD_DATA]);
    }

    /// A module like the in-tree samples: every region, stale init sections.
    fn typical(bss: u64, extra: Option<Sec>) -> Vec<Sec> {
        let mut v = vec![
            sec(".note.gnu.build-id", "a", 0x24, 4),
            with(
                sec(".text", "ax", 0x1234, 16),
                &[(0, "f1", b't'), (0x400, "f2", b'T')],
            ),
            sec(".init.text", "ax", 0x100, 16),
            with(
                sec(".exit.text", "ax", 0x40, 16),
                &[(0, "cleanup_module", b'T')],
            ),
            sec(".altinstr_replacement", "ax", 0x10, 1),
            with(sec(".rodata", "a", 0x300, 32), &[(0x20, "table", b'r')]),
            with(sec("__ksymtab", "a", 0x18, 4), &[(0, "__ksymtab_f2", b'r')]),
            sec("__mcount_loc", "a", 0x40, 8),
            sec(".rodata.str1.1", "a", 0x55, 1),
            with(sec(".data", "aw", 0x200, 32), &[(0x10, "state", b'd')]),
            sec("__dyndbg", "aw", 0x38, 8),
            with(
                sec(".data..ro_after_init", "aw", 0x20, 8),
                &[(0, "ops", b'd')],
            ),
            sec("__jump_table", "aw", 0x30, 8),
            with(
                sec(".gnu.linkonce.this_module", "aw", 0x500, 64),
                &[(0, "__this_module", b'D')],
            ),
            with(sec(".bss", "aw", bss, 32), &[(0, "buf", b'b')]),
        ];
        v.extend(extra);
        v
    }

    fn bases() -> [u64; MOD_MEM_NUM_TYPES] {
        [
            MODS,
            MODS + 0x10000,
            MODS + 0x4000,
            MODS + 0x8000,
            MODS + 0x20000,
            MODS + 0x22000,
            MODS + 0x24000,
        ]
    }

    #[test]
    fn live_module_regions_exact() {
        let (m, truth) = load(&typical(0x80, None), bases(), ModuleState::Live);
        let got = derive(vec![m]);
        assert_eq!(got[0], (truth, LayoutSource::Derived));
    }

    #[test]
    fn big_bss_takes_the_pages_the_total_leaves() {
        // The bss symbol says nothing of the 0x5000 bytes behind it:
        // /proc/modules' total does.
        let (m, truth) = load(&typical(0x5000, None), bases(), ModuleState::Live);
        assert_eq!(truth[MOD_DATA].unwrap().1, 0x6000);
        let got = derive(vec![m]);
        assert_eq!(got[0].0, truth);
    }

    #[test]
    fn unknown_section_name_goes_by_address() {
        let extra = with(
            sec("__odd_section", "aw", 0x2000, 8),
            &[(0x1ff0, "odd", b'd')],
        );
        let (m, truth) = load(&typical(0x80, Some(extra)), bases(), ModuleState::Live);
        assert_eq!(derive(vec![m])[0].0, truth);
    }

    #[test]
    fn loading_module_keeps_init_regions() {
        let (m, truth) = load(&typical(0x80, None), bases(), ModuleState::Coming);
        let got = derive(vec![m]).remove(0).0;
        assert!(truth[MOD_INIT_TEXT].is_some() && truth[MOD_INIT_DATA].is_some());
        for t in 0..MOD_MEM_NUM_TYPES {
            let Some((tb, ts)) = truth[t] else {
                assert_eq!(got[t], None, "type {t}");
                continue;
            };
            let (gb, gs) = got[t].unwrap();
            assert_eq!(gb, tb, "type {t}");
            assert!(gs >= PAGE && gs <= ts, "type {t}: {gs:#x} vs {ts:#x}");
        }
        // The core regions come out exact; the init ones at least cover
        // every section.
        assert_eq!(got[..MOD_INIT_TEXT], truth[..MOD_INIT_TEXT]);
    }

    #[test]
    fn neighbours_bound_the_ends() {
        // Two modules packed with one guard page between allocations: the
        // second module's text bounds the first's data from above.
        let (a, ta) = load(&typical(0x80, None), bases(), ModuleState::Live);
        let mut b_bases = bases();
        for (i, b) in b_bases.iter_mut().enumerate() {
            *b += 0x40000 + i as u64 * 0x1000;
        }
        let (mut b, tb) = load(&typical(0x2000, None), b_bases, ModuleState::Live);
        b.name = "b".into();
        let got = derive(vec![a, b]);
        assert_eq!(got[0].0, ta);
        assert_eq!(got[1].0, tb);
    }

    #[test]
    fn symbols_only_and_hostile_addresses() {
        let sym = |addr, kind: u8| RawSymbol {
            addr,
            kind,
            name: b"x".to_vec(),
        };
        let m = MachineModule {
            name: "s".into(),
            symbols: vec![
                sym(MODS + 0x10, b't'),
                sym(MODS + 0x1800, b'T'),
                sym(MODS + 0x9000, b'd'),
            ],
            proc: None,
            sections: Vec::new(),
            layout: None,
        };
        let got = derive(vec![m]);
        assert_eq!(got[0].1, LayoutSource::SymbolsOnly);
        assert_eq!(got[0].0[MOD_TEXT], Some((MODS + 0x10, 0x2000 - 0x10)));

        // Everything at the top of the address space: no wrap, no panic,
        // and no region larger than `unsigned int`.
        let top = !(PAGE - 1);
        let m = MachineModule {
            name: "t".into(),
            symbols: vec![sym(u64::MAX, b't'), sym(u64::MAX, b'd')],
            proc: Some(ProcModule {
                name: "t".into(),
                size: u64::MAX,
                state: ModuleState::Live,
                base: top,
            }),
            sections: vec![(".data".to_string(), top), (".text".to_string(), top)],
            layout: None,
        };
        for (l, _) in derive(vec![m]) {
            for (b, s) in l.iter().flatten() {
                assert!(u128::from(*b) + u128::from(*s) <= 1u128 << 64);
                assert!(*s <= MAX_REGION_SIZE);
            }
        }
    }

    #[test]
    fn no_sections_text_keeps_its_lower_bound() {
        let (mut m, truth) = load(&typical(0x80, None), bases(), ModuleState::Live);
        m.sections.clear();
        let got = derive(vec![m]).remove(0).0;
        assert_eq!(got[MOD_TEXT], truth[MOD_TEXT]);
        assert!(got[MOD_TEXT + 1..].iter().all(Option::is_none));
    }

    /// Arbitrary (hostile) inputs: no panic, no region wrapping past 2^64
    /// or larger than `unsigned int`, bounded time.
    #[test]
    fn arbitrary_inputs() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let names = [
            ".text",
            ".data",
            ".bss",
            ".rodata",
            "__jump_table",
            ".init.text",
            "__x",
            ".symtab",
        ];
        for _ in 0..2000 {
            let mut mods = Vec::new();
            for i in 0..(next() % 4) {
                let pick = |v: u64| match v % 4 {
                    0 => u64::MAX - (v >> 8) % 0x3000,
                    1 => (v >> 8) % 0x3000,
                    _ => MODS + (v >> 8) % 0x40000,
                };
                let sections = (0..next() % 6)
                    .map(|_| (names[(next() % 8) as usize].to_string(), pick(next())))
                    .collect::<Vec<_>>();
                let symbols = (0..next() % 6)
                    .map(|_| RawSymbol {
                        addr: pick(next()),
                        kind: b"tTdbrU"[(next() % 6) as usize],
                        name: b"s".to_vec(),
                    })
                    .collect();
                let state = [ModuleState::Live, ModuleState::Coming][(next() % 2) as usize];
                let proc = (next() % 4 != 0).then(|| ProcModule {
                    name: i.to_string(),
                    size: next() % 0x10_0000,
                    state,
                    base: pick(next()),
                });
                let mut sections = sections;
                sections.sort_by_key(|s| s.1);
                mods.push(MachineModule {
                    name: i.to_string(),
                    symbols,
                    proc,
                    sections,
                    layout: None,
                });
            }
            for (l, _) in derive(mods) {
                for (b, s) in l.iter().flatten() {
                    assert!(
                        u128::from(*b) + u128::from(*s) <= 1u128 << 64,
                        "{b:#x}+{s:#x}"
                    );
                    assert!(*s <= MAX_REGION_SIZE);
                }
            }
        }
    }

    #[test]
    fn classify_names() {
        assert_eq!(classify(".init.text"), Some(MOD_INIT_TEXT));
        assert_eq!(classify(".init.rodata"), Some(MOD_INIT_RODATA));
        assert_eq!(classify(".init.data"), Some(MOD_INIT_DATA));
        assert_eq!(classify(".strtab"), Some(MOD_INIT_DATA));
        assert_eq!(classify("__jump_table"), Some(MOD_RO_AFTER_INIT));
        assert_eq!(classify(".data..ro_after_init"), Some(MOD_RO_AFTER_INIT));
        assert_eq!(classify(".noinstr.text"), Some(MOD_TEXT));
        assert_eq!(classify("__ksymtab_gpl"), Some(MOD_RODATA));
        assert_eq!(classify("__tracepoints_ptrs"), Some(MOD_RODATA));
        assert_eq!(classify("__tracepoints"), Some(MOD_DATA));
        assert_eq!(classify(".bss"), Some(MOD_DATA));
        assert_eq!(classify("__nope"), None);
    }
}
