//! The wchan cache: a small, fixed-capacity, set-associative LRU from an
//! address to the symbol name `/proc/PID/wchan` prints for it.
//!
//! # Why a cache
//!
//! `top` and `ps` read every task's wchan on every refresh, and most tasks
//! sleep in a few dozen functions (`do_epoll_wait`, `futex_wait_queue`,
//! `schedule_hrtimeout_range`, ...): the same addresses resolve again and
//! again. A hit costs one hash, one 64-byte line and a copy of the name
//! (two or three lines for a name of more than [`SHORT_NAME_MAX`] bytes).
//!
//! # Concurrency: a seqcount per entry
//!
//! Many CPUs read wchan at once, so a hit must not write shared memory.
//! Every entry is one cache line guarded by its own sequence count: readers
//! load the count, the fields, then the count again, and accept the entry
//! only if the count was even and unchanged (no locks, no stores). A writer
//! claims the entry by moving the count from even to odd with a
//! compare-and-swap; a writer that loses the race simply does not insert
//! (a cache may drop entries). Per-CPU slots would avoid the rare write
//! contention too, but would multiply the memory by the CPU count and make
//! every CPU miss once per address; the shared table warms once for all.
//!
//! # Staleness: a generation number
//!
//! Module load and unload call [`WchanCache::invalidate`], which bumps a
//! 64-bit generation. A lookup snapshots the generation *before* it resolves
//! an address and inserts its answer under that snapshot, so an answer
//! computed against an older module set can never be returned after the
//! bump: entries whose generation differs from the current one are misses.
//!
//! # Replacement: not recently used, an LRU approximation
//!
//! Each entry has a referenced bit. A hit sets it only if it is clear, so a
//! hot entry costs no store at all in the steady state, whatever else is
//! inserted. An insert takes the first empty or stale way of the set (in
//! the address's probe order, below), else
//! the first way not referenced since it was inserted or since the set's
//! bits were last cleared, reading the bits without writing them; only
//! when every way of the set is referenced does it clear them all and evict
//! the way at a rotating hand. A name looked up once (a task sleeping
//! somewhere unusual) so takes the place of another such name, not of a hot
//! entry: an entry used since it was inserted survives every insert until
//! all of its set is in use. (Not CLOCK, second chance: its eviction scan
//! clears the bits of the hot entries it passes, so a stream of one-off
//! names evicts hot ones. Not a true LRU with per-hit timestamps: with a
//! cold tail every insert forces the next hit on each hot entry to store,
//! which across CPUs means bouncing lines.)
//!
//! # Probe order: each address's own first way
//!
//! Two bits of an address's hash choose the way its probe starts from,
//! and its insert scans the ways in the same order, so an address usually
//! sits in the first way it probes: a hit compares one key, and the
//! branch that tests it goes the same way for every hot address. Were
//! every set probed from way 0, the way a hot address sits in would
//! depend on the order the set was filled, and that branch would go one
//! way for some hot addresses and the other way for others, so a stream
//! of hot addresses would mispredict it far more often (callgrind's
//! branch model counts it: `valgrind --tool=callgrind --branch-sim=yes`
//! on `kallsyms-bench profile --stream wchan-hot --algo cached`).
//!
//! # Admission: names are cached on their second miss
//!
//! Most names a wchan read misses on are one-offs (a task sleeping
//! somewhere unusual, the cold tenth of the benchmark's wchan mix), and
//! an insert is the dearest part of a miss after the lookup itself: the
//! compare-exchange that claims the entry and the lines it writes
//! (about a tenth of the time over the wchan mix, `perf record -e
//! cpu-clock` on `kallsyms-bench profile --stream wchan --algo cached`).
//! So a miss inserts through [`WchanCache::insert_after_miss`], which
//! first asks a small direct-mapped table of tags, the admission filter,
//! whether the address missed recently: only an address that missed
//! before (its tag still in its slot) is inserted; a first miss leaves its
//! tag with a plain store. A hot address so costs
//! one miss more, once; a one-off costs a load and a store instead of an
//! insert, and evicts nothing.
//!
//! There are no hit/miss counters: a shared counter would be a store to
//! one line from every CPU on every hit, the contention this design avoids.
//!
//! # Long names: more lines
//!
//! An entry is three 64-byte lines: the first holds the sequence count,
//! the name's length, the key, the generation and a name of up to
//! [`SHORT_NAME_MAX`] bytes;
//! the second, read and written only for a longer name, the rest of one
//! of up to [`MEDIUM_NAME_MAX`]; the third, only for a name longer still,
//! the rest of one of up to [`CACHE_NAME_MAX`]. Why three: one line
//! holds 39 bytes, and one text symbol in twenty has a longer name (5.2%
//! of the 121k of a 6.18 x86_64 `/proc/kallsyms`; 0.15% are longer than
//! 55 bytes, none than 103): with one line per entry, three of the 64 hot
//! functions of the benchmark's wchan mix are never cached, 13% of all
//! its lookups. Two lines hold 103, and Rust-enabled kernels (the only
//! ones the shim loads into) have longer v0-mangled names: 84 of the
//! 21,580 text symbols of the UML 7.3 test kernel, 3 longer than 167 (the
//! longest 324); with two lines, one of the in-kernel benchmark's 64 hot
//! functions there, a name of 125 bytes, misses on every lookup. Names
//! longer than [`CACHE_NAME_MAX`] bytes are not cached (the lookup is
//! still answered, from the index).

