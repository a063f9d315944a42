//! The wchan cache: a small, fixed-capacity, set-associative LRU from an
//! address to the symbol name `/proc/PID/wchan` prints for it.
//!
//! # Why a cache
//!
//! `top` and `ps` read every task's wchan on every refresh, and most tasks
//! sleep in a few dozen functions (`do_epoll_wait`, `futex_wait_queue`,
//! `schedule_hrtimeout_range`, ...): the same addresses resolve again and
//! again. A hit costs one hash, one 64-byte line and a copy of the name.
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
//! # Replacement: CLOCK (second chance), an LRU approximation
//!
//! Each entry has a referenced bit. A hit sets it only if it is clear, so a
//! hot entry costs no store at all in the steady state, whatever else is
//! inserted. An insert takes the first empty or stale way of the set, else
//! walks the ways clearing referenced bits and evicts the first way found
//! unreferenced: an entry used since the last eviction scan survives it.
//! (A true LRU with per-hit timestamps was measured first; with a cold
//! tail every insert forced the next hit on each hot entry to store, which
//! across CPUs means bouncing lines.)
//!
//! There are no hit/miss counters: a shared counter would be a store to
//! one line from every CPU on every hit, the contention this design avoids.
//!
//! Names longer than [`CACHE_NAME_MAX`] bytes are not cached (the lookup
//! is still answered, from the index).

use core::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

use arrayvec::ArrayVec;

/// Longest name an entry holds: five words less the length byte.
pub const CACHE_NAME_MAX: usize = 39;

const NAME_WORDS: usize = 5;

/// A name copied out of the cache.
pub type CachedName = ArrayVec<u8, CACHE_NAME_MAX>;

/// Size of an entry's raw name area: a length byte and the name.
pub const RAW_NAME_LEN: usize = NAME_WORDS * 8;

/// The name bytes of a raw name area, padded to [`CACHE_NAME_MAX`].
#[inline]
pub fn raw_name(raw: &[u8; RAW_NAME_LEN]) -> [u8; CACHE_NAME_MAX] {
    let mut out = [0u8; CACHE_NAME_MAX];
    out.copy_from_slice(&raw[1..]);
    out
}

/// One entry: exactly one 64-byte cache line.
#[repr(C, align(64))]
struct Entry {
    seq: AtomicU32,
    referenced: AtomicU32,
    key: AtomicU64,
    generation: AtomicU64,
    /// Byte 0: name length; bytes 1..: name, little-endian packed.
    name: [AtomicU64; NAME_WORDS],
}

impl Entry {
    const fn new() -> Self {
        Self {
            seq: AtomicU32::new(0),
            referenced: AtomicU32::new(0),
            key: AtomicU64::new(0),
            // Generation 0 is never current (the cache starts at 1), so a
            // fresh entry is a miss.
            generation: AtomicU64::new(0),
            name: [const { AtomicU64::new(0) }; NAME_WORDS],
        }
    }
}

/// A cache of `SETS * WAYS` entries (`SETS` a power of two).
pub struct WchanCache<const SETS: usize, const WAYS: usize> {
    sets: [[Entry; WAYS]; SETS],
    generation: AtomicU64,
    clock: AtomicU32,
}

impl<const SETS: usize, const WAYS: usize> Default for WchanCache<SETS, WAYS> {
    fn default() -> Self {
        Self::new()
    }
}

/// The default geometry: 64 sets of 4 ways, 256 entries, 16 KiB.
pub type DefaultWchanCache = WchanCache<64, 4>;

impl<const SETS: usize, const WAYS: usize> WchanCache<SETS, WAYS> {
    const SET_BITS: u32 = {
        assert!(SETS.is_power_of_two() && WAYS > 0);
        SETS.trailing_zeros()
    };

