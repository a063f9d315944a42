//! Differential suite: the fast path and the 2.6.9 linear scan against the
//! faithful mainline port, on random tables with aliases, big names (up to
//! the kernel's 511 bytes), gaps, section ends and per-CPU symbols, for
//! every kind of address. Most tables use a random multi-byte token table
//! (long tokens, merged tokens, records of one token), the rest the
//! one-byte-per-token table.

use kallsyms_fast_tests::{plain_tables, to_pc_relative, token_tables};
use kallsyms_mirror::fast::addr_index::FAN;
use kallsyms_mirror::fast::{
    build_addr_index, build_name_index, AddrIndexLayout, FastCore, NameIndexLayout,
};
use kallsyms_mirror::linear::Linear;
use kallsyms_mirror::mainline::Mainline;
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::owned::{OwnedTables, RawSymbol};
use kallsyms_mirror::Sections;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

const TEXT: u64 = 0xffff_ffff_8100_0000;

/// A random kernel: symbols in kernel order plus section bounds.
#[derive(Debug, Clone)]
struct Kernel {
    symbols: Vec<RawSymbol>,
    absolute_percpu: bool,
    sections: Sections,
    /// Seed of the random token table; `None` for one token per byte.
    token_seed: Option<u64>,
    /// Linux 7.3's PC-relative offsets, with `kallsyms_offsets` at this
    /// address (never with `absolute_percpu`, which 7.3 does not have).
    pc_relative: Option<u64>,
}

fn name_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // Short names from a small alphabet: many duplicates.
        8 => proptest::collection::vec(prop::sample::select(b"abcde_".to_vec()), 1..6),
        // Long names, over the 127-byte single-length-byte limit.
        1 => proptest::collection::vec(prop::sample::select(b"xyz_0123".to_vec()), 120..300),
        // Up to KSYM_NAME_LEN - 1, the longest name scripts/kallsyms accepts.
        1 => proptest::collection::vec(prop::sample::select(b"xyz_0123".to_vec()), 300..=511),
    ]
}

fn kernel_strategy() -> impl Strategy<Value = Kernel> {
    (
        1usize..900,
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(
            (
                0u32..5,
                0u64..400,
                name_strategy(),
                prop::sample::select(b"tTdDbBrRW".to_vec()),
            ),
            900,
        ),
        0u64..40,
        prop_oneof![1 => Just(None), 3 => any::<u64>().prop_map(Some)],
        prop_oneof![1 => Just(None), 1 => (0u64..0x1000_0000).prop_map(Some)],
    )
        .prop_map(
            |(n, absolute_percpu, all_symbols, raw, percpu_count, token_seed, pc)| {
                let mut symbols = Vec::new();
                let mut addr = TEXT;
                if absolute_percpu {
                    let mut pa = 0u64;
                    for (_, gap, name, _) in raw.iter().take(percpu_count as usize) {
                        symbols.push(RawSymbol {
                            addr: pa,
                            kind: b'D',
                            name: name.clone(),
                        });
                        pa += gap;
                    }
                }
                for (i, (alias, gap, name, kind)) in raw.into_iter().take(n).enumerate() {
                    // alias == 0: same address as the previous symbol.
                    if i > 0 && alias != 0 {
                        addr += 1 + gap * if alias == 4 { 97 } else { 1 };
                    }
                    symbols.push(RawSymbol { addr, kind, name });
                }
                let last = symbols.last().map(|s| s.addr).unwrap_or(TEXT);
                let span = last - TEXT;
                // _etext somewhere in the upper half, inittext after it, _end last.
                let etext = TEXT + span / 2 + 1;
                let sections = Sections {
                    stext: TEXT,
                    etext,
                    sinittext: etext + (span / 4),
                    einittext: etext + (span / 4) * 2 + 1,
                    end: last + 64,
                    init_begin: etext + (span / 4),
                    init_end: etext + (span / 4) * 2 + 16,
                    gate: if span.is_multiple_of(3) {
                        Some((last + 0x1000, last + 0x2000))
                    } else {
                        None
                    },
                    all_symbols,
                };
                // The table anywhere from the text up to 256 MiB above
                // the last symbol (a kernel's .rodata follows its text).
                let pc_relative = pc
                    .filter(|_| !absolute_percpu)
                    .map(|d| (TEXT + d + span) & !3);
                Kernel {
                    symbols,
                    absolute_percpu,
                    sections,
                    token_seed,
                    pc_relative,
                }
            },
        )
}

