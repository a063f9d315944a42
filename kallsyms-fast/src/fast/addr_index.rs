//! Address -> position index over `kallsyms_offsets`, and record offsets
//! that replace the walk of up to 255 name records.
//!
//! # Layout and cost
//!
//! The indexed positions (from the first symbol at or above the lowest
//! section start to the last) are cut into blocks that follow the 64-byte
//! cache lines of the kernel's own `kallsyms_offsets`: every block but the
//! first is the [`FAN`] = 16 entries of one line, the first block the
//! entries from the first indexed one to the end of its line. Each block
//! has a key: the address of its first symbol, as a `u32` distance from
//! the first indexed symbol. A radix slot table routes an address to its
//! block: slot `j` holds the last block whose key is not above `j <<
//! shift`, with `shift` chosen so that there are at most four slots per
//! block. The answer's block lies between the address's slot's block and
//! the next slot's. Where they are under 4 apart (99.2% of uniformly
//! drawn text addresses on a 6.18 x86_64 kernel), the three keys after
//! the first are compared at once; under 16 apart (0.6%), the 16 keys
//! from the first are ranked by a branchless binary search of four
//! compares and conditional moves; a wider range (0.1%, the densest
//! address ranges) by a binary search of the range. The answer is then the
//! last of the block's addresses not above the address: one line of
//! `kallsyms_offsets`, ranked the same way.
//!
//! Why a slot table and not a search tree over the keys: a 16-ary tree
//! ranks one node per level, four levels on a 122k-symbol kernel, each
//! waiting for the one above; the slot is one load computed from the
//! address, and the keys it points to the only node. One slot per block
//! costs a quarter of a byte per symbol; four, so that three independent
//! compares replace the rank for almost every address, a byte. The
//! userspace benchmark keeps the other two layouts, the tree and address
//! buckets (`userspace-bench/src/bench/layouts/`), and times all three in
//! one process on the same stream (`cargo run --release -p
//! userspace-bench`, the rows "core only"); the measurements are in the
//! `userspace` files of bench/results/.
//!
//! Beside the keys, the index keeps the byte offset in `kallsyms_names` of
//! every block's first record (and one past the last record). As soon as
//! the keys have chosen the block, the lines holding the block's records
//! are prefetched, together with the block's name deltas, while the
//! block's line of `kallsyms_offsets` is loaded and counted: the answer's
//! record is one of them. A cold lookup so waits for one round of cache
//! misses (the offsets line, with the record and delta lines in flight
//! beside it) after the slot and its keys (a byte and a quarter of a
//! byte per symbol: they stay in the cache). Without the record offsets
//! a lookup waits for two rounds: the offsets line, then, once the
//! position is known, the record; address buckets wait for two as well:
//! the bucket, then the offsets and the record.
//!
//! Why slots of blocks and not address buckets of symbols: kernel
//! symbols are anything but evenly spread: with `CONFIG_KALLSYMS_ALL`,
//! one 4 KiB page of `.data.once` holds over a thousand one-byte
//! `__already_done.N` flags. On a 6.12 UML defconfig a lookup of a
//! uniformly drawn symbol lands in an equal address bucket of 42
//! candidates on average, a binary search of 5-6 dependent loads over
//! several lines of `kallsyms_offsets`. A slot spans keys, one per 16
//! symbols: those thousand flags are some 63 keys in four lines, six
//! steps of a binary search, and only lookups in that page take it.
//!
//! The record of position `pos` is `markers[pos / 256] + name_delta[pos]`:
//! two independent loads instead of the kernel's walk of up to 255
//! records. `name_delta[pos]` is the byte offset of record `pos` from its
//! marker; a block of 256 records longer than 64 KiB (never seen in a real
//! kernel) stores `u16::MAX` and falls back to the walk, still correct.
//!
//! A key is a `u32` distance, saturated: an address 4 GiB or more above
//! the first indexed symbol (never in a kernel image, whose relative
//! offsets are 32-bit; possible only in a hostile table) cannot be routed
//! exactly, so such lookups take a plain binary search.
//!
//! Block boundaries depend only on where `kallsyms_offsets` lies in memory
//! (the layout records them), never on the answers: an index used over a
//! copy of the table at another alignment still answers exactly, only its
//! blocks straddle two lines.
//!
//! Memory: the keys and the block record offsets take a quarter of a
//! byte per symbol each, the slots (at most four per block) at most one
//! byte, `name_delta` 2 bytes: at most 3.5 bytes per symbol in all (3.23
//! on the 122k symbols of a 6.18 x86_64 kernel).

