//! A byte-identical port of the `scripts/kallsyms.c` table compressor of
//! Linux 6.12 and of Linux 7.3, chosen by [`CompressOptions::layout`]
//! ([`KernelLayout`]; what differs between the two is listed there).
//!
//! `scripts/kallsyms` reads `nm -n` output of a vmlinux and prints assembler
//! source with the kallsyms tables (`kallsyms_names`, the token table, the
//! offsets, ...). This module reproduces it step by step, in the tool's own
//! order:
//!
//! 1. [`read_nm`] parses the text the way `read_symbol()` does (line format,
//!    `strtoull()` address parsing, NUL truncation of names);
//! 2. the rest of `read_symbol()` and `read_map()` (over-long names, `_text`,
//!    ignored symbols, the text and per-cpu ranges), `shrink_table()` and
//!    `make_percpus_absolute()` (6.12 only) live in `filter`;
//! 3. `sort_symbols()` (address, weakness, linker-provided names, leading
//!    underscores, input order) lives in `sort`;
//!    `record_relative_base()` (6.12 only) is there too;
//! 4. the greedy token table (`optimize_token_table()`) lives in `tokens`,
//!    with the tool's exact iteration order and tie-breaking;
//! 5. `write_src()` lives in `emit`: [`emit_asm`] prints its exact text and
//!    [`compress`] produces the same tables as [`OwnedTables`].
//!
//! The tool exits with an error on some inputs; here those are
//! [`BuildError`]s. Nothing in this module panics on any input.
//!
//! Known, deliberate differences from the C tool, all on inputs no `nm`
//! produces:
//! - a NUL type character (`"addr \0 name"`) is refused
//!   ([`BuildError::BadType`]); the C tool accepts it and then prints and
//!   sorts stale buffer contents;
//! - a final line without newline that ends right after the address and a
//!   space is a format error (the C tool reads past the line there).

mod emit;
mod filter;
mod kernel_order;
mod nm;
mod sort;
mod tokens;

use alloc::string::String;
use alloc::vec::Vec;

use crate::layout::KernelLayout;
use crate::owned::{OwnedTables, RawSymbol};

pub use kernel_order::{encode_kernel_order, encode_kernel_order_with};
pub use nm::read_nm;

/// The command-line options of `scripts/kallsyms` (6.12 or 7.3), the
/// kernel whose tool runs, plus one strictness switch of this port and,
/// for 7.3's PC-relative tables, where [`compress`] places them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompressOptions {
    /// Which kernel's `scripts/kallsyms.c` this is.
    pub layout: KernelLayout,
    /// `--all-symbols` (`CONFIG_KALLSYMS_ALL`): keep symbols outside the text
    /// and init-text ranges.
    pub all_symbols: bool,
    /// `--absolute-percpu` (6.12 only, `CONFIG_KALLSYMS_ABSOLUTE_PERCPU`):
    /// symbols between `__per_cpu_start` and `__per_cpu_end` get type `A`
    /// and are stored as absolute offsets. 7.3's tool has no such option
    /// ([`BuildError::BadOptions`]).
    pub absolute_percpu: bool,
    /// `--pc-relative` (7.3 only; set when `CONFIG_64BIT` or
    /// `CONFIG_RELOCATABLE`): each offset is the symbol's distance from
    /// its own `kallsyms_offsets` entry. Without it 7.3 stores each
    /// address as a `u32`. 6.12's tool has no such option.
    pub pc_relative: bool,
    /// For [`compress`] with `pc_relative`: the address the tables place
    /// `kallsyms_offsets[0]` at (the linker's choice in a real kernel;
    /// [`emit_asm`] prints the symbolic `_text - .` and ignores it).
    pub offsets_addr: u64,
    /// Refuse names of `KSYM_NAME_LEN` (512) bytes or more with
    /// [`BuildError::NameTooLong`]. `scripts/kallsyms` only warns on stderr
    /// and drops such a symbol, which is what happens when this is `false`.
    pub reject_long_names: bool,
}

impl CompressOptions {
    /// Refuses a flag the chosen kernel's tool does not have (its
    /// `getopt_long()` prints the usage and exits).
    pub(crate) fn check(&self) -> Result<(), BuildError> {
        match self.layout {
            KernelLayout::Linux6_12 if self.pc_relative => Err(BuildError::BadOptions(
                "--pc-relative is not an option of 6.12's scripts/kallsyms",
            )),
            KernelLayout::Linux7_3 if self.absolute_percpu => Err(BuildError::BadOptions(
                "--absolute-percpu is not an option of 7.3's scripts/kallsyms",
            )),
            _ => Ok(()),
        }
    }
}

/// Why the tables could not be built. Every variant names the offending
/// symbol or input line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// An `nm` line is not `ADDR TYPE NAME` (`read_symbol()`'s
    /// "line format error").
    LineFormat {
        /// 1-based line number.
        line: usize,
        /// The offending line (without its newline).
        text: Vec<u8>,
    },
    /// A type character that `scripts/kallsyms` cannot represent: NUL, or
    /// not ASCII.
    BadType {
        /// Symbol name.
        name: Vec<u8>,
        /// The type byte.
        kind: u8,
    },
    /// A name of `KSYM_NAME_LEN` bytes or more (only with
    /// [`CompressOptions::reject_long_names`]).
    NameTooLong {
        /// Symbol name.
        name: Vec<u8>,
        /// Its length in bytes.
        len: usize,
    },
    /// A symbol's value does not fit the 32-bit `kallsyms_offsets` encoding
    /// ("symbol value out of range in relative mode").
    OffsetOutOfRange {
        /// Symbol name.
        name: Vec<u8>,
        /// Symbol value.
        addr: u64,
        /// Whether it is an absolute (per-cpu) symbol.
        absolute: bool,
    },
    /// More symbols than the 24-bit `kallsyms_seqs_of_names` encoding can
    /// address (the C tool silently truncates; only [`compress`] refuses).
    TooManySymbols {
        /// Number of symbols kept.
        count: usize,
    },
    /// A 7.3 PC-relative entry cannot reach its symbol from the place
    /// [`CompressOptions::offsets_addr`] puts the entry at (the linker's
    /// 32-bit PC-relative relocation would overflow).
    PcRelativeOutOfRange {
        /// Symbol name.
        name: Vec<u8>,
        /// Symbol value.
        addr: u64,
        /// Address of its `kallsyms_offsets` entry.
        entry: u64,
    },
    /// An option the chosen kernel's `scripts/kallsyms` does not have.
    BadOptions(&'static str),
    /// The token table is longer than a 16-bit `kallsyms_token_index` entry
    /// can address (only [`compress`] refuses; the assembler would truncate).
    TokenTableTooLarge {
        /// Token table size in bytes.
        size: usize,
    },
}