struct Built {
    tables: OwnedTables,
    buckets: Vec<u32>,
    deltas: Vec<u16>,
    dir: Vec<u32>,
    entries: Vec<u32>,
    al: AddrIndexLayout,
    nl: NameIndexLayout,
}

fn build(k: &Kernel) -> Built {
    let mut tables = match k.token_seed {
        Some(seed) => token_tables(&k.symbols, k.absolute_percpu, k.sections, seed),
        None => plain_tables(&k.symbols, k.absolute_percpu, k.sections),
    };
    if let Some(at) = k.pc_relative {
        to_pc_relative(&mut tables, at);
    }
    let view = tables.view();
    let mut scratch = vec![0u64; view.len().div_ceil(64)];
    view.validate(&mut scratch)
        .expect("generated table validates");
    view.check_name_order(|pos| kallsyms_mirror::name::record_offset(&view, pos))
        .expect("generated table is in name order");
    let al = AddrIndexLayout::for_table(&view, &k.sections);
    let mut buckets = vec![0; al.bucket_words];
    let mut deltas = vec![0; al.delta_words];
    build_addr_index(&view, al, &mut buckets, &mut deltas).expect("address index builds");
    let nl = NameIndexLayout::for_len(view.len());
    let tokens = kallsyms_mirror::fast::TokenSlots::new(&view).expect("tokens in bounds");
    let mut dir = vec![0; nl.directory_words];
    let mut entries = vec![0; nl.entry_words];
    let mut hashes = vec![0; view.len()];
    build_name_index(&view, nl, &tokens, &mut dir, &mut entries, &mut hashes)
        .expect("name index builds");
    Built {
        tables,
        buckets,
        deltas,
        dir,
        entries,
        al,
        nl,
    }
}

fn probe_addresses(k: &Kernel, extra: &[u64]) -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        u64::MAX,
        TEXT - 1,
        k.sections.etext,
        k.sections.einittext,
        k.sections.end,
    ];
    for s in &k.symbols {
        v.extend([s.addr, s.addr.wrapping_sub(1), s.addr + 1, s.addr + 7]);
    }
    if let Some((g, _)) = k.sections.gate {
        v.extend([g, g + 5]);
    }
    let last = k.symbols.last().map(|s| s.addr).unwrap_or(TEXT);
    v.extend(
        extra
            .iter()
            .map(|e| TEXT.wrapping_add(e % (last - TEXT + 200))),
    );
    v.extend(extra.iter().map(|e| e % 0x4000));
    v
}

/// Random kernels per shard. The suite's 10,000 run as two tests of 5,000
/// (each runner draws its own seed), which the test harness runs on two
/// threads: the same number of kernels in half the wall time on the
/// 2-core machines `cargo xtask test` is budgeted for.
const SHARD_CASES: u32 = 5_000;

/// The config of shard `shard`: a seed fixed with `PROPTEST_RNG_SEED` (to
/// replay a run) is offset per shard, so the shards never draw the same
/// kernels.
fn shard_config(shard: u64) -> ProptestConfig {
    let mut c = ProptestConfig {
        cases: SHARD_CASES,
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    };
    if let RngSeed::Fixed(seed) = c.rng_seed {
        c.rng_seed = RngSeed::Fixed(seed.wrapping_add(shard));
    }
    c
}

proptest! {
    #![proptest_config(shard_config(0))]

    /// [`fast_equals_mainline`], first shard.
    #[test]
    fn fast_equals_mainline_0(k in kernel_strategy(), extra in proptest::collection::vec(any::<u64>(), 32)) {
        fast_equals_mainline(&k, &extra)?;
    }
}

proptest! {
    #![proptest_config(shard_config(1))]

    /// [`fast_equals_mainline`], second shard.
    #[test]
    fn fast_equals_mainline_1(k in kernel_strategy(), extra in proptest::collection::vec(any::<u64>(), 32)) {
        fast_equals_mainline(&k, &extra)?;
    }
}

/// The fast core over a built kernel's tables and indexes.
fn fast_core<'a>(
    b: &'a Built,
    sections: Sections,
    tokens: &'a kallsyms_mirror::fast::TokenSlots,
) -> FastCore<'a> {
    FastCore {
        tables: b.tables.view(),
        sections,
        addr: kallsyms_mirror::fast::AddrIndex::from_parts(b.al, &b.buckets, &b.deltas),
        tokens,
    }
}

