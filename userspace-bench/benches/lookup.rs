//! criterion micro-benchmarks: one lookup on this machine's /proc/kallsyms
//! (or the embedded sample when it is unreadable), mainline 6.12 port vs
//! kallsyms-fast vs the wchan cache, and name -> address.
//!
//! `cargo bench -p userspace-bench --bench lookup`; HTML report in
//! `target/criterion/report/index.html`.

use std::hint::black_box;
use std::io::Read;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use kallsyms_mirror::build::encode_kernel_order;
use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::mirror::{sections_from_symbols, Algo, Mirror};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::owned::RawSymbol;
use kallsyms_mirror::parse::ProcKallsyms;

fn core_symbols() -> Vec<RawSymbol> {
    let live = std::fs::read("/proc/kallsyms").ok();
    let text = match live {
        Some(t) if t.starts_with(b"ffff") => t,
        _ => {
            let mut t = Vec::new();
            flate2::read::GzDecoder::new(&include_bytes!("../data/sample-kallsyms.gz")[..])
                .read_to_end(&mut t)
                .expect("embedded sample decompresses");
            t
        }
    };
    ProcKallsyms::parse(std::path::Path::new("/proc/kallsyms"), &text)
        .expect("kallsyms parses")
        .core
}

fn mirror() -> (Mirror, Vec<u64>, Vec<u64>, Vec<Vec<u8>>) {
    let core = core_symbols();
    let sections = sections_from_symbols(&core);
    let abs = core
        .iter()
        .any(|s| s.name == b"__per_cpu_start" && s.addr < sections.stext);
    let tables = encode_kernel_order(&core, abs, sections).expect("tables encode");
    let m = Mirror::new(tables, Vec::new()).expect("tables validate");
    // Every 97th text symbol, a few bytes in: a spread of real functions.
    let addrs: Vec<u64> = core
        .iter()
        .filter(|s| {
            matches!(s.kind, b't' | b'T') && s.addr >= sections.stext && s.addr < sections.etext
        })
        .step_by(97)
        .map(|s| s.addr + 3)
        .collect();
    let all: Vec<u64> = core
        .iter()
        .filter(|s| {
            matches!(s.kind, b't' | b'T') && s.addr >= sections.stext && s.addr < sections.etext
        })
        .map(|s| s.addr + 3)
        .collect();
    let names = core.iter().step_by(97).map(|s| s.name.clone()).collect();
    (m, addrs, all, names)
}

fn lookups(c: &mut Criterion) {
    let (m, addrs, addrs_all, names) = mirror();
    // Built once, as the kernel's indexes are (see `Mirror::cores`).
    let cores = m.cores();
    let mut g = c.benchmark_group("address_to_symbol");
    for (label, algo) in [
        ("mainline", Algo::Mainline),
        ("fast", Algo::Fast),
        ("fast_cached", Algo::Cached),
    ] {
        g.bench_with_input(BenchmarkId::new("wchan", label), &algo, |b, &algo| {
            let (mut n, mut out) = (NameBuf::new(), SymbolBuf::new());
            let mut i = 0;
            b.iter(|| {
                // The cached case cycles over 64 hot addresses, as wchan does.
                let a = if algo == Algo::Cached {
                    addrs[i % 64]
                } else {
                    addrs[i % addrs.len()]
                };
                i += 1;
                m.wchan_with(&cores, algo, black_box(a), &mut n, &mut out);
                out.as_bytes().len()
            })
        });
    }
    // Cold: every text symbol in a shuffled order, so that successive
    // lookups share no cache lines (the working set is the whole table).
    let mut cold: Vec<u64> = addrs_all.clone();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..cold.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        cold.swap(i, (x % (i as u64 + 1)) as usize);
    }
    for (label, algo) in [("mainline", Algo::Mainline), ("fast", Algo::Fast)] {
        g.bench_with_input(
            BenchmarkId::new("cold_shuffled", label),
            &algo,
            |b, &algo| {
                let (mut n, mut out) = (NameBuf::new(), SymbolBuf::new());
                let mut i = 0;
                b.iter(|| {
                    let a = cold[i % cold.len()];
                    i += 1;
                    m.wchan_with(&cores, algo, black_box(a), &mut n, &mut out);
                    out.as_bytes().len()
                })
            },
        );
    }
    g.finish();
    let mut g = c.benchmark_group("name_to_address");
    for (label, algo) in [("mainline", Algo::Mainline), ("fast", Algo::Fast)] {
        g.bench_with_input(BenchmarkId::new("lookup_name", label), &algo, |b, &algo| {
            let mut n = NameBuf::new();
            let mut i = 0;
            b.iter(|| {
                i += 1;
                m.lookup_name_with(&cores, algo, black_box(&names[i % names.len()]), &mut n)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, lookups);
criterion_main!(benches);
