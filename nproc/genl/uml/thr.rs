//! A process of four threads for the UML check: three fault in 4, 8 and
//! 12 MiB and burn CPU in proportion, then all sleep, so the processes
//! scope's sums (faults, times) and the threads scope's own values differ.
//!
//! rustc -O -C target-feature=+crt-static -o thr uml/thr.rs
use std::{hint::black_box, thread, time::Duration};

fn main() {
    for i in 0..3u64 {
        thread::spawn(move || {
            let mut v = vec![0u8; ((i + 1) as usize * 4) << 20];
            for j in (0..v.len()).step_by(4096) {
                v[j] = 1;
            }
            let mut x = 0u64;
            for k in 0..30_000_000 * (i + 1) {
                x = x.wrapping_add(k.wrapping_mul(k));
            }
            black_box((&v, x));
            thread::sleep(Duration::from_secs(1000));
        });
    }
    thread::sleep(Duration::from_secs(1000));
}
