// SPDX-License-Identifier: GPL-2.0

//! The `load` file: verification of every address the loader gives against
//! the stock `sprint_symbol()`, the core index build, and publication.

use core::ffi::c_int;
use core::fmt::Write;
use core::sync::atomic::Ordering;

use kallsyms_fast::fast::{build_addr_index, AddrIndexLayout};
use kallsyms_fast::{KallsymsTables, OffsetEncoding, Sections};
use kallsyms_fast_shared::format::KSYM_SYMBOL_LEN;
use kernel::bindings;
use kernel::prelude::*;

use crate::errno;
use crate::glue::{kfs_cond_resched, kfs_index_live_modules, kfs_sprint_symbol, now};
use crate::loader::{
    parse_input, refused, Refusal, FUNC_SYMS, RELATIVE_BASE, SECTION_SYMS, TABLE_SYMS,
};
use crate::mod_index::ModuleAddressFn;
use crate::sprint::{self, KallsymsLookupFn};
use crate::state::{LookupFn, Shim, SPRINT_BUF, STATE};
use crate::status::KfsLock;
use crate::zeroed::{kv_token_slots, kv_zeroed};
/// The stock `sprint_symbol()` text for `addr`.
pub(crate) fn stock_sprint(addr: u64, buf: &mut [u8; SPRINT_BUF]) -> &[u8] {
    // SAFETY: `buf` has SPRINT_BUF >= KSYM_SYMBOL_LEN bytes (checked at
    // build time in the glue).
    let n = unsafe { kfs_sprint_symbol(buf.as_mut_ptr(), addr) };
    let n = usize::try_from(n).unwrap_or(0).min(SPRINT_BUF);
    &buf[..n]
}

/// Checks that the stock kallsyms knows `name` at exactly `addr` (in the
/// core kernel) and returns the size it gives the symbol.
pub(crate) fn verify_symbol(name: &str, addr: u64) -> Result<u64, Refusal> {
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
            refused(
                EINVAL,
                format_args!(
                    "{name} at {addr:#x}: sprint_symbol() says \"{shown}\", not {name}+0x0/..."
                ),
            )
        }
    }
}

/// A region of kernel memory the stock kallsyms vouches for.
#[derive(Clone, Copy)]
pub(crate) struct Region {
    pub(crate) addr: u64,
    pub(crate) size: usize,
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
            return refused(
                EINVAL,
                format_args!(
                    "object at {:#x} ({} bytes) cannot hold {count} entries",
                    self.addr, self.size
                ),
            );
        }
        // SAFETY: in bounds and aligned (checked above); the caller
        // guarantees the memory is mapped and immutable.
        Ok(unsafe { core::slice::from_raw_parts(self.addr as *const T, count) })
    }
}

/// Compares our text (the `%pS` hook's core path) with the stock one for
/// `addr`. Process context (a debugfs write): the two text buffers on the
/// stack are fine here, unlike in the hook itself.
pub(crate) fn check_addr(s: &Shim, addr: u64, checks: &mut u64) -> Result<(), Refusal> {
    let mut text = [0u8; KSYM_SYMBOL_LEN];
    let n = sprint::sprint_core(s, &mut text, addr, 0, true);
    let ours = text.get(..n).unwrap_or(&[]);
    let mut buf = [0u8; SPRINT_BUF];
    let stock = stock_sprint(addr, &mut buf);
    *checks += 1;
    if ours != stock {
        let ours = core::str::from_utf8(ours).unwrap_or("<non-utf8>");
        let theirs = core::str::from_utf8(stock).unwrap_or("<non-utf8>");
        return refused(
            EINVAL,
            format_args!("mismatch at {addr:#x}: index \"{ours}\", sprint_symbol() \"{theirs}\""),
        );
    }
    Ok(())
}

/// `EOPNOTSUPP` (6.12's `kernel::error::code` has none).
fn eopnotsupp() -> Error {
    Error::from_errno(-(bindings::EOPNOTSUPP as c_int))
}

