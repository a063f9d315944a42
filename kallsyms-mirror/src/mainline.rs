//! A faithful port of the Linux 6.12 core-kernel lookup (`kernel/kallsyms.c`):
//! `get_symbol_pos()`, `get_symbol_offset()`, `kallsyms_expand_symbol()` and
//! `kallsyms_lookup_names()`.
//!
//! This is the baseline every speed claim is measured against, so it keeps the
//! kernel's algorithm and costs: the binary search over `kallsyms_offsets`,
//! the walk back over aliases and forward to the next distinct address, the
//! walk of up to 255 name records from the nearest marker, and the name
//! binary search that expands a full name at every probe. The only change is
//! that every table access is checked (a malformed table gives `None`, where
//! the kernel would read out of bounds).

use crate::name::{expand_symbol, record_offset, NameBuf};
use crate::tables::{KallsymsTables, Sections};
pub use crate::SymbolPos;
use kallsyms_fast::module::{
    region_for, symbol_is_candidate, ModuleHit, ModuleLayout, ModuleSymtab,
};

/// The mainline 6.12 algorithms over one set of tables.
#[derive(Clone, Copy, Debug)]
pub struct Mainline<'a> {
    /// The kernel tables.
    pub tables: KallsymsTables<'a>,
    /// Section bounds.
    pub sections: Sections,
}

impl<'a> Mainline<'a> {
    /// Wraps the tables and bounds.
    pub fn new(tables: KallsymsTables<'a>, sections: Sections) -> Self {
        Self { tables, sections }
    }

    /// `get_symbol_pos()`.
    pub fn get_symbol_pos(&self, addr: u64) -> Option<SymbolPos> {
        let t = &self.tables;
        let n = t.len();
        let mut low = 0usize;
        let mut high = n;
        while high.saturating_sub(low) > 1 {
            // low + (high - low) / 2, as the kernel computes it (low <= high:
            // nothing wraps).
            let mid = low.wrapping_add(high.wrapping_sub(low) / 2);
            if t.sym_address(mid)? <= addr {
                low = mid;
            } else {
                high = mid;
            }
        }
        while let Some(prev) = low.checked_sub(1) {
            if t.sym_address(prev)? != t.sym_address(low)? {
                break;
            }
            low = prev;
        }
        let symbol_start = t.sym_address(low)?;
        // Search for the next non-aliased symbol, else the section end.
        let symbol_end = t.symbol_end(&self.sections, low.saturating_add(1), symbol_start, addr)?;
        Some(SymbolPos {
            pos: low,
            size: symbol_end.wrapping_sub(symbol_start),
            offset: addr.wrapping_sub(symbol_start),
        })
    }

    /// `get_symbol_offset()`: byte offset in `kallsyms_names` of record `pos`,
    /// found by walking from the nearest marker.
    pub fn get_symbol_offset(&self, pos: usize) -> Option<usize> {
        record_offset(&self.tables, pos)
    }

    /// The core-kernel part of `kallsyms_lookup_buildid()`: `None` when
    /// `is_ksym_addr()` is false (the caller then tries modules).
    pub fn lookup(&self, addr: u64, name: &mut NameBuf) -> Option<SymbolPos> {
        if !self.sections.is_ksym_addr(addr) {
            return None;
        }
        let p = self.get_symbol_pos(addr)?;
        expand_symbol(&self.tables, self.get_symbol_offset(p.pos)?, name)?;
        Some(p)
    }

    /// `kallsyms_lookup_names()` without `end`: the first name-order index
    /// whose name equals `name`.
    pub fn lookup_names(&self, name: &[u8], buf: &mut NameBuf) -> Option<usize> {
        let t = &self.tables;
        if t.is_empty() {
            return None;
        }
        // The kernel's inclusive bounds; its `high = mid - 1` below zero
        // (which ends its loop) ends this one too.
        let mut low = 0usize;
        let mut high = t.len().checked_sub(1)?;
        let mid = loop {
            if low > high {
                return None;
            }
            // low + (high - low) / 2, as the kernel computes it (low <= high:
            // nothing wraps).
            let mid = low.wrapping_add(high.wrapping_sub(low) / 2);
            self.expand_seq(mid, buf)?;
            match name.cmp(buf.as_bytes()) {
                core::cmp::Ordering::Greater => low = mid.checked_add(1)?,
                core::cmp::Ordering::Less => high = mid.checked_sub(1)?,
                core::cmp::Ordering::Equal => break mid,
            }
        };
        let mut low = mid;
        while let Some(prev) = low.checked_sub(1) {
            self.expand_seq(prev, buf)?;
            if buf.as_bytes() != name {
                break;
            }
            low = prev;
        }
        Some(low)
    }

    fn expand_seq(&self, index: usize, buf: &mut NameBuf) -> Option<()> {
        let seq = self.tables.symbol_seq(index)?;
        let off = self.get_symbol_offset(seq)?;
        expand_symbol(&self.tables, off, buf).map(|_| ())
    }

    /// The core-kernel part of `kallsyms_lookup_name()`: address of the first
    /// symbol named `name` (0 for the empty name, as in the kernel).
    pub fn lookup_name(&self, name: &[u8], buf: &mut NameBuf) -> Option<u64> {
        if name.is_empty() {
            return None;
        }
        let i = self.lookup_names(name, buf)?;
        self.tables.sym_address(self.tables.symbol_seq(i)?)
    }
}

/// `find_kallsyms_symbol()`, a linear scan of the whole symtab, exactly as
/// 6.12 does it.
pub fn find_kallsyms_symbol<S: ModuleSymtab + ?Sized>(
    symtab: &S,
    layout: &ModuleLayout,
    addr: u64,
    all_symbols: bool,
) -> Option<ModuleHit> {
    let region = region_for(layout, addr, all_symbols)?;
    let mut nextval = region.base.wrapping_add(region.size);
    let mut bestval = region.base.wrapping_sub(1);
    let mut best = 0usize;
    for i in 1..symtab.num_symtab() {
        if !symbol_is_candidate(symtab, i) {
            continue;
        }
        let thisval = symtab.value(i);
        if thisval <= addr && thisval > bestval {
            best = i;
            bestval = thisval;
        }
        if thisval > addr && thisval < nextval {
            nextval = thisval;
        }
    }
    if best == 0 {
        return None;
    }
    Some(ModuleHit {
        index: best,
        size: nextval.wrapping_sub(bestval),
        offset: addr.wrapping_sub(bestval),
    })
}