impl core::fmt::Display for BuildError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let lossy = String::from_utf8_lossy;
        match self {
            BuildError::LineFormat { line, text } => {
                write!(f, "line {line}: line format error: {:?}", lossy(text))
            }
            BuildError::BadType { name, kind } => {
                write!(
                    f,
                    "symbol {:?}: unsupported type byte {kind:#04x}",
                    lossy(name)
                )
            }
            BuildError::NameTooLong { name, len } => write!(
                f,
                "symbol {:?} too long for kallsyms ({len} >= {})",
                lossy(name),
                crate::tables::KSYM_NAME_LEN
            ),
            BuildError::OffsetOutOfRange {
                name,
                addr,
                absolute,
            } => write!(
                f,
                "{} symbol {:?} value {addr:#x} out of range in relative mode",
                if *absolute { "absolute" } else { "relative" },
                lossy(name)
            ),
            BuildError::PcRelativeOutOfRange { name, addr, entry } => write!(
                f,
                "symbol {:?} value {addr:#x} out of 32-bit PC-relative reach of its kallsyms_offsets entry at {entry:#x}",
                lossy(name)
            ),
            BuildError::BadOptions(why) => f.write_str(why),
            BuildError::TooManySymbols { count } => {
                write!(
                    f,
                    "{count} symbols: more than kallsyms_seqs_of_names can encode (2^24)"
                )
            }
            BuildError::TokenTableTooLarge { size } => {
                write!(
                    f,
                    "token table of {size} bytes: too large for 16-bit kallsyms_token_index"
                )
            }
        }
    }
}

impl std::error::Error for BuildError {}

/// Builds the kallsyms tables `scripts/kallsyms` would emit for
/// `nm_symbols` (in `nm -n` order, as [`read_nm`] returns them).
///
/// `nm_symbols` is the complete input: ignored symbols (types `u`, `n`, most
/// `A`) and `_text` are looked at and dropped here exactly as the tool does.
/// A name is taken up to its first NUL byte, like the tool's C strings.
///
/// The result's `sections` come from `_stext`, `_etext`, `_sinittext`,
/// `_einittext`, `_end`, `__init_begin` and `__init_end` (the last
/// non-ignored occurrence; 0 when absent), `all_symbols` from `opts`, and
/// there is no gate area.
pub fn compress(
    nm_symbols: &[RawSymbol],
    opts: &CompressOptions,
) -> Result<OwnedTables, BuildError> {
    let c = run(nm_symbols, opts)?;
    emit::to_tables(&c)
}

/// The exact assembler text `scripts/kallsyms` prints to stdout for the same
/// input and options, so byte-identity can be checked against the real tool.
///
/// Where the tool would exit with an error (a value out of range for the
/// offsets encoding), this returns the error instead of partial output.
pub fn emit_asm(nm_symbols: &[RawSymbol], opts: &CompressOptions) -> Result<Vec<u8>, BuildError> {
    let c = run(nm_symbols, opts)?;
    emit::write_asm(&c)
}

/// The state `write_src()` starts from: the sorted, compressed table.
struct Compressed {
    /// Kept symbols in address order (after `sort_symbols()`).
    entries: Vec<filter::Entry>,
    /// Compressed names, one per entry.
    packed: tokens::Packed,
    /// The token table (`best_table`/`best_table_len`).
    best: tokens::BestTable,
    /// Value of `_text` (0 when absent).
    text: u64,
    /// `relative_base` (6.12; 0 for 7.3, which has none).
    relative_base: u64,
    /// Section bounds found in the input.
    sections: crate::tables::Sections,
    /// The tool's kernel and options.
    opts: CompressOptions,
}

/// `main()` up to `write_src()`.
fn run(nm_symbols: &[RawSymbol], opts: &CompressOptions) -> Result<Compressed, BuildError> {
    opts.check()?;
    let read = filter::read_map(nm_symbols, opts)?;
    let mut entries = filter::shrink_table(read.entries, &read.ranges, opts.all_symbols);
    // 7.3 has neither step (`check()` refused --absolute-percpu there).
    if opts.absolute_percpu {
        filter::make_percpus_absolute(&mut entries, &read.ranges);
    }
    sort::sort_symbols(&mut entries);
    let relative_base = match opts.layout {
        KernelLayout::Linux6_12 => sort::record_relative_base(&entries),
        KernelLayout::Linux7_3 => 0,
    };
    let mut packed = tokens::Packed::new(&entries);
    let best = tokens::optimize_token_table(&mut packed);
    let mut sections = read.sections;
    sections.all_symbols = opts.all_symbols;
    Ok(Compressed {
        entries,
        packed,
        best,
        text: read.text,
        relative_base,
        sections,
        opts: *opts,
    })
}
