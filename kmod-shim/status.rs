// SPDX-License-Identifier: GPL-2.0

//! The `status` file: what the loader, `check` and the bench last did.

use core::fmt::Write;
use core::sync::atomic::Ordering;

use crate::text::Text;
use kallsyms_fast_shared::format::SliceWriter;

use crate::mod_index;
use crate::notify::MODULE_EVENTS;
use crate::state::shim;
use crate::wchan::CACHE;

/// Text for the `status` file. Only reached through [`KfsLock::status`],
/// that is, under the C side's `kfs_lock`.
struct StatusText(core::cell::UnsafeCell<StatusInner>);

/// What the `status` file shows of the last load, bench and checks.
///
/// The texts are [`Text`]s written with `write!`: a piece of a
/// message that does not fit is dropped whole, so the text stays UTF-8
/// (every message the shim writes fits; only an over-long name from the
/// loader's input or a symbol could overflow).
pub(crate) struct StatusInner {
    pub(crate) refused: Text<256>,
    pub(crate) verified: Text<256>,
    pub(crate) bench: Text<1024>,
    pub(crate) check: CheckCounts,
}

/// What the `check` file has compared so far.
pub(crate) struct CheckCounts {
    pub(crate) total: u64,
    pub(crate) module: u64,
    pub(crate) outside: u64,
    pub(crate) unserved: u64,
    pub(crate) mismatches: u64,
    pub(crate) first: Text<512>,
}

// SAFETY: the only access is `KfsLock::status()`, and every `KfsLock` is
// held under the C mutex `kfs_lock`, which serialises them.
unsafe impl Sync for StatusText {}

static STATUS: StatusText = StatusText(core::cell::UnsafeCell::new(StatusInner {
    refused: Text::new(),
    verified: Text::new(),
    bench: Text::new(),
    check: CheckCounts {
        total: 0,
        module: 0,
        outside: 0,
        unserved: 0,
        mismatches: 0,
        first: Text::new(),
    },
}));

/// Proof that the caller holds `kfs_lock`, the C mutex under which
/// `shim_glue.c` calls every debugfs handler (`load`, `ctl`, `check`,
/// `status`).
///
/// # Invariants
///
/// A `KfsLock` exists only while `kfs_lock` is held, and at most one exists
/// at a time. It is neither `Clone` nor `Copy`.
pub(crate) struct KfsLock(());

impl KfsLock {
    /// The token of one handler call.
    ///
    /// # Safety
    ///
    /// The caller holds `kfs_lock` for the token's whole life and has no
    /// other token: one per C entry point, made at its start.
    pub(crate) unsafe fn assume_held() -> Self {
        KfsLock(())
    }

    /// The status text, for as long as the token is borrowed.
    pub(crate) fn status(&mut self) -> &mut StatusInner {
        // SAFETY: tokens exist only under `kfs_lock`, one at a time (type
        // invariant), and `&mut self` keeps this borrow unique.
        unsafe { &mut *STATUS.0.get() }
    }
}

/// `status` read. Called under `kfs_lock`.
#[no_mangle]
pub(crate) extern "C" fn kfs_rust_status(buf: *mut u8, len: usize) -> usize {
    // SAFETY: the glue calls this under `kfs_lock`, and this is the
    // call's only token.
    let mut held = unsafe { KfsLock::assume_held() };
    // SAFETY: the glue passes a buffer of `len` bytes.
    let out = unsafe { core::slice::from_raw_parts_mut(buf, len) };
    let st = held.status();
    let mut w = SliceWriter::new(out);
    {
        let _ = match shim() {
            Some(_) => writeln!(w, "state: ready"),
            None => writeln!(w, "state: no tables (stock lookup in charge)"),
        };
        let _ = writeln!(w, "verified: {}", st.verified);
        let _ = writeln!(w, "last refusal: {}", st.refused);
        let _ = writeln!(w, "{}", st.bench);
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
            c.first
        );
    }
    w.finish()
}
