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

use core::ffi::c_int;
use core::fmt::Write;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use arrayvec::ArrayVec;
use kallsyms_fast::cache::{DefaultWchanCache, CACHE_NAME_MAX, RAW_NAME_LEN};
use kallsyms_fast::fast::{build_addr_index, AddrIndex, AddrIndexLayout, TokenSlots};
use kallsyms_fast::format::{sprint_symbol, Found, SymbolBuf};
use kallsyms_fast::mainline::SymbolPos;
use kallsyms_fast::name::NameBuf;
use kallsyms_fast::{KallsymsTables, Sections, KSYM_NAME_LEN};
use kernel::prelude::*;

mod mod_index;
mod sprint;

use mod_index::{ModAnswer, ModuleAddressFn};
use sprint::KallsymsLookupFn;

module! {
    type: KallsymsFastShim,
    name: "kallsyms_fast_shim",
    author: "kallsyms-fast developers",
    description: "Fast kallsyms lookups and a wchan cache for /proc/PID/wchan",
    license: "GPL",
}

extern "C" {
    fn kfs_sprint_symbol(buf: *mut u8, addr: u64) -> c_int;
    fn kfs_kvzalloc(size: usize) -> *mut u8;
    fn kfs_kvfree(p: *mut u8);
    fn kfs_cond_resched();
    fn kfs_ktime_ns() -> u64;
    fn kfs_cycles() -> u64;
    fn kfs_collect_stack_addrs(out: *mut u64, max: usize) -> usize;
    fn kfs_glue_init() -> c_int;
    fn kfs_glue_exit();
}

/// `int (*)(unsigned long addr, char *symname)`: the signature of
/// `lookup_symbol_name()` and `lookup_module_symbol_name()`.
type LookupFn = unsafe extern "C" fn(u64, *mut u8) -> c_int;

/// Buffer size the C side guarantees for `sprint_symbol()` (it checks
/// `KSYM_SYMBOL_LEN` against it at build time).
const SPRINT_BUF: usize = 1024;

// The loader's symbols, shared with `kallsyms-bench shim load`.
use kallsyms_fast::loader::{
    FUNCTION_SYMBOLS as FUNC_SYMS, NUM_LOADER_SYMBOLS, SECTION_SYMBOLS as SECTION_SYMS,
    TABLE_SYMBOLS as TABLE_SYMS,
};
const NUM_INPUTS: usize = NUM_LOADER_SYMBOLS;

/// Shared by every CPU; 256 entries, 16 KiB.
static CACHE: DefaultWchanCache = DefaultWchanCache::new();
/// The verified state; published once, freed at module exit only.
static STATE: AtomicPtr<Shim> = AtomicPtr::new(core::ptr::null_mut());
/// Module load/unload notifications seen.
static MODULE_EVENTS: AtomicU64 = AtomicU64::new(0);

/// Text for the `status` file. Only touched under the C side's `kfs_lock`
/// (every entry point that reads or writes it is called with it held).
struct StatusText(core::cell::UnsafeCell<StatusInner>);

struct StatusInner {
    refused: ArrayVec<u8, 256>,
    verified: ArrayVec<u8, 256>,
    bench: ArrayVec<u8, 1024>,
    check: CheckCounts,
}

/// What the `check` file has compared so far.
struct CheckCounts {
    total: u64,
    module: u64,
    outside: u64,
    unserved: u64,
    mismatches: u64,
    first: ArrayVec<u8, 512>,
}

// SAFETY: all access is serialised by the C mutex `kfs_lock` (see above).
unsafe impl Sync for StatusText {}

static STATUS: StatusText = StatusText(core::cell::UnsafeCell::new(StatusInner {
    refused: ArrayVec::new_const(),
    verified: ArrayVec::new_const(),
    bench: ArrayVec::new_const(),
    check: CheckCounts {
        total: 0,
        module: 0,
        outside: 0,
        unserved: 0,
        mismatches: 0,
        first: ArrayVec::new_const(),
    },
}));

/// The status text. Callers hold `kfs_lock` (all are C entry points called
/// under it), so there is never a second reference.
#[allow(clippy::mut_from_ref)]
fn status() -> &'static mut StatusInner {
    // SAFETY: serialised by `kfs_lock`, see `StatusText`.
    unsafe { &mut *STATUS.0.get() }
}

/// Zero-initialised storage from `kvzalloc()`.
struct KvSlice<T: Zeroed> {
    ptr: *mut T,
    len: usize,
}

/// Types for which all-zero bytes are a valid value.
///
/// # Safety
///
/// Implementors must be plain data valid when zeroed, alignment <= 8.
unsafe trait Zeroed {}
// SAFETY: integers are valid when zeroed.
unsafe impl Zeroed for u16 {}
// SAFETY: as above.
unsafe impl Zeroed for u32 {}
// SAFETY: as above.
unsafe impl Zeroed for u64 {}
// SAFETY: `TokenSlots` is `repr(C)` byte arrays; zero is valid (documented).
unsafe impl Zeroed for TokenSlots {}

