// SPDX-License-Identifier: GPL-2.0

//! `ctl`: `bench <rounds>`, the in-kernel timing of stock and shim lookups.

use core::ffi::c_int;
use core::fmt::Write;

use kallsyms_fast::KSYM_NAME_LEN;
use kernel::prelude::*;

use crate::errno;
use crate::glue::{cycles, kfs_collect_stack_addrs, now, resched};
use crate::mod_index::{self, ModAnswer};
use crate::sprint;
use crate::state::{shim, SPRINT_BUF};
use crate::status::KfsLock;
use crate::verify::stock_sprint;
use crate::wchan::{kfs_lookup_symbol_name, lookup_module_name, lookup_nocache, CACHE};
use crate::zeroed::kv_zeroed;
pub(crate) fn cstr(buf: &[u8]) -> &[u8] {
    &buf[..buf.iter().position(|&b| b == 0).unwrap_or(buf.len())]
}

/// One timed way of resolving an address into a buffer.
pub(crate) type Variant<'a> = &'a dyn Fn(u64, &mut [u8; SPRINT_BUF]);

/// Cycles per call of each variant in `variants` over `addrs`, `per`
/// passes each: five trials, each timing the variants back to back, and
/// the fastest trial of each variant counts (a TCG guest's host is noisy).
/// Reschedules between timings: the kernel may be non-preemptible and a
/// whole bench runs for tens of seconds under TCG (RCU stall otherwise).
pub(crate) fn best_of_five<const V: usize>(
    addrs: &[u64],
    per: u64,
    variants: [Variant<'_>; V],
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
pub(crate) fn ratio(x: u64, y: u64) -> (u64, u64) {
    (x / y.max(1), (x * 100 / y.max(1)) % 100)
}

/// Up to this many return addresses per kind are timed.
pub(crate) const BENCH_CORE_ADDRS: usize = 4096;
pub(crate) const BENCH_MODULE_ADDRS: usize = 256;

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
pub(crate) extern "C" fn kfs_rust_bench(rounds: u32, patched: bool) -> c_int {
    // SAFETY: the glue calls this under `kfs_lock`, and this is the
    // call's only token.
    let mut held = unsafe { KfsLock::assume_held() };
    let Some(s) = shim() else {
        return errno(ENOENT);
    };
    let rounds = rounds.clamp(1, 100_000) as u64;
    const MAX: usize = 65536;
    let Ok(mut stacks) = kv_zeroed::<u64>(MAX) else {
        return errno(ENOMEM);
    };
    // SAFETY: `stacks` has MAX slots.
    let n = unsafe { kfs_collect_stack_addrs(stacks.as_mut_ptr(), MAX) };
    let (Ok(mut core_buf), Ok(mut mod_buf)) = (
        kv_zeroed::<u64>(BENCH_CORE_ADDRS),
        kv_zeroed::<u64>(BENCH_MODULE_ADDRS),
    ) else {
        return errno(ENOMEM);
    };
    let (mut nc, mut nm) = (0usize, 0usize);
    for &x in stacks.get(..n).unwrap_or(&[]) {
        if s.sections.is_ksym_addr(x) {
            if let Some(slot) = core_buf.get_mut(nc) {
                *slot = x;
                nc += 1;
            }
        } else if nm < BENCH_MODULE_ADDRS {
            // Only addresses of live modules with an index (built when they
            // went live, or by the loader).
            let indexed = matches!(
                mod_index::lookup(s.module_address, x, s.sections.all_symbols, |_, _| ()),
                ModAnswer::Indexed(())
            );
            if indexed {
                mod_buf[nm] = x;
                nm += 1;
            }
        }
    }
    let core = core_buf.get(..nc).unwrap_or(&[]);
    let module = mod_buf.get(..nm).unwrap_or(&[]);
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
    let st = held.status();
    st.bench.clear();
    let _ = write!(
        st.bench,
        "bench{}: {nc} core addresses x {per} rounds: lookup_symbol_name {} ns ({stock_c} cyc), index {} ns ({index_c} cyc, {ri}.{rif:02}x), index+cache {} ns ({cached_c} cyc, {rc}.{rcf:02}x); ",
        if patched { " (patched: stock entry points go to the shim)" } else { "" },
        to_ns(stock_c),
        to_ns(index_c),
        to_ns(cached_c),
    );
    let _ = write!(
        st.bench,
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
    pr_info!("{}\n", st.bench.as_str());
    if mismatches > 0 {
        pr_err!("bench: {mismatches} addresses resolved differently from the stock lookups\n");
    }
    0
}