use core::sync::atomic::{fence, AtomicU16, AtomicU32, AtomicU64, Ordering};

/// Longest name an entry holds: twenty-one words less its NUL.
pub const CACHE_NAME_MAX: usize = NAME_WORDS * 8 - 1;

/// Longest name an entry's first two lines hold: thirteen words less its
/// NUL. A hit on such a name reads no third line.
pub const MEDIUM_NAME_MAX: usize = MEDIUM_WORDS * 8 - 1;

/// Longest name an entry's first line holds: five words less its NUL.
/// A hit on such a name reads and writes no more.
pub const SHORT_NAME_MAX: usize = SHORT_WORDS * 8 - 1;

/// Name words of an entry: five in its first line, eight in each of its
/// second and third.
const NAME_WORDS: usize = 21;

/// Name words in an entry's first line.
const SHORT_WORDS: usize = 5;

/// Name words in an entry's first two lines.
const MEDIUM_WORDS: usize = 13;

/// Name words a name of `len` bytes occupies, with its NUL: the lines
/// its length needs, the only ones [`WchanCache::insert`] writes and
/// [`WchanCache::get_into`] reads for it.
#[inline]
const fn name_words(len: usize) -> usize {
    if len > MEDIUM_NAME_MAX {
        NAME_WORDS
    } else if len > SHORT_NAME_MAX {
        MEDIUM_WORDS
    } else {
        SHORT_WORDS
    }
}

/// A name copied out of the cache; it derefs to the name's bytes.
///
/// # Invariants
///
/// `len <= CACHE_NAME_MAX`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CachedName {
    bytes: [u8; CACHE_NAME_MAX],
    len: u8,
}

impl CachedName {
    /// The name in `bytes`, or `None` when it is longer than an entry holds.
    pub fn new(name: &[u8]) -> Option<Self> {
        let mut bytes = [0u8; CACHE_NAME_MAX];
        bytes.get_mut(..name.len())?.copy_from_slice(name);
        // `name.len() <= CACHE_NAME_MAX < 256`: the invariant holds.
        Some(Self {
            bytes,
            len: u8::try_from(name.len()).ok()?,
        })
    }
}

impl core::ops::Deref for CachedName {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // Never `&[]` by the invariant.
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

impl core::fmt::Debug for CachedName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "CachedName({:?})", core::str::from_utf8(self))
    }
}

/// Size of an entry's name area (the name and at least one NUL), and so
/// the most bytes [`WchanCache::get_into`] writes (the name, its NUL and
/// padding) and the least it needs: 168.
pub const RAW_NAME_LEN: usize = NAME_WORDS * 8;

/// Bytes [`WchanCache::get_into`] writes for a name of up to
/// [`SHORT_NAME_MAX`] bytes.
pub const SHORT_NAME_LEN: usize = SHORT_WORDS * 8;