impl<T: Zeroed> KvSlice<T> {
    fn zeroed(len: usize) -> Result<Self> {
        let bytes = len.checked_mul(core::mem::size_of::<T>()).ok_or(ENOMEM)?;
        // SAFETY: plain allocation; kvzalloc memory is at least 8-byte
        // aligned, enough for every `Zeroed` type.
        let ptr = unsafe { kfs_kvzalloc(bytes.max(1)) }.cast::<T>();
        if ptr.is_null() {
            return Err(ENOMEM);
        }
        Ok(Self { ptr, len })
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` zero-initialised (hence valid) `T`s.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, and `&mut self` makes it unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Zeroed> Drop for KvSlice<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `kfs_kvzalloc` and is freed once.
        unsafe { kfs_kvfree(self.ptr.cast()) };
    }
}

// SAFETY: the storage is only written while building, before publication.
unsafe impl<T: Zeroed> Sync for KvSlice<T> {}
// SAFETY: as above; ownership moves freely.
unsafe impl<T: Zeroed> Send for KvSlice<T> {}

/// Everything a lookup needs, verified.
struct Shim {
    tables: KallsymsTables<'static>,
    sections: Sections,
    layout: AddrIndexLayout,
    buckets: KvSlice<u32>,
    name_delta: KvSlice<u16>,
    tokens: KvSlice<TokenSlots>,
    module_lookup: LookupFn,
    stock_lookup: LookupFn,
    module_address: ModuleAddressFn,
    kallsyms_lookup: KallsymsLookupFn,
}

impl Shim {
    fn index(&self) -> AddrIndex<'_> {
        AddrIndex::from_parts(
            self.layout,
            self.buckets.as_slice(),
            self.name_delta.as_slice(),
        )
    }

    fn tokens(&self) -> &TokenSlots {
        // Built with exactly one element.
        &self.tokens.as_slice()[0]
    }

    /// `FastCore::lookup()`: the core-kernel answer for `addr`.
    fn lookup_core(&self, addr: u64, name: &mut NameBuf) -> Option<(u64, u64)> {
        name.clear();
        let mut buf = [0u8; KSYM_NAME_LEN];
        let (p, n) = self.lookup_core_into(addr, &mut buf)?;
        name.set(buf.get(..n)?);
        Some((p.size, p.offset))
    }

    /// `FastCore::lookup_into()` (without the name index the shim does not
    /// build): the name straight into a caller's
    /// `KSYM_NAME_LEN` buffer (no NUL), with its position and length.
    fn lookup_core_into(
        &self,
        addr: u64,
        buf: &mut [u8; KSYM_NAME_LEN],
    ) -> Option<(SymbolPos, usize)> {
        if !self.sections.is_ksym_addr(addr) {
            return None;
        }
        let (p, off) = self.index().locate(&self.tables, &self.sections, addr)?;
        let (_, n) = self.tokens().expand_into(&self.tables, off, buf)?;
        Some((p, n))
    }

    fn index_bytes(&self) -> usize {
        self.layout.bytes() + core::mem::size_of::<TokenSlots>()
    }
}

fn shim() -> Option<&'static Shim> {
    let p = STATE.load(Ordering::Acquire);
    // SAFETY: a non-null STATE points at a leaked, fully built `Shim` that
    // is only freed in module exit, after the patch (the only other user)
    // is gone.
    unsafe { p.as_ref() }
}

/// A small `fmt::Write` into a byte array.
struct Text<'a, const N: usize>(&'a mut ArrayVec<u8, N>);

impl<const N: usize> Write for Text<'_, N> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.0.remaining_capacity().min(s.len());
        let _ = self.0.try_extend_from_slice(&s.as_bytes()[..room]);
        Ok(())
    }
}

/// Why a load was refused.
struct Refusal(ArrayVec<u8, 256>);

macro_rules! refuse {
    ($($arg:tt)*) => {{
        let mut r = Refusal(ArrayVec::new());
        let _ = write!(Text(&mut r.0), $($arg)*);
        return Err(r);
    }};
}

/// The stock `sprint_symbol()` text for `addr`.
fn stock_sprint(addr: u64, buf: &mut [u8; SPRINT_BUF]) -> &[u8] {
    // SAFETY: `buf` has SPRINT_BUF >= KSYM_SYMBOL_LEN bytes (checked at
    // build time in the glue).
    let n = unsafe { kfs_sprint_symbol(buf.as_mut_ptr(), addr) };
    let n = usize::try_from(n).unwrap_or(0).min(SPRINT_BUF);
    &buf[..n]
}

/// Checks that the stock kallsyms knows `name` at exactly `addr` (in the
/// core kernel) and returns the size it gives the symbol.
fn verify_symbol(name: &str, addr: u64) -> Result<u64, Refusal> {
    let mut buf = [0u8; SPRINT_BUF];
    let text = stock_sprint(addr, &mut buf);
    let rest = text
        .strip_prefix(name.as_bytes())
        .and_then(|r| r.strip_prefix(b"+0x0/0x"));
    let size = rest
        .and_then(|r| core::str::from_utf8(r).ok())
        .and_then(|r| u64::from_str_radix(r, 16).ok());
    match size {
        Some(s) => Ok(s),
        None => {
            let shown = core::str::from_utf8(text).unwrap_or("<non-utf8>");
            refuse!("{name} at {addr:#x}: sprint_symbol() says \"{shown}\", not {name}+0x0/...")
        }
    }
}

/// Name of input `i`: the tables, then the functions, then the sections.
fn input_name(i: usize) -> &'static str {
    let (t, f) = (TABLE_SYMS.len(), FUNC_SYMS.len());
    match i {
        _ if i < t => TABLE_SYMS[i].0,
        _ if i < t + f => FUNC_SYMS[i - t],
        _ => SECTION_SYMS.get(i - t - f).copied().unwrap_or("?"),
    }
}

fn parse_input(text: &[u8]) -> Result<[u64; NUM_INPUTS], Refusal> {
    let Ok(text) = core::str::from_utf8(text) else {
        refuse!("input is not UTF-8 text");
    };
    let mut vals = [0u64; NUM_INPUTS];
    let mut seen = [false; NUM_INPUTS];
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut it = line.split_ascii_whitespace();
        let (Some(name), Some(addr), None) = (it.next(), it.next(), it.next()) else {
            refuse!("malformed line \"{line}\" (want: <symbol> <hex address>)");
        };
        let digits = addr.strip_prefix("0x").unwrap_or(addr);
        let Ok(addr) = u64::from_str_radix(digits, 16) else {
            refuse!("{name}: bad address \"{addr}\"");
        };
        let Some(i) = (0..NUM_INPUTS).position(|i| input_name(i) == name) else {
            refuse!("unknown symbol \"{name}\"");
        };
        if seen[i] {
            refuse!("{name} given twice");
        }
        seen[i] = true;
        vals[i] = addr;
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        let name = input_name(i);
        refuse!("{name} missing (input truncated?)");
    }
    Ok(vals)
}

/// A region of kernel memory the stock kallsyms vouches for.
struct Region {
    addr: u64,
    size: usize,
}

impl Region {
    /// The region as a slice of `T`, at most `count` elements.
    ///
    /// # Safety
    ///
    /// `addr..addr + size` must be mapped, immutable kernel memory for the
    /// kernel's lifetime (the kallsyms tables in .rodata are).
    unsafe fn slice<T>(&self, count: usize) -> Result<&'static [T], Refusal> {
        let need = count.checked_mul(core::mem::size_of::<T>());
        if need.map_or(true, |b| b > self.size)
            || self.addr % core::mem::align_of::<T>() as u64 != 0
        {
            refuse!(
                "object at {:#x} ({} bytes) cannot hold {count} entries",
                self.addr,
                self.size
            );
        }
        // SAFETY: in bounds and aligned (checked above); the caller
        // guarantees the memory is mapped and immutable.
        Ok(unsafe { core::slice::from_raw_parts(self.addr as *const T, count) })
    }
}

/// Our `sprint_symbol()` text for `addr`.
fn shim_sprint(s: &Shim, addr: u64, out: &mut SymbolBuf, name: &mut NameBuf) {
    match s.lookup_core(addr, name) {
        Some((size, offset)) => {
            let f = Found {
                name: name.as_bytes(),
                size,
                offset,
                module: None,
            };
            sprint_symbol(out, addr, Some(&f), true);
        }
        None => sprint_symbol(out, addr, None, true),
    }
}

/// Compares our text with the stock one for `addr`.
fn check_addr(s: &Shim, addr: u64, checks: &mut u64) -> Result<(), Refusal> {
    let mut out = SymbolBuf::new();
    let mut name = NameBuf::new();
    shim_sprint(s, addr, &mut out, &mut name);
    let mut buf = [0u8; SPRINT_BUF];
    let stock = stock_sprint(addr, &mut buf);
    *checks += 1;
    if out.as_bytes() != stock {
        let ours = core::str::from_utf8(out.as_bytes()).unwrap_or("<non-utf8>");
        let theirs = core::str::from_utf8(stock).unwrap_or("<non-utf8>");
        refuse!("mismatch at {addr:#x}: index \"{ours}\", sprint_symbol() \"{theirs}\"");
    }
    Ok(())
}

fn build(text: &[u8]) -> Result<(KBox<Shim>, u64), Refusal> {
    let vals = parse_input(text)?;
    // The two lookup functions are called through pointers; with IBT or
    // kCFI an unsealed entry or a type hash is needed that nothing here
    // checks, so such kernels keep the stock path.
    if cfg!(CONFIG_X86_KERNEL_IBT) || cfg!(CONFIG_CFI_CLANG) {
        refuse!("IBT/kCFI kernel: indirect calls to lookup functions not supported");
    }
    // 1. Every address must be what the stock kallsyms calls it.
    let mut regions: ArrayVec<Region, 8> = ArrayVec::new();
    for (i, (name, min)) in TABLE_SYMS.iter().enumerate() {
        let size = verify_symbol(name, vals[i])?;
        if size < *min as u64 || size > (256 << 20) {
            refuse!("{name}: size {size} out of range");
        }
        regions.push(Region {
            addr: vals[i],
            size: size as usize,
        });
    }
    let mut funcs = [0u64; FUNC_SYMS.len()];
    for (i, name) in FUNC_SYMS.iter().enumerate() {
        let a = vals[TABLE_SYMS.len() + i];
        verify_symbol(name, a)?;
        funcs[i] = a;
    }
    let sec = &vals[TABLE_SYMS.len() + FUNC_SYMS.len()..];
    let sections = Sections {
        stext: sec[0],
        etext: sec[1],
        sinittext: sec[2],
        einittext: sec[3],
        end: sec[4],
        init_begin: sec[5],
        init_end: sec[6],
        gate: None,
        all_symbols: cfg!(CONFIG_KALLSYMS_ALL),
    };
    if !(sections.stext < sections.etext
        && sections.etext <= sections.end
        && sections.sinittext <= sections.einittext
        && sections.init_begin <= sections.init_end)
    {
        refuse!("section bounds out of order");
    }

    // 2. The tables, bounded by the sizes the kernel gives their symbols.
    // SAFETY (all `slice` calls): each region is a kallsyms table in the
    // kernel's .rodata, proven by `verify_symbol`, with the size kallsyms
    // gives it; .rodata is mapped and never written after boot.
    let num = unsafe { regions[0].slice::<u32>(1) }?[0];
    // SAFETY: see above.
    let base = unsafe { regions[1].slice::<u64>(1) }?[0];
    let n = num as usize;
    if n == 0 || n > (1 << 24) {
        refuse!("kallsyms_num_syms = {n} out of range");
    }
    let tables = KallsymsTables {
        num_syms: num,
        // SAFETY: see above.
        offsets: unsafe { regions[2].slice::<i32>(n) }?,
        relative_base: base,
        // SAFETY: see above.
        names: unsafe { regions[3].slice::<u8>(regions[3].size) }?,
        // SAFETY: see above.
        markers: unsafe { regions[4].slice::<u32>(n.div_ceil(256)) }?,
        // SAFETY: see above.
        token_table: unsafe { regions[5].slice::<u8>(regions[5].size) }?,
        // SAFETY: see above.
        token_index: unsafe { regions[6].slice::<u16>(256) }?,
        // SAFETY: see above.
        seqs_of_names: unsafe { regions[7].slice::<u8>(3 * n) }?,
        absolute_percpu: cfg!(CONFIG_KALLSYMS_ABSOLUTE_PERCPU),
    };
    let Ok(mut scratch) = KvSlice::<u64>::zeroed(n.div_ceil(64)) else {
        refuse!("out of memory");
    };
    if let Err(e) = tables.validate(scratch.as_mut_slice()) {
        refuse!("tables do not validate: {e}");
    }
    drop(scratch);

    // 3. Build the index into kvmalloc'd storage.
    let layout = AddrIndexLayout::for_table(&tables, &sections);
    let (Ok(mut buckets), Ok(mut name_delta), Ok(mut tokens)) = (
        KvSlice::<u32>::zeroed(layout.bucket_words),
        KvSlice::<u16>::zeroed(layout.delta_words),
        KvSlice::<TokenSlots>::zeroed(1),
    ) else {
        refuse!("out of memory");
    };
    if let Err(e) = build_addr_index(
        &tables,
        layout,
        buckets.as_mut_slice(),
        name_delta.as_mut_slice(),
    ) {
        refuse!("index build failed: {e}");
    }
    if tokens.as_mut_slice()[0].fill(&tables).is_none() {
        refuse!("token table malformed");
    }
    // SAFETY: all were verified above (sprint_symbol prints
    // `<name>+0x0/...` for them): they are the entry points of
    // lookup_module_symbol_name() and lookup_symbol_name(), whose C
    // signature is `int (unsigned long, char *)`, of __module_address(),
    // `struct module *(unsigned long)`, and of kallsyms_lookup() (its C
    // prototype is checked against `KallsymsLookupFn` in the glue).
    let (module_lookup, stock_lookup, module_address, kallsyms_lookup) = unsafe {
        (
            core::mem::transmute::<usize, LookupFn>(funcs[0] as usize),
            core::mem::transmute::<usize, LookupFn>(funcs[1] as usize),
            core::mem::transmute::<usize, ModuleAddressFn>(funcs[2] as usize),
            core::mem::transmute::<usize, KallsymsLookupFn>(funcs[3] as usize),
        )
    };
    let shim = Shim {
        tables,
        sections,
        layout,
        buckets,
        name_delta,
        tokens,
        module_lookup,
        stock_lookup,
        module_address,
        kallsyms_lookup,
    };

    // 4. The index must answer exactly as the stock kallsyms: every
    // symbol's first and last byte, and every section boundary.
    let mut checks = 0u64;
    for pos in 0..n {
        let Some(a) = shim.tables.sym_address(pos) else {
            refuse!("symbol {pos}: no address");
        };
        check_addr(&shim, a, &mut checks)?;
        let mut name = NameBuf::new();
        if let Some((size, offset)) = shim.lookup_core(a, &mut name) {
            if size > 1 && offset == 0 {
                check_addr(&shim, a.wrapping_add(size - 1), &mut checks)?;
            }
        }
        if pos % 128 == 0 {
            // SAFETY: process context (a debugfs write), no locks held
            // but the sleeping `kfs_lock` mutex.
            unsafe { kfs_cond_resched() };
        }
    }
    let s = sections;
    for b in [
        s.stext,
        s.etext,
        s.sinittext,
        s.einittext,
        s.end,
        s.init_begin,
        s.init_end,
    ] {
        for a in [b.wrapping_sub(1), b, b.wrapping_add(1)] {
            check_addr(&shim, a, &mut checks)?;
        }
    }
    // The x86_64 vsyscall page: stock and index must agree there too.
    for a in [0xffff_ffff_ff60_0000u64, 0xffff_ffff_ff60_0800] {
        check_addr(&shim, a, &mut checks)?;
    }
    let Ok(b) = KBox::new(shim, GFP_KERNEL) else {
        refuse!("out of memory");
    };
    Ok((b, checks))
}

fn errno(e: Error) -> c_int {
    e.to_errno()
}

/// `kallsyms_fast/load` write: parse, verify, build. Called under `kfs_lock`.
#[no_mangle]
pub extern "C" fn kfs_rust_load(text: *const u8, len: usize) -> c_int {
    if !STATE.load(Ordering::Acquire).is_null() {
        pr_err!("refused: tables already loaded; reload the module to load again\n");
        return errno(EBUSY);
    }
    // SAFETY: the glue passes a kernel buffer of `len` bytes it owns.
    let text = unsafe { core::slice::from_raw_parts(text, len) };
    let st = status();
    let t0 = now();
    match build(text) {
        Ok((shim, checks)) => {
            let ms = (now() - t0) / 1_000_000;
            st.refused.clear();
            st.verified.clear();
            let _ = write!(
                Text(&mut st.verified),
                "{} symbols, {checks} addresses checked against sprint_symbol() in {ms} ms, index {} bytes",
                shim.tables.num_syms,
                shim.index_bytes()
            );
            pr_info!(
                "verified: {}\n",
                core::str::from_utf8(&st.verified).unwrap_or("")
            );
            STATE.store(KBox::into_raw(shim), Ordering::Release);
            0
        }
        Err(r) => {
            st.refused = r.0;
            pr_err!(
                "refused: {}; the stock lookup stays in charge\n",
                core::str::from_utf8(&st.refused).unwrap_or("<non-utf8>")
            );
            errno(EINVAL)
        }
    }
}

/// Whether verified tables are in place.
#[no_mangle]
pub extern "C" fn kfs_rust_ready() -> bool {
    shim().is_some()
}

/// Module notifier (under `kfs_mod_lock`): any module state change makes
/// cached answers stale; a module coming or going loses its index.
#[no_mangle]
pub extern "C" fn kfs_rust_modules_changed(event: u64, module: *const core::ffi::c_void) {
    CACHE.invalidate();
    MODULE_EVENTS.fetch_add(1, Ordering::Relaxed);
    mod_index::module_changed(event, module as usize);
}

/// The build work item (under `kfs_mod_lock`).
#[no_mangle]
pub extern "C" fn kfs_rust_build_pending() {
    if let Some(s) = shim() {
        mod_index::build_pending(s.module_address);
    }
}

/// The module path of `lookup_symbol_name()`: the module's index when it
/// has one, else the stock `lookup_module_symbol_name()`.
fn lookup_module_name(s: &Shim, addr: u64, out: &mut [u8; KSYM_NAME_LEN]) -> c_int {
    let answer = mod_index::lookup(s.module_address, addr, s.sections.all_symbols, |v, hit| {
        match hit {
            Some(h) => {
                mod_index::copy_name(v, &h, out);
                0
            }
            // The module holds `addr` but has no symbol there: the stock
            // answer is -ERANGE with an empty name.
            None => errno(ERANGE),
        }
    });
    match answer {
        ModAnswer::Indexed(r) => r,
        // Not in a module per the module tree: the stock list walk still
        // decides (it also sees a module's init region in the instant
        // between its removal from the tree and its zeroing).
        // SAFETY: `module_lookup` is `lookup_module_symbol_name` (verified
        // at load), called with a KSYM_NAME_LEN-byte buffer, as the stock
        // path does.
        ModAnswer::NotModule | ModAnswer::Stock => unsafe {
            (s.module_lookup)(addr, out.as_mut_ptr())
        },
    }
}

/// The livepatch replacement of `lookup_symbol_name()`: same contract,
/// same answers.
///
/// # Safety
///
/// `symname` must point at `KSYM_NAME_LEN` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn kfs_lookup_symbol_name(addr: u64, symname: *mut u8) -> c_int {
    // SAFETY: the caller's contract (the kernel's for lookup_symbol_name).
    let out = unsafe { &mut *(symname as *mut [u8; KSYM_NAME_LEN]) };
    out[0] = 0;
    out[KSYM_NAME_LEN - 1] = 0;
    let Some(s) = shim() else {
        return errno(ERANGE);
    };
    if s.sections.is_ksym_addr(addr) {
        let mut raw = [0u8; RAW_NAME_LEN];
        if let Some(len) = CACHE.get_raw(addr, &mut raw) {
            out[..CACHE_NAME_MAX].copy_from_slice(&raw[1..]);
            if let Some(b) = out.get_mut(len) {
                *b = 0;
            }
            return 0;
        }
        let generation = CACHE.generation();
        if let Some(n) = core_name_into(s, addr, out) {
            if let Some(name) = out.get(..n) {
                CACHE.insert(addr, generation, name);
            }
        }
        return 0;
    }
    lookup_module_name(s, addr, out)
}

/// The core name of `addr` straight into the caller's buffer (no copy),
/// NUL-terminated; its length.
fn core_name_into(s: &Shim, addr: u64, out: &mut [u8; KSYM_NAME_LEN]) -> Option<usize> {
    let (_, n) = s.lookup_core_into(addr, out)?;
    if let Some(b) = out.get_mut(n) {
        *b = 0;
    }
    Some(n)
}

/// `kfs_lookup_symbol_name()` without the cache (for the bench).
fn lookup_nocache(s: &Shim, addr: u64, out: &mut [u8; KSYM_NAME_LEN]) -> c_int {
    if s.sections.is_ksym_addr(addr) {
        core_name_into(s, addr, out);
        return 0;
    }
    lookup_module_name(s, addr, out)
}

/// `cond_resched()`: bench and check loops run in process context (a
/// debugfs write) holding only the sleeping `kfs_lock`.
fn resched() {
    // SAFETY: process context, no spinlock or RCU read section held.
    unsafe { kfs_cond_resched() };
}

fn now() -> u64 {
    // SAFETY: plain clock read.
    unsafe { kfs_ktime_ns() }
}

fn cycles() -> u64 {
    // SAFETY: plain counter read.
    unsafe { kfs_cycles() }
}

fn cstr(buf: &[u8]) -> &[u8] {
    &buf[..buf.iter().position(|&b| b == 0).unwrap_or(buf.len())]
}

/// Cycles per call of each variant in `variants` over `addrs`, `per`
/// passes each: five trials, each timing the variants back to back, and
/// the fastest trial of each variant counts (a TCG guest's host is noisy).
/// Reschedules between timings: the kernel may be non-preemptible and a
/// whole bench runs for tens of seconds under TCG (RCU stall otherwise).
fn best_of_five<const V: usize>(
    addrs: &[u64],
    per: u64,
    variants: [&dyn Fn(u64, &mut [u8; SPRINT_BUF]); V],
) -> [u64; V] {
    let mut buf = [0u8; SPRINT_BUF];
    let mut best = [u64::MAX; V];
    for _ in 0..5 {
        for (f, slot) in variants.iter().zip(best.iter_mut()) {
            let c0 = cycles();
            for _ in 0..per {
                for &x in addrs {
                    f(x, &mut buf);
                }
            }
            *slot = (*slot).min(cycles() - c0);
            resched();
        }
    }
    let ops = (per * addrs.len() as u64).max(1);
    for c in best.iter_mut() {
        *c /= ops;
    }
    best
}

/// `x / y` as `"<int>.<2 digits>"` parts.
fn ratio(x: u64, y: u64) -> (u64, u64) {
    (x / y.max(1), (x * 100 / y.max(1)) % 100)
}

/// Up to this many return addresses per kind are timed.
const BENCH_CORE_ADDRS: usize = 4096;
const BENCH_MODULE_ADDRS: usize = 256;

/// `ctl`: `bench <rounds>`. Times one lookup over the return addresses on
/// every task's stack, core and module addresses apart:
/// - core: the stock `lookup_symbol_name()` (through its address: while
///   the patch is enabled that call is redirected to the shim, so run the
///   bench before `enable` for the stock number), the index, and the
///   index plus the wchan cache, `rounds` passes each;
/// - module: the stock `lookup_module_symbol_name()` (never patched) and
///   the module index, `rounds / 100` passes (the stock scan is slow).
///
/// Every address is first resolved both ways and the names compared.
///
/// With the patch enabled (`patched`), the "stock" entry points are
/// redirected (ftrace, then livepatch, then the shim): their columns then
/// time what a caller of the patched kernel gets, and there is nothing
/// stock left to compare with. Called under `kfs_lock`.
#[no_mangle]
pub extern "C" fn kfs_rust_bench(rounds: u32, patched: bool) -> c_int {
    let Some(s) = shim() else {
        return errno(ENOENT);
    };
    let rounds = rounds.clamp(1, 100_000) as u64;
    const MAX: usize = 65536;
    let Ok(mut stacks) = KvSlice::<u64>::zeroed(MAX) else {
        return errno(ENOMEM);
    };
    // SAFETY: `stacks` has MAX slots.
    let n = unsafe { kfs_collect_stack_addrs(stacks.as_mut_slice().as_mut_ptr(), MAX) };
    let (Ok(mut core_buf), Ok(mut mod_buf)) = (
        KvSlice::<u64>::zeroed(BENCH_CORE_ADDRS),
        KvSlice::<u64>::zeroed(BENCH_MODULE_ADDRS),
    ) else {
        return errno(ENOMEM);
    };
    let (mut nc, mut nm) = (0usize, 0usize);
    for &x in stacks.as_slice().get(..n).unwrap_or(&[]) {
        if s.sections.is_ksym_addr(x) {
            if let Some(slot) = core_buf.as_mut_slice().get_mut(nc) {
                *slot = x;
                nc += 1;
            }
        } else if nm < BENCH_MODULE_ADDRS {
            // Only addresses of live modules, with their index built.
            let indexed = |x| {
                matches!(
                    mod_index::lookup(s.module_address, x, s.sections.all_symbols, |_, _| ()),
                    ModAnswer::Indexed(())
                )
            };
            if !indexed(x) {
                mod_index::build_now(x);
            }
            if indexed(x) {
                mod_buf.as_mut_slice()[nm] = x;
                nm += 1;
            }
        }
    }
    let core = core_buf.as_slice().get(..nc).unwrap_or(&[]);
    let module = mod_buf.as_slice().get(..nm).unwrap_or(&[]);
    if core.is_empty() {
        return errno(ENOENT);
    }
    // The buffers are SPRINT_BUF >= KSYM_SYMBOL_LEN > KSYM_NAME_LEN bytes.
    let stock = |x: u64, b: &mut [u8; SPRINT_BUF]| {
        // SAFETY: big enough, as the contract requires.
        unsafe { (s.stock_lookup)(x, b.as_mut_ptr()) };
    };
    let index = |x: u64, b: &mut [u8; SPRINT_BUF]| {
        if let Some(n) = b.first_chunk_mut::<KSYM_NAME_LEN>() {
            lookup_nocache(s, x, n);
        }
    };
    let cached = |x: u64, b: &mut [u8; SPRINT_BUF]| {
        // SAFETY: as above.
        unsafe { kfs_lookup_symbol_name(x, b.as_mut_ptr()) };
    };
    let mod_stock = |x: u64, b: &mut [u8; SPRINT_BUF]| {
        // SAFETY: as above; `module_lookup` is never patched.
        unsafe { (s.module_lookup)(x, b.as_mut_ptr()) };
    };
    let mod_index = |x: u64, b: &mut [u8; SPRINT_BUF]| {
        if let Some(n) = b.first_chunk_mut::<KSYM_NAME_LEN>() {
            lookup_module_name(s, x, n);
        }
    };
    // %pS: the stock sprint_symbol() (before `enable`) and ours.
    let stock_sprint = |x: u64, b: &mut [u8; SPRINT_BUF]| {
        stock_sprint(x, b);
    };
    let shim_sprint = |x: u64, b: &mut [u8; SPRINT_BUF]| {
        // SAFETY: SPRINT_BUF bytes.
        unsafe { sprint::kfs_rust_sprint(b.as_mut_ptr(), SPRINT_BUF, x, 0, true) };
    };
    // Agreement first: same return code and name for every address.
    let mut mismatches = 0u64;
    let agree = if patched { &[][..] } else { core };
    let agree_mod = if patched { &[][..] } else { module };
    let mut a = [0u8; KSYM_NAME_LEN];
    let mut b = [0u8; KSYM_NAME_LEN];
    for (i, &x) in agree.iter().enumerate() {
        if i % 64 == 0 {
            resched();
        }
        // SAFETY: KSYM_NAME_LEN-byte buffers.
        let ra = unsafe { (s.stock_lookup)(x, a.as_mut_ptr()) };
        let rb = lookup_nocache(s, x, &mut b);
        if ra != rb || (ra == 0 && cstr(&a) != cstr(&b)) {
            mismatches += 1;
        }
    }
    for &x in agree_mod {
        resched();
        // SAFETY: KSYM_NAME_LEN-byte buffers.
        let ra = unsafe { (s.module_lookup)(x, a.as_mut_ptr()) };
        let rb = lookup_module_name(s, x, &mut b);
        if ra != rb || (ra == 0 && cstr(&a) != cstr(&b)) {
            mismatches += 1;
        }
    }
    let mut sa = [0u8; SPRINT_BUF];
    let mut sb = [0u8; SPRINT_BUF];
    for (i, &x) in Iterator::chain(agree.iter(), agree_mod).enumerate() {
        if i % 16 == 0 {
            resched();
        }
        stock_sprint(x, &mut sa);
        shim_sprint(x, &mut sb);
        if cstr(&sa) != cstr(&sb) {
            mismatches += 1;
        }
    }
    let (ns0, c0) = (now(), cycles());
    CACHE.invalidate();
    let per = (rounds / 5).max(1);
    let [stock_c, index_c, cached_c, sstock_c, sshim_c] = best_of_five(
        core,
        per,
        [&stock, &index, &cached, &stock_sprint, &shim_sprint],
    );
    let mod_per = (rounds / 100).max(1);
    let [mstock_c, mindex_c, msstock_c, msshim_c] = if module.is_empty() {
        [0; 4]
    } else {
        best_of_five(
            module,
            mod_per,
            [&mod_stock, &mod_index, &stock_sprint, &shim_sprint],
        )
    };
    let (ns1, c1) = (now(), cycles());
    // ns with the cycles/ns ratio of the whole run (TCG has no
    // calibrated TSC; ktime is coarse but the run is long).
    let (total_ns, total_c) = (ns1 - ns0, (c1 - c0).max(1));
    let to_ns = |c: u64| c * total_ns / total_c;
    let (ri, rif) = ratio(stock_c, index_c);
    let (rc, rcf) = ratio(stock_c, cached_c);
    let (rm, rmf) = ratio(mstock_c, mindex_c);
    let (rs, rsf) = ratio(sstock_c, sshim_c);
    let (rms, rmsf) = ratio(msstock_c, msshim_c);
    let st = status();
    st.bench.clear();
    let _ = write!(
        Text(&mut st.bench),
        "bench{}: {nc} core addresses x {per} rounds: lookup_symbol_name {} ns ({stock_c} cyc), index {} ns ({index_c} cyc, {ri}.{rif:02}x), index+cache {} ns ({cached_c} cyc, {rc}.{rcf:02}x); ",
        if patched { " (patched: stock entry points go to the shim)" } else { "" },
        to_ns(stock_c),
        to_ns(index_c),
        to_ns(cached_c),
    );
    let _ = write!(
        Text(&mut st.bench),
        "sprint_symbol {} ns ({sstock_c} cyc), shim {} ns ({sshim_c} cyc, {rs}.{rsf:02}x); {nm} module addresses x {mod_per} rounds: lookup_module_symbol_name {} ns ({mstock_c} cyc), module index {} ns ({mindex_c} cyc, {rm}.{rmf:02}x), sprint_symbol {} ns ({msstock_c} cyc), shim {} ns ({msshim_c} cyc, {rms}.{rmsf:02}x); best of 5 trials, {} ms in all, {mismatches} disagreements in {} addresses",
        to_ns(sstock_c),
        to_ns(sshim_c),
        to_ns(mstock_c),
        to_ns(mindex_c),
        to_ns(msstock_c),
        to_ns(msshim_c),
        total_ns / 1_000_000,
        agree.len() + agree_mod.len(),
    );
    pr_info!("{}\n", core::str::from_utf8(&st.bench).unwrap_or(""));
    if mismatches > 0 {
        pr_err!("bench: {mismatches} addresses resolved differently from the stock lookups\n");
    }
    0
}

/// Where [`shim_sprint_any`] found an address.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Served {
    Core,
    Module,
    /// Neither core nor any module: the plain `0x...` form.
    Outside,
}

/// The `%pS` text of `addr` from the shim's indexes: core, or a live
/// module with an index. `None` when the index cannot answer.
fn shim_sprint_any(s: &Shim, addr: u64, out: &mut SymbolBuf, name: &mut NameBuf) -> Option<Served> {
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
/// text built from the shim's indexes (core, or a live module's index,
/// built on demand) must equal the stock `sprint_symbol()`. Counts go to
/// `status`. Called under `kfs_lock`.
#[no_mangle]
pub extern "C" fn kfs_rust_check(text: *const u8, len: usize) -> c_int {
    let Some(s) = shim() else {
        return errno(ENOENT);
    };
    // SAFETY: the glue passes a kernel buffer of `len` bytes it owns.
    let text = unsafe { core::slice::from_raw_parts(text, len) };
    let Ok(text) = core::str::from_utf8(text) else {
        return errno(EINVAL);
    };
    let st = status();
    let mut out = SymbolBuf::new();
    let mut name = NameBuf::new();
    let mut stock = [0u8; SPRINT_BUF];
    for word in text.split_ascii_whitespace() {
        let Ok(addr) = u64::from_str_radix(word.strip_prefix("0x").unwrap_or(word), 16) else {
            return errno(EINVAL);
        };
        out.clear();
        let mut served = shim_sprint_any(s, addr, &mut out, &mut name);
        if served.is_none() {
            mod_index::build_now(addr);
            out.clear();
            served = shim_sprint_any(s, addr, &mut out, &mut name);
        }
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

/// `status` read. Called under `kfs_lock`.
#[no_mangle]
pub extern "C" fn kfs_rust_status(buf: *mut u8, len: usize) -> usize {
    // SAFETY: the glue passes a buffer of `len` bytes.
    let out = unsafe { core::slice::from_raw_parts_mut(buf, len) };
    let st = status();
    let mut w = SliceText { buf: out, len: 0 };
    {
        let _ = match shim() {
            Some(_) => writeln!(w, "state: ready"),
            None => writeln!(w, "state: no tables (stock lookup in charge)"),
        };
        let _ = writeln!(
            w,
            "verified: {}",
            core::str::from_utf8(&st.verified).unwrap_or("")
        );
        let _ = writeln!(
            w,
            "last refusal: {}",
            core::str::from_utf8(&st.refused).unwrap_or("")
        );
        let _ = writeln!(
            w,
            "{}",
            core::str::from_utf8(&st.bench).unwrap_or("bench: none")
        );
        let _ = writeln!(
            w,
            "cache generation: {}, module events: {}",
            CACHE.generation(),
            MODULE_EVENTS.load(Ordering::Relaxed)
        );
        let (modules, entries) = mod_index::stats();
        let _ = writeln!(
            w,
            "module indexes: {modules} modules, {entries} entries, {} built, {} not built",
            mod_index::BUILT.load(Ordering::Relaxed),
            mod_index::NOT_BUILT.load(Ordering::Relaxed)
        );
        let c = &st.check;
        let _ = writeln!(
            w,
            "check: {} addresses, {} in modules, {} unserved, {} mismatches, {} outside core and modules{}{}",
            c.total,
            c.module,
            c.unserved,
            c.mismatches,
            c.outside,
            if c.first.is_empty() { "" } else { "; first: " },
            core::str::from_utf8(&c.first).unwrap_or("")
        );
    }
    w.len
}

/// `fmt::Write` into a byte slice; what does not fit is dropped.
struct SliceText<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl SliceText<'_> {
    /// Appends raw bytes (names need not be UTF-8).
    fn write_bytes(&mut self, b: &[u8]) -> core::fmt::Result {
        let room = self.buf.len().saturating_sub(self.len).min(b.len());
        if let (Some(dst), Some(src)) = (self.buf.get_mut(self.len..self.len + room), b.get(..room))
        {
            dst.copy_from_slice(src);
            self.len += room;
        }
        Ok(())
    }
}

impl Write for SliceText<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.write_bytes(s.as_bytes())
    }
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
