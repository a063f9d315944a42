//! Same-process A/B of the core address index: the current layout
//! (`kallsyms_fast::fast::addr_index`) against bench-only copies of the
//! two layouts it is chosen over, on the same tables, the same token
//! slots and the same address stream, timed round-robin by
//! [`super::timing::measure`]:
//!
//! - [`tree_27bbf0a`]: a 16-ary search tree over the blocks' keys, which
//!   routes from a top node down four levels on a 122k-symbol table
//!   where the current layout reads one radix slot and one level;
//! - [`buckets_7da9f19`]: equal address buckets of symbols.
//!
//! The copies serve no answer outside the benchmark; [`Layouts::new`]
//! checks that they answer as the current index on the stream before
//! anything is timed.

#![allow(dead_code)] // the copies keep their whole API; the bench uses part of it

pub mod buckets_7da9f19;
pub mod tree_27bbf0a;

use kallsyms_mirror::mirror::Mirror;
use kallsyms_mirror::{SymbolPos, KSYM_NAME_LEN};

/// Which layout a core-only lookup goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The kernel crate's index.
    Current,
    /// The 16-ary search tree ([`tree_27bbf0a`]).
    Tree,
    /// The equal address buckets ([`buckets_7da9f19`]).
    Buckets,
}

impl Layout {
    /// All layouts, current first.
    pub const ALL: [Layout; 3] = [Layout::Current, Layout::Tree, Layout::Buckets];

    /// Row name in the report.
    pub fn row(self) -> &'static str {
        match self {
            Layout::Current => "core only: current layout",
            Layout::Tree => "core only: tree of 27bbf0a",
            Layout::Buckets => "core only: buckets of 7da9f19",
        }
    }
}

/// The other two layouts' storage, built over a mirror's tables.
pub struct Layouts<'m> {
    m: &'m Mirror,
    tree: (tree_27bbf0a::AddrIndexLayout, Vec<u32>, Vec<u16>),
    buckets: (buckets_7da9f19::AddrIndexLayout, Vec<u32>, Vec<u16>),
}

impl<'m> Layouts<'m> {
    /// Builds both other indexes and checks every layout against the
    /// current one on `streams`.
    pub fn new(m: &'m Mirror, streams: &[&[u64]]) -> Result<Self, String> {
        let f = m.fast();
        let tl = tree_27bbf0a::AddrIndexLayout::for_table(&f.tables, &f.sections);
        let (mut tk, mut td) = (vec![0u32; tl.bucket_words], vec![0u16; tl.delta_words]);
        tree_27bbf0a::build_addr_index(&f.tables, tl, &mut tk, &mut td)
            .map_err(|e| format!("tree of 27bbf0a: {e:?}"))?;
        let bl = buckets_7da9f19::AddrIndexLayout::for_table(&f.tables, &f.sections);
        let (mut bk, mut bd) = (vec![0u32; bl.bucket_words], vec![0u16; bl.delta_words]);
        buckets_7da9f19::build_addr_index(&f.tables, bl, &mut bk, &mut bd)
            .map_err(|e| format!("buckets of 7da9f19: {e:?}"))?;
        let me = Self {
            m,
            tree: (tl, tk, td),
            buckets: (bl, bk, bd),
        };
        let (mut a, mut b) = ([0u8; KSYM_NAME_LEN], [0u8; KSYM_NAME_LEN]);
        for &addr in streams.iter().flat_map(|s| s.iter()) {
            let want = me.lookup(Layout::Current, addr, &mut a);
            for l in [Layout::Tree, Layout::Buckets] {
                let got = me.lookup(l, addr, &mut b);
                let same = match (want, got) {
                    (Some((p, n)), Some((q, k))) => p == q && a[..n] == b[..k],
                    (None, None) => true,
                    _ => false,
                };
                if !same {
                    return Err(format!("{}: answers {addr:#x} differently", l.row()));
                }
            }
        }
        Ok(me)
    }

    /// The core lookup (`FastCore::lookup_into`'s steps) through `layout`:
    /// position and name length, the name in `buf`.
    #[inline(always)]
    pub fn lookup(
        &self,
        layout: Layout,
        addr: u64,
        buf: &mut [u8; KSYM_NAME_LEN],
    ) -> Option<(SymbolPos, usize)> {
        let f = self.m.fast();
        if !f.sections.is_ksym_addr(addr) {
            return None;
        }
        let (p, off) = match layout {
            Layout::Current => f.addr.locate(&f.tables, &f.sections, addr)?,
            Layout::Tree => {
                let (l, k, d) = &self.tree;
                tree_27bbf0a::AddrIndex::from_parts(*l, k, d).locate(
                    &f.tables,
                    &f.sections,
                    addr,
                )?
            }
            Layout::Buckets => {
                let (l, k, d) = &self.buckets;
                buckets_7da9f19::AddrIndex::from_parts(*l, k, d).locate(
                    &f.tables,
                    &f.sections,
                    addr,
                )?
            }
        };
        let (_, n) = f.tokens.expand_into(&f.tables, off, buf)?;
        Some((p, n))
    }

    /// Extra bytes per symbol of `layout`'s address index.
    pub fn bytes_per_symbol(&self, layout: Layout) -> f64 {
        let n = self.m.tables().offsets.len().max(1) as f64;
        let bytes = match layout {
            Layout::Current => self.m.fast().addr.layout().bytes(),
            Layout::Tree => self.tree.0.bytes(),
            Layout::Buckets => self.buckets.0.bytes(),
        };
        bytes as f64 / n
    }
}