/// Fast and mainline agree on position, size, offset and name for every
/// address; the linear scan agrees on a sample.
fn fast_equals_mainline(k: &Kernel, extra: &[u64]) -> Result<(), TestCaseError> {
    let b = build(k);
    let view = b.tables.view();
    let main = Mainline::new(view, k.sections);
    let tokens = kallsyms_mirror::fast::TokenSlots::new(&view).expect("tokens in bounds");
    let fast = fast_core(&b, k.sections, &tokens);
    let names = kallsyms_mirror::fast::NameIndex::from_parts(b.nl, &b.dir, &b.entries);
    let linear = Linear::new(view, k.sections);
    let (mut n1, mut n2, mut n3) = (NameBuf::new(), NameBuf::new(), NameBuf::new());
    for (i, addr) in probe_addresses(k, extra).into_iter().enumerate() {
        let m = main.lookup(addr, &mut n1);
        let f = fast.lookup(addr, &mut n2);
        prop_assert_eq!(m, f, "address {:#x}", addr);
        if m.is_some() {
            prop_assert_eq!(n1.as_bytes(), n2.as_bytes(), "name at {:#x}", addr);
        }
        if i % 16 == 0 {
            let l = linear.lookup(addr, &mut n3);
            prop_assert_eq!(m, l, "linear at {:#x}", addr);
            if m.is_some() {
                prop_assert_eq!(n1.as_bytes(), n3.as_bytes());
            }
        }
    }
    // Names: every present name, and absent ones.
    for s in k.symbols.iter().step_by(3) {
        prop_assert_eq!(
            main.lookup_name(&s.name, &mut n1),
            fast.lookup_name(&names, &s.name, &mut n2),
            "name {:?}",
            s.name
        );
    }
    for absent in [&b"zz"[..], b"", b"abcdeabcde", b"a\xff"] {
        prop_assert_eq!(
            main.lookup_name(absent, &mut n1),
            fast.lookup_name(&names, absent, &mut n2)
        );
    }
    Ok(())
}

/// The encoder the suite relies on really produces the symbols back.
#[test]
fn plain_tables_round_trip() {
    let symbols: Vec<RawSymbol> = (0..700u64)
        .map(|i| RawSymbol {
            addr: TEXT + i * 16,
            kind: b't',
            name: format!("f{i}").into_bytes(),
        })
        .collect();
    let sections = Sections {
        stext: TEXT,
        etext: TEXT + 700 * 16,
        end: TEXT + 700 * 16,
        ..Default::default()
    };
    let t = plain_tables(&symbols, false, sections);
    let main = Mainline::new(t.view(), sections);
    let mut n = NameBuf::new();
    for (i, s) in symbols.iter().enumerate() {
        let p = main.lookup(s.addr + 3, &mut n).expect("in text");
        assert_eq!((p.pos, p.offset, p.size), (i, 3, 16));
        assert_eq!(n.as_bytes(), s.name.as_slice());
    }
    assert_eq!(main.lookup(TEXT - 1, &mut n), None);
}

/// The random token tables decode back to the symbols, and really use
/// multi-byte tokens, tokens longer than a 16-byte slot and whole-symbol
/// tokens, so the suite above reaches those paths.
#[test]
fn token_tables_round_trip_and_use_long_tokens() {
    let symbols: Vec<RawSymbol> = (0..700u64)
        .map(|i| {
            let name = match i % 7 {
                0 => format!(
                    "{}_{i}",
                    "do_something_rather_long".repeat(1 + (i as usize % 19))
                ),
                _ => format!("f{}", i % 50),
            };
            RawSymbol {
                addr: TEXT + i * 16,
                kind: if i % 2 == 0 { b't' } else { b'T' },
                name: name.into_bytes()[..].iter().take(511).copied().collect(),
            }
        })
        .collect();
    let sections = Sections {
        stext: TEXT,
        etext: TEXT + 700 * 16,
        end: TEXT + 700 * 16,
        ..Default::default()
    };
    let (mut multi, mut long, mut single_token) = (0, 0, 0);
    for seed in 0..8 {
        let t = token_tables(&symbols, false, sections, seed);
        let view = t.view();
        let mut scratch = vec![0u64; view.len().div_ceil(64)];
        view.validate(&mut scratch).expect("token table validates");
        view.check_name_order(|pos| kallsyms_mirror::name::record_offset(&view, pos))
            .expect("token table is in name order");
        let main = Mainline::new(view, sections);
        let mut n = NameBuf::new();
        for (i, s) in symbols.iter().enumerate() {
            let p = main.lookup(s.addr + 3, &mut n).expect("in text");
            assert_eq!((p.pos, p.offset, p.size), (i, 3, 16));
            assert_eq!(n.as_bytes(), s.name.as_slice(), "seed {seed}");
            let off = main.get_symbol_offset(i).expect("offset");
            let (data, len) = view.record_at(off).expect("record");
            let record = &view.names[data..data + len];
            multi += usize::from(len < 1 + s.name.len());
            single_token += usize::from(len == 1);
            long += record
                .iter()
                .filter(|&&b| view.token(b).expect("token").len() > 16)
                .count();
        }
    }
    assert!(
        multi > 0 && long > 0 && single_token > 0,
        "{multi} {long} {single_token}"
    );
}

