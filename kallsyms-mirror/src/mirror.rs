//! The userspace mirror: one kernel's core tables and modules with every
//! lookup algorithm over them, for the resolver, the benchmark and the
//! differential tests.
//!
//! Module memory regions: a capture's `kallsyms-fast/module_layout` gives
//! the kernel's exact `mod->mem[type]` bounds; without it
//! [`crate::parse::regions`] derives them from `/proc/modules`, sysfs and
//! the module's symbols as 6.12 lays modules out.
//!
//! The fast module path finds the owning module and region through a
//! partition of the address space ([`RegionSpan`]) built once, in
//! `O(n log n)` for `n` regions, so that it answers as the mainline walk
//! does for any set of regions, including ones no kernel produces.

use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::vec;
use alloc::vec::Vec;

use crate::cache::DefaultWchanCache;
use crate::fast::module_index::find_in_region;
use crate::fast::{
    build_addr_index, build_module_index, build_name_index, AddrIndex, AddrIndexLayout, FastCore,
    ModEntry, NameIndex, NameIndexLayout, TokenSlots,
};
use crate::format::{self, Found, SymbolBuf};
use crate::linear::Linear;
use crate::mainline::Mainline;
use crate::module::{
    find_kallsyms_symbol, mem_type_is_text, within_module, ModuleLayout, ModuleSymtab,
};
use crate::module_index::{span_owner, RegionSpan, SPAN_NO_MODULE, SPAN_NO_TYPE};
use crate::name::NameBuf;
use crate::owned::{OwnedTables, RawSymbol};
use crate::sorted_symtab::{find_in_sorted, sort_symtab, sorted_symtab_capacity};
use crate::tables::{Sections, TableError, KSYM_NAME_LEN};

/// Which implementation answers a lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algo {
    /// The 2.6.9-era linear scans.
    Linear,
    /// The faithful 6.12 port.
    Mainline,
    /// kallsyms-fast's indexes.
    Fast,
    /// kallsyms-fast's indexes behind the wchan cache (wchan lookups only;
    /// other lookups behave as [`Algo::Fast`]).
    Cached,
    /// The 6.12 port with `find_kallsyms_symbol()` replaced by a binary
    /// search of the module's sorted symtab (the sorted-symtab baseline,
    /// [`crate::sorted_symtab`]); everything else as
    /// [`Algo::Mainline`]. Name lookups keep the original symtab order:
    /// the patch's reordering could change which of two same-named module
    /// symbols `module_kallsyms_lookup_name()` finds, which the mirror does
    /// not model.
    Sorted,
}

/// A module symtab held in memory: entry 0 is the ELF null symbol.
#[derive(Clone, Debug, Default)]
pub struct OwnedSymtab {
    values: Vec<u64>,
    undef: Vec<bool>,
    name_start: Vec<u32>,
    names: Vec<u8>,
}

impl OwnedSymtab {
    /// Builds a symtab from symbols in symtab order (as `/proc/kallsyms`
    /// lists a module's symbols); type `U` marks `SHN_UNDEF`.
    pub fn from_symbols(symbols: &[RawSymbol]) -> Self {
        let mut s = Self {
            values: vec![0],
            undef: vec![true],
            name_start: vec![0, 0],
            names: Vec::new(),
        };
        for sym in symbols {
            s.values.push(sym.addr);
            s.undef.push(sym.kind == b'U');
            s.names.extend_from_slice(&sym.name);
            s.name_start.push(s.names.len() as u32);
        }
        s
    }
}

