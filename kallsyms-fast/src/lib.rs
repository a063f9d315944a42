//! kallsyms-fast: kernel address -> symbol resolution over the kernel's own
//! kallsyms tables, with a faithful port of the Linux 6.12 algorithms as the
//! baseline.
//!
//! The lookup code (everything not behind the `alloc`/`std` features) uses
//! only `core`, `xxhash-rust` and `arrayvec`: no allocation, no panics, no
//! floats, no recursion, bounded stack. It is compiled unchanged into the
//! kernel builds.
#![no_std]
#![deny(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod cache;
pub mod fast;
pub mod format;
pub mod linear;
pub mod loader;
pub mod mainline;
#[cfg(all(feature = "alloc", feature = "name-index"))]
pub mod mirror;
pub mod module;
pub mod name;
pub mod tables;

#[cfg(feature = "alloc")]
pub mod owned;

#[cfg(feature = "std")]
pub mod parse;

#[cfg(feature = "alloc")]
pub mod build;

pub use tables::{KallsymsTables, Sections, TableError, KSYM_NAME_LEN};