/// An entry's name words (little-endian: the name, zero padded; its
/// length is in the entry's header) go into a reader's buffer as they
/// are, up to the end of the name's last line ([`SHORT_NAME_LEN`] bytes
/// for a short name, [`RAW_NAME_LEN`] for a long one). The name ends in a
/// NUL at its length because [`WchanCache::insert`], the only writer,
/// zero-pads it to the end of the lines it writes, and a name always
/// leaves a byte of them for its NUL (tested by
/// `get_into_writes_the_name_and_its_nul`).
///
/// This writes the first line's five words: five load-store pairs, each
/// word stored as soon as it is loaded (one register, not five).
#[inline]
fn copy_first_line(w: [&AtomicU64; SHORT_WORDS], dst: &mut [u8; RAW_NAME_LEN]) {
    let [w0, w1, w2, w3, w4] = w;
    // Straight-line stores: iterators stay out-of-line calls at
    // opt-level=s.
    if let Some([c0, c1, c2, c3, c4]) = short_chunks(dst) {
        *c0 = w0.load(Ordering::Relaxed).to_le_bytes();
        *c1 = w1.load(Ordering::Relaxed).to_le_bytes();
        *c2 = w2.load(Ordering::Relaxed).to_le_bytes();
        *c3 = w3.load(Ordering::Relaxed).to_le_bytes();
        *c4 = w4.load(Ordering::Relaxed).to_le_bytes();
    }
}

/// The words past the first line of a long name into `dst` past
/// [`SHORT_NAME_LEN`], up to [`RAW_NAME_LEN`], as [`copy_first_line`]
/// copies the first: the first `used` of `long` (the second line's eight,
/// or all sixteen for a name over [`MEDIUM_NAME_MAX`] bytes), then zeros
/// (padding: a medium name's third line may hold a longer name's bytes,
/// and is not read). A loop: long names are rare. Inline all the same:
/// a call would make every hit save the registers live across it. Not
/// `chunks_mut()`, whose panic path objtool would flag (see `insert`).
#[inline]
fn copy_long_lines(long: &[AtomicU64], used: usize, dst: &mut [u8; RAW_NAME_LEN]) {
    let mut out: &mut [u8] = dst.get_mut(SHORT_NAME_LEN..).unwrap_or(&mut []);
    for (i, a) in long.iter().enumerate() {
        let Some((c, tail)) = core::mem::take(&mut out).split_first_chunk_mut::<8>() else {
            break;
        };
        let w = if i < used {
            a.load(Ordering::Relaxed)
        } else {
            0
        };
        *c = w.to_le_bytes();
        out = tail;
    }
}

/// The first [`SHORT_NAME_LEN`] bytes of `dst` as five 8-byte chunks:
/// `as_chunks_mut::<8>()` without the rest (rustc 1.88; the kernel's
/// minimum is 1.78). Every length is a constant, so it always succeeds
/// and, inlined, is no code at all.
#[inline]
fn short_chunks(dst: &mut [u8; RAW_NAME_LEN]) -> Option<[&mut [u8; 8]; SHORT_WORDS]> {
    let (c0, rest) = dst.split_first_chunk_mut::<8>()?;
    let (c1, rest) = rest.split_first_chunk_mut::<8>()?;
    let (c2, rest) = rest.split_first_chunk_mut::<8>()?;
    let (c3, rest) = rest.split_first_chunk_mut::<8>()?;
    let (c4, _) = rest.split_first_chunk_mut::<8>()?;
    Some([c0, c1, c2, c3, c4])
}

/// One entry: exactly three 64-byte cache lines, the second and third
/// used by long names only.
#[repr(C, align(64))]
struct Entry {
    seq: AtomicU32,
    referenced: AtomicU16,
    /// The name's length, at most [`CACHE_NAME_MAX`] when the sequence
    /// count vouches for it.
    len: AtomicU16,
    key: AtomicU64,
    generation: AtomicU64,
    /// The name, little-endian packed and zero padded. The words past
    /// [`SHORT_WORDS`] (the second line) hold a name only when its length
    /// is above [`SHORT_NAME_MAX`], those past [`MEDIUM_WORDS`] (the
    /// third) when it is above [`MEDIUM_NAME_MAX`].
    name: [AtomicU64; NAME_WORDS],
}

// The array initialisers below repeat named constants: an inline
// `const { }` block is rustc 1.79, and the kernel's minimum is 1.78. Each
// array element is a fresh value; the constants are never borrowed.
impl Entry {
    /// A fresh entry.
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Self = Self::new();
    /// A zero name word.
    #[allow(clippy::declare_interior_mutable_const)]
    const ZERO_WORD: AtomicU64 = AtomicU64::new(0);

