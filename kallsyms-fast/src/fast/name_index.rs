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
use crate::tables::{KallsymsTables, TableError};

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
            bits += 1;
        }
        Self {
            bits,
            directory_words: (1usize << bits) + 1,
            entry_words: n,
        }
    }

    /// Extra bytes this index uses.
    pub fn bytes(&self) -> usize {
        (self.directory_words + self.entry_words) * 4
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
    let bucket = if bits == 0 {
        0
    } else {
        (h >> (64 - bits)) as usize
    };
    (bucket, (h as u32) & 0xff)
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
    if n > POS_MASK as usize + 1 {
        return Err(TableError::TooMany);
    }
    if directory.len() < layout.directory_words || entries.len() < n || hashes.len() < n {
        return Err(TableError::TooShort("index storage"));
    }
    let directory = &mut directory[..layout.directory_words];
    directory.iter_mut().for_each(|d| *d = 0);
    let mut name = NameBuf::new();
    let mut off = 0usize;
    // Hash every name in one walk, counting bucket sizes.
    for (pos, h) in hashes.iter_mut().take(n).enumerate() {
        off = tokens
            .expand(t, off, &mut name)
            .ok_or(TableError::BadNameRecord { pos: pos as u32 })?;
        *h = xxh3_64(name.as_bytes());
        let (b, _) = split_hash(*h, layout.bits);
        directory[b + 1] += 1;
    }
    for b in 1..directory.len() {
        directory[b] += directory[b - 1];
    }
    // Place entries in position order: stable within each bucket. The
    // directory entry b serves as the cursor and ends at the start of b + 1.
    for (pos, &h) in hashes.iter().take(n).enumerate() {
        let (b, tag) = split_hash(h, layout.bits);
        let slot = directory[b] as usize;
        entries[slot] = pos as u32 | tag << 24;
        directory[b] += 1;
    }
    // Shift the cursors back into starts.
    for b in (1..directory.len()).rev() {
        directory[b] = directory[b - 1];
    }
    directory[0] = 0;
    Ok(NameIndex {
        layout,
        directory,
        entries: &entries[..n],
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
        let end = *self.directory.get(b + 1)? as usize;
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
