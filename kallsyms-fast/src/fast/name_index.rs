//! Name -> address index hashed with xxh3.
//!
//! # Layout and cost
//!
//! Every symbol's expanded name is hashed with `xxh3_64`. The top `bits` bits
//! pick one of `2^bits` buckets (`2^bits` is the largest power of two at
//! most `n / 4`, four to eight symbols per bucket); `directory[b]..directory[b + 1]`
//! is the bucket's slice of `entries`. An entry is `pos | tag << 24`: the
//! symbol's address-order position (24 bits, as `kallsyms_seqs_of_names`
//! limits tables to 2^24 symbols) and 8 more hash bits that reject almost
//! every non-matching candidate before its name is compared.
//!
//! Entries in a bucket are in ascending position order, so the first match
//! is the lowest address, then the earliest alias: the symbol the kernel's
//! `kallsyms_lookup_name()` returns (names sort by name, then address, then
//! position). Memory: 4 bytes per symbol plus 4 bytes per bucket, at most
//! 5 bytes per symbol.

use xxhash_rust::xxh3::xxh3_64;

use crate::fast::addr_index::AddrIndex;
use crate::fast::expand::TokenSlots;
use crate::name::{name_equals, NameBuf};
use crate::tables::{pos32, KallsymsTables, TableError};

const POS_MASK: u32 = (1 << 24) - 1;

/// Sizes of the storage a [`NameIndex`] needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameIndexLayout {
    /// `log2` of the bucket count.
    pub bits: u32,
    /// `u32` words of the directory (buckets + 1).
    pub directory_words: usize,
    /// `u32` words of entries (one per symbol).
    pub entry_words: usize,
}

impl NameIndexLayout {
    /// Layout for a table of `n` symbols.
    pub fn for_len(n: usize) -> Self {
        let mut bits = 0u32;
        while bits < 24 && (2usize << bits) <= n / 2 {
            bits = bits.saturating_add(1);
        }
        Self {
            bits,
            // bits <= 24: no saturation.
            directory_words: (1usize << bits).saturating_add(1),
            entry_words: n,
        }
    }

    /// Extra bytes this index uses.
    pub fn bytes(&self) -> usize {
        self.directory_words
            .saturating_add(self.entry_words)
            .saturating_mul(4)
    }
}

/// The name index, borrowing its storage.
#[derive(Clone, Copy, Debug)]
pub struct NameIndex<'a> {
    layout: NameIndexLayout,
    directory: &'a [u32],
    entries: &'a [u32],
}

#[inline]
fn split_hash(h: u64, bits: u32) -> (usize, u32) {
    // The top `bits` bits (none for one bucket: a shift by 64); a layout
    // with more than 64 bits gives a bucket past the directory, which the
    // callers' `get` refuses. The tag is the low byte.
    let top = h.checked_shr(u64::BITS.saturating_sub(bits)).unwrap_or(0);
    let bucket = usize::try_from(top).unwrap_or(usize::MAX);
    (bucket, u32::from(h.to_le_bytes()[0]))
}

/// Builds the index for a validated table, expanding names through
/// `tokens`. `hashes` is scratch space of one `u64` per symbol.
pub fn build_name_index<'a>(
    t: &KallsymsTables<'_>,
    layout: NameIndexLayout,
    tokens: &TokenSlots,
    directory: &'a mut [u32],
    entries: &'a mut [u32],
    hashes: &mut [u64],
) -> Result<NameIndex<'a>, TableError> {
    let n = t.len();
    if n > 1 << 24 {
        return Err(TableError::TooMany);
    }
    let short = TableError::TooShort("index storage");
    let (Some(directory), Some(entries), Some(hashes)) = (
        directory.get_mut(..layout.directory_words),
        entries.get_mut(..n),
        hashes.get_mut(..n),
    ) else {
        return Err(short);
    };
    directory.fill(0);
    let mut name = NameBuf::new();
    let mut off = 0usize;
    // Hash every name in one walk, counting bucket sizes. Counts and
    // sums stay <= n <= 2^24: the saturating adds below never saturate.
    for (pos, h) in hashes.iter_mut().enumerate() {
        off = tokens
            .expand(t, off, &mut name)
            .ok_or(TableError::BadNameRecord { pos: pos32(pos) })?;
        *h = xxh3_64(name.as_bytes());
        let (b, _) = split_hash(*h, layout.bits);
        let count = directory.get_mut(b.saturating_add(1)).ok_or(short)?;
        *count = count.saturating_add(1);
    }
    let mut sum = 0u32;
    for d in directory.iter_mut() {
        sum = sum.saturating_add(*d);
        *d = sum;
    }
    // Place entries in position order: stable within each bucket. The
    // directory entry b serves as the cursor and ends at the start of b + 1.
    for (pos, &h) in hashes.iter().enumerate() {
        let (b, tag) = split_hash(h, layout.bits);
        let cursor = directory.get_mut(b).ok_or(short)?;
        let slot = entries.get_mut(*cursor as usize).ok_or(short)?;
        *slot = pos32(pos) | tag << 24;
        *cursor = cursor.saturating_add(1);
    }
    // Shift the cursors back into starts: entry b takes b - 1's, 0 gets 0.
    let mut prev = 0u32;
    for d in directory.iter_mut() {
        prev = core::mem::replace(d, prev);
    }
    Ok(NameIndex {
        layout,
        directory,
        entries,
    })
}

impl<'a> NameIndex<'a> {
    /// Layout of this index.
    pub fn layout(&self) -> &NameIndexLayout {
        &self.layout
    }

    /// Address-order position of the symbol `kallsyms_lookup_name()` would
    /// pick for `name`, if the core table has one.
    pub fn lookup(
        &self,
        t: &KallsymsTables<'_>,
        addr: &AddrIndex<'_>,
        name: &[u8],
    ) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        let (b, tag) = split_hash(xxh3_64(name), self.layout.bits);
        let start = *self.directory.get(b)? as usize;
        let end = *self.directory.get(b.checked_add(1)?)? as usize;
        for &e in self.entries.get(start..end)? {
            if e >> 24 != tag {
                continue;
            }
            let pos = (e & POS_MASK) as usize;
            let off = addr.name_offset(t, pos)?;
            if name_equals(t, off, name)? {
                return Some(pos);
            }
        }
        None
    }
}

impl<'a> NameIndex<'a> {
    /// Re-borrows storage that [`build_name_index`] filled with `layout`.
    /// Wrong storage gives wrong answers, never a panic.
    pub fn from_parts(layout: NameIndexLayout, directory: &'a [u32], entries: &'a [u32]) -> Self {
        Self {
            layout,
            directory,
            entries,
        }
    }
}
