//! The 2.6.9-era lookup, as in the 2004 report: a linear scan of every
//! address for the best match ("They're sorted, we could be clever here, but
//! who cares?"), then a walk over every name record up to the match.
//!
//! It runs over the 6.12 tables (token-compressed names rather than 2.6.9's
//! stem compression), so it keeps 2.6.9's algorithmic cost, O(n) per lookup,
//! while giving 6.12's answers (the first alias, 6.12's sizes), so that the
//! three paths can be compared address by address.

use crate::name::{expand_symbol, skip_record, NameBuf};
use crate::tables::{KallsymsTables, Sections};
use crate::SymbolPos;

/// The 2.6.9-style linear lookup over one set of tables.
#[derive(Clone, Copy, Debug)]
pub struct Linear<'a> {
    /// The kernel tables.
    pub tables: KallsymsTables<'a>,
    /// Section bounds.
    pub sections: Sections,
}

impl<'a> Linear<'a> {
    /// Wraps the tables and bounds.
    pub fn new(tables: KallsymsTables<'a>, sections: Sections) -> Self {
        Self { tables, sections }
    }

    /// Core lookup: `None` when `is_ksym_addr()` is false.
    pub fn lookup(&self, addr: u64, name: &mut NameBuf) -> Option<SymbolPos> {
        if !self.sections.is_ksym_addr(addr) {
            return None;
        }
        let t = &self.tables;
        let n = t.len();
        // Scan every address: the best is the first symbol at the highest
        // address <= addr (strict `>` keeps the first alias).
        let mut best = 0usize;
        let mut best_addr = t.sym_address(0)?;
        for i in 0..n {
            let a = t.sym_address(i)?;
            if a <= addr && a > best_addr {
                best = i;
                best_addr = a;
            }
        }
        // The end is the first address above the best one.
        let end = t.symbol_end(&self.sections, best.saturating_add(1), best_addr, addr)?;
        // Grab the name: walk every record from the first.
        let mut off = 0usize;
        for _ in 0..best {
            off = skip_record(t, off)?;
        }
        expand_symbol(t, off, name)?;
        Some(SymbolPos {
            pos: best,
            size: end.wrapping_sub(best_addr),
            offset: addr.wrapping_sub(best_addr),
        })
    }
}