pub(crate) fn build(text: &[u8]) -> Result<(KBox<Shim>, u64), Refusal> {
    let inputs = parse_input(text)?;
    let vals = inputs.vals;
    // 6.12 has kallsyms_relative_base and the loader sends it; 7.3 has
    // none (PC-relative kallsyms_offsets) and the loader leaves it out.
    // Only that line may be missing (`parse_input` refuses any other gap).
    let relative_base_given = inputs.given[RELATIVE_BASE];
    // The lookup functions are called through pointers. kCFI would need a
    // type hash nothing here checks, so such kernels keep the stock path;
    // IBT is checked per function below.
    if cfg!(CONFIG_CFI_CLANG) {
        return refused(
            eopnotsupp(),
            format_args!("kCFI kernel: indirect calls to lookup functions not supported"),
        );
    }
    // 1. Every address must be what the stock kallsyms calls it.
    let mut regions = [Region { addr: 0, size: 0 }; TABLE_SYMS.len()];
    for (i, (name, min)) in TABLE_SYMS.iter().enumerate() {
        if i == RELATIVE_BASE && !relative_base_given {
            continue;
        }
        let size = verify_symbol(name, vals[i])?;
        if size < *min as u64 || size > (256 << 20) {
            return refused(EINVAL, format_args!("{name}: size {size} out of range"));
        }
        regions[i] = Region {
            addr: vals[i],
            size: size as usize,
        };
    }
    let mut funcs = [0u64; FUNC_SYMS.len()];
    for (i, name) in FUNC_SYMS.iter().enumerate() {
        let a = vals[TABLE_SYMS.len() + i];
        verify_symbol(name, a)?;
        // SAFETY: `a` is the verified address of a kernel function; the
        // glue reads its first instruction with copy_from_kernel_nofault().
        if !unsafe { crate::glue::kfs_indirect_call_ok(a) } {
            return refused(
                eopnotsupp(),
                format_args!("IBT: {name} is sealed (no ENDBR), an indirect call would fault"),
            );
        }
        funcs[i] = a;
    }
    // The section bounds come last in the loader's order.
    let Some(&bounds) = vals.last_chunk::<{ SECTION_SYMS.len() }>() else {
        return refused(EINVAL, format_args!("section bounds missing"));
    };
    let sections = Sections::from_bounds(bounds, None, cfg!(CONFIG_KALLSYMS_ALL));
    if !(sections.stext < sections.etext
        && sections.etext <= sections.end
        && sections.sinittext <= sections.einittext
        && sections.init_begin <= sections.init_end)
    {
        return refused(EINVAL, format_args!("section bounds out of order"));
    }

    // 2. The tables, bounded by the sizes the kernel gives their symbols.
    // SAFETY: (this and every `slice` call below) each region is a
    // kallsyms table in the kernel's .rodata, proven by `verify_symbol`,
    // with the size kallsyms gives it; .rodata is mapped and never written
    // after boot.
    let num = unsafe { regions[0].slice::<u32>(1) }?[0];
    let encoding = if relative_base_given {
        // SAFETY: see above.
        let base = unsafe { regions[RELATIVE_BASE].slice::<u64>(1) }?[0];
        OffsetEncoding::RelativeBase {
            base,
            absolute_percpu: cfg!(CONFIG_KALLSYMS_ABSOLUTE_PERCPU),
        }
    } else {
        // 7.3's offset_to_ptr(&kallsyms_offsets[i]): the verified address
        // of kallsyms_offsets is the table's own.
        OffsetEncoding::PcRelative {
            table_addr: regions[2].addr,
        }
    };
    let n = num as usize;
    if n == 0 || n > (1 << 24) {
        return refused(EINVAL, format_args!("kallsyms_num_syms = {n} out of range"));
    }
    let tables = KallsymsTables {
        num_syms: num,
        // SAFETY: see above.
        offsets: unsafe { regions[2].slice::<i32>(n) }?,
        encoding,
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
    };
    let Ok(mut scratch) = kv_zeroed::<u64>(n.div_ceil(64)) else {
        return refused(ENOMEM, format_args!("out of memory"));
    };
    if let Err(e) = tables.validate(&mut scratch) {
        let how = if relative_base_given {
            ""
        } else {
            " (no kallsyms_relative_base given: read as 7.3's PC-relative offsets)"
        };
        return refused(EINVAL, format_args!("tables do not validate: {e}{how}"));
    }
    drop(scratch);

    // 3. Build the index into kvmalloc'd storage.
    let layout = AddrIndexLayout::for_table(&tables, &sections);
    let (Ok(mut buckets), Ok(mut name_delta), Ok(mut tokens)) = (
        kv_zeroed::<u32>(layout.bucket_words),
        kv_zeroed::<u16>(layout.delta_words),
        kv_token_slots(),
    ) else {
        return refused(ENOMEM, format_args!("out of memory"));
    };
    if let Err(e) = build_addr_index(&tables, layout, &mut buckets, &mut name_delta) {
        return refused(EINVAL, format_args!("index build failed: {e}"));
    }
    if tokens.fill(&tables).is_none() {
        return refused(EINVAL, format_args!("token table malformed"));
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
            return refused(EINVAL, format_args!("symbol {pos}: no address"));
        };
        check_addr(&shim, a, &mut checks)?;
        if let Some(p) = shim.core().symbol_pos(a) {
            if p.size > 1 && p.offset == 0 {
                check_addr(&shim, a.wrapping_add(p.size - 1), &mut checks)?;
            }
        }
        if pos % 128 == 0 {
            // SAFETY: process context (a debugfs write), no locks held
            // but the sleeping `kfs_lock` mutex.
            unsafe { kfs_cond_resched() };
        }
    }
    for b in sections.bounds() {
        for a in [b.wrapping_sub(1), b, b.wrapping_add(1)] {
            check_addr(&shim, a, &mut checks)?;
        }
    }
    // The x86_64 vsyscall page: stock and index must agree there too.
    for a in [0xffff_ffff_ff60_0000u64, 0xffff_ffff_ff60_0800] {
        check_addr(&shim, a, &mut checks)?;
    }
    let Ok(b) = KBox::new(shim, GFP_KERNEL) else {
        return refused(ENOMEM, format_args!("out of memory"));
    };
    Ok((b, checks))
}