    /// An empty cache.
    pub const fn new() -> Self {
        let _ = Self::SET_BITS;
        Self {
            sets: [const { [const { Entry::new() }; WAYS] }; SETS],
            generation: AtomicU64::new(1),
            clock: AtomicU32::new(1),
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

    #[inline]
    fn set_of(&self, addr: u64) -> &[Entry; WAYS] {
        let h = (addr >> 2).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The top SET_BITS bits; a shift by 64 (one set) gives set 0.
        let top = h
            .checked_shr(u64::BITS.saturating_sub(Self::SET_BITS))
            .unwrap_or(0);
        let idx = usize::try_from(top).unwrap_or(0);
        // idx < SETS by construction; `get` keeps the no-panic rule.
        self.sets.get(idx).unwrap_or(&self.sets[0])
    }

    /// The cached name for `addr`, if present and current.
    #[inline]
    pub fn get(&self, addr: u64) -> Option<CachedName> {
        let mut raw = [0u8; RAW_NAME_LEN];
        let len = self.get_raw(addr, &mut raw)?;
        let mut out = CachedName::from(raw_name(&raw));
        out.truncate(len);
        Some(out)
    }

    /// Like [`get`](Self::get), but leaves the entry's raw name area in
    /// `raw` (byte 0 the length, then the name, zero padded) and returns the
    /// length: fixed-size copies only, no call to `memcpy` on the hot path.
    #[inline]
    pub fn get_raw(&self, addr: u64, raw: &mut [u8; RAW_NAME_LEN]) -> Option<usize> {
        let generation = self.generation();
        for e in self.set_of(addr) {
            let s1 = e.seq.load(Ordering::Acquire);
            // A torn key can only cause a false miss here, or a false match
            // that the sequence re-check below rejects.
            if s1 & 1 != 0 || e.key.load(Ordering::Relaxed) != addr {
                continue;
            }
            let eg = e.generation.load(Ordering::Relaxed);
            let mut words = [0u64; NAME_WORDS];
            for (w, a) in words.iter_mut().zip(e.name.iter()) {
                *w = a.load(Ordering::Relaxed);
            }
            fence(Ordering::Acquire);
            if e.seq.load(Ordering::Relaxed) != s1
                || e.key.load(Ordering::Relaxed) != addr
                || eg != generation
            {
                continue;
            }
            // Fixed-size chunks: no length checks left to panic on.
            let (chunks, _) = raw.as_chunks_mut::<8>();
            for (chunk, w) in chunks.iter_mut().zip(words.iter()) {
                *chunk = w.to_le_bytes();
            }
            if e.referenced.load(Ordering::Relaxed) == 0 {
                e.referenced.store(1, Ordering::Relaxed);
            }
            return Some((raw[0] as usize).min(CACHE_NAME_MAX));
        }
        None
    }

    /// Inserts `name` for `addr`, computed while the generation was
    /// `generation`. Returns whether the entry was written (it is not when
    /// the name is too long, the generation is already stale, or another
    /// writer holds the victim entry).
    pub fn insert(&self, addr: u64, generation: u64, name: &[u8]) -> bool {
        if name.len() > CACHE_NAME_MAX || generation != self.generation() {
            return false;
        }
        let set = self.set_of(addr);
        let current = self.generation();
        let mut victim: Option<&Entry> = None;
        for e in set {
            let eg = e.generation.load(Ordering::Relaxed);
            if eg == current && e.key.load(Ordering::Relaxed) == addr {
                // Already present (another CPU was faster).
                return false;
            }
            if eg != current && victim.is_none() {
                victim = Some(e);
            }
        }
        if victim.is_none() {
            // Second chance, starting at a rotating hand.
            // The hand wraps at 2^32 by design: only its residue matters.
            let hand = self.clock.fetch_add(1, Ordering::Relaxed) as usize;
            let start = hand.checked_rem(WAYS).unwrap_or(0);
            for e in set.iter().cycle().skip(start).take(WAYS.saturating_mul(2)) {
                if e.referenced.swap(0, Ordering::Relaxed) == 0 {
                    victim = Some(e);
                    break;
                }
            }
        }
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
        // name.len() <= CACHE_NAME_MAX (checked on entry): it fits a byte.
        bytes[0] = u8::try_from(name.len()).unwrap_or(0);
        if let Some(dst) = bytes.get_mut(1..=name.len()) {
            dst.copy_from_slice(name);
        }
        let (chunks, _) = bytes.as_chunks::<8>();
        for (a, chunk) in e.name.iter().zip(chunks.iter()) {
            a.store(u64::from_le_bytes(*chunk), Ordering::Relaxed);
        }
        e.key.store(addr, Ordering::Relaxed);
        e.generation.store(generation, Ordering::Relaxed);
        e.referenced.store(0, Ordering::Relaxed);
        e.seq.store(s.wrapping_add(2), Ordering::Release);
        true
    }
}
