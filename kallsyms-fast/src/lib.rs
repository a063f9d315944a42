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
//!
//! # Examples
//!
//! Three text symbols in the kernel's own encoding (every token one byte,
//! so the records spell the names out), checked once, indexed, then
//! looked up as `%pS` does: the covering symbol, its size and the offset.
//!
//! ```
//! use kallsyms_fast::fast::{build_addr_index, AddrIndexLayout, FastCore, TokenSlots};
//! use kallsyms_fast::name::NameBuf;
//! use kallsyms_fast::{KallsymsTables, OffsetEncoding, Sections};
//!
//! const BASE: u64 = 0xffff_ffff_8100_0000;
//! // kallsyms_token_table/_index: token `b` is the byte `b` itself.
//! let token_table: Vec<u8> = (0..=255u8).flat_map(|b| [b, 0]).collect();
//! let token_index: Vec<u16> = (0..256u16).map(|b| 2 * b).collect();
//! // kallsyms_names: [length][type + name], in address order.
//! let mut names = Vec::new();
//! for rec in ["T_stext", "Tschedule", "Tdo_nanosleep"] {
//!     names.push(rec.len() as u8);
//!     names.extend_from_slice(rec.as_bytes());
//! }
//! // Name order (_stext, do_nanosleep, schedule) as address positions,
//! // three big-endian bytes each.
//! let seqs_of_names = [0, 0, 0, 0, 0, 2, 0, 0, 1];
//! let tables = KallsymsTables {
//!     num_syms: 3,
//!     offsets: &[0x0, 0x100, 0x180],
//!     encoding: OffsetEncoding::RelativeBase { base: BASE, absolute_percpu: false },
//!     names: &names,
//!     markers: &[0],
//!     token_table: &token_table,
//!     token_index: &token_index,
//!     seqs_of_names: &seqs_of_names,
//! };
//! // _stext, _etext, _sinittext, _einittext, _end, __init_begin, __init_end.
//! let end = BASE + 0x200;
//! let sections = Sections::from_bounds([BASE, end, end, end, end, end, end], None, false);
//!
//! // Once, when the tables are loaded: validate, then build the index
//! // into storage of the sizes its layout asks for.
//! tables.validate(&mut [0u64; 1]).map_err(|e| e.to_string())?;
//! let layout = AddrIndexLayout::for_table(&tables, &sections);
//! let mut keys = vec![0u32; layout.bucket_words];
//! let mut name_delta = vec![0u16; layout.delta_words];
//! let addr = build_addr_index(&tables, layout, &mut keys, &mut name_delta)
//!     .map_err(|e| e.to_string())?;
//! let tokens = TokenSlots::new(&tables).ok_or("a token out of bounds")?;
//! let core = FastCore { tables, sections, addr, tokens: &tokens };
//!
//! // The lookups: no allocation, no lock.
//! let mut name = NameBuf::new();
//! let pos = core.lookup(BASE + 0x123, &mut name).ok_or("no symbol")?;
//! assert_eq!(name.as_bytes(), b"schedule");
//! assert_eq!((pos.pos, pos.size, pos.offset), (1, 0x80, 0x23));
//! let pos = core.lookup(BASE + 0x1ff, &mut name).ok_or("no symbol")?;
//! assert_eq!(name.as_bytes(), b"do_nanosleep");
//! assert_eq!((pos.size, pos.offset), (0x80, 0x7f));
//! // Past _etext is not a kernel text address: no answer, as in the kernel.
//! assert!(core.lookup(end, &mut name).is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![no_std]
#![deny(missing_docs)]
// No panics: all of this runs in the kernel, where a panic (an overflow
// with overflow checks on, an out-of-bounds index) is a BUG() inside
// `%pS`. Arithmetic is checked, wrapping or saturating with a reason,
// indexing goes through `get()`, lossy casts through `try_from`. Unit
// tests may panic.
//
// The list is a copy, kept by hand in each crate root a kernel build
// compiles: here, kallsyms-fast-shared/src/lib.rs (the same list) and
// nproc/proto/src/lib.rs (a shorter one). Cargo's `[workspace.lints]`
// cannot hold it: it cannot say `cfg_attr(not(test), ...)`, and the kernel
// builds (this crate's patch series, kmod-shim) compile these sources with
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

pub mod cache;
pub mod fast;
pub mod module;
pub mod name;
pub mod tables;

pub use fast::SymbolPos;
pub use tables::{KallsymsTables, OffsetEncoding, Sections, TableError, KSYM_NAME_LEN};
