//! Address -> position index over `kallsyms_offsets`, and record offsets
//! that replace the walk of up to 255 name records.
//!
//! # Layout and cost
//!
//! The indexed positions (from the first symbol at or above the lowest
//! section start to the last) are cut into blocks of [`FAN`] = 16
//! consecutive symbols. A small static search tree routes an address to
//! its block: level 0 holds the address (as a `u32` distance from the
//! first indexed symbol) of every block's first symbol, level 1 every 16th
//! key of level 0, and so on up to a level of at most 16 keys. Every node
//! is 16 keys, one 64-byte cache line, searched by counting the keys not
//! above the address (no branch on the data). The answer is then the last
//! of the block's 16 addresses in the kernel's own `kallsyms_offsets` not
//! above the address: one or two lines, counted the same way.
//!
//! Why a tree and not address buckets: an earlier layout cut the address
//! range into equal buckets (n / 2 of them), which costs the same memory
//! but not the same time. Kernel symbols are anything but evenly spread:
//! with `CONFIG_KALLSYMS_ALL`, one 4 KiB page of `.data.once` holds over a
//! thousand one-byte `__already_done.N` flags. On a 6.12 UML defconfig a
//! lookup of a uniformly drawn symbol landed in a bucket of 42 candidates
//! on average, a binary search of 5-6 dependent loads over several lines.
//! The tree's cost does not depend on density: its upper levels (1/16 and
//! 1/256 of the table) stay in the cache, and a lookup misses on the leaf
//! block's line(s) of `kallsyms_offsets`, then the name record.
//!
//! The record of position `pos` is `markers[pos / 256] + name_delta[pos]`:
//! two independent loads instead of the kernel's walk of up to 255
//! records. `name_delta[pos]` is the byte offset of record `pos` from its
//! marker; a block of 256 records longer than 64 KiB (never seen in a real
//! kernel) stores `u16::MAX` and falls back to the walk, still correct.
//! The delta line of the leaf block is prefetched as soon as the block is
//! known, while its addresses are counted.
//!
//! A key is a `u32` distance, saturated: an address 4 GiB or more above
//! the first indexed symbol (never in a kernel image, whose relative
//! offsets are 32-bit; possible only in a hostile table) cannot be routed
//! exactly, so such lookups take a plain binary search.
//!
//! Memory: the keys take about 4 / 15 of a byte per symbol, `name_delta`
//! 2 bytes per symbol: under 2.3 bytes per symbol in all.

use super::prefetch::prefetch_line;
use super::SymbolPos;
use crate::name::{record_offset, skip_record};
use crate::tables::{
    decode_offset, decode_pc_relative, pos32, KallsymsTables, OffsetEncoding, Sections, TableError,
    MARKER_STRIDE,
};

/// Keys per tree node and symbols per leaf block: 16 `u32` keys fill one
/// 64-byte cache line, and 16 `kallsyms_offsets` entries one or two.
pub const FAN: usize = 16;

/// Most tree levels a layout has. With [`FAN`] 16 and at most 2^24
/// symbols ([`KallsymsTables::validate`]'s limit) six suffice; a table
/// that needs more gets a top level of more than 16 keys, which is still
/// searched correctly, only more slowly.
pub const MAX_LEVELS: usize = 8;

