//! kallsyms-mirror: the userspace side of kallsyms-fast.
//!
//! The `kallsyms-fast` crate is what the kernel compiles and calls; this
//! crate holds everything else, with `std`:
//! - [`mirror`]: one kernel's core tables and modules with every lookup
//!   algorithm over them, for the resolver, the benchmark and the
//!   differential tests;
//! - [`mainline`], [`linear`]: the faithful 6.12 and 2.6.9 ports, the
//!   baselines every answer and speed claim is held against;
//! - [`module_index`]: one-call module index builds and the partition of
//!   the address space by module regions;
//! - [`sorted_symtab`]: the sorted-symtab baseline for module lookups
//!   (the March 2026 linux-modules patch);
//! - [`owned`], [`build`] (the `scripts/kallsyms.c` compressor port),
//!   [`pseudo`]: tables in owned storage;
//! - [`parse`]: `/proc/kallsyms`, `nm` output, `/proc/modules`, sysfs;
//! - [`layout`]: which kernel's layout (6.12 or 7.3) applies.
//!
//! The kernel crate's modules are re-exported ([`tables`], [`name`],
//! [`cache`]; [`fast`] and [`module`] with the mirror's additions), and so are kallsyms-fast-shared's
//! [`format`] and [`loader`], so that userspace code names one crate.
//!
//! This code never runs in a kernel: a bug here aborts a process with a
//! message, so it is not held to the kernel crate's no-panic lints.
#![no_std]
#![deny(missing_docs)]

extern crate alloc;
extern crate std;

pub use kallsyms_fast::{cache, name, tables};
pub use kallsyms_fast::{
    KallsymsTables, OffsetEncoding, Sections, SymbolPos, TableError, KSYM_NAME_LEN,
};
pub use kallsyms_fast_shared::{format, loader};

pub mod build;
pub mod layout;
pub mod module_index;

/// The kernel crate's [`kallsyms_fast::fast`], plus the mirror's
/// [`build_module_index`](crate::module_index::build_module_index).
pub mod fast {
    pub use crate::module_index::build_module_index;
    pub use kallsyms_fast::fast::*;
}

/// The kernel crate's [`kallsyms_fast::module`], plus the 6.12 reference
/// port of `find_kallsyms_symbol()` ([`crate::mainline`]).
pub mod module {
    pub use crate::mainline::find_kallsyms_symbol;
    pub use kallsyms_fast::module::*;
}
pub mod linear;
pub mod mainline;
pub mod mirror;
pub mod owned;
pub mod parse;
pub mod pseudo;
pub mod sorted_symtab;
