//! Parsers for the kernel's textual symbol sources (`std` only):
//!
//! - [`ProcKallsyms`] parses `/proc/kallsyms`, core and module symbols;
//! - [`parse_nm`] parses `nm -n` output and `System.map`;
//! - [`parse_proc_modules`] parses `/proc/modules`;
//! - [`read_sections`] reads `/sys/module/<name>/sections/*`;
//! - [`parse_module_layout`] parses the test module's exact `mod->mem[]` dump;
//! - [`Machine`] loads all of the above from one root directory, and
//!   [`Machine::capture`] to snapshot them.
//!
//! All parsers work on a byte slice with a hand-written scanner (no regex,
//! no per-line allocation beyond the symbol name), never panic on input,
//! and report problems as a [`ParseError`] naming the file and line.

pub mod error;
pub mod kallsyms;
pub mod layout;
mod lex;
pub mod machine;
pub mod modules;
pub mod nm;
pub mod sections;

pub use error::{Field, ParseError, ParseErrorKind};
pub use kallsyms::{is_pseudo_module, ModuleSymbols, ProcKallsyms};
pub use layout::{parse_module_layout, ModuleLayout, MOD_MEM_NUM_TYPES, MOD_MEM_TYPE_NAMES};
pub use machine::{CaptureStats, Machine, MachineModule};
pub use modules::{parse_proc_modules, read_proc_modules, ModuleState, ProcModule};
pub use nm::{parse_nm, read_nm};
pub use sections::{parse_section_address, read_sections};