use super::prefetch::prefetch_line;
use super::SymbolPos;
use crate::name::{record_offset, skip_record};
use crate::tables::{
    decode_offset, decode_pc_relative, pos32, KallsymsTables, OffsetEncoding, Sections, TableError,
    MARKER_STRIDE,
};

/// Keys ranked at once and symbols per leaf block: 16 `u32` keys fill
/// one 64-byte cache line, and so do 16 `kallsyms_offsets` entries.
pub const FAN: usize = 16;

/// Radix slots per leaf block, at most: the slot table then costs at most
/// four `u32` per 16 symbols (a byte per symbol), and almost every slot
/// spans fewer than `NEAR` (4) blocks, so that a lookup compares three
/// keys at once instead of ranking 16: the cached streams gain by it,
/// the cold one is no slower.
pub const SLOTS_PER_BLOCK: usize = 4;

/// Keys a lookup compares at once when its slot spans fewer than this
/// many blocks (almost every slot, with [`SLOTS_PER_BLOCK`] 4).
const NEAR: usize = 4;

/// Sizes of the storage an [`AddrIndex`] needs for one table.
///
/// The `u32` key storage holds, in order: the blocks' keys (`blocks`
/// of them, then [`FAN`] `u32::MAX` padding words), the radix slot table
/// (`slots + 1` block numbers from `slot_start`), and the blocks' record
/// offsets (`blocks + 1` from `rec_start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrIndexLayout {
    /// First indexed position: addresses below its address are searched by
    /// plain binary search (absolute per-CPU symbols live there).
    pub first: usize,
    /// Lowest indexed address (the address of `first`): keys are
    /// distances from it.
    pub lo: u64,
    /// Entries of `first`'s line of `kallsyms_offsets` before `first`
    /// (0..FAN): block 0 is `first..first + FAN - lead`, block `b > 0`
    /// starts at `first + b * FAN - lead`.
    pub lead: usize,
    /// Number of blocks (keys).
    pub blocks: usize,
    /// A key `q` falls in radix slot `q >> shift` (at most 32).
    pub shift: u32,
    /// Number of radix slots (at least 1): the last one also takes every
    /// key above its range.
    pub slots: usize,
    /// Start of the slot table in the key storage.
    pub slot_start: usize,
    /// Start, in the key storage, of the `blocks + 1` record offsets: the
    /// byte offset in `kallsyms_names` of each block's first record, then
    /// the end of the last record.
    pub rec_start: usize,
    /// Number of `u32` words: keys, slot table and record offsets (named
    /// `bucket_words` in every user of the layout, though it holds no
    /// buckets).
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
        // Where `first`'s entry sits in its 64-byte line (entries are 4
        // bytes, 4-aligned): only the address is used, never dereferenced.
        let entry = (t.offsets.as_ptr() as usize).wrapping_add(first.wrapping_mul(4));
        let lead = entry % 64 / 4;
        // Positions first..n: block 0 takes FAN - lead of them, every
        // later block FAN.
        let indexed = n.saturating_sub(first);
        let blocks = indexed.saturating_add(lead).div_ceil(FAN).max(1);
        // The fewest slots that still give each block's range one, at
        // most: the largest routed key is the last symbol's (a saturated
        // one, never routed, counts as the largest routable).
        let last = t
            .sym_address(n.saturating_sub(1))
            .map_or(0, |a| key_of(lo, a).min(u32::MAX - 1));
        let most = blocks.saturating_mul(SLOTS_PER_BLOCK);
        let mut shift = 0u32;
        while shift < 32 && slots_for(last, shift) > most {
            shift = shift.saturating_add(1);
        }
        let slots = slots_for(last, shift);
        // Bounded by the table's size: no saturation in practice, and a
        // saturated size is refused by the allocation.
        let slot_start = blocks.saturating_add(FAN);
        let rec_start = slot_start.saturating_add(slots).saturating_add(1);
        Self {
            first,
            lo,
            lead,
            blocks,
            shift,
            slots,
            slot_start,
            rec_start,
            bucket_words: rec_start.saturating_add(blocks).saturating_add(1),
            delta_words: n,
        }
    }

    /// Extra bytes this index uses.
    pub fn bytes(&self) -> usize {
        self.bucket_words
            .saturating_mul(4)
            .saturating_add(self.delta_words.saturating_mul(2))
    }

    /// First position of block `b` (`first` for block 0); `None` past the
    /// arithmetic's range (never for a block of the table).
    #[inline]
    pub fn block_start(&self, b: usize) -> Option<usize> {
        if b == 0 {
            return Some(self.first);
        }
        // lead < FAN <= b * FAN: no underflow.
        b.checked_mul(FAN)?
            .checked_add(self.first)?
            .checked_sub(self.lead)
    }
}

