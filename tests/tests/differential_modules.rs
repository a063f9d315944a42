//! Differential suite for modules: the sorted per-module index against the
//! 6.12 linear `find_kallsyms_symbol()` scan, on unsorted symtabs with
//! duplicates, undefined, unnamed and mapping symbols, and layouts with
//! text, data and init regions.

use kallsyms_mirror::fast::{build_module_index, find_in_index, ModEntry};
use kallsyms_mirror::mirror::OwnedSymtab;
use kallsyms_mirror::module::{find_kallsyms_symbol, MemRegion, ModuleLayout, ModuleSymtab};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::owned::RawSymbol;
use proptest::prelude::*;

const BASE: u64 = 0xffff_ffff_c000_0000;

fn region_strategy() -> impl Strategy<Value = MemRegion> {
    prop_oneof![
        1 => Just(MemRegion::default()),
        4 => (0u64..64, 1u64..4000).prop_map(|(page, size)| MemRegion { base: BASE + page * 0x1000, size }),
    ]
}

fn symbol_strategy() -> impl Strategy<Value = RawSymbol> {
    (
        0u64..64 * 0x1000 + 100,
        prop::sample::select(b"tTdDrbUu".to_vec()),
        prop_oneof![
            6 => proptest::collection::vec(prop::sample::select(b"fgh_".to_vec()), 1..5),
            1 => Just(Vec::new()),
            1 => Just(b"$x".to_vec()),
            1 => Just(b".Ltmp1".to_vec()),
            1 => Just(b"L0".to_vec()),
        ],
    )
        .prop_map(|(off, kind, name)| RawSymbol {
            addr: BASE + off,
            kind,
            name,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn index_equals_linear_scan(
        symbols in proptest::collection::vec(symbol_strategy(), 0..300),
        regions in proptest::collection::vec(region_strategy(), 7),
        probes in proptest::collection::vec(0u64..70 * 0x1000, 64),
        all_symbols in any::<bool>(),
    ) {
        let symtab = OwnedSymtab::from_symbols(&symbols);
        let mut layout = ModuleLayout::default();
        layout.copy_from_slice(&regions);
        let mut entries = vec![ModEntry::default(); symtab.num_symtab()];
        let n = build_module_index(&symtab, &mut entries).expect("capacity is enough");
        let entries = &entries[..n];
        let mut addrs: Vec<u64> = probes.iter().map(|p| BASE + p).collect();
        for s in &symbols {
            addrs.extend([s.addr, s.addr.wrapping_sub(1), s.addr + 1]);
        }
        for r in &layout {
            let end = r.base.wrapping_add(r.size);
            addrs.extend([r.base, r.base.wrapping_sub(1), end, end.wrapping_sub(1)]);
        }
        for addr in addrs {
            let slow = find_kallsyms_symbol(&symtab, &layout, addr, all_symbols);
            let fast = find_in_index(entries, &layout, addr, all_symbols);
            prop_assert_eq!(slow, fast, "address {:#x}", addr);
            if let Some(hit) = slow {
                prop_assert!(!symtab.name(hit.index).is_empty());
            }
        }
    }
}

/// The tie rule, checked by hand: the lowest symtab index wins among equal
/// values, and the size ends at the region's end for the last symbol.
#[test]
fn lowest_index_wins_and_region_bounds_size() {
    let sym = |off: u64, name: &str| RawSymbol {
        addr: BASE + off,
        kind: b't',
        name: name.as_bytes().to_vec(),
    };
    let symbols = [
        sym(0x20, "later"),
        sym(0x10, "first"),
        sym(0x10, "alias"),
        sym(0x30, "last"),
    ];
    let symtab = OwnedSymtab::from_symbols(&symbols);
    let mut layout = ModuleLayout::default();
    layout[0] = MemRegion {
        base: BASE,
        size: 0x40,
    };
    let mut entries = vec![ModEntry::default(); 8];
    let n = build_module_index(&symtab, &mut entries).expect("fits");
    let hit = find_in_index(&entries[..n], &layout, BASE + 0x15, false).expect("found");
    assert_eq!(
        (symtab.name(hit.index), hit.offset, hit.size),
        (&b"first"[..], 5, 0x10)
    );
    let hit = find_in_index(&entries[..n], &layout, BASE + 0x3f, false).expect("found");
    assert_eq!(
        (symtab.name(hit.index), hit.offset, hit.size),
        (&b"last"[..], 0xf, 0x10)
    );
    assert_eq!(
        find_in_index(&entries[..n], &layout, BASE + 0x40, false),
        None
    );
    assert_eq!(
        find_in_index(&entries[..n], &layout, BASE + 0x5, false),
        None
    );
}

/// Module regions that overlap or wrap (a corrupt or hostile capture; the
/// kernel never maps two modules over each other): the mirror's fast path
/// must still pick the module the kernel's list scan picks. Found by the
/// `resolve_machine` fuzz target.
#[test]
fn overlapping_module_regions_resolve_like_the_scan() {
    use kallsyms_mirror::format::SymbolBuf;
    use kallsyms_mirror::mirror::{Algo, Mirror, MirrorModule};
    use kallsyms_mirror::Sections;

    let text = 0xffff_ffff_8100_0000u64;
    let core = [RawSymbol {
        addr: text,
        kind: b'T',
        name: b"_stext".to_vec(),
    }];
    let sections = Sections {
        stext: text,
        etext: text + 0x100,
        end: text + 0x100,
        ..Default::default()
    };
    let tables = kallsyms_fast_tests::plain_tables(&core, false, sections);
    let region = |base: u64, size: u64| {
        let mut l = ModuleLayout::default();
        l[0] = MemRegion { base, size };
        l
    };
    let module = |name: &str, sym: u64, layout| {
        let s = [RawSymbol {
            addr: sym,
            kind: b't',
            name: format!("{name}_fn").into_bytes(),
        }];
        MirrorModule::new(name.as_bytes(), &s, layout)
    };
    // "older" comes first in list order and its region contains all of
    // "newer"'s: the scan answers "older" everywhere, a search by region
    // start would answer "newer" inside it. "wraps" covers the top of the
    // address space and the bottom.
    let modules = vec![
        module("older", BASE, region(BASE, 0x3000)),
        module("newer", BASE + 0x1000, region(BASE + 0x1000, 0x1000)),
        module("wraps", u64::MAX - 0xf, region(u64::MAX - 0xf, 0x20)),
    ];
    let m = Mirror::new(tables, modules).expect("mirror");
    let (mut name, mut a, mut b) = (NameBuf::new(), SymbolBuf::new(), SymbolBuf::new());
    for addr in [
        BASE,
        BASE + 0x1000,
        BASE + 0x1800,
        BASE + 0x2800,
        u64::MAX,
        0,
        5,
    ] {
        m.sprint(Algo::Mainline, addr, true, &mut name, &mut a);
        m.sprint(Algo::Fast, addr, true, &mut name, &mut b);
        assert_eq!(a.as_bytes(), b.as_bytes(), "{addr:#x}");
    }
    m.sprint(Algo::Fast, BASE + 0x1800, true, &mut name, &mut b);
    assert_eq!(b.as_bytes(), b"older_fn+0x1800/0x3000 [older]");
}

/// `ModEntry` is 16 bytes, and a `u32` symtab index would not shrink it:
/// the `u64` value's alignment pads `(u64, u32)` to 16 bytes too. Only a
/// narrower value (an offset from the region base) would.
#[test]
fn mod_entry_is_16_bytes_and_u32_index_saves_nothing() {
    #[allow(dead_code)]
    struct WithU32Index {
        value: u64,
        index: u32,
    }
    assert_eq!(std::mem::size_of::<ModEntry>(), 16);
    assert_eq!(std::mem::size_of::<WithU32Index>(), 16);
}