impl ModuleSymtab for OwnedSymtab {
    fn num_symtab(&self) -> usize {
        self.values.len()
    }
    fn value(&self, i: usize) -> u64 {
        self.values.get(i).copied().unwrap_or(0)
    }
    fn is_undef(&self, i: usize) -> bool {
        self.undef.get(i).copied().unwrap_or(true)
    }
    fn name(&self, i: usize) -> &[u8] {
        match (self.name_start.get(i), self.name_start.get(i + 1)) {
            (Some(&a), Some(&b)) => self.names.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// One loaded module of the mirror.
#[derive(Clone, Debug)]
pub struct MirrorModule {
    /// Module name.
    pub name: Vec<u8>,
    /// Symtab in symtab order.
    pub symtab: OwnedSymtab,
    /// Memory regions.
    pub layout: ModuleLayout,
    index: Vec<ModEntry>,
    /// The sorted-symtab baseline's candidates: (value, symtab index),
    /// sorted, aliases kept.
    sorted: Vec<ModEntry>,
}

impl MirrorModule {
    /// A module from its symbols (symtab order) and layout; builds its index.
    pub fn new(name: &[u8], symbols: &[RawSymbol], layout: ModuleLayout) -> Self {
        let symtab = OwnedSymtab::from_symbols(symbols);
        let mut index =
            vec![ModEntry::default(); crate::fast::module_index::module_index_capacity(&symtab)];
        let n = build_module_index(&symtab, &mut index).unwrap_or(0);
        index.truncate(n);
        let mut sorted = vec![ModEntry::default(); sorted_symtab_capacity(&symtab)];
        let n = sort_symtab(&symtab, &mut sorted).unwrap_or(0);
        sorted.truncate(n);
        Self {
            name: name.to_vec(),
            symtab,
            layout,
            index,
            sorted,
        }
    }

    /// Number of symtab entries, not counting the ELF null symbol.
    pub fn symtab_len(&self) -> usize {
        self.symtab.num_symtab().saturating_sub(1)
    }

    /// Bytes used by the module's fast index.
    pub fn index_bytes(&self) -> usize {
        self.index.len() * core::mem::size_of::<ModEntry>()
    }

    /// Bytes of this mirror's sorted copy for [`Algo::Sorted`]. The kernel
    /// patch sorts the module's own symtab instead: 0 bytes there.
    pub fn sorted_copy_bytes(&self) -> usize {
        self.sorted.len() * core::mem::size_of::<ModEntry>()
    }
}

/// Section bounds from a core symbol list (the linker symbols are in it).
///
/// Inferences, because `/proc/kallsyms` does not say everything:
/// - `CONFIG_KALLSYMS_ALL` when more than 5% of the symbols lie outside the
///   text ranges. Without it `scripts/kallsyms` keeps only text symbols and
///   a handful of special ones (a 6.18 kernel keeps about 35
///   `__start_runtime_ptr_*`-style symbols), with it tens of thousands of
///   data symbols appear.
/// - `_end` and `__init_end`, when the table lacks them: the page boundary
///   above the highest symbol, and `_einittext`.
/// - The gate area (x86_64 vsyscall page) from the symbol `emulate_vsyscall`.
pub fn sections_from_symbols(symbols: &[RawSymbol]) -> Sections {
    let find = |n: &[u8]| symbols.iter().find(|s| s.name == n).map(|s| s.addr);
    let top = symbols.iter().map(|s| s.addr).max().unwrap_or(0);
    let einittext = find(b"_einittext").unwrap_or(0);
    let mut s = Sections {
        stext: find(b"_stext").unwrap_or(0),
        etext: find(b"_etext").unwrap_or(0),
        sinittext: find(b"_sinittext").unwrap_or(0),
        einittext,
        end: find(b"_end").unwrap_or_else(|| (top | 0xfff).wrapping_add(1)),
        init_begin: find(b"__init_begin").unwrap_or(0),
        init_end: find(b"__init_end").unwrap_or(einittext),
        gate: None,
        all_symbols: false,
    };
    let in_text = |a: u64| (a >= s.stext && a <= s.etext) || (a >= s.sinittext && a <= s.einittext);
    let outside = symbols.iter().filter(|sym| !in_text(sym.addr)).count();
    s.all_symbols = outside * 20 > symbols.len();
    if symbols.iter().any(|sym| sym.name == b"emulate_vsyscall") {
        s.gate = Some((0xffff_ffff_ff60_0000, 0xffff_ffff_ff60_1000));
    }
    s
}

/// Builds the [`RegionSpan`] partition of the address space for `modules`
/// (module-list order): at each address, the first module with a region
/// containing it, and that module's first region type containing it that
/// `find_kallsyms_symbol()` may search (text types only unless
/// `all_symbols`). A region wrapping past 2^64 covers the top of the address
/// space and the bottom, as the kernel's unsigned `addr - base < size` does.
///
/// A sweep over the region boundaries with the set of open regions:
/// `O(n log n)` for `n` regions.
fn region_spans(modules: &[MirrorModule], all_symbols: bool) -> Vec<RegionSpan> {
    // (position, opens, module, type); positions up to 2^64 inclusive.
    let mut events: Vec<(u128, bool, u32, u8)> = Vec::new();
    for (mi, m) in modules.iter().enumerate() {
        let mi = u32::try_from(mi).unwrap_or(SPAN_NO_MODULE - 1);
        for (ty, r) in m.layout.iter().enumerate() {
            if r.size == 0 {
                continue;
            }
            let ty = ty as u8;
            let end = u128::from(r.base) + u128::from(r.size);
            let top = 1u128 << 64;
            events.push((u128::from(r.base), true, mi, ty));
            events.push((end.min(top), false, mi, ty));
            if end > top {
                events.push((0, true, mi, ty));
                events.push((end - top, false, mi, ty));
            }
        }
    }
    events.sort_unstable();
    let mut open: BTreeSet<(u32, u8)> = BTreeSet::new();
    let mut spans: Vec<RegionSpan> = Vec::new();
    let mut i = 0;
    loop {
        let at = events.get(i).map_or(0, |e| e.0);
        while let Some(&(pos, opens, mi, ty)) = events.get(i) {
            if pos != at {
                break;
            }
            if opens {
                open.insert((mi, ty));
            } else {
                open.remove(&(mi, ty));
            }
            i += 1;
        }
        if at >= 1u128 << 64 {
            break;
        }
        let (module, ty) = match open.first() {
            None => (SPAN_NO_MODULE, SPAN_NO_TYPE),
            Some(&(mi, _)) => {
                let ty = open
                    .range((mi, 0)..=(mi, u8::MAX))
                    .map(|&(_, t)| t)
                    .find(|&t| all_symbols || mem_type_is_text(t as usize))
                    .unwrap_or(SPAN_NO_TYPE);
                (mi, ty)
            }
        };
        let span = RegionSpan {
            start: at as u64,
            module,
            ty,
        };
        match spans.last() {
            Some(l) if l.module == module && l.ty == ty => {}
            _ => spans.push(span),
        }
        if i >= events.len() {
            break;
        }
    }
    if spans.first().is_none_or(|s| s.start != 0) {
        spans.insert(
            0,
            RegionSpan {
                start: 0,
                module: SPAN_NO_MODULE,
                ty: SPAN_NO_TYPE,
            },
        );
    }
    spans
}

/// Where a resolved address was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolution {
    /// Symbol size.
    pub size: u64,
    /// Offset into the symbol.
    pub offset: u64,
    /// Index into [`Mirror::modules`], `None` for the core kernel.
    pub module: Option<usize>,
}

/// The core lookups' views of a [`Mirror`]'s tables and indexes, built
/// by [`Mirror::cores`]. The kernel builds its indexes once and reads
/// them from a static on every lookup; a caller that looks up many
/// addresses (the benchmark) builds this once and passes it to the
/// `_with` methods, so that a lookup does not first copy some fifty
/// words of table and layout fields into a fresh `FastCore` (about 150
/// of a uniform lookup's 615 instructions, callgrind).
#[derive(Clone, Copy, Debug)]
pub struct Cores<'m> {
    /// The mainline port.
    pub mainline: Mainline<'m>,
    /// The fast path.
    pub fast: FastCore<'m>,
    /// The name index, for [`FastCore::lookup_name`].
    pub names: NameIndex<'m>,
}

/// A kernel's symbols with all lookup algorithms over them.
pub struct Mirror {
    tables: OwnedTables,
    addr_layout: AddrIndexLayout,
    buckets: Vec<u32>,
    name_delta: Vec<u16>,
    name_layout: NameIndexLayout,
    directory: Vec<u32>,
    entries: Vec<u32>,
    tokens: Box<TokenSlots>,
    modules: Vec<MirrorModule>,
    /// Partition of the address space by owning module and region type.
    spans: Vec<RegionSpan>,
    cache: Box<DefaultWchanCache>,
}

impl Mirror {
    /// Validates `tables` and builds every index. `modules` are in the
    /// kernel's module-list order (newest first, as `/proc/kallsyms` lists
    /// them).
    pub fn new(tables: OwnedTables, modules: Vec<MirrorModule>) -> Result<Self, TableError> {
        let view = tables.view();
        let mut scratch = vec![0u64; view.len().div_ceil(64)];
        view.validate(&mut scratch)?;
        let addr_layout = AddrIndexLayout::for_table(&view, &tables.sections);
        let mut buckets = vec![0u32; addr_layout.bucket_words];
        let mut name_delta = vec![0u16; addr_layout.delta_words];
        build_addr_index(&view, addr_layout, &mut buckets, &mut name_delta)?;
        let name_layout = NameIndexLayout::for_len(view.len());
        let mut directory = vec![0u32; name_layout.directory_words];
        let mut entries = vec![0u32; name_layout.entry_words];
        let mut hashes = vec![0u64; view.len()];
        let tokens = Box::new(TokenSlots::new(&view).ok_or(TableError::BadToken { token: 0 })?);
        build_name_index(
            &view,
            name_layout,
            &tokens,
            &mut directory,
            &mut entries,
            &mut hashes,
        )?;
        let spans = region_spans(&modules, tables.sections.all_symbols);
        Ok(Self {
            tables,
            addr_layout,
            buckets,
            name_delta,
            name_layout,
            directory,
            entries,
            tokens,
            modules,
            spans,
            cache: Box::default(),
        })
    }

