//! Which symbols go into the table: the symbol half of `read_symbol()`,
//! `read_map()`, `symbol_valid()`/`shrink_table()` and
//! `make_percpus_absolute()`.

use alloc::vec::Vec;

use super::{BuildError, CompressOptions};
use crate::owned::RawSymbol;
use crate::tables::{Sections, KSYM_NAME_LEN};

/// One `struct sym_entry`.
pub(super) struct Entry {
    /// `addr`.
    pub addr: u64,
    /// `seq`: position in the input among the symbols `read_symbol()` kept.
    pub seq: u32,
    /// `percpu_absolute`.
    pub percpu_absolute: bool,
    /// `sym`: the type byte followed by the name (never NUL-containing).
    pub sym: Vec<u8>,
}

impl Entry {
    /// `sym_name()`.
    pub fn name(&self) -> &[u8] {
        self.sym.get(1..).unwrap_or(&[])
    }
}

/// A `struct addr_range`: `[start, end]`, both inclusive.
#[derive(Clone, Copy, Debug)]
pub(super) struct AddrRange {
    start_sym: &'static [u8],
    end_sym: &'static [u8],
    pub start: u64,
    pub end: u64,
}

impl AddrRange {
    const fn new(start_sym: &'static [u8], end_sym: &'static [u8], start: u64, end: u64) -> Self {
        AddrRange {
            start_sym,
            end_sym,
            start,
            end,
        }
    }

    /// One range of `symbol_in_range()`.
    fn contains(&self, addr: u64) -> bool {
        addr >= self.start && addr <= self.end
    }
}

/// The tool's global ranges: `text_ranges[]` and `percpu_range`.
pub(super) struct Ranges {
    /// `_stext`..`_etext`, then `_sinittext`..`_einittext`.
    pub text: [AddrRange; 2],
    /// `__per_cpu_start`..`__per_cpu_end` (initially `[-1, 0]`, empty).
    pub percpu: AddrRange,
}

impl Ranges {
    fn new() -> Self {
        Ranges {
            text: [
                AddrRange::new(b"_stext", b"_etext", 0, 0),
                AddrRange::new(b"_sinittext", b"_einittext", 0, 0),
            ],
            percpu: AddrRange::new(b"__per_cpu_start", b"__per_cpu_end", u64::MAX, 0),
        }
    }
}

/// What `read_map()` leaves behind.
pub(super) struct ReadMap {
    /// The table, in input order.
    pub entries: Vec<Entry>,
    /// The ranges, as the input set them.
    pub ranges: Ranges,
    /// `_text` (0 when absent).
    pub text: u64,
    /// Section bounds for [`crate::owned::OwnedTables`].
    pub sections: Sections,
}

/// `is_ignored_symbol()`.
fn is_ignored_symbol(name: &[u8], kind: u8) -> bool {
    if kind == b'u' || kind == b'n' {
        return true;
    }
    if kind.eq_ignore_ascii_case(&b'A') {
        // Keep these useful absolute symbols.
        const KEEP: [&[u8]; 4] = [
            b"__kernel_syscall_via_break",
            b"__kernel_syscall_via_epc",
            b"__kernel_sigtramp",
            b"__gp",
        ];
        return !KEEP.contains(&name);
    }
    false
}

/// `check_symbol_range()`.
fn check_symbol_range(name: &[u8], addr: u64, ranges: &mut [AddrRange]) {
    for ar in ranges.iter_mut() {
        if name == ar.start_sym {
            ar.start = addr;
            return;
        } else if name == ar.end_sym {
            ar.end = addr;
            return;
        }
    }
}

/// Records the section bounds [`crate::owned::OwnedTables`] carries.
fn note_section(sections: &mut Sections, name: &[u8], addr: u64) {
    let slot = match name {
        b"_stext" => &mut sections.stext,
        b"_etext" => &mut sections.etext,
        b"_sinittext" => &mut sections.sinittext,
        b"_einittext" => &mut sections.einittext,
        b"_end" => &mut sections.end,
        b"__init_begin" => &mut sections.init_begin,
        b"__init_end" => &mut sections.init_end,
        _ => return,
    };
    *slot = addr;
}

/// `read_map()` with the symbol half of `read_symbol()`.
pub(super) fn read_map(syms: &[RawSymbol], opts: &CompressOptions) -> Result<ReadMap, BuildError> {
    let mut ranges = Ranges::new();
    let mut text = 0u64;
    let mut sections = Sections::default();
    let mut entries = Vec::with_capacity(syms.len());
    for s in syms {
        // The tool's names are C strings.
        let name = match s.name.iter().position(|&b| b == 0) {
            Some(n) => &s.name[..n],
            None => &s.name[..],
        };
        if s.kind == 0 || !s.kind.is_ascii() {
            return Err(BuildError::BadType {
                name: name.to_vec(),
                kind: s.kind,
            });
        }
        if name.len() >= KSYM_NAME_LEN {
            if opts.reject_long_names {
                return Err(BuildError::NameTooLong {
                    name: name.to_vec(),
                    len: name.len(),
                });
            }
            // The tool warns on stderr and skips the symbol.
            continue;
        }
        if name == b"_text" {
            text = s.addr;
        }
        if is_ignored_symbol(name, s.kind) {
            continue;
        }
        check_symbol_range(name, s.addr, &mut ranges.text);
        check_symbol_range(name, s.addr, core::slice::from_mut(&mut ranges.percpu));
        note_section(&mut sections, name, s.addr);
        let mut sym = Vec::with_capacity(name.len() + 1);
        sym.push(s.kind);
        sym.extend_from_slice(name);
        let seq = u32::try_from(entries.len()).map_err(|_| BuildError::TooManySymbols {
            count: entries.len(),
        })?;
        entries.push(Entry {
            addr: s.addr,
            seq,
            percpu_absolute: false,
            sym,
        });
    }
    Ok(ReadMap {
        entries,
        ranges,
        text,
        sections,
    })
}

/// `symbol_valid()`.
fn symbol_valid(s: &Entry, ranges: &Ranges, all_symbols: bool) -> bool {
    if all_symbols {
        return true;
    }
    let name = s.name();
    // Section boundaries are always kept.
    if name.starts_with(b"__start_") || name.starts_with(b"__stop_") {
        return true;
    }
    if !ranges.text.iter().any(|r| r.contains(s.addr)) {
        return false;
    }
    // Symbols at _etext/_einittext (other than those two) can move between
    // the link passes: drop them.
    let [text, inittext] = &ranges.text;
    if (s.addr == text.end && name != text.end_sym)
        || (s.addr == inittext.end && name != inittext.end_sym)
    {
        return false;
    }
    true
}

/// `shrink_table()`.
pub(super) fn shrink_table(
    mut entries: Vec<Entry>,
    ranges: &Ranges,
    all_symbols: bool,
) -> Vec<Entry> {
    entries.retain(|e| symbol_valid(e, ranges, all_symbols));
    entries
}

/// `make_percpus_absolute()`.
pub(super) fn make_percpus_absolute(entries: &mut [Entry], ranges: &Ranges) {
    for e in entries.iter_mut() {
        if ranges.percpu.contains(e.addr) {
            // The tool keeps the 'A' override for per-cpu symbols.
            if let Some(t) = e.sym.first_mut() {
                *t = b'A';
            }
            e.percpu_absolute = true;
        }
    }
}
