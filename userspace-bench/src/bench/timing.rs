//! Timing: every algorithm runs the same stream, round-robin over at least
//! five rounds; the per-operation median is reported.

use std::hint::black_box;
use std::time::Instant;

/// Nanoseconds per operation of each round.
pub struct Samples(pub Vec<f64>);

impl Samples {
    /// The median.
    pub fn median(&self) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }
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

/// Runs `cases` round-robin for `rounds` rounds; returns samples per case.
pub fn measure(cases: &mut [Case<'_>], rounds: usize) -> Vec<Samples> {
    let mut out: Vec<Samples> = cases.iter().map(|_| Samples(Vec::new())).collect();
    // One untimed warm-up round.
    for c in cases.iter_mut() {
        black_box((c.run)(c.ops.min(1000)));
    }
    for _ in 0..rounds {
        for (c, s) in cases.iter_mut().zip(out.iter_mut()) {
            let t = Instant::now();
            black_box((c.run)(c.ops));
            s.0.push(t.elapsed().as_nanos() as f64 / c.ops.max(1) as f64);
        }
    }
    out
}