    /// The core tables.
    pub fn tables(&self) -> &OwnedTables {
        &self.tables
    }

    /// The modules, in module-list order.
    pub fn modules(&self) -> &[MirrorModule] {
        &self.modules
    }

    /// The wchan cache.
    pub fn cache(&self) -> &DefaultWchanCache {
        &self.cache
    }

    /// Bytes the core fast path adds over the kernel's tables:
    /// `(address index + record offsets, name index)`.
    pub fn extra_bytes(&self) -> (usize, usize) {
        (self.addr_layout.bytes(), self.name_layout.bytes())
    }

    /// The mainline port over the core tables.
    pub fn mainline(&self) -> Mainline<'_> {
        Mainline::new(self.tables.view(), self.tables.sections)
    }

    /// The fast path over the core tables. Inline, so that a caller in
    /// another crate (the benchmark) copies only the fields its lookup
    /// reads, not the whole index layout, on every call.
    #[inline]
    pub fn fast(&self) -> FastCore<'_> {
        FastCore {
            tables: self.tables.view(),
            sections: self.tables.sections,
            addr: AddrIndex::from_parts(self.addr_layout, &self.buckets, &self.name_delta),
            tokens: &self.tokens,
        }
    }

    /// The name index over the core tables, for [`FastCore::lookup_name`].
    fn names(&self) -> NameIndex<'_> {
        NameIndex::from_parts(self.name_layout, &self.directory, &self.entries)
    }

    /// The core lookups, built once for many calls of the `_with` methods.
    pub fn cores(&self) -> Cores<'_> {
        Cores {
            mainline: self.mainline(),
            fast: self.fast(),
            names: self.names(),
        }
    }

    /// `__module_address()`: the module owning `addr`, by the kernel's
    /// `within_module` rule (a scan, as the baselines pay for it).
    fn module_scan(&self, addr: u64) -> Option<usize> {
        self.modules
            .iter()
            .position(|m| within_module(&m.layout, addr))
    }

    /// `kallsyms_lookup_buildid()` without build IDs: the name into `name`.
    pub fn resolve(&self, algo: Algo, addr: u64, name: &mut NameBuf) -> Option<Resolution> {
        self.resolve_with(&self.cores(), algo, addr, name)
    }

    /// [`resolve`](Self::resolve) through `cores`, which [`cores`](Self::cores)
    /// built from this mirror.
    pub fn resolve_with(
        &self,
        cores: &Cores<'_>,
        algo: Algo,
        addr: u64,
        name: &mut NameBuf,
    ) -> Option<Resolution> {
        let s = &self.tables.sections;
        let core = match algo {
            Algo::Linear => Linear::new(self.tables.view(), *s).lookup(addr, name),
            Algo::Mainline | Algo::Sorted => cores.mainline.lookup(addr, name),
            Algo::Fast | Algo::Cached => cores.fast.lookup(addr, name),
        };
        if let Some(p) = core {
            return Some(Resolution {
                size: p.size,
                offset: p.offset,
                module: None,
            });
        }
        if s.is_ksym_addr(addr) {
            return None;
        }
        self.resolve_module(algo, addr, name)
    }

    /// [`resolve_with`](Self::resolve_with) for an address the core table
    /// does not cover (`is_ksym_addr()` false): the module symbol covering
    /// it, its name into `name`.
    fn resolve_module(&self, algo: Algo, addr: u64, name: &mut NameBuf) -> Option<Resolution> {
        let all = self.tables.sections.all_symbols;
        let (mi, hit) = match algo {
            Algo::Linear | Algo::Mainline => {
                let mi = self.module_scan(addr)?;
                let m = self.modules.get(mi)?;
                (mi, find_kallsyms_symbol(&m.symtab, &m.layout, addr, all)?)
            }
            Algo::Sorted => {
                let mi = self.module_scan(addr)?;
                let m = self.modules.get(mi)?;
                (mi, find_in_sorted(&m.sorted, &m.layout, addr, all)?)
            }
            Algo::Fast | Algo::Cached => {
                let (mi, ty) = span_owner(&self.spans, addr)?;
                let m = self.modules.get(mi)?;
                (mi, find_in_region(&m.index, *m.layout.get(ty?)?, addr)?)
            }
        };
        name.set(self.modules.get(mi)?.symtab.name(hit.index));
        Some(Resolution {
            size: hit.size,
            offset: hit.offset,
            module: Some(mi),
        })
    }

    /// What `sprint_symbol()` (`add_offset`) or `sprint_symbol_no_offset()`
    /// prints for `addr`.
    pub fn sprint(
        &self,
        algo: Algo,
        addr: u64,
        add_offset: bool,
        name: &mut NameBuf,
        out: &mut SymbolBuf,
    ) {
        self.sprint_with(&self.cores(), algo, addr, add_offset, name, out);
    }

    /// [`sprint`](Self::sprint) through `cores`, which [`cores`](Self::cores)
    /// built from this mirror.
    pub fn sprint_with(
        &self,
        cores: &Cores<'_>,
        algo: Algo,
        addr: u64,
        add_offset: bool,
        name: &mut NameBuf,
        out: &mut SymbolBuf,
    ) {
        let r = self.resolve_with(cores, algo, addr, name);
        let found = r.map(|r| Found {
            name: name.as_bytes(),
            size: r.size,
            offset: r.offset,
            module: r
                .module
                .and_then(|m| self.modules.get(m))
                .map(|m| m.name.as_slice()),
        });
        format::sprint_symbol(out, addr, found.as_ref(), add_offset);
    }

    /// What `/proc/PID/wchan` prints for a task whose `get_wchan()` is `addr`.
    ///
    /// A cache hit is this function alone: the miss and the uncached
    /// algorithms are out of line, so that the hit saves and restores no
    /// registers for them.
    pub fn wchan(&self, algo: Algo, addr: u64, name: &mut NameBuf, out: &mut SymbolBuf) {
        self.wchan_with(&self.cores(), algo, addr, name, out);
    }

    /// [`wchan`](Self::wchan) through `cores`, which [`cores`](Self::cores)
    /// built from this mirror.
    pub fn wchan_with(
        &self,
        cores: &Cores<'_>,
        algo: Algo,
        addr: u64,
        name: &mut NameBuf,
        out: &mut SymbolBuf,
    ) {
        if algo == Algo::Cached && addr != 0 {
            if format::wchan_cached(out, &self.cache, addr) {
                return;
            }
            return self.wchan_miss(cores, addr, name, out);
        }
        self.wchan_uncached(cores, algo, addr, name, out);
    }

    /// [`wchan`](Self::wchan) after a cache miss: resolve straight into
    /// `out`, and on the address's second miss insert under the
    /// generation snapshot taken before resolving
    /// ([`WchanCache::insert_after_miss`]), as the kernel's
    /// `lookup_symbol_name()` does into the buffer `proc_pid_wchan()`
    /// prints (a hit needs no snapshot).
    #[inline(never)]
    fn wchan_miss(&self, cores: &Cores<'_>, addr: u64, name: &mut NameBuf, out: &mut SymbolBuf) {
        let generation = self.cache.generation();
        format::wchan_from(out, addr, |buf| {
            let n = self.fast_name_into(cores, addr, buf, name)?;
            self.cache
                .insert_after_miss(addr, generation, || buf.get(..n));
            Some(n)
        });
    }

    /// The name the fast path finds for `addr`, written at the start of
    /// `buf` (core symbols straight from the index, a module's through
    /// `name`, as [`resolve_with`](Self::resolve_with) finds them); its
    /// length.
    fn fast_name_into(
        &self,
        cores: &Cores<'_>,
        addr: u64,
        buf: &mut [u8; KSYM_NAME_LEN],
        name: &mut NameBuf,
    ) -> Option<usize> {
        if let Some((_, n)) = cores.fast.lookup_into(addr, buf) {
            return Some(n);
        }
        if self.tables.sections.is_ksym_addr(addr) {
            return None;
        }
        self.resolve_module(Algo::Fast, addr, name)?;
        let n = name.as_bytes();
        buf.get_mut(..n.len())?.copy_from_slice(n);
        Some(n.len())
    }

    /// [`wchan`](Self::wchan) without the cache.
    #[inline(never)]
    fn wchan_uncached(
        &self,
        cores: &Cores<'_>,
        algo: Algo,
        addr: u64,
        name: &mut NameBuf,
        out: &mut SymbolBuf,
    ) {
        let found = addr != 0 && self.resolve_with(cores, algo, addr, name).is_some();
        format::wchan(out, addr, found.then_some(name.as_bytes()));
    }

    /// `kallsyms_lookup_name()`: the address of `name`, 0 when not found
    /// (the kernel's convention). `module:name` looks in one module.
    pub fn lookup_name(&self, algo: Algo, name: &[u8], buf: &mut NameBuf) -> u64 {
        self.lookup_name_with(&self.cores(), algo, name, buf)
    }

    /// [`lookup_name`](Self::lookup_name) through `cores`, which
    /// [`cores`](Self::cores) built from this mirror.
    pub fn lookup_name_with(
        &self,
        cores: &Cores<'_>,
        algo: Algo,
        name: &[u8],
        buf: &mut NameBuf,
    ) -> u64 {
        if name.is_empty() {
            return 0;
        }
        let core = match algo {
            Algo::Linear | Algo::Mainline | Algo::Sorted => cores.mainline.lookup_name(name, buf),
            Algo::Fast | Algo::Cached => cores.fast.lookup_name(&cores.names, name, buf),
        };
        if let Some(a) = core {
            return a;
        }
        let value_in = |m: &MirrorModule, n: &[u8]| {
            (0..m.symtab.num_symtab())
                .find(|&i| m.symtab.name(i) == n && !m.symtab.is_undef(i))
                .map_or(0, |i| m.symtab.value(i))
        };
        // The kernel searches for ':' within MODULE_NAME_LEN (56) bytes.
        if let Some(colon) = name.iter().take(56).position(|&b| b == b':') {
            let (modname, rest) = (&name[..colon], &name[colon + 1..]);
            return self
                .modules
                .iter()
                .find(|m| m.name == modname)
                .map_or(0, |m| value_in(m, rest));
        }
        self.modules
            .iter()
            .map(|m| value_in(m, name))
            .find(|&v| v != 0)
            .unwrap_or(0)
    }
}