    const fn new() -> Self {
        Self {
            seq: AtomicU32::new(0),
            referenced: AtomicU16::new(0),
            len: AtomicU16::new(0),
            key: AtomicU64::new(0),
            // Generation 0 is never current (the cache starts at 1), so a
            // fresh entry is a miss.
            generation: AtomicU64::new(0),
            name: [Self::ZERO_WORD; NAME_WORDS],
        }
    }
}

/// A cache of `SETS * WAYS` entries (`SETS` a power of two).
///
/// # Examples
///
/// The wchan path: snapshot the generation, resolve on a miss, insert
/// under the snapshot. A module load or unload in between makes the
/// answer stale, and it is neither stored nor served.
///
/// ```
/// use kallsyms_fast::cache::DefaultWchanCache;
///
/// let cache = DefaultWchanCache::new();
/// let addr = 0xffff_ffff_8123_4567;
/// assert!(cache.get(addr).is_none());
///
/// let generation = cache.generation();
/// // ... resolve addr: "do_nanosleep" ...
/// assert!(cache.insert(addr, generation, b"do_nanosleep"));
/// assert_eq!(cache.get(addr).as_deref(), Some(&b"do_nanosleep"[..]));
///
/// // A module unloads while another reader resolves against the old set.
/// let before = cache.generation();
/// cache.invalidate();
/// assert!(cache.get(addr).is_none());
/// assert!(!cache.insert(addr, before, b"stale_name"));
/// assert!(cache.get(addr).is_none());
///
/// // Names past CACHE_NAME_MAX bytes are answered from the index, never
/// // cached.
/// let long = [b'x'; kallsyms_fast::cache::CACHE_NAME_MAX + 1];
/// assert!(!cache.insert(addr, cache.generation(), &long));
/// ```
pub struct WchanCache<const SETS: usize, const WAYS: usize> {
    sets: [[Entry; WAYS]; SETS],
    generation: AtomicU64,
    clock: AtomicU32,
    /// Admission filter: slot `i` holds the tag of the last address whose
    /// miss hashed to it (odd), or 0.
    seen: [AtomicU32; SEEN_SLOTS],
}

impl<const SETS: usize, const WAYS: usize> Default for WchanCache<SETS, WAYS> {
    fn default() -> Self {
        Self::new()
    }
}

/// Slots of the admission filter, `1 << SEEN_BITS`: 4 KiB of tags.
const SEEN_SLOTS: usize = 1 << SEEN_BITS;

/// Bits of an address's hash that choose its admission filter slot.
const SEEN_BITS: u32 = 10;

/// The default geometry: 64 sets of 4 ways, 256 entries, 48 KiB, and the
/// 4 KiB admission filter.
pub type DefaultWchanCache = WchanCache<64, 4>;

/// The multiplier of the hash that picks an address's set and first way
/// (Fibonacci hashing: 2^64 over the golden ratio).
const SET_HASH: u64 = 0x9E37_79B9_7F4A_7C15;

/// The multiplier of the admission filter's hash: another odd constant,
/// so that an address's filter slot does not follow from its set.
const SEEN_HASH: u64 = 0xD6E8_FEB8_6659_FD93;

/// An address's hash under `multiplier`: its low two bits (always zero
/// for a return address on most architectures) dropped, the rest
/// multiplied, so that the top bits depend on all of them.
#[inline(always)]
fn hash(addr: u64, multiplier: u64) -> u64 {
    (addr >> 2).wrapping_mul(multiplier)
}

/// The top `bits` bits of `h`, an index below `1 << bits` (0 for
/// `bits == 0`: the shift by 64 that would give it is `None`).
#[inline(always)]
fn top_bits(h: u64, bits: u32) -> usize {
    let top = h.checked_shr(u64::BITS.saturating_sub(bits)).unwrap_or(0);
    usize::try_from(top).unwrap_or(0)
}

impl<const SETS: usize, const WAYS: usize> WchanCache<SETS, WAYS> {
    const SET_BITS: u32 = {
        assert!(SETS.is_power_of_two() && WAYS > 0);
        SETS.trailing_zeros()
    };

    /// A `seen` slot that matches no tag (every tag is odd).
    #[allow(clippy::declare_interior_mutable_const)]
    const NOT_SEEN: AtomicU32 = AtomicU32::new(0);

