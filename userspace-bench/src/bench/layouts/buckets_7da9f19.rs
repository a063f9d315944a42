//! The address index as equal address buckets of symbols:
//! `kallsyms_fast::fast::addr_index` as it was with this layout,
//! unchanged but for its imports and the wording of its comments, for
//! same-process A/B timing against the current layout.
//!
//! Address -> position index over `kallsyms_offsets`, and record offsets
//! that replace the walk of up to 255 name records.
//!
//! # Layout and cost
//!
//! The address range `[lo, hi]` covered by the table (from the first symbol at
//! or above the lowest section start to the last symbol) is cut into
//! `2^shift`-byte buckets, `shift` chosen so that there are at most `n / 4`
//! buckets (`n` = symbols). Bucket `b` is a pair of `u32`: the position of
//! the first alias of the symbol group that covers the bucket's first byte,
//! and the byte offset of that symbol's record in `kallsyms_names`. The
//! answer for an address in bucket `b` lies between the positions of
//! buckets `b` and `b + 1`, which two tiny binary searches over the
//! kernel's own `kallsyms_offsets` narrow to the first alias; its name is a
//! few records past the bucket's record offset. For a 120k-symbol kernel a
//! bucket holds about four symbols: a lookup reads one bucket pair, then
//! one line of offsets and one line of names, those two independently (the
//! names line is known from the bucket before the search ends).
//!
//! `name_delta[pos]` is the byte offset of record `pos` from its marker, for
//! lookups by position (the name index, addresses below the indexed range);
//! a block of 256 records longer than 64 KiB (never seen in a real kernel)
//! stores `u16::MAX` and falls back to the walk, still correct.
//!
//! Memory: 8 bytes per bucket (at most 2 bytes per symbol) plus 2 bytes per
//! symbol for `name_delta`: at most 4 bytes per symbol in total.

use kallsyms_mirror::name::skip_record;
use kallsyms_mirror::tables::{KallsymsTables, Sections, TableError, MARKER_STRIDE};
use kallsyms_mirror::SymbolPos;

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
    /// Number of `u32` bucket words: two per bucket, plus a sentinel pair.
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
        let hi = if n == 0 {
            lo
        } else {
            t.sym_address(n - 1).unwrap_or(lo)
        };
        let span = hi.saturating_sub(lo);
        let target = ((n - first) / 4).max(1) as u64;
        let mut shift = 0u32;
        while shift < 63 && (span >> shift) >= target {
            shift += 1;
        }
        let buckets = (span >> shift) as usize + 1;
        Self {
            first,
            lo,
            shift,
            bucket_words: 2 * (buckets + 1),
            delta_words: n,
        }
    }

    /// Extra bytes this index uses.
    pub fn bytes(&self) -> usize {
        self.bucket_words * 4 + self.delta_words * 2
    }
}

/// The address index, borrowing its storage.
#[derive(Clone, Copy, Debug)]
pub struct AddrIndex<'a> {
    layout: AddrIndexLayout,
    buckets: &'a [u32],
    name_delta: &'a [u16],
}