/// Most lines of a block's name records [`AddrIndex`] prefetches: 16
/// records of a C kernel take 150-250 bytes (3-5 lines); a block of long
/// Rust names past this is fetched on demand, as without a prefetch.
pub const RECORD_LINES: usize = 8;

/// The positions `lo..hi` a lookup searches, and the address of position
/// `hi` when the index knows it (the next block's key).
#[derive(Clone, Copy, Debug)]
struct Window {
    lo: usize,
    hi: usize,
    next_addr: Option<u64>,
    /// The keys chose this block: its first address is not above the
    /// address looked up.
    routed: bool,
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

/// Radix slots needed for keys up to `last` with `shift`.
#[inline]
fn slots_for(last: u32, shift: u32) -> usize {
    // shift <= 32 and a u64 shift: no overflow; the result is at most 2^32.
    usize::try_from((u64::from(last) >> shift.min(63)).saturating_add(1)).unwrap_or(usize::MAX)
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

/// How many of 16 sorted values satisfy `le` (are not above the query),
/// when the first one is known to: a branchless binary search, four steps
/// of a compare and a conditional move over the values' one or two
/// lines, where counting takes sixteen compares and adds. A lookup runs
/// this on its slot's keys and on its leaf. Values that break the premise
/// (never in an index this module built) give a wrong rank, not a panic.
/// `le` gets each value's position in the node with it (the PC-relative
/// encoding's address depends on the position).
#[inline(always)]
fn rank_from_first<T: Copy>(node: &[T; FAN], le: impl Fn(usize, T) -> bool) -> usize {
    let mut i = 0usize;
    for step in [FAN / 2, FAN / 4, FAN / 8, FAN / 16] {
        // i <= FAN - 2 * step before each step, so j <= FAN - 1.
        let j = i.wrapping_add(step);
        let take = node.get(j).is_some_and(|&x| le(j, x));
        i = if take { j } else { i };
    }
    i.wrapping_add(1)
}

/// How many of the sorted `keys` are not above `q`, the first one known
/// not to be: [`rank_from_first`] for a slice of any length, a
/// branchless binary search of `ceil(log2(len))` steps (the halving of
/// [`upper_bound`], over keys; one loop for both would cost the hot path
/// 4 to 7 instructions per lookup, by callgrind, through inlining).
#[inline]
fn rank_keys_from_first(keys: &[u32], q: u32) -> usize {
    // Invariant: the last key not above q is at base..base + len.
    let mut base = 0usize;
    let mut len = keys.len();
    while len > 1 {
        let half = len / 2;
        let mid = base.wrapping_add(half);
        let take = keys.get(mid).is_some_and(|&k| k <= q);
        base = if take { mid } else { base };
        len = len.wrapping_sub(half);
    }
    base.wrapping_add(1)
}

/// [`AddrIndex::symbol_pos`] in a full leaf block `w` the keys routed
/// `addr` to (its first address is not above `addr`): the block's one line
/// of `kallsyms_offsets` is read once as an array and decoded with one
/// test of the encoding, for the rank, the answer's start, the alias
/// test and the end. The end is the address after the rank (above `addr`,
/// so above the start: no walk), or, for the block's last symbol, the next
/// block's key.
#[inline(always)]
fn leaf_pos(t: &KallsymsTables<'_>, s: &Sections, w: Window, addr: u64) -> Option<SymbolPos> {
    let offs = t.offsets.get(w.lo..)?.first_chunk::<FAN>()?;
    // One body per encoding rather than a test of the encoding per entry.
    match t.encoding {
        OffsetEncoding::RelativeBase {
            base,
            absolute_percpu: true,
        } => leaf_pos_with(t, s, w, offs, addr, |_, o| decode_offset(o, base, true)),
        OffsetEncoding::RelativeBase {
            base,
            absolute_percpu: false,
        } => leaf_pos_with(t, s, w, offs, addr, |_, o| decode_offset(o, base, false)),
        OffsetEncoding::PcRelative { table_addr } => leaf_pos_with(t, s, w, offs, addr, |j, o| {
            decode_pc_relative(table_addr, w.lo.wrapping_add(j), o)
        }),
    }
}

/// [`leaf_pos`] for one encoding: `dec(j, offs[j])` is the address of
/// position `w.lo + j`.
#[inline(always)]
fn leaf_pos_with(
    t: &KallsymsTables<'_>,
    s: &Sections,
    w: Window,
    offs: &[i32; FAN],
    addr: u64,
    dec: impl Fn(usize, i32) -> u64,
) -> Option<SymbolPos> {
    // 1..=FAN: the first address is not above addr.
    let rank = rank_from_first(offs, |j, o| dec(j, o) <= addr);
    let i = rank.wrapping_sub(1);
    let start = dec(i, *offs.get(i)?);
    let cand = w.lo.wrapping_add(i);
    // Back to the first alias. Most symbols have no alias before them:
    // one load (in the line, but for the block's first symbol) says so,
    // and the search runs only when there is one.
    let prev = match offs.get(i.wrapping_sub(1)) {
        Some(&o) => Some(dec(i.wrapping_sub(1), o)),
        None => cand.checked_sub(1).and_then(|p| t.sym_address(p)),
    };
    let pos = if prev == Some(start) {
        partition_point(t, 0, cand.saturating_sub(1), |a| a < start)
    } else {
        cand
    };
    // The end is the next address above `start`: the one after the rank,
    // above `addr`. For the block's last symbol that is the next block's
    // first address, which its key gives without a load of the next line
    // of `kallsyms_offsets`. (Were that address `start`, the keys would
    // have routed to the next block; the tests keep wrong storage from
    // giving a size of 0.)
    let next = match offs.get(rank) {
        Some(&o) => Some(dec(rank, o)),
        None => w.next_addr,
    };
    let end = match next {
        Some(a) if a > start => a,
        _ => t.symbol_end(s, cand.saturating_add(1), start, addr)?,
    };
    Some(SymbolPos {
        pos,
        size: end.wrapping_sub(start),
        offset: addr.wrapping_sub(start),
    })
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

/// Fills `keys` (the layout's `bucket_words` words: block keys, slots
/// and block record offsets) and `name_delta` for `t`. The table must have passed
/// [`KallsymsTables::validate`]; the storage must have the sizes `layout`
/// gives.
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
    let short = || TableError::TooShort("index storage");
    // Name deltas and the blocks' record offsets: one walk over all
    // records.
    let mut off = 0usize;
    let mut block_start = 0usize;
    let mut next_block = 0usize;
    for (p, slot) in name_delta.iter_mut().take(n).enumerate() {
        if p % MARKER_STRIDE == 0 {
            block_start = off;
        }
        // off >= block_start: offsets only grow.
        *slot = u16::try_from(off.saturating_sub(block_start)).unwrap_or(u16::MAX);
        if next_block < layout.blocks && layout.block_start(next_block) == Some(p) {
            let r = u32::try_from(off).map_err(|_| TableError::TooShort("kallsyms_names"))?;
            let i = layout.rec_start.checked_add(next_block).ok_or_else(short)?;
            *keys.get_mut(i).ok_or_else(short)? = r;
            next_block = next_block.saturating_add(1);
        }
        off = skip_record(t, off).ok_or(TableError::BadNameRecord { pos: pos32(p) })?;
    }
    if next_block != layout.blocks {
        return Err(TableError::TooShort("kallsyms_offsets"));
    }
    // One past the last record: the end of the last block's records.
    let end = u32::try_from(off).map_err(|_| TableError::TooShort("kallsyms_names"))?;
    let i = layout
        .rec_start
        .checked_add(layout.blocks)
        .ok_or_else(short)?;
    *keys.get_mut(i).ok_or_else(short)? = end;
    // The key of every block's first symbol, then FAN keys above every
    // routed key, so that any FAN keys from a block on can be read.
    for b in 0..layout.blocks {
        let a = layout
            .block_start(b)
            .filter(|&p| p < n)
            .and_then(|p| t.sym_address(p))
            .ok_or(TableError::TooShort("kallsyms_offsets"))?;
        *keys.get_mut(b).ok_or_else(short)? = key_of(layout.lo, a);
    }
    keys.get_mut(layout.blocks..layout.slot_start)
        .ok_or_else(short)?
        .fill(u32::MAX);
    // Slot j: the last block whose key is not above j << shift (block 0's
    // key is 0); then the last block, the bound of the last slot.
    let last_block = layout.blocks.saturating_sub(1);
    let mut b = 0usize;
    for j in 0..layout.slots {
        let start = u64::try_from(j).map_err(|_| short())? << layout.shift.min(32);
        while b < last_block
            && keys
                .get(b.saturating_add(1))
                .is_some_and(|&k| u64::from(k) <= start)
        {
            b = b.saturating_add(1);
        }
        let i = layout.slot_start.checked_add(j).ok_or_else(short)?;
        *keys.get_mut(i).ok_or_else(short)? = u32::try_from(b).map_err(|_| short())?;
    }
    let i = layout
        .slot_start
        .checked_add(layout.slots)
        .ok_or_else(short)?;
    *keys.get_mut(i).ok_or_else(short)? = u32::try_from(last_block).map_err(|_| short())?;
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
        let w = self.window(t, addr)?;
        if w.routed && w.hi.checked_sub(w.lo) == Some(FAN) {
            return leaf_pos(t, s, w, addr);
        }
        let upper = match w.hi.checked_sub(w.lo) {
            Some(len) if len <= FAN => w.lo.saturating_add(count_addrs_le(t, w.lo, w.hi, addr)),
            _ => upper_bound(t, w.lo, w.hi, addr),
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
        // The end is the next address above `start`. For the block's last
        // symbol that is the next block's first address, which its key
        // gives without a load of the next line of `kallsyms_offsets`.
        // (Were that address `start`, the keys would have routed to the
        // next block; the test keeps wrong storage from giving a size of
        // 0.)
        let next = cand.saturating_add(1);
        let end = match w.next_addr {
            Some(a) if next == w.hi && a > start => a,
            _ => t.symbol_end(s, next, start, addr)?,
        };
        Some(SymbolPos {
            pos,
            size: end.wrapping_sub(start),
            offset: addr.wrapping_sub(start),
        })
    }

    /// The positions among which the answer for `addr` is the last one
    /// whose address is not above `addr`: the leaf block the keys route
    /// to, or the unindexed low positions, or the whole table for an
    /// address the keys cannot route. Starts the loads of the block's name
    /// records and deltas.
    #[inline]
    fn window(&self, t: &KallsymsTables<'_>, addr: u64) -> Option<Window> {
        let n = t.len();
        let l = &self.layout;
        let whole = |lo, hi| Window {
            lo,
            hi,
            next_addr: None,
            routed: false,
        };
        if addr < l.lo {
            // Below the first indexed symbol; position `first` is above
            // `addr`, so the window may stop before it.
            return Some(whole(0, l.first.min(n)));
        }
        let q = key_of(l.lo, addr);
        let Some(block) = self.route(q).filter(|_| q != u32::MAX) else {
            return Some(whole(0, n));
        };
        // block_start(block + 1) (lead < FAN: no underflow for a routed
        // block, which is below `blocks`), and block_start(block) FAN
        // before it but for block 0, with no checked arithmetic: wrong
        // storage may give a wrong window, which the loads still check.
        let nb = block.wrapping_add(1);
        let next_start = nb
            .wrapping_mul(FAN)
            .wrapping_add(l.first)
            .wrapping_sub(l.lead);
        let lo = if block == 0 {
            l.first
        } else {
            next_start.wrapping_sub(FAN)
        };
        if lo >= n {
            return None;
        }
        let hi = next_start.min(n);
        self.prefetch_block(t, block, lo, hi);
        // Level 0 starts the key storage: key `nb` is block nb's first
        // address, exact unless saturated.
        let next_addr = self
            .keys
            .get(nb)
            .filter(|_| nb < l.blocks)
            .filter(|&&k| k != u32::MAX)
            .map(|&k| l.lo.wrapping_add(u64::from(k)));
        Some(Window {
            lo,
            hi,
            next_addr,
            routed: true,
        })
    }

    /// Starts the loads of what the answer's name needs once its position
    /// in `lo..hi` (block `block`) is known: the block's name deltas (32
    /// bytes, which may straddle two lines) and the lines of its records
    /// in `kallsyms_names`. They then load beside the block's line of
    /// `kallsyms_offsets` instead of after it.
    #[inline(always)]
    fn prefetch_block(&self, t: &KallsymsTables<'_>, block: usize, lo: usize, hi: usize) {
        for p in [lo, hi.saturating_sub(1)] {
            if let Some(d) = self.name_delta.get(p) {
                prefetch_line(d);
            }
        }
        self.prefetch_records(t, block);
    }

    /// Starts the loads of the lines holding block `block`'s records, up
    /// to [`RECORD_LINES`] of them; returns the block's first record
    /// offset.
    #[inline(always)]
    fn prefetch_records(&self, t: &KallsymsTables<'_>, block: usize) -> Option<usize> {
        let r = self.layout.rec_start.checked_add(block)?;
        let r0 = usize::try_from(*self.keys.get(r)?).ok()?;
        let r1 = usize::try_from(*self.keys.get(r.checked_add(1)?)?).ok()?;
        // One touch per 64 bytes from the first record, and the last
        // record's last byte, whose line the steps may pass over.
        let mut off = r0;
        for _ in 0..RECORD_LINES {
            if off >= r1 {
                break;
            }
            if let Some(b) = t.names.get(off) {
                prefetch_line(b);
            }
            off = off.saturating_add(64);
        }
        if r1.saturating_sub(r0) <= RECORD_LINES.saturating_mul(64) {
            if let Some(b) = t.names.get(r1.saturating_sub(1)) {
                prefetch_line(b);
            }
        }
        Some(r0)
    }

    /// Byte offset of record `pos` in `kallsyms_names`, for a lookup that
    /// starts from a position, not an address (the name index): its
    /// block's lines of records are fetched at once and the offset walked
    /// from the block's first record (at most 15 records), so that the
    /// record costs one round of misses, not two (the delta's line, then
    /// the record's). Same answer as [`name_offset`](Self::name_offset).
    #[inline]
    pub fn name_offset_by_block(&self, t: &KallsymsTables<'_>, pos: usize) -> Option<usize> {
        let l = &self.layout;
        let Some(rel) = pos.checked_sub(l.first).filter(|_| pos < t.len()) else {
            return self.name_offset(t, pos);
        };
        let block = rel.checked_add(l.lead)? / FAN;
        let start = l.block_start(block)?;
        let mut off = self.prefetch_records(t, block)?;
        for _ in start..pos {
            off = skip_record(t, off)?;
        }
        Some(off)
    }

    /// The leaf block whose first key is the last one not above `q`;
    /// `None` when the storage does not route `q` (wrong storage: never
    /// for an index this module built).
    ///
    /// The radix slot of `q` bounds the block: not before the slot's
    /// block (whose key is not above the slot's first key, so not above
    /// `q`), not after the next slot's (every later key is above the next
    /// slot's first key). Where the two are less than `NEAR` apart, as
    /// they almost always are, the three keys after the first are
    /// compared at once; less than [`FAN`] apart, the FAN keys from the
    /// first one are ranked branchlessly (in both, the keys past the bound
    /// are above `q`, the padding included); a wider range, only in the
    /// densest address ranges, is binary-searched.
    /// So a lookup waits for two small loads, the slot and its keys, where
    /// a search tree waits for one node per level. Wrong storage gives a
    /// wrong block or `None`, never a panic.
    #[inline]
    fn route(&self, q: u32) -> Option<usize> {
        let l = &self.layout;
        let slot = usize::try_from(u64::from(q) >> l.shift.min(32))
            .unwrap_or(usize::MAX)
            .min(l.slots.checked_sub(1)?);
        let i = l.slot_start.wrapping_add(slot);
        let lo = usize::try_from(*self.keys.get(i)?).ok()?;
        let hi = usize::try_from(*self.keys.get(i.wrapping_add(1))?).ok()?;
        let keys = self.keys.get(lo..)?;
        let width = hi.wrapping_sub(lo);
        let rank = if width < NEAR {
            // The keys past the bound are above q: counting the NEAR - 1
            // after the first is exact, three independent compares.
            let [_, near @ ..] = keys.first_chunk::<NEAR>()?;
            count_where(near, |k| k <= q).wrapping_add(1)
        } else if width < FAN {
            rank_from_first(keys.first_chunk::<FAN>()?, |_, k| k <= q)
        } else {
            rank_keys_from_first(keys.get(..=width)?, q)
        };
        // The rank is at least 1 (the first key is not above q).
        Some(lo.wrapping_add(rank).wrapping_sub(1))
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