    /// A set of fresh entries (see [`Entry::EMPTY`]).
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY_SET: [Entry; WAYS] = [Entry::EMPTY; WAYS];

    /// An empty cache.
    pub const fn new() -> Self {
        let _ = Self::SET_BITS;
        Self {
            sets: [Self::EMPTY_SET; SETS],
            generation: AtomicU64::new(1),
            clock: AtomicU32::new(1),
            seen: [Self::NOT_SEEN; SEEN_SLOTS],
        }
    }

    /// The current generation; snapshot it before resolving an address and
    /// pass it to [`insert`](Self::insert).
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Makes every entry stale (module load or unload).
    pub fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// The set of `addr` and the way its probe and its insert start from.
    #[inline]
    fn set_of(&self, addr: u64) -> (&[Entry; WAYS], usize) {
        let h = hash(addr, SET_HASH);
        let idx = top_bits(h, Self::SET_BITS);
        // Two bits of the hash's middle, not the set's, choose the first
        // way.
        let below = h.checked_shl(Self::SET_BITS).unwrap_or(0) >> 32;
        let first = usize::try_from(below)
            .unwrap_or(0)
            .checked_rem(WAYS)
            .unwrap_or(0);
        // idx < SETS by construction; `get` keeps the no-panic rule.
        (self.sets.get(idx).unwrap_or(&self.sets[0]), first)
    }

    /// Way `i` of `set` in the order that starts at `first` and wraps.
    /// Each address probes and inserts in its own such order, so it
    /// usually sits in the first way it probes (see "Probe order").
    #[inline(always)]
    fn way(set: &[Entry; WAYS], first: usize, i: usize) -> Option<&Entry> {
        set.get(first.wrapping_add(i).checked_rem(WAYS).unwrap_or(0))
    }

    /// The admission filter's slot for `addr`, and its tag there.
    #[inline]
    fn seen_slot(addr: u64) -> (usize, u32) {
        let h = hash(addr, SEEN_HASH);
        // Odd, so never a fresh slot's 0.
        let tag = u32::try_from(h >> 32).unwrap_or(0) | 1;
        (top_bits(h, SEEN_BITS), tag)
    }

