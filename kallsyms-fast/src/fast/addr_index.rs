//! Address -> position index over `kallsyms_offsets`, and record offsets
//! that replace the walk of up to 255 name records.
//!
//! # Layout and cost
//!
//! The address range `[lo, hi]` covered by the table (from the first symbol at
//! or above the lowest section start to the last symbol) is cut into
//! `2^shift`-byte buckets, `shift` chosen so that there are at most `n / 2`
//! buckets (`n` = symbols). Bucket `b` is one `u32`: the position of the
//! first alias of the symbol group that covers the bucket's first byte. The
//! answer for an address in bucket `b` lies between the positions of
//! buckets `b` and `b + 1`, which two tiny binary searches over the
//! kernel's own `kallsyms_offsets` narrow to the first alias (a bucket holds
//! about two symbols). Its name record is `markers[pos / 256] +
//! name_delta[pos]`: two independent loads instead of the kernel's walk of
//! up to 255 records.
//!
//! An earlier layout stored each bucket's record offset beside its position
//! (n / 4 buckets of 8 bytes) and skipped records from there; on UML (native
//! speed, perf) that chain of dependent byte loads was a third of a lookup,
//! and uniform core lookups went from about 205 to 125-150 ns without it.
//!
//! `name_delta[pos]` is the byte offset of record `pos` from its marker;
//! a block of 256 records longer than 64 KiB (never seen in a real kernel)
//! stores `u16::MAX` and falls back to the walk, still correct.
//!
//! Memory: 4 bytes per bucket (at most 2 bytes per symbol) plus 2 bytes per
//! symbol for `name_delta`: at most 4 bytes per symbol in total.

use crate::mainline::SymbolPos;
use crate::name::{record_offset, skip_record};
use crate::tables::{pos32, KallsymsTables, Sections, TableError, MARKER_STRIDE};

/// Sizes of the storage an [`AddrIndex`] needs for one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrIndexLayout {
    /// First indexed position: addresses below its address are searched by
    /// plain binary search (absolute per-CPU symbols live there).
    pub first: usize,
    /// Lowest indexed address.
    pub lo: u64,
    /// Bucket size is `1 << shift` bytes.
    pub shift: u32,
    /// Number of `u32` bucket words: one per bucket, plus a sentinel.
    pub bucket_words: usize,
    /// Number of `u16` name deltas (one per symbol).
    pub delta_words: usize,
}

impl AddrIndexLayout {
    /// Computes the layout for `t` (validated) with section bounds `s`.
    pub fn for_table(t: &KallsymsTables<'_>, s: &Sections) -> Self {
        let n = t.len();
        // The lowest address the kernel consults the table for.
        let mut floor = s.stext;
        for b in [s.sinittext, s.init_begin] {
            if b != 0 && b < floor {
                floor = b;
            }
        }
        let first = partition_point(t, 0, n, |a| a < floor).min(n.saturating_sub(1));
        let lo = t.sym_address(first).unwrap_or(0);
        let hi = match n.checked_sub(1) {
            Some(last) => t.sym_address(last).unwrap_or(lo),
            None => lo,
        };
        let span = hi.saturating_sub(lo);
        let target = u64::try_from((n.saturating_sub(first) / 2).max(1)).unwrap_or(u64::MAX);
        let mut shift = 0u32;
        while shift < 63 && (span >> shift) >= target {
            shift = shift.saturating_add(1);
        }
        // span >> shift < 2 * target <= n / 2 + 2: no saturation below for
        // any table that fits in memory; a saturated size is refused by the
        // allocation, never wrapped into a small one.
        let buckets = usize::try_from(span >> shift)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        Self {
            first,
            lo,
            shift,
            bucket_words: buckets.saturating_add(1),
            delta_words: n,
        }
    }

    /// Extra bytes this index uses.
    pub fn bytes(&self) -> usize {
        self.bucket_words
            .saturating_mul(4)
            .saturating_add(self.delta_words.saturating_mul(2))
    }
}

/// The address index, borrowing its storage.
#[derive(Clone, Copy, Debug)]
pub struct AddrIndex<'a> {
    layout: AddrIndexLayout,
    buckets: &'a [u32],
    name_delta: &'a [u16],
}

/// First position in `lo..hi` for which `pred(address)` is false (addresses
/// ascend). A position whose address cannot be read counts as false.
#[inline]
fn partition_point(
    t: &KallsymsTables<'_>,
    mut lo: usize,
    mut hi: usize,
    pred: impl Fn(u64) -> bool,
) -> usize {
    while lo < hi {
        let mid = lo.midpoint(hi);
        match t.sym_address(mid) {
            // mid < hi: no overflow.
            Some(a) if pred(a) => lo = mid.saturating_add(1),
            _ => hi = mid,
        }
    }
    lo
}

/// First position in `lo..hi` whose address is above `addr` (addresses
/// ascend), like `partition_point(t, lo, hi, |a| a <= addr)`, but with the
/// halving step a conditional move instead of a branch: the range is a
/// bucket's two or three symbols at random addresses, where a branch on
/// each comparison is mispredicted about half the time. A position whose
/// address cannot be read (never, in range) counts as above `addr`.
#[inline]
fn upper_bound(t: &KallsymsTables<'_>, lo: usize, hi: usize, addr: u64) -> usize {
    if lo >= hi {
        return lo;
    }
    let below = |p: usize| t.sym_address(p).is_some_and(|a| a <= addr);
    // Invariant: the answer lies in base..=base + len.
    let mut base = lo;
    let mut len = hi.saturating_sub(lo);
    while len > 1 {
        let half = len / 2;
        // base + half < hi: no overflow.
        let mid = base.saturating_add(half);
        base = if below(mid) { mid } else { base };
        len = len.saturating_sub(half);
    }
    base.saturating_add(usize::from(below(base)))
}

