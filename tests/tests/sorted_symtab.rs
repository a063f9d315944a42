//! Differential suite for the sorted-symtab baseline
//! (`fast::sorted_symtab`, the approach of the March 2026 linux-modules
//! patch): its binary search over the sorted candidates against the 6.12
//! linear `find_kallsyms_symbol()` scan, on unsorted symtabs crowded with
//! ties (aliases: symbols of zero size, sharing a value with the next),
//! undefined, unnamed and mapping symbols, symbols below, at and above
//! region bounds, and regions at 0, wrapping past 2^64 or empty; then the
//! same through the mirror (`Algo::Sorted` against `Algo::Mainline`,
//! module ownership and `%pS` formatting included).

use kallsyms_mirror::fast::ModEntry;
use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::mirror::{Algo, Mirror, MirrorModule, OwnedSymtab};
use kallsyms_mirror::module::{
    find_kallsyms_symbol, symbol_is_candidate, MemRegion, ModuleLayout, ModuleSymtab, MOD_TEXT,
};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::owned::RawSymbol;
use kallsyms_mirror::sorted_symtab::{find_in_sorted, sort_symtab, sorted_symtab_capacity};
use proptest::prelude::*;

const BASE: u64 = 0xffff_ffff_c000_0000;
const CORE: u64 = 0xffff_ffff_8100_0000;

use kallsyms_fast_tests::sym;

/// Values from a small grid (so that ties are common), anywhere in the
/// first pages, or at the ends of the address space.
fn value_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => (0u64..48).prop_map(|k| BASE + k * 0x10),
        2 => (0u64..0x600).prop_map(|o| BASE + o),
        1 => (0u64..0x20).prop_map(|o| u64::MAX - o),
        1 => 0u64..0x20,
    ]
}

fn symbol_strategy() -> impl Strategy<Value = RawSymbol> {
    (
        value_strategy(),
        prop::sample::select(b"tTdDrbU".to_vec()),
        prop_oneof![
            8 => prop::sample::select(vec!["f", "g", "h", "alias", "__pfx_f", "__cfi_g"])
                .prop_map(str::to_string),
            1 => Just(String::new()),
            1 => prop::sample::select(vec!["$x", ".Ltmp0", "L0"]).prop_map(str::to_string),
        ],
    )
        .prop_map(|(addr, kind, name)| sym(addr, kind, &name))
}

fn region_strategy() -> impl Strategy<Value = MemRegion> {
    let base = prop_oneof![
        6 => (0u64..48).prop_map(|k| BASE + k * 0x10),
        1 => Just(0u64),
        1 => (1u64..0x40).prop_map(|o| u64::MAX - o),
    ];
    let size = prop_oneof![
        1 => Just(0u64),
        6 => 1u64..0x400,
        1 => (0u64..8).prop_map(|k| k * 0x10),
        1 => Just(u64::MAX),
    ];
    (base, size).prop_map(|(base, size)| MemRegion { base, size })
}

/// Every address whose answer could differ: symbol values and their
/// neighbours, region bases and ends and their neighbours, below the
/// lowest symbol, plus random ones.
fn probes(symbols: &[RawSymbol], layout: &ModuleLayout, extra: &[u64]) -> Vec<u64> {
    let mut v = vec![0, 1, u64::MAX, u64::MAX - 1, BASE, BASE - 1];
    for s in symbols {
        v.extend([s.addr.wrapping_sub(1), s.addr, s.addr.wrapping_add(1)]);
    }
    if let Some(low) = symbols.iter().map(|s| s.addr).min() {
        v.extend([low.wrapping_sub(1), low.wrapping_sub(0x10)]);
    }
    for r in layout {
        let end = r.base.wrapping_add(r.size);
        for a in [r.base, end] {
            v.extend([a.wrapping_sub(1), a, a.wrapping_add(1)]);
        }
    }
    v.extend_from_slice(extra);
    v
}