    /// After a miss on `addr`, resolved while the generation was
    /// `generation`: inserts the name `name` gives when `addr` missed
    /// recently before (see "Admission"), and returns whether it was
    /// inserted, as [`insert`](Self::insert). On a first miss it only
    /// leaves `addr`'s tag in the admission filter and never calls `name`,
    /// so a caller that must still measure the name (the kernel's
    /// NUL-terminated buffer) does so only for a name it will insert.
    #[inline]
    pub fn insert_after_miss<'n>(
        &self,
        addr: u64,
        generation: u64,
        name: impl FnOnce() -> Option<&'n [u8]>,
    ) -> bool {
        if !self.admit(addr) {
            return false;
        }
        name().is_some_and(|n| self.insert(addr, generation, n))
    }

    /// Whether a miss on `addr` should insert its name: true when `addr`
    /// missed recently before, its tag still in its slot of the admission
    /// filter; false on a first miss, which leaves its tag there. A load
    /// and, on a first miss, a plain store: two CPUs racing on one slot
    /// may lose a tag, which costs a miss more, never a wrong answer.
    #[inline]
    fn admit(&self, addr: u64) -> bool {
        let (i, tag) = Self::seen_slot(addr);
        let Some(slot) = self.seen.get(i) else {
            return true;
        };
        if slot.load(Ordering::Relaxed) == tag {
            return true;
        }
        slot.store(tag, Ordering::Relaxed);
        false
    }

    /// The cached name for `addr`, if present and current.
    #[inline]
    pub fn get(&self, addr: u64) -> Option<CachedName> {
        let mut buf = [0u8; RAW_NAME_LEN];
        let len = self.get_into(addr, &mut buf)?;
        CachedName::new(buf.get(..len)?)
    }

    /// The cached name for `addr` written at the start of `buf` as
    /// `lookup_symbol_name()` leaves its buffer: the name, then NUL bytes
    /// up to [`SHORT_NAME_LEN`] (a name of up to [`SHORT_NAME_MAX`] bytes)
    /// or [`RAW_NAME_LEN`] (a longer one); returns the name's length.
    /// `None` on a miss, and when `buf` is shorter than [`RAW_NAME_LEN`]
    /// bytes (nothing is written then).
    ///
    /// This is the wchan hot path: the entry's words go straight into
    /// `buf` as they are, five 8-byte loads and stores for a short name
    /// (the length is in the entry's header, not before the name: no
    /// shifts). No intermediate array and no call to `memcpy`, which the
    /// kernel's
    /// size-optimised builds (`-Copt-level=s`) never inline and which
    /// costs more than the rest of a hit under emulation.
    ///
    /// A miss writes nothing, but for one case: when a writer changed the
    /// entry for `addr` while it was being read, what was read has been
    /// written and the first byte set back to 0 (an empty name).
    #[inline]
    pub fn get_into(&self, addr: u64, buf: &mut [u8]) -> Option<usize> {
        let dst = buf.first_chunk_mut::<RAW_NAME_LEN>()?;
        let generation = self.generation();
        let (set, first) = self.set_of(addr);
        // Find the way first, copy after: one copy in the code, not one per
        // way, which keeps the hit's registers few (no spills, no saved
        // registers in a caller that inlines it).
        let (e, s1) = (0..WAYS).find_map(|i| {
            let e = Self::way(set, first, i)?;
            let s1 = e.seq.load(Ordering::Acquire);
            // A torn key can only cause a false miss here, or a false match
            // that the sequence re-check below rejects.
            let hit = s1 & 1 == 0
                && e.key.load(Ordering::Relaxed) == addr
                && e.generation.load(Ordering::Relaxed) == generation;
            hit.then_some((e, s1))
        })?;
        // Five straight loads and stores: a loop or `map` stays a loop
        // through the stack at opt-level=s. The words go straight into
        // `dst`, none through an array on the stack. The other lines only
        // for a long name (a torn length may read them for nothing: the
        // re-check below rejects the entry then).
        let len = usize::from(e.len.load(Ordering::Relaxed)).min(CACHE_NAME_MAX);
        let [a0, a1, a2, a3, a4, long @ ..] = &e.name;
        copy_first_line([a0, a1, a2, a3, a4], dst);
        if len > SHORT_NAME_MAX {
            copy_long_lines(long, name_words(len).saturating_sub(SHORT_WORDS), dst);
        }
        fence(Ordering::Acquire);
        // An unchanged even count: no writer ran since `s1`, so the key and
        // generation read above are the entry's. A changed one is a miss
        // (the caller resolves the address), as when the writer had not
        // begun.
        if e.seq.load(Ordering::Relaxed) != s1 {
            dst[0] = 0;
            return None;
        }
        if e.referenced.load(Ordering::Relaxed) == 0 {
            e.referenced.store(1, Ordering::Relaxed);
        }
        Some(len)
    }

    /// Inserts `name` for `addr`, computed while the generation was
    /// `generation`. Returns whether the entry was written (it is not when
    /// the name is too long, the generation is already stale, or another
    /// writer holds the victim entry).
    pub fn insert(&self, addr: u64, generation: u64, name: &[u8]) -> bool {
        if name.len() > CACHE_NAME_MAX || generation != self.generation() {
            return false;
        }
        let (set, first) = self.set_of(addr);
        let current = self.generation();
        let mut victim: Option<&Entry> = None;
        let mut unreferenced: Option<&Entry> = None;
        for e in (0..WAYS).filter_map(|i| Self::way(set, first, i)) {
            let eg = e.generation.load(Ordering::Relaxed);
            if eg == current && e.key.load(Ordering::Relaxed) == addr {
                // Already present (another CPU was faster).
                return false;
            }
            if eg != current && victim.is_none() {
                victim = Some(e);
            }
            if unreferenced.is_none() && e.referenced.load(Ordering::Relaxed) == 0 {
                unreferenced = Some(e);
            }
        }
        let victim = match victim.or(unreferenced) {
            Some(e) => Some(e),
            None => {
                // Every way used since the last clear: a new round, and the
                // way at a rotating hand goes. The hand wraps at 2^32 by
                // design: only its residue matters.
                for e in set {
                    e.referenced.store(0, Ordering::Relaxed);
                }
                let hand = self.clock.fetch_add(1, Ordering::Relaxed) as usize;
                set.get(hand.checked_rem(WAYS).unwrap_or(0))
            }
        };
        let Some(e) = victim else { return false };
        let s = e.seq.load(Ordering::Relaxed);
        if s & 1 != 0
            || e.seq
                .compare_exchange(s, s.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        fence(Ordering::Release);
        let mut bytes = [0u8; NAME_WORDS * 8];
        // name.len() <= CACHE_NAME_MAX (checked on entry): it fits, with
        // a NUL after it, and its length fits 16 bits.
        if let Some(dst) = bytes.get_mut(..name.len()) {
            dst.copy_from_slice(name);
        }
        // `bytes` holds exactly one 8-byte chunk per word. Not
        // `chunks_exact()`: its constructor's panic path stays out of line
        // in the kernel build, where objtool flags the call. A name writes
        // the lines its length needs: readers never read the others then.
        let words = name_words(name.len());
        let mut rest: &[u8] = &bytes;
        for a in e.name.iter().take(words) {
            let Some((chunk, tail)) = rest.split_first_chunk::<8>() else {
                break;
            };
            a.store(u64::from_le_bytes(*chunk), Ordering::Relaxed);
            rest = tail;
        }
        e.len
            .store(u16::try_from(name.len()).unwrap_or(0), Ordering::Relaxed);
        e.key.store(addr, Ordering::Relaxed);
        e.generation.store(generation, Ordering::Relaxed);
        e.referenced.store(0, Ordering::Relaxed);
        e.seq.store(s.wrapping_add(2), Ordering::Release);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A first miss is not admitted, a second is; an address whose tag
    /// another miss replaced starts again. Fails when `admit` always
    /// answers true (every miss inserted) or never does.
    #[test]
    fn a_name_is_admitted_on_its_second_miss() {
        let c = DefaultWchanCache::new();
        let a = 0xffff_ffff_8123_4565;
        assert!(!c.admit(a), "first miss admitted");
        assert!(c.admit(a), "second miss not admitted");
        assert!(c.admit(a), "third miss not admitted");
        // An address with the same slot and another tag.
        let slot = |x| DefaultWchanCache::seen_slot(x);
        let b = (1..1u64 << 20)
            .map(|k| a.wrapping_add(k << 2))
            .find(|&x| slot(x).0 == slot(a).0 && slot(x).1 != slot(a).1)
            .expect("an address sharing the slot");
        assert!(!c.admit(b));
        assert!(!c.admit(a), "admitted after its tag was replaced");
        assert!(c.admit(a));
    }

    /// `insert_after_miss` inserts on an address's second miss only, and
    /// asks for the name only then. Fails when it inserts on a first miss,
    /// measures a name it drops, or never inserts.
    #[test]
    fn a_miss_inserts_its_name_the_second_time() {
        let c = DefaultWchanCache::new();
        let a = 0xffff_ffff_8123_4565;
        let g = c.generation();
        let first = c.insert_after_miss(a, g, || panic!("name asked on a first miss"));
        assert!(!first);
        assert!(c.get(a).is_none(), "inserted on a first miss");
        assert!(c.insert_after_miss(a, g, || Some(&b"do_nanosleep"[..])));
        assert_eq!(c.get(a).as_deref(), Some(&b"do_nanosleep"[..]));
        // A name that cannot be given is not inserted.
        let b = a.wrapping_add(0x40);
        assert!(!c.insert_after_miss(b, g, || None));
        assert!(!c.insert_after_miss(b, g, || None));
        assert!(c.get(b).is_none());
    }

    /// An insert into a free set lands in the address's first way, the
    /// one its probe tries first, and the first ways of many addresses
    /// are all four ways: a hit on a hot address so compares one way.
    #[test]
    fn an_address_sits_in_the_first_way_it_probes() {
        let c = DefaultWchanCache::new();
        let mut firsts = [0usize; 4];
        for i in 0..1_000u64 {
            let addr = 0xffff_ffff_8100_0000 + i * 0x1234;
            let (set, first) = c.set_of(addr);
            c.invalidate();
            assert!(c.insert(addr, c.generation(), b"schedule"));
            let key = set[first].key.load(Ordering::Relaxed);
            assert_eq!(key, addr, "address {addr:#x} is not in its first way");
            firsts[first] += 1;
        }
        assert!(
            firsts.iter().all(|&n| n > 150),
            "first ways not spread: {firsts:?}"
        );
    }
}