/// The address index on shapes the random tables rarely make: runs of
/// over a thousand symbols one byte apart (a kernel's `.data.once`)
/// between sparse ones, radix slots narrow and wide, aliases across
/// leaf blocks, and (with `_stext` at 0, so that absolute per-CPU symbols
/// are indexed too) addresses 4 GiB and more above the first indexed
/// symbol, whose keys saturate and which take the binary search.
#[test]
fn address_tree_dense_runs_and_far_addresses() {
    // The third run: the same symbols in 7.3's PC-relative encoding, whose
    // leaf blocks count each entry from its own address.
    for (absolute_percpu, stext, pc) in
        [(false, TEXT, false), (true, 0, false), (false, TEXT, true)]
    {
        let mut symbols = Vec::new();
        if absolute_percpu {
            for i in 0..40u64 {
                symbols.push(RawSymbol {
                    addr: i * 8,
                    kind: b'D',
                    name: format!("pcpu{i}").into_bytes(),
                });
            }
        }
        let mut addr = TEXT;
        for i in 0..5000u64 {
            // Sparse, then a dense run, then sparse; an alias every 17th.
            let gap = match i {
                0 => 0,
                _ if i % 17 == 0 => 0,
                800..=2100 => 1,
                _ => 0x40 + (i % 7) * 0x100,
            };
            addr += gap;
            symbols.push(RawSymbol {
                addr,
                kind: if i < 800 { b't' } else { b'd' },
                name: format!("s{i}").into_bytes(),
            });
        }
        let last = addr;
        let sections = Sections {
            stext,
            etext: TEXT + 0x1000,
            end: last + 64,
            all_symbols: true,
            ..Default::default()
        };
        let k = Kernel {
            symbols,
            absolute_percpu,
            sections,
            token_seed: None,
            pc_relative: pc.then_some((last + 0x1_0000) & !3),
        };
        let b = build(&k);
        // The dense run puts more than FAN blocks into one radix slot (the
        // binary search of a wide slot), the sparse runs fewer (the FAN
        // keys ranked at once).
        let slot_table = &b.buckets[b.al.slot_start..=b.al.slot_start + b.al.slots];
        let widths: Vec<u32> = slot_table.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            widths.iter().any(|&w| w as usize >= FAN),
            "a wide slot: {:?}",
            b.al
        );
        assert!(
            widths.iter().any(|&w| (w as usize) < FAN),
            "a narrow slot: {:?}",
            b.al
        );
        let view = b.tables.view();
        let main = Mainline::new(view, k.sections);
        let tokens = kallsyms_mirror::fast::TokenSlots::new(&view).expect("tokens in bounds");
        let fast = fast_core(&b, k.sections, &tokens);
        let (mut n1, mut n2) = (NameBuf::new(), NameBuf::new());
        let mut answered = 0;
        for addr in probe_addresses(&k, &[]) {
            let m = main.lookup(addr, &mut n1);
            assert_eq!(m, fast.lookup(addr, &mut n2), "address {addr:#x}");
            if m.is_some() {
                answered += 1;
                assert_eq!(n1.as_bytes(), n2.as_bytes(), "name at {addr:#x}");
            }
        }
        assert!(answered > 3 * 5000, "symbols looked up: {answered}");
    }
}
