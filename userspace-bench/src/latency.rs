//! `kallsyms-bench latency`: what one load costs when the next address
//! depends on it, for working sets from L1-sized to beyond the last-level
//! cache: a pointer chase along a random cycle through 64-byte lines
//! (Sattolo's shuffle, so every line is visited once per lap and the
//! hardware prefetcher cannot guess the next).
//!
//! A lookup's floor is its chain of dependent loads: this says what each
//! link costs on the machine at hand, so that a per-lookup time can be
//! read as so many round trips to a given level (docs/architecture.md,
//! "Performance notes"). Wall-clock time on a shared host: run it idle.

use std::hint::black_box;
use std::time::Instant;

/// Working sets, in KiB.
const SIZES_KIB: [usize; 7] = [16, 256, 1024, 4096, 8192, 65536, 262_144];

/// Dependent loads timed per working set.
const LOADS: usize = 4_000_000;

/// One 64-byte line; the first word is the index of the next line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Line([u64; 8]);

/// Nanoseconds per dependent load over `kib` KiB.
fn chase(kib: usize) -> f64 {
    let lines = (kib * 1024 / 64).max(2);
    let mut order: Vec<usize> = (0..lines).collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..lines).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Sattolo: j < i, so the permutation is one cycle.
        order.swap(i, (x % i as u64) as usize);
    }
    let mut mem = vec![Line([0; 8]); lines];
    for (w, &from) in order.iter().enumerate() {
        let to = order.get((w + 1) % lines).copied().unwrap_or(0);
        if let Some(l) = mem.get_mut(from) {
            l.0[0] = to as u64;
        }
    }
    let next = |p: usize| mem.get(p).map_or(0, |l| l.0[0] as usize);
    let mut p = 0usize;
    for _ in 0..lines {
        p = next(p);
    }
    let t = Instant::now();
    for _ in 0..LOADS {
        p = next(p);
    }
    let ns = t.elapsed().as_nanos() as f64;
    black_box(p);
    ns / LOADS as f64
}

/// Prints the table.
pub fn run() -> Result<(), String> {
    println!("working set   ns per dependent load");
    for kib in SIZES_KIB {
        println!("{:>8} KiB   {:>8.1}", kib, chase(kib));
    }
    Ok(())
}