/// Record offset of `pos`, walking from its marker.
fn offset_by_walk(t: &KallsymsTables<'_>, pos: usize) -> Option<usize> {
    let mut off = *t.markers.get(pos / MARKER_STRIDE)? as usize;
    for _ in 0..pos % MARKER_STRIDE {
        off = skip_record(t, off)?;
    }
    Some(off)
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
        let mid = lo + (hi - lo) / 2;
        match t.sym_address(mid) {
            Some(a) if pred(a) => lo = mid + 1,
            _ => hi = mid,
        }
    }
    lo
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
        *slot = u16::try_from(off - block_start).unwrap_or(u16::MAX);
        off = skip_record(t, off).ok_or(TableError::BadNameRecord { pos: p as u32 })?;
    }
    // Buckets: one sweep over positions and bucket starts together, with
    // the record offset of each bucket's first position.
    let mut pos = layout.first;
    let mut group_first = layout.first;
    let mut off = offset_by_walk(t, layout.first).ok_or(TableError::BadNameRecord {
        pos: layout.first as u32,
    })?;
    let mut off_pos = layout.first;
    for (b, pair) in buckets
        .chunks_exact_mut(2)
        .take(layout.bucket_words / 2)
        .enumerate()
    {
        let step = ((b as u128) << layout.shift).min(u64::MAX as u128) as u64;
        let start = layout.lo.saturating_add(step);
        while pos + 1 < n {
            let next = t
                .sym_address(pos + 1)
                .ok_or(TableError::TooShort("kallsyms_offsets"))?;
            if next > start {
                break;
            }
            if next != t.sym_address(pos).unwrap_or(next) {
                group_first = pos + 1;
            }
            pos += 1;
        }
        while off_pos < group_first {
            off = skip_record(t, off).ok_or(TableError::BadNameRecord {
                pos: off_pos as u32,
            })?;
            off_pos += 1;
        }
        pair[0] = group_first as u32;
        pair[1] = u32::try_from(off).map_err(|_| TableError::TooShort("kallsyms_names"))?;
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
        if n == 0 {
            return None;
        }
        let l = &self.layout;
        // (first position, last position, record offset of the first).
        let (range_lo, range_hi, lo_off) = if addr < l.lo {
            (0, l.first, None)
        } else {
            let b = ((addr - l.lo) >> l.shift) as usize;
            match (self.buckets.get(2 * b..2 * b + 3), self.buckets.len()) {
                (Some(&[x, off, y]), _) => (x as usize, y as usize, Some(off as usize)),
                // Past the last bucket: from the last pair to the end.
                (_, len) if len >= 2 => match self.buckets.get(len - 2..len) {
                    Some(&[x, off]) => (x as usize, n - 1, Some(off as usize)),
                    _ => return None,
                },
                _ => return None,
            }
        };
        // Read the first record's header now, so that its load can overlap
        // the search over `kallsyms_offsets` below instead of following it
        // (the answer is almost always this record or one a few bytes on).
        // On shuffled cold lookups the gain is within the noise of the
        // development machine.
        let first_header = lo_off.and_then(|o| t.names.get(o).copied());
        // Last position in range_lo..=range_hi with address <= addr.
        let upper = partition_point(t, range_lo, range_hi + 1, |a| a <= addr);
        let cand = upper.saturating_sub(1);
        let start = t.sym_address(cand)?;
        // Back to the first alias (never below range_lo for indexed
        // addresses: bucket entries point at first aliases).
        let pos = partition_point(t, range_lo.min(cand), cand, |a| a < start);
        let mut end = 0u64;
        let mut i = cand + 1;
        while i < n {
            let a = t.sym_address(i)?;
            if a > start {
                end = a;
                break;
            }
            i += 1;
        }
        if end == 0 {
            end = s.last_symbol_end(addr);
        }
        let off = match (lo_off, first_header) {
            (Some(mut off), Some(h)) if pos >= range_lo && pos - range_lo < MARKER_STRIDE => {
                if pos > range_lo {
                    // Skip the first record with the header read early.
                    off = if h & 0x80 == 0 {
                        off + 1 + h as usize
                    } else {
                        skip_record(t, off)?
                    };
                    for _ in range_lo + 1..pos {
                        off = skip_record(t, off)?;
                    }
                }
                off
            }
            _ => self.name_offset(t, pos)?,
        };
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
        let base = *t.markers.get(pos / MARKER_STRIDE)? as usize;
        let d = *self.name_delta.get(pos)?;
        if d != u16::MAX {
            return Some(base + d as usize);
        }
        let mut off = base;
        for _ in 0..pos % MARKER_STRIDE {
            off = skip_record(t, off)?;
        }
        Some(off)
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