fn sorted_of(symtab: &OwnedSymtab) -> Vec<ModEntry> {
    let mut out = vec![ModEntry::default(); sorted_symtab_capacity(symtab)];
    let n = sort_symtab(symtab, &mut out).expect("capacity is enough");
    out.truncate(n);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    /// The load-time sort keeps exactly the scan's candidates, each once,
    /// in (value, symtab index) order; every lookup equals the scan's.
    #[test]
    fn sorted_equals_linear_scan(
        symbols in proptest::collection::vec(symbol_strategy(), 0..120),
        regions in proptest::collection::vec(region_strategy(), 7),
        extra in proptest::collection::vec(any::<u64>(), 8),
        all_symbols in any::<bool>(),
    ) {
        let symtab = OwnedSymtab::from_symbols(&symbols);
        let mut layout = ModuleLayout::default();
        layout.copy_from_slice(&regions);
        let sorted = sorted_of(&symtab);

        let mut want: Vec<ModEntry> = (1..symtab.num_symtab())
            .filter(|&i| symbol_is_candidate(&symtab, i))
            .map(|i| ModEntry { value: symtab.value(i), index: i as u64 })
            .collect();
        want.sort_by_key(|e| e.value); // stable: ties stay in symtab order
        prop_assert_eq!(&sorted, &want);

        for addr in probes(&symbols, &layout, &extra) {
            let slow = find_kallsyms_symbol(&symtab, &layout, addr, all_symbols);
            let sorted_hit = find_in_sorted(&sorted, &layout, addr, all_symbols);
            prop_assert_eq!(slow, sorted_hit, "address {:#x}", addr);
            if let Some(hit) = slow {
                prop_assert!(symbol_is_candidate(&symtab, hit.index));
            }
        }
    }

    /// Through the mirror: module ownership, the search and `%pS` output,
    /// several modules, both `CONFIG_KALLSYMS_ALL` settings.
    #[test]
    fn mirror_sorted_prints_as_mainline(
        mods in proptest::collection::vec(
            (proptest::collection::vec(region_strategy(), 7),
             proptest::collection::vec(symbol_strategy(), 0..40)),
            0..4,
        ),
        extra in proptest::collection::vec(any::<u64>(), 8),
        all in any::<bool>(),
    ) {
        let modules: Vec<MirrorModule> = mods
            .iter()
            .enumerate()
            .map(|(i, (r, s))| {
                let mut l = ModuleLayout::default();
                l.copy_from_slice(r);
                MirrorModule::new(format!("m{i}").as_bytes(), s, l)
            })
            .collect();
        let m = mirror(modules, all);
        let mut p = Vec::new();
        for (r, s) in &mods {
            let mut l = ModuleLayout::default();
            l.copy_from_slice(r);
            p.extend(probes(s, &l, &extra));
        }
        let (mut name, mut a, mut b) = (NameBuf::new(), SymbolBuf::new(), SymbolBuf::new());
        for addr in p {
            m.sprint(Algo::Mainline, addr, true, &mut name, &mut a);
            m.sprint(Algo::Sorted, addr, true, &mut name, &mut b);
            prop_assert_eq!(a.as_bytes(), b.as_bytes(), "address {:#x}", addr);
        }
    }
}

fn mirror(modules: Vec<MirrorModule>, all_symbols: bool) -> Mirror {
    kallsyms_fast_tests::small_core_mirror(CORE, modules, all_symbols)
}

/// By hand: ties go to the lowest symtab index however the aliases are
/// ordered, `__pfx_` symbols answer their padding, the last symbol's size
/// ends at the region's end, and below the region's first symbol (a symbol
/// below the region does not count) or at the end there is no answer.
#[test]
fn ties_padding_and_region_bounds() {
    let symbols = [
        sym(BASE + 0x40, b't', "later"),
        sym(BASE + 0x20, b't', "first"),
        sym(BASE + 0x30, b'U', "undef_between"),
        sym(BASE + 0x20, b't', "alias"),
        sym(BASE + 0x10, b't', "__pfx_first"),
        sym(BASE + 0x40, b'T', "later_alias"),
        sym(BASE + 0x28, b't', "$x"),
        sym(BASE + 0x60, b't', "last"),
        sym(BASE + 0x80, b't', "at_region_end"),
        sym(BASE, b't', "below_region"),
    ];
    let symtab = OwnedSymtab::from_symbols(&symbols);
    let mut layout = ModuleLayout::default();
    layout[MOD_TEXT] = MemRegion {
        base: BASE + 0x8,
        size: 0x78,
    };
    let sorted = sorted_of(&symtab);
    let at = |addr: u64| {
        find_in_sorted(&sorted, &layout, addr, false).map(|h| {
            (
                String::from_utf8_lossy(symtab.name(h.index)).into_owned(),
                h.offset,
                h.size,
            )
        })
    };
    assert_eq!(at(BASE + 0x8), None, "below the first symbol");
    assert_eq!(at(BASE + 0x10), Some(("__pfx_first".into(), 0, 0x10)));
    assert_eq!(at(BASE + 0x2c), Some(("first".into(), 0xc, 0x20)));
    assert_eq!(at(BASE + 0x40), Some(("later".into(), 0, 0x20)));
    assert_eq!(at(BASE + 0x7f), Some(("last".into(), 0x1f, 0x20)));
    assert_eq!(at(BASE + 0x80), None, "at the region's end");
    for addr in BASE..BASE + 0x100 {
        assert_eq!(
            find_in_sorted(&sorted, &layout, addr, false),
            find_kallsyms_symbol(&symtab, &layout, addr, false),
            "{addr:#x}"
        );
    }
}
