//! Name -> address index hashed with xxh64.
//!
//! # Layout and cost
//!
//! Every symbol's expanded name is hashed by [`name_hash`] (xxh64, seed 0:
//! the kernel's own `lib/xxhash.c` in the kernel build). The top `bits` bits
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
//!
//! The same layout indexes one module's symtab for
//! `find_kallsyms_symbol_value()` ([`build_module_name_index`]): entries are
//! symtab indexes of the symbols that lookup can return (not `SHN_UNDEF`),
//! ascending, so the first match is the lowest index, the one the kernel's
//! linear scan stops at.

#[cfg(not(feature = "kernel-xxh64"))]
use xxhash_rust::xxh64::xxh64;

use crate::fast::addr_index::AddrIndex;
use crate::fast::expand::TokenSlots;
use crate::fast::prefetch::prefetch_line;
use crate::module::ModuleSymtab;
use crate::name::NameBuf;
use crate::tables::{pos32, KallsymsTables, TableError};

const POS_MASK: u32 = (1 << 24) - 1;

#[cfg(feature = "kernel-xxh64")]
extern "C" {
    /// `lib/xxhash.c` (`CONFIG_XXHASH`, `EXPORT_SYMBOL`):
    /// `u64 xxh64(const void *input, size_t length, u64 seed)`.
    fn xxh64(input: *const core::ffi::c_void, length: usize, seed: u64) -> u64;
}

