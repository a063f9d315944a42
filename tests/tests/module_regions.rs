//! Module regions in the mirror: the fast path (region partition + sorted
//! index) answers exactly as the mainline port (module-list walk +
//! `find_kallsyms_symbol()`) for every address, also on region sets no
//! kernel produces: two modules at one base, nested and overlapping
//! regions, a region wrapping past 2^64, symbols at the top of the address
//! space, a base above every symbol.

use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::mirror::{Algo, Mirror, MirrorModule};
use kallsyms_mirror::module::{MemRegion, ModuleLayout};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::owned::RawSymbol;
use proptest::prelude::*;

const CORE: u64 = 0xffff_ffff_8100_0000;
const MODS: u64 = 0xffff_ffff_c000_0000;

use kallsyms_fast_tests::sym;

fn mirror(modules: Vec<MirrorModule>, all_symbols: bool) -> Mirror {
    kallsyms_fast_tests::small_core_mirror(CORE, modules, all_symbols)
}

fn layout(regions: &[(usize, u64, u64)]) -> ModuleLayout {
    let mut l = ModuleLayout::default();
    for &(ty, base, size) in regions {
        l[ty] = MemRegion { base, size };
    }
    l
}

/// Every probe prints the same `%pS` and wchan through both paths (wchan
/// also through the cache); returns the fast path's `%pS` lines for spot
/// checks.
fn same_answers(m: &Mirror, probes: &[u64]) -> Vec<String> {
    let (mut name, mut out) = (NameBuf::new(), SymbolBuf::new());
    let mut lines = Vec::new();
    for &a in probes {
        m.sprint(Algo::Mainline, a, true, &mut name, &mut out);
        let slow = String::from_utf8_lossy(out.as_bytes()).into_owned();
        m.sprint(Algo::Fast, a, true, &mut name, &mut out);
        let fast = String::from_utf8_lossy(out.as_bytes()).into_owned();
        assert_eq!(slow, fast, "address {a:#x}");
        // wchan too, and through the cache: two misses (the second
        // inserts the name), then a hit.
        m.wchan(Algo::Mainline, a, &mut name, &mut out);
        let want = out.as_bytes().to_vec();
        for (round, algo) in [
            ("fast", Algo::Fast),
            ("first miss", Algo::Cached),
            ("second miss", Algo::Cached),
            ("hit", Algo::Cached),
        ] {
            m.wchan(algo, a, &mut name, &mut out);
            assert_eq!(out.as_bytes(), want, "wchan of {a:#x}, {round}");
        }
        lines.push(fast);
    }
    lines
}

/// Probes around every region bound and symbol of `m`.
fn probes(m: &Mirror) -> Vec<u64> {
    let mut v = vec![0, 1, u64::MAX, u64::MAX - 1, MODS, MODS - 1];
    for md in m.modules() {
        for r in &md.layout {
            let end = r.base.wrapping_add(r.size);
            for a in [r.base, end, r.base.wrapping_add(r.size / 2)] {
                v.extend([a.wrapping_sub(1), a, a.wrapping_add(1)]);
            }
        }
    }
    v
}

fn module(name: &str, symbols: &[RawSymbol], regions: &[(usize, u64, u64)]) -> MirrorModule {
    MirrorModule::new(name.as_bytes(), symbols, layout(regions))
}

#[test]
fn two_modules_at_one_base() {
    let a = module("a", &[sym(MODS + 0x10, b't', "a_fn")], &[(0, MODS, 0x1000)]);
    let b = module(
        "b",
        &[
            sym(MODS + 0x20, b't', "b_fn"),
            sym(MODS + 0x3000, b'd', "b_data"),
        ],
        &[(0, MODS, 0x2000), (1, MODS + 0x3000, 0x1000)],
    );
    for all in [false, true] {
        let m = mirror(vec![a.clone(), b.clone()], all);
        let mut p = probes(&m);
        p.extend([MODS + 0x20, MODS + 0x1800]);
        let out = same_answers(&m, &p);
        // a comes first in list order: it owns its region, b the rest.
        assert_eq!(out[out.len() - 2], "a_fn+0x10/0xff0 [a]");
        assert_eq!(out[out.len() - 1], "b_fn+0x17e0/0x1fe0 [b]");
    }
}