/// Fills `buckets` and `name_delta` for `t`. The table must have passed
/// [`KallsymsTables::validate`]; the storage must have the sizes `layout`
/// gives.
pub fn build_addr_index<'a>(
    t: &KallsymsTables<'_>,
    layout: AddrIndexLayout,
    buckets: &'a mut [u32],
    name_delta: &'a mut [u16],
) -> Result<AddrIndex<'a>, TableError> {
    let n = t.len();
    if buckets.len() < layout.bucket_words || name_delta.len() < layout.delta_words {
        return Err(TableError::TooShort("index storage"));
    }
    // Name deltas: one walk over all records.
    let mut off = 0usize;
    let mut block_start = 0usize;
    for (p, slot) in name_delta.iter_mut().take(n).enumerate() {
        if p % MARKER_STRIDE == 0 {
            block_start = off;
        }
        // off >= block_start: offsets only grow.
        *slot = u16::try_from(off.saturating_sub(block_start)).unwrap_or(u16::MAX);
        off = skip_record(t, off).ok_or(TableError::BadNameRecord { pos: pos32(p) })?;
    }
    // Buckets: one sweep over positions and bucket starts together.
    let mut pos = layout.first;
    let mut group_first = layout.first;
    for (b, slot) in buckets.iter_mut().take(layout.bucket_words).enumerate() {
        // b << shift, saturated: buckets past the address space start at
        // its end.
        let step = u64::try_from(b)
            .ok()
            .zip(1u64.checked_shl(layout.shift))
            .and_then(|(b, unit)| b.checked_mul(unit))
            .unwrap_or(u64::MAX);
        let start = layout.lo.saturating_add(step);
        while let Some(next_pos) = pos.checked_add(1).filter(|&p| p < n) {
            let next = t
                .sym_address(next_pos)
                .ok_or(TableError::TooShort("kallsyms_offsets"))?;
            if next > start {
                break;
            }
            if next != t.sym_address(pos).unwrap_or(next) {
                group_first = next_pos;
            }
            pos = next_pos;
        }
        *slot = u32::try_from(group_first).map_err(|_| TableError::TooMany)?;
    }
    Ok(AddrIndex {
        layout,
        buckets,
        name_delta,
    })
}

impl<'a> AddrIndex<'a> {
    /// The layout this index was built with.
    pub fn layout(&self) -> &AddrIndexLayout {
        &self.layout
    }

    /// Same answer as `Mainline::get_symbol_pos()`.
    #[inline]
    pub fn symbol_pos(&self, t: &KallsymsTables<'_>, s: &Sections, addr: u64) -> Option<SymbolPos> {
        self.locate(t, s, addr).map(|(p, _)| p)
    }

    /// [`symbol_pos`](Self::symbol_pos) plus the byte offset of the answer's
    /// record in `kallsyms_names`.
    #[inline]
    pub fn locate(
        &self,
        t: &KallsymsTables<'_>,
        s: &Sections,
        addr: u64,
    ) -> Option<(SymbolPos, usize)> {
        let n = t.len();
        let last = n.checked_sub(1)?;
        let l = &self.layout;
        // First and last position the answer can have.
        let (range_lo, range_hi) = match addr.checked_sub(l.lo) {
            None => (0, l.first),
            Some(delta) => {
                // A bucket number past usize (32-bit hosts only) or past the
                // table is "past the last bucket".
                let b =
                    usize::try_from(delta.checked_shr(l.shift).unwrap_or(0)).unwrap_or(usize::MAX);
                match self.buckets.get(b..b.saturating_add(2)) {
                    Some(&[x, y]) => (x as usize, y as usize),
                    // Past the last bucket: from the last one to the end.
                    _ => (*self.buckets.last()? as usize, last),
                }
            }
        };
        // Last position in range_lo..=range_hi with address <= addr.
        let upper = upper_bound(t, range_lo, range_hi.saturating_add(1), addr);
        let cand = upper.saturating_sub(1);
        let start = t.sym_address(cand)?;
        // Back to the first alias (never below range_lo for indexed
        // addresses: bucket entries point at first aliases). Most symbols
        // have no alias before them: one load says so, and the search
        // runs only when there is one.
        let pos = match cand.checked_sub(1).filter(|&p| p >= range_lo) {
            Some(prev) if t.sym_address(prev) == Some(start) => {
                partition_point(t, range_lo, prev, |a| a < start)
            }
            _ => cand,
        };
        let end = t.symbol_end(s, cand.saturating_add(1), start, addr)?;
        let off = self.name_offset(t, pos)?;
        let p = SymbolPos {
            pos,
            size: end.wrapping_sub(start),
            offset: addr.wrapping_sub(start),
        };
        Some((p, off))
    }

    /// Byte offset of record `pos` in `kallsyms_names`, without the walk.
    #[inline]
    pub fn name_offset(&self, t: &KallsymsTables<'_>, pos: usize) -> Option<usize> {
        let d = *self.name_delta.get(pos)?;
        if d == u16::MAX {
            return record_offset(t, pos);
        }
        let base = usize::try_from(*t.markers.get(pos / MARKER_STRIDE)?).ok()?;
        base.checked_add(usize::from(d))
    }
}

impl<'a> AddrIndex<'a> {
    /// Re-borrows storage that [`build_addr_index`] filled with `layout`.
    /// Wrong storage gives wrong answers, never a panic.
    pub fn from_parts(layout: AddrIndexLayout, buckets: &'a [u32], name_delta: &'a [u16]) -> Self {
        Self {
            layout,
            buckets,
            name_delta,
        }
    }
}