/// The hash of a symbol name in every name index: xxh64 (the 64-bit
/// xxHash, not xxh3) of the name's bytes, seed 0.
///
/// With the `kernel-xxh64` feature (the kernel build) it calls the
/// kernel's `xxh64()` from `lib/xxhash.c`; otherwise
/// `xxhash_rust::xxh64::xxh64`. The two give the same value for every
/// input (`tests/tests/kernel_xxh64.rs` checks it against the kernel's C
/// compiled on the host), so an index hashes the same in both builds.
#[inline]
pub fn name_hash(name: &[u8]) -> u64 {
    #[cfg(feature = "kernel-xxh64")]
    // SAFETY: `xxh64()` reads exactly `length` bytes from `input` (none
    // when `length` is 0), which here are the bytes of `name`, live and
    // unchanged for the call; it keeps no pointer, writes no memory, takes
    // no lock and does not sleep, so any context may call it.
    let h = unsafe { xxh64(name.as_ptr().cast(), name.len(), 0) };
    #[cfg(not(feature = "kernel-xxh64"))]
    let h = xxh64(name, 0);
    h
}

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
        // The largest 2^bits <= n / 4: 4 to 8 symbols per bucket, at most
        // one directory byte per symbol.
        while bits < 24 && (8usize << bits) <= n {
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

/// Packs what the placing pass needs of one kept symbol into a scratch
/// word: its bucket (at most 24 bits) above its entry (`pos | tag << 24`).
#[inline]
fn scratch_key(h: u64, bits: u32, pos: usize) -> Option<u64> {
    let (bucket, tag) = split_hash(h, bits);
    let pos = u32::try_from(pos).ok().filter(|&p| p <= POS_MASK)?;
    Some(u64::try_from(bucket).ok()? << 32 | u64::from(pos | tag << 24))
}

/// Fills `directory` and `entries` from `keys` ([`scratch_key`] values in
/// ascending position order): a counting sort by bucket, stable, so each
/// bucket lists its symbols in ascending position.
fn place_entries(
    directory: &mut [u32],
    entries: &mut [u32],
    keys: &[u64],
) -> Result<(), TableError> {
    let short = TableError::TooShort("index storage");
    directory.fill(0);
    // Counts and sums stay <= keys.len() <= 2^24: the saturating adds
    // below never saturate.
    for &k in keys {
        let b = usize::try_from(k >> 32).map_err(|_| short)?;
        let count = directory.get_mut(b.saturating_add(1)).ok_or(short)?;
        *count = count.saturating_add(1);
    }
    let mut sum = 0u32;
    for d in directory.iter_mut() {
        sum = sum.saturating_add(*d);
        *d = sum;
    }
    // The directory entry b serves as the cursor and ends at the start of
    // b + 1.
    for &k in keys {
        let b = usize::try_from(k >> 32).map_err(|_| short)?;
        let cursor = directory.get_mut(b).ok_or(short)?;
        let slot = entries.get_mut(*cursor as usize).ok_or(short)?;
        // The low 32 bits: the entry.
        let [e0, e1, e2, e3, ..] = k.to_le_bytes();
        *slot = u32::from_le_bytes([e0, e1, e2, e3]);
        *cursor = cursor.saturating_add(1);
    }
    // Shift the cursors back into starts: entry b takes b - 1's, 0 gets 0.
    let mut prev = 0u32;
    for d in directory.iter_mut() {
        prev = core::mem::replace(d, prev);
    }
    Ok(())
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
    let (Some(directory), Some(entries), Some(keys)) = (
        directory.get_mut(..layout.directory_words),
        entries.get_mut(..n),
        hashes.get_mut(..n),
    ) else {
        return Err(short);
    };
    let mut name = NameBuf::new();
    let mut off = 0usize;
    // Hash every name in one walk of the records.
    for (pos, k) in keys.iter_mut().enumerate() {
        let bad = TableError::BadNameRecord { pos: pos32(pos) };
        off = tokens.expand(t, off, &mut name).ok_or(bad)?;
        *k =
            scratch_key(name_hash(name.as_bytes()), layout.bits, pos).ok_or(TableError::TooMany)?;
    }
    place_entries(directory, entries, keys)?;
    Ok(NameIndex {
        layout,
        directory,
        entries,
    })
}

/// Words of `entries` and of scratch [`build_module_name_index`] needs for
/// `symtab` (one per symtab entry); its layout is
/// `NameIndexLayout::for_len` of the same number.
pub fn module_name_index_capacity<S: ModuleSymtab + ?Sized>(symtab: &S) -> usize {
    symtab.num_symtab()
}

/// Builds the name index of one module's symtab: the symbols
/// `find_kallsyms_symbol_value()` can return, i.e. every entry that is not
/// `SHN_UNDEF` (empty names and mapping symbols included: that lookup does
/// not skip them), keyed by symtab index. `entries` and `keys` must hold
/// [`module_name_index_capacity`] words; the layout is
/// `NameIndexLayout::for_len` of that capacity.
///
/// Names are compared as the bytes [`ModuleSymtab::name`] returns. A
/// symtab that cuts long names short must cut them at a length no query
/// reaches (the kernel's glue reads at most `KSYM_NAME_LEN` bytes and
/// refuses queries that long to the stock code), or a query equal to the
/// cut name would match a longer one.
pub fn build_module_name_index<'a, S: ModuleSymtab + ?Sized>(
    symtab: &S,
    layout: NameIndexLayout,
    directory: &'a mut [u32],
    entries: &'a mut [u32],
    keys: &mut [u64],
) -> Result<NameIndex<'a>, TableError> {
    let n = symtab.num_symtab();
    if n > 1 << 24 {
        return Err(TableError::TooMany);
    }
    let short = TableError::TooShort("index storage");
    let (Some(directory), Some(keys)) = (
        directory.get_mut(..layout.directory_words),
        keys.get_mut(..n),
    ) else {
        return Err(short);
    };
    let mut kept = 0usize;
    for i in 0..n {
        if symtab.is_undef(i) {
            continue;
        }
        let k = keys.get_mut(kept).ok_or(short)?;
        *k = scratch_key(name_hash(symtab.name(i)), layout.bits, i).ok_or(TableError::TooMany)?;
        kept = kept.saturating_add(1);
    }
    let (keys, entries) = (
        keys.get(..kept).ok_or(short)?,
        entries.get_mut(..kept).ok_or(short)?,
    );
    place_entries(directory, entries, keys)?;
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

    /// The positions (symtab indexes, for a module) whose name may be
    /// `name`, ascending: the entries of its bucket whose tag matches.
    /// Empty for storage that does not fit the layout.
    fn candidates(&self, name: &[u8]) -> impl Iterator<Item = usize> + '_ {
        let (b, tag) = split_hash(name_hash(name), self.layout.bits);
        let start = self.directory.get(b).map_or(0, |&d| d as usize);
        let end = b
            .checked_add(1)
            .and_then(|b| self.directory.get(b))
            .map_or(0, |&d| d as usize);
        self.entries
            .get(start..end)
            .unwrap_or(&[])
            .iter()
            .filter(move |&&e| e >> 24 == tag)
            .map(|&e| (e & POS_MASK) as usize)
    }

    /// Address-order position of the symbol `kallsyms_lookup_name()` would
    /// pick for `name`, if the core table has one (what
    /// [`FastCore::lookup_name`](crate::fast::FastCore::lookup_name)
    /// calls).
    ///
    /// Each candidate's record is expanded into `scratch` through the
    /// token slots and compared whole, as the kernel compares its
    /// expanded `namebuf`: a name past `KSYM_NAME_LEN - 1` bytes is cut
    /// where the kernel cuts it. Expanding costs one 16-byte copy per
    /// token; a compare per token (a `memcmp` call each) cost a third
    /// more instructions per lookup, and the tag leaves almost no
    /// candidate that does not match.
    pub fn lookup(
        &self,
        t: &KallsymsTables<'_>,
        addr: &AddrIndex<'_>,
        tokens: &TokenSlots,
        name: &[u8],
        scratch: &mut NameBuf,
    ) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        let (buf, _) = scratch.raw_mut();
        for pos in self.candidates(name) {
            // A match is read for its address next: start that line's
            // load now, beside the record's.
            if let Some(o) = t.offsets.get(pos) {
                prefetch_line(o);
            }
            let off = addr.name_offset_by_block(t, pos)?;
            let (_, n) = tokens.expand_into(t, off, buf)?;
            if buf.get(..n)? == name {
                return Some(pos);
            }
        }
        None
    }

    /// `__find_kallsyms_symbol_value()` through a module's name index
    /// (built by [`build_module_name_index`] over `symtab`): the lowest
    /// symtab index whose name is `name` and which is not `SHN_UNDEF`.
    /// The kernel returns that symbol's value, 0 when there is none.
    pub fn lookup_module<S: ModuleSymtab + ?Sized>(
        &self,
        symtab: &S,
        name: &[u8],
    ) -> Option<usize> {
        self.candidates(name)
            .find(|&i| !symtab.is_undef(i) && symtab.name(i) == name)
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

#[cfg(test)]
mod tests {
    use super::{name_hash, NameIndexLayout};

    /// The hash is xxh64 with seed 0: the reference values of the xxHash
    /// specification (`XXH64("", 0)`, `XXH64("abc", 0)`), which the
    /// kernel's `lib/xxhash.c` gives too.
    #[test]
    fn name_hash_is_xxh64_seed_0() {
        assert_eq!(name_hash(b""), 0xef46_db37_51d8_e999);
        assert_eq!(name_hash(b"abc"), 0x44bc_2cf5_ad77_0999);
    }

    /// The largest power of two at most n / 4 (one bucket below 8).
    #[test]
    fn buckets_are_at_most_a_quarter_of_the_symbols() {
        for (n, bits) in [
            (0, 0),
            (7, 0),
            (8, 1),
            (15, 1),
            (16, 2),
            (34_307, 13),
            (65_536, 14),
        ] {
            let l = NameIndexLayout::for_len(n);
            assert_eq!(l.bits, bits, "{n} symbols");
            assert!(l.bytes() <= 4 * n + 4 * (n / 4).max(1) + 4, "{n} symbols");
        }
    }
}
