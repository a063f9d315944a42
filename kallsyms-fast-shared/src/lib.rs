//! kallsyms-fast-shared: what the out-of-tree module (`kmod-shim`)
//! compiles beside the `kallsyms-fast` crate, and shares with userspace so
//! the two cannot drift. The patched kernel needs neither: its C code
//! prints `%pS` itself and reads its tables by name.
//!
//! - [`format`]: the one `%pS`/`%ps`/wchan writer (the shim's text, and
//!   the userspace mirror's);
//! - [`loader`]: the symbol list the shim's userspace loader
//!   (`kallsyms-bench shim load`) sends and the shim checks.
//!
//! Like `kallsyms-fast`, everything here runs in a kernel: only `core`, no
//! allocation, no panics (the clippy restriction lints below), no
//! recursion. kmod-shim compiles it with rustc directly, `--extern
//! kallsyms_fast`.
#![no_std]
#![deny(missing_docs)]
// No panics, as in kallsyms-fast. The list is a copy, kept by hand in each
// crate root a kernel build compiles: here, kallsyms-fast/src/lib.rs (the
// same list) and nproc/proto/src/lib.rs (a shorter one). Cargo's
// `[workspace.lints]` cannot hold it: it cannot say
// `cfg_attr(not(test), ...)`, and kmod-shim compiles these sources with
// rustc directly, never reading Cargo.toml. Change the copies together.
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

pub mod format;
pub mod loader;