/// `kallsyms_fast/load` write: parse, verify, build. Called under `kfs_lock`.
#[no_mangle]
pub(crate) extern "C" fn kfs_rust_load(text: *const u8, len: usize) -> c_int {
    // SAFETY: the glue calls this under `kfs_lock`, and this is the
    // call's only token.
    let mut held = unsafe { KfsLock::assume_held() };
    if !STATE.load(Ordering::Acquire).is_null() {
        pr_err!("refused: tables already loaded; reload the module to load again\n");
        return errno(EBUSY);
    }
    // SAFETY: the glue passes a kernel buffer of `len` bytes it owns.
    let text = unsafe { core::slice::from_raw_parts(text, len) };
    let st = held.status();
    let t0 = now();
    match build(text) {
        Ok((shim, checks)) => {
            let ms = (now() - t0) / 1_000_000;
            st.refused.clear();
            st.verified.clear();
            let _ = write!(
                st.verified,
                "{} symbols, {checks} addresses checked against sprint_symbol() in {ms} ms, index {} bytes",
                shim.tables.num_syms,
                shim.index_bytes()
            );
            pr_info!("verified: {}\n", st.verified.as_str());
            STATE.store(KBox::into_raw(shim), Ordering::Release);
            // Modules that went live before now had no notifier run that
            // could index them.
            // SAFETY: process context (a debugfs write); takes
            // `kfs_mod_lock`, which is never held while taking `kfs_lock`.
            unsafe { kfs_index_live_modules() };
            0
        }
        Err(r) => {
            st.refused = r.text;
            pr_err!(
                "refused: {}; the stock lookup stays in charge\n",
                st.refused.as_str()
            );
            errno(r.errno)
        }
    }
}
