//! kallsyms-fast: kernel address -> symbol resolution over the kernel's own
//! kallsyms tables, the part the kernel compiles and calls.
//!
//! Everything here uses only `core` (plus, for the name index behind the
//! `name-index` feature, an xxh64 hash: `xxhash-rust` in userspace, the
//! kernel's own `lib/xxhash.c` under `kernel-xxh64`): no allocation, no
//! panics, no floats, no recursion, bounded stack. The kernel series
//! copies this crate's sources whole; the no-panic rule is enforced by the
//! clippy restriction lints below: `cargo clippy -p kallsyms-fast
//! --no-default-features -- -D warnings` checks what kmod-shim compiles,
//! `--features name-index,kernel-xxh64` what the kernel compiles.
//!
//! - [`tables`]: the borrowed view of the kernel's tables, section bounds,
//!   `validate()`;
//! - [`name`]: record framing, token expansion, the marker walk
//!   (`get_symbol_offset()`);
//! - [`fast`]: address index, token slots, module indexes (and the name
//!   index, behind `name-index`);
//! - [`module`]: module symtabs and the 6.12 `find_kallsyms_symbol()`;
//! - [`cache`]: the wchan cache.
#![no_std]
#![deny(missing_docs)]
// No panics: all of this runs in the kernel, where a panic (an overflow
// with overflow checks on, an out-of-bounds index) is a BUG() inside
// `%pS`. Arithmetic is checked, wrapping or saturating with a reason,
// indexing goes through `get()`, lossy casts through `try_from`. Unit
// tests may panic.
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

pub mod cache;
pub mod fast;
pub mod module;
pub mod name;
pub mod tables;

pub use fast::SymbolPos;
pub use tables::{KallsymsTables, OffsetEncoding, Sections, TableError, KSYM_NAME_LEN};