#[test]
fn nested_and_overlapping_regions() {
    // b's text lies inside a's data; c's region straddles a's end.
    let a = module(
        "a",
        &[sym(MODS, b't', "a_fn"), sym(MODS + 0x2000, b'd', "a_big")],
        &[(0, MODS, 0x1000), (1, MODS + 0x2000, 0x8000)],
    );
    let b = module(
        "b",
        &[sym(MODS + 0x4000, b't', "b_fn")],
        &[(0, MODS + 0x4000, 0x1000)],
    );
    let c = module(
        "c",
        &[sym(MODS + 0x9800, b't', "c_fn")],
        &[(0, MODS + 0x9000, 0x2000), (2, MODS + 0x800, 0x100)],
    );
    for all in [false, true] {
        let m = mirror(vec![a.clone(), b.clone(), c.clone()], all);
        let mut p = probes(&m);
        p.extend((0..0xc0).map(|i| MODS + i * 0x100));
        let out = same_answers(&m, &p);
        let at = |addr: u64| out[p.iter().position(|&x| x == addr).unwrap()].clone();
        // a (first in list order) owns its data region, b's text included;
        // without KALLSYMS_ALL the kernel then finds nothing at all.
        let want = if all {
            "a_big+0x2500/0x8000 [a]"
        } else {
            "0xffffffffc0004500"
        };
        assert_eq!(at(MODS + 0x4500), want);
        assert_eq!(at(MODS + 0xa800), "c_fn+0x1000/0x1800 [c]");
    }
}

#[test]
fn region_wrapping_past_the_top() {
    let base = u64::MAX - 0xfff;
    let a = module(
        "a",
        &[sym(base + 0x10, b't', "top_fn"), sym(0x10, b't', "low_fn")],
        &[(0, base, 0x3000)],
    );
    let m = mirror(vec![a], true);
    let mut p = probes(&m);
    p.extend([0x0, 0x10, 0x11, 0x1fff, 0x2000, base + 0x20, u64::MAX]);
    let out = same_answers(&m, &p);
    let at = |addr: u64| out[p.iter().position(|&x| x == addr).unwrap()].clone();
    // The kernel's `addr - base < size` holds below the wrap too, and its
    // unsigned `nextval` wraps with it; but `thisval > bestval` (base - 1)
    // never holds for a symbol below the wrap.
    assert_eq!(at(u64::MAX), "top_fn+0xfef/0x2ff0 [a]");
    assert_eq!(at(0x11), "0x11");
}

#[test]
fn symbol_at_the_top_and_base_above_symbols() {
    let top = module(
        "top",
        &[
            sym(u64::MAX, b't', "last"),
            sym(u64::MAX - 0x10, b't', "prev"),
        ],
        &[(0, u64::MAX - 0xfff, 0x1000)],
    );
    let high_base = module(
        "hb",
        &[sym(MODS, b't', "below_base")],
        &[(0, MODS + 0x1000, 0x1000), (1, MODS + 0x3000, 0x1000)],
    );
    for all in [false, true] {
        let m = mirror(vec![top.clone(), high_base.clone()], all);
        let out = same_answers(&m, &probes(&m));
        assert!(out.iter().any(|l| l == "last+0x0/0x1 [top]"), "{out:?}");
        assert!(!out.iter().any(|l| l.contains("below_base")));
    }
}

fn regions_strategy() -> impl Strategy<Value = Vec<(usize, u64, u64)>> {
    let region = (
        0usize..7,
        prop_oneof![
            8 => (0u64..24).prop_map(|p| MODS + p * 0x800),
            1 => (0u64..4).prop_map(|p| u64::MAX - p * 0x800),
            1 => (0u64..4).prop_map(|p| p * 0x800),
        ],
        prop_oneof![Just(0u64), 1u64..0x3000, Just(u64::MAX)],
    );
    proptest::collection::vec(region, 0..5)
}

fn symbols_strategy() -> impl Strategy<Value = Vec<RawSymbol>> {
    let s = (
        prop_oneof![
            8 => (0u64..24 * 0x800).prop_map(|o| MODS + o),
            1 => (0u64..0x2000).prop_map(|o| u64::MAX - o),
            1 => 0u64..0x2000,
        ],
        prop::sample::select(b"tTdbU".to_vec()),
        prop::sample::select(vec!["f", "g", "h", "$x", ""]),
    )
        .prop_map(|(a, k, n)| sym(a, k, n));
    proptest::collection::vec(s, 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// Any set of modules and regions: fast == mainline.
    #[test]
    fn fast_equals_mainline(
        mods in proptest::collection::vec((regions_strategy(), symbols_strategy()), 0..6),
        extra in proptest::collection::vec(any::<u64>(), 16),
        all in any::<bool>(),
    ) {
        let modules: Vec<MirrorModule> = mods
            .iter()
            .enumerate()
            .map(|(i, (r, s))| module(&format!("m{i}"), s, r))
            .collect();
        let m = mirror(modules, all);
        let mut p = probes(&m);
        p.extend(extra);
        for (_, s) in &mods {
            for x in s {
                p.extend([x.addr, x.addr.wrapping_sub(1), x.addr.wrapping_add(1)]);
            }
        }
        same_answers(&m, &p);
    }
}