/// Sizes of the storage an [`AddrIndex`] needs for one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrIndexLayout {
    /// First indexed position: addresses below its address are searched by
    /// plain binary search (absolute per-CPU symbols live there).
    pub first: usize,
    /// Lowest indexed address (the address of `first`): keys are
    /// distances from it.
    pub lo: u64,
    /// Number of tree levels (at least 1).
    pub levels: usize,
    /// Start of each level's keys in the key storage (level 0, the
    /// blocks' first symbols, at 0).
    pub level_start: [usize; MAX_LEVELS],
    /// Number of keys of each level.
    pub level_len: [usize; MAX_LEVELS],
    /// Number of `u32` key words, all levels together (the storage's
    /// historical name: it held address buckets before the tree).
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
        let mut level_start = [0usize; MAX_LEVELS];
        let mut level_len = [0usize; MAX_LEVELS];
        let mut len = n.saturating_sub(first).div_ceil(FAN).max(1);
        let mut total = 0usize;
        let mut levels = 0usize;
        for (start, l) in level_start.iter_mut().zip(level_len.iter_mut()) {
            *start = total;
            *l = len;
            // Bounded by the table's size: no saturation in practice, and
            // a saturated size is refused by the allocation.
            total = total.saturating_add(len);
            levels = levels.saturating_add(1);
            if len <= FAN {
                break;
            }
            len = len.div_ceil(FAN);
        }
        Self {
            first,
            lo,
            levels,
            level_start,
            level_len,
            bucket_words: total,
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
    keys: &'a [u32],
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
        // lo < hi: nothing wraps.
        let mid = lo.wrapping_add(hi.wrapping_sub(lo) / 2);
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

/// The routing key of `addr`: its distance from `lo`, saturated to
/// `u32::MAX` (an address that far up is routed by binary search).
#[inline]
fn key_of(lo: u64, addr: u64) -> u32 {
    u32::try_from(addr.saturating_sub(lo)).unwrap_or(u32::MAX)
}

/// How many elements of `s` satisfy `f`. A full node of [`FAN`] goes
/// through a fixed-length array, so that the compiler unrolls it into
/// independent loads and compares with no branch on the data; the count
/// adds with `wrapping_add` because it cannot exceed `s.len()` (and an
/// overflow check would leave a panic path in the lookup).
#[inline(always)]
fn count_where<T: Copy>(s: &[T], f: impl Fn(T) -> bool) -> usize {
    let add = |c: usize, &x: &T| c.wrapping_add(usize::from(f(x)));
    match s.first_chunk::<FAN>() {
        Some(node) if s.len() == FAN => node.iter().fold(0, add),
        _ => s.iter().fold(0, add),
    }
}

/// How many of `keys` are not above `q`. Sorted keys make this the index
/// of the first key above `q`; counting instead of searching lets the CPU
/// issue every load of the line at once and take no data-dependent branch.
#[inline(always)]
fn count_keys_le(keys: &[u32], q: u32) -> usize {
    count_where(keys, |k| k <= q)
}

/// How many positions of `lo..hi` have an address not above `addr` (the
/// first position above `addr`, minus `lo`: addresses ascend).
#[inline(always)]
fn count_addrs_le(t: &KallsymsTables<'_>, lo: usize, hi: usize, addr: u64) -> usize {
    let Some(offs) = t.offsets.get(lo..hi) else {
        return 0;
    };
    // One loop per encoding rather than a test of the encoding per entry.
    match t.encoding {
        OffsetEncoding::RelativeBase {
            base,
            absolute_percpu: true,
        } => count_where(offs, |o| decode_offset(o, base, true) <= addr),
        OffsetEncoding::RelativeBase {
            base,
            absolute_percpu: false,
        } => count_where(offs, |o| decode_offset(o, base, false) <= addr),
        OffsetEncoding::PcRelative { table_addr } => {
            count_where_indexed(offs, |j, o| {
                // Position lo + j; `lo + j < hi <= offsets.len()`.
                decode_pc_relative(table_addr, lo.wrapping_add(j), o) <= addr
            })
        }
    }
}

/// [`count_where`] for a predicate that also takes the element's index
/// in `s` (the PC-relative encoding's address depends on the position).
#[inline(always)]
fn count_where_indexed<T: Copy>(s: &[T], f: impl Fn(usize, T) -> bool) -> usize {
    let add = |c: usize, (j, &x): (usize, &T)| c.wrapping_add(usize::from(f(j, x)));
    match s.first_chunk::<FAN>() {
        Some(node) if s.len() == FAN => node.iter().enumerate().fold(0, add),
        _ => s.iter().enumerate().fold(0, add),
    }
}

/// Fills `keys` (the layout's `bucket_words` words) and `name_delta` for
/// `t`. The table must have passed [`KallsymsTables::validate`]; the
/// storage must have the sizes `layout` gives.
pub fn build_addr_index<'a>(
    t: &KallsymsTables<'_>,
    layout: AddrIndexLayout,
    keys: &'a mut [u32],
    name_delta: &'a mut [u16],
) -> Result<AddrIndex<'a>, TableError> {
    let n = t.len();
    if keys.len() < layout.bucket_words || name_delta.len() < layout.delta_words {
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
    // Level 0: the key of every block's first symbol; level i + 1: every
    // FAN-th key of level i.
    let levels = layout.levels.min(MAX_LEVELS);
    let mut stride = FAN;
    for lvl in 0..levels {
        let (Some(&start), Some(&len)) = (layout.level_start.get(lvl), layout.level_len.get(lvl))
        else {
            break;
        };
        let level = keys
            .get_mut(start..start.saturating_add(len))
            .ok_or(TableError::TooShort("index storage"))?;
        for (j, k) in level.iter_mut().enumerate() {
            let pos = j
                .checked_mul(stride)
                .and_then(|d| d.checked_add(layout.first))
                .filter(|&p| p < n)
                .ok_or(TableError::TooShort("kallsyms_offsets"))?;
            let a = t
                .sym_address(pos)
                .ok_or(TableError::TooShort("kallsyms_offsets"))?;
            *k = key_of(layout.lo, a);
        }
        stride = stride.saturating_mul(FAN);
    }
    Ok(AddrIndex {
        layout,
        keys,
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
        let n = t.len();
        let (lo, hi) = self.window(t, addr)?;
        let upper = match hi.checked_sub(lo) {
            Some(w) if w <= FAN => lo.saturating_add(count_addrs_le(t, lo, hi, addr)),
            _ => upper_bound(t, lo, hi, addr),
        };
        // Positions are below n, so upper - 1 is one, or 0 for an address
        // below every symbol (the kernel's get_symbol_pos() answers 0).
        let cand = upper.saturating_sub(1).min(n.checked_sub(1)?);
        let start = t.sym_address(cand)?;
        // Back to the first alias. Most symbols have no alias before them:
        // one load says so, and the search runs only when there is one.
        let pos = match cand.checked_sub(1) {
            Some(prev) if t.sym_address(prev) == Some(start) => {
                partition_point(t, 0, prev, |a| a < start)
            }
            _ => cand,
        };
        let end = t.symbol_end(s, cand.saturating_add(1), start, addr)?;
        Some(SymbolPos {
            pos,
            size: end.wrapping_sub(start),
            offset: addr.wrapping_sub(start),
        })
    }

    /// The positions `lo..hi` among which the answer for `addr` is the
    /// last one whose address is not above `addr`: the leaf block the tree
    /// routes to, or the unindexed low positions, or the whole table for
    /// an address the keys cannot route.
    #[inline]
    fn window(&self, t: &KallsymsTables<'_>, addr: u64) -> Option<(usize, usize)> {
        let n = t.len();
        let l = &self.layout;
        if addr < l.lo {
            // Below the first indexed symbol; position `first` is above
            // `addr`, so the window may stop before it.
            return Some((0, l.first.min(n)));
        }
        let q = key_of(l.lo, addr);
        let Some(block) = self.route(q).filter(|_| q != u32::MAX) else {
            return Some((0, n));
        };
        let lo = block
            .checked_mul(FAN)
            .and_then(|d| d.checked_add(l.first))
            .filter(|&p| p < n)?;
        // The delta of the answer lies in this block: start its line now,
        // while the block's addresses are read.
        let hi = lo.saturating_add(FAN).min(n);
        // The 32 bytes of deltas may straddle two lines.
        for p in [lo, hi.saturating_sub(1)] {
            if let Some(d) = self.name_delta.get(p) {
                prefetch_line(d);
            }
        }
        Some((lo, hi))
    }

    /// The leaf block whose first key is the last one not above `q`, from
    /// the top level down; `None` when the storage does not route `q`
    /// (wrong storage: never for an index this module built).
    #[inline]
    fn route(&self, q: u32) -> Option<usize> {
        let l = &self.layout;
        let top = l.levels.checked_sub(1)?;
        let mut idx = 0usize;
        for lvl in (0..=top).rev() {
            let start = *l.level_start.get(lvl)?;
            let len = *l.level_len.get(lvl)?;
            let level = self.keys.get(start..start.checked_add(len)?)?;
            // The top level is searched whole (at most FAN keys unless the
            // table outgrew MAX_LEVELS); below it, the FAN keys under the
            // key chosen one level up.
            let (base, node) = if lvl == top {
                (0, level)
            } else {
                let base = idx.checked_mul(FAN)?;
                let node = level.get(base..base.saturating_add(FAN).min(len))?;
                (base, node)
            };
            // The node's first key is the one chosen above, not above q
            // (key 0 is 0 at the top): the count is at least 1.
            idx = base.checked_add(count_keys_le(node, q).checked_sub(1)?)?;
        }
        Some(idx)
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
        let p = self.symbol_pos(t, s, addr)?;
        let off = self.name_offset(t, p.pos)?;
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
    pub fn from_parts(layout: AddrIndexLayout, keys: &'a [u32], name_delta: &'a [u16]) -> Self {
        Self {
            layout,
            keys,
            name_delta,
        }
    }
}
