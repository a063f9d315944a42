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
//! # LRU
//!
//! Each entry carries a stamp from a clock that advances on every insert:
//! an insert takes the clock's value and advances it, a hit sets the stamp
//! to the clock's current value, and does so only when the stamp is behind,
//! so a hot entry costs one store per insert anywhere and none in the
//! steady state; the victim of an insert is an
//! empty or stale entry, else the one with the oldest stamp.
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

/// One entry: exactly one 64-byte cache line.
#[repr(C, align(64))]
struct Entry {
    seq: AtomicU32,
    stamp: AtomicU32,
    key: AtomicU64,
    generation: AtomicU64,
    /// Byte 0: name length; bytes 1..: name, little-endian packed.
    name: [AtomicU64; NAME_WORDS],
}

impl Entry {
    const fn new() -> Self {
        Self {
            seq: AtomicU32::new(0),
            stamp: AtomicU32::new(0),
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
        let idx = if Self::SET_BITS == 0 {
            0
        } else {
            (h >> (64 - Self::SET_BITS)) as usize
        };
        // idx < SETS by construction; `get` keeps the no-panic rule.
        self.sets.get(idx).unwrap_or(&self.sets[0])
    }

    /// The cached name for `addr`, if present and current.
    #[inline]
    pub fn get(&self, addr: u64) -> Option<CachedName> {
        let generation = self.generation();
        for e in self.set_of(addr) {
            let s1 = e.seq.load(Ordering::Acquire);
            if s1 & 1 != 0 {
                continue;
            }
            let key = e.key.load(Ordering::Relaxed);
            let eg = e.generation.load(Ordering::Relaxed);
            let mut words = [0u64; NAME_WORDS];
            for (w, a) in words.iter_mut().zip(e.name.iter()) {
                *w = a.load(Ordering::Relaxed);
            }
            fence(Ordering::Acquire);
            if e.seq.load(Ordering::Relaxed) != s1 || key != addr || eg != generation {
                continue;
            }
            let mut bytes = [0u8; NAME_WORDS * 8];
            for (chunk, w) in bytes.chunks_exact_mut(8).zip(words.iter()) {
                chunk.copy_from_slice(&w.to_le_bytes());
            }
            let len = (bytes[0] as usize).min(CACHE_NAME_MAX);
            let mut out = CachedName::new();
            // Cannot fail: len <= capacity.
            let _ = out.try_extend_from_slice(bytes.get(1..1 + len).unwrap_or(&[]));
            let now = self.clock.load(Ordering::Relaxed);
            if e.stamp.load(Ordering::Relaxed) != now {
                e.stamp.store(now, Ordering::Relaxed);
            }
            return Some(out);
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
        let mut oldest = u32::MAX;
        for e in set {
            let eg = e.generation.load(Ordering::Relaxed);
            let key = e.key.load(Ordering::Relaxed);
            if eg == current && key == addr {
                // Already present (another CPU was faster).
                return false;
            }
            if eg != current {
                victim = Some(e);
                break;
            }
            let age = e.stamp.load(Ordering::Relaxed);
            if victim.is_none() || age < oldest {
                oldest = age;
                victim = Some(e);
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
        bytes[0] = name.len() as u8;
        if let Some(dst) = bytes.get_mut(1..1 + name.len()) {
            dst.copy_from_slice(name);
        }
        for (a, chunk) in e.name.iter().zip(bytes.chunks_exact(8)) {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            a.store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
        e.key.store(addr, Ordering::Relaxed);
        e.generation.store(generation, Ordering::Relaxed);
        // The insert takes the clock's current value and advances it, so a
        // later hit (which takes the new value) ranks above this insert.
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        e.stamp.store(now, Ordering::Relaxed);
        e.seq.store(s.wrapping_add(2), Ordering::Release);
        true
    }
}
