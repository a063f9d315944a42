//! kallsyms-fast: kernel address -> symbol resolution over the kernel's own
//! kallsyms tables, with a faithful port of the Linux 6.12 algorithms as the
//! baseline.
//!
//! The lookup code (everything not behind the `alloc`/`std` features) uses
//! only `core` (plus, for the name index behind the `name-index` feature,
//! an xxh64 hash: `xxhash-rust` in userspace, the kernel's own
//! `lib/xxhash.c` under `kernel-xxh64`): no allocation, no panics, no
//! floats, no recursion, bounded stack. It is compiled unchanged into the
//! kernel builds (kmod-shim compiles this crate with no features at all),
//! and the no-panic rule is enforced by the clippy restriction lints below:
//! `cargo clippy -p kallsyms-fast --no-default-features -- -D warnings`
//! checks exactly what the kernel compiles (`--features
//! name-index,kernel-xxh64` for a kernel build with the name index).
//!
//! # Layout
//!
//! In the kernel (no cargo features):
//! - [`tables`]: the borrowed view of the kernel's tables, section bounds,
//!   `validate()`;
//! - [`name`]: record framing, token expansion, the marker walk
//!   (`get_symbol_offset()`);
//! - [`fast`]: address index, token slots, module indexes (and the name
//!   index, behind `name-index`);
//! - `fast::sorted_symtab` (behind `alloc`): the sorted-symtab baseline
//!   for module lookups, held against the module indexes in the mirror's
//!   tests and the benchmark;
//! - [`module`]: module symtabs and the 6.12 `find_kallsyms_symbol()`;
//! - [`cache`]: the wchan cache;
//! - [`format`]: the one `%pS`/`%ps`/wchan writer;
//! - [`loader`]: the symbol list the shim's loader sends;
//! - [`mainline`], [`linear`]: the faithful 6.12 and 2.6.9 ports, the
//!   baselines (linked, not called).
//!
//! Userspace only (`alloc`/`std`): `owned`, `build` (the compressor port),
//! `mirror`, `pseudo` and `parse`. The kernel builds need not carry their
//! files: a module behind a disabled feature is never read.
//!
//! Decision (2026-11-30): the flat layout stays for now. A regrouping into
//! `tables/`, `reference/` (the 6.12 and 2.6.9 ports), `index/`, and
//! `encode/` + `source/` behind features reads better, but four other
//! branches were editing these files at the same time, and a move would
//! turn every one of their edits into a merge conflict for no change in
//! behaviour. The list above gives the grouping; the kernel/userspace
//! boundary, which is what matters for safety, is already explicit (the
//! features and the lint opt-outs below). Revisit when the branches are
//! merged: the moves are then mechanical.
#![no_std]
#![deny(missing_docs)]
// No panics in anything the kernel runs: every module below that is not
// behind `alloc`/`std` is compiled into the shim, where a panic (an
// overflow with overflow checks on, an out-of-bounds index) is a BUG()
// inside `%pS`. Arithmetic is checked, wrapping or saturating with a
// reason, indexing goes through `get()`, lossy casts through `try_from`.
// The userspace-only modules opt out below; unit tests may panic.
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::panic,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_possible_wrap
    )
)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// Declares a userspace-only module (behind `alloc`/`std`): it never runs
/// in the kernel, where its `Vec` indexing and offset arithmetic would
/// need the no-panic rules above; in userspace a bug there aborts the
/// process with a message instead of crashing a kernel.
macro_rules! userspace_mod {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        #[allow(
            clippy::arithmetic_side_effects,
            clippy::indexing_slicing,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_possible_wrap
        )]
        pub mod $name;
    };
}

pub mod cache;
pub mod fast;
pub mod format;
pub mod linear;
pub mod loader;
pub mod mainline;
pub mod module;
pub mod name;
pub mod tables;

userspace_mod!(
    #[cfg(all(feature = "alloc", feature = "name-index"))]
    mirror
);
userspace_mod!(
    #[cfg(feature = "alloc")]
    owned
);
userspace_mod!(
    #[cfg(feature = "alloc")]
    pseudo
);
userspace_mod!(
    #[cfg(feature = "std")]
    parse
);
userspace_mod!(
    #[cfg(feature = "alloc")]
    build
);

pub use tables::{KallsymsTables, Sections, TableError, KSYM_NAME_LEN};
