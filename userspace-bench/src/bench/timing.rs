//! Timing: every algorithm runs the same stream, round-robin over at least
//! five rounds; the per-operation median is reported.
//!
//! In each round a case's timed run follows an untimed run of the same
//! case, so that each row is its algorithm's steady state (what a caller
//! that resolves many addresses in a row, a profiler, sees) and does not
//! depend on the row before it. Timed straight after the previous row, a
//! row would pay for refilling the caches that row evicted: the same fast
//! lookup would time slower as `kallsyms-fast`, right after
//! `mainline 6.12`'s walks, than two rows later as
//! `core only: current layout`.

use std::hint::black_box;
use std::time::Instant;

use super::counters::Counters;

/// Nanoseconds per operation of each round: wall clock, and this
/// thread's CPU time; and, where the host has counters, instructions and
/// last-level cache misses per operation.
pub struct Samples(pub Vec<f64>, pub Vec<f64>, pub Vec<(f64, f64)>);

/// The median of `v`.
fn median_of(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

impl Samples {
    /// The median, wall clock.
    pub fn median(&self) -> f64 {
        median_of(&self.0)
    }

    /// The median, thread CPU time.
    pub fn cpu_median(&self) -> f64 {
        median_of(&self.1)
    }

    /// The medians of instructions and cache misses per operation, when
    /// every round counted them.
    pub fn counts_median(&self) -> Option<(f64, f64)> {
        if self.2.is_empty() || self.2.len() != self.0.len() {
            return None;
        }
        let (i, m): (Vec<f64>, Vec<f64>) = self.2.iter().copied().unzip();
        Some((median_of(&i), median_of(&m)))
    }
}

/// This thread's CPU time in ns (`CLOCK_THREAD_CPUTIME_ID`). On a host
/// shared with other work the wall clock also counts the time the thread
/// waited for a CPU; its CPU time does not (the caches other work
/// disturbs still count).
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime writes
    // only it and fails (leaving it zero) for an unsupported clock.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// A named thing to time: runs one op per input index, returns a checksum.
pub struct Case<'a> {
    /// Column name.
    pub name: &'static str,
    /// Inputs to run per round (the linear scan gets fewer).
    pub ops: usize,
    /// Runs ops `0..ops`; returns a checksum so the work is not elided.
    pub run: Box<dyn FnMut(usize) -> u64 + 'a>,
}

/// Runs `cases` round-robin for `rounds` rounds, each timed run after an
/// untimed one of the same case, counted where the host has counters;
/// returns samples per case.
pub fn measure(cases: &mut [Case<'_>], rounds: usize) -> Vec<Samples> {
    let mut out: Vec<Samples> = cases
        .iter()
        .map(|_| Samples(Vec::new(), Vec::new(), Vec::new()))
        .collect();
    let mut counters = Counters::open().ok();
    for _ in 0..rounds {
        for (c, s) in cases.iter_mut().zip(out.iter_mut()) {
            black_box((c.run)(c.ops));
            if let Some(k) = &counters {
                k.start();
            }
            let t = Instant::now();
            let cpu = thread_cpu_ns();
            black_box((c.run)(c.ops));
            let counted = counters.as_mut().and_then(Counters::stop);
            let ops = c.ops.max(1) as f64;
            if let Some((i, m)) = counted {
                s.2.push((i as f64 / ops, m as f64 / ops));
            }
            s.1.push((thread_cpu_ns() - cpu) / ops);
            s.0.push(t.elapsed().as_nanos() as f64 / ops);
        }
    }
    out
}
