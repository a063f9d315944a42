//! Differential suite for the per-module name index: its answer against
//! the 6.12 linear `__find_kallsyms_symbol_value()` scan, on symtabs with
//! duplicate, undefined, empty and mapping-symbol names.

use kallsyms_mirror::fast::{build_module_name_index, module_name_index_capacity, NameIndexLayout};
use kallsyms_mirror::mirror::OwnedSymtab;
use kallsyms_mirror::module::ModuleSymtab;
use kallsyms_mirror::owned::RawSymbol;
use proptest::prelude::*;

/// `__find_kallsyms_symbol_value()` (kernel/module/kallsyms.c, 6.12) up to
/// the value: the first symtab index, from 0, whose name equals `name`
/// and which is not `SHN_UNDEF`.
fn linear(symtab: &OwnedSymtab, name: &[u8]) -> Option<usize> {
    (0..symtab.num_symtab()).find(|&i| symtab.name(i) == name && !symtab.is_undef(i))
}

fn symbol_strategy() -> impl Strategy<Value = RawSymbol> {
    (
        0u64..0x4000,
        prop::sample::select(b"tTdDrbUu".to_vec()),
        prop_oneof![
            8 => proptest::collection::vec(prop::sample::select(b"fg_".to_vec()), 1..4),
            1 => Just(Vec::new()),
            1 => Just(b"$x".to_vec()),
            1 => Just(b".Ltmp1".to_vec()),
        ],
    )
        .prop_map(|(off, kind, name)| RawSymbol {
            addr: 0xffff_ffff_c000_0000 + off,
            kind,
            name,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5_000, ..ProptestConfig::default() })]

    #[test]
    fn name_index_equals_linear_scan(
        symbols in proptest::collection::vec(symbol_strategy(), 0..400),
        absent in proptest::collection::vec(prop::sample::select(b"fgh_".to_vec()), 0..5),
    ) {
        let symtab = OwnedSymtab::from_symbols(&symbols);
        let cap = module_name_index_capacity(&symtab);
        let layout = NameIndexLayout::for_len(cap);
        let mut directory = vec![0u32; layout.directory_words];
        let mut entries = vec![0u32; cap];
        let mut keys = vec![0u64; cap];
        let ix = build_module_name_index(&symtab, layout, &mut directory, &mut entries, &mut keys)
            .expect("storage of the documented size");
        let mut probes: Vec<Vec<u8>> = (0..symtab.num_symtab()).map(|i| symtab.name(i).to_vec()).collect();
        probes.push(absent);
        probes.push(Vec::new());
        for name in &probes {
            prop_assert_eq!(ix.lookup_module(&symtab, name), linear(&symtab, name), "name {:?}", name);
        }
    }
}

/// Duplicates by hand: the lowest defined index wins, an undefined entry
/// of the same name before it is passed over.
#[test]
fn lowest_defined_index_wins() {
    let sym = |kind: u8, name: &str| RawSymbol {
        addr: 0x1000,
        kind,
        name: name.as_bytes().to_vec(),
    };
    let symbols = [
        sym(b'U', "dup"),
        sym(b't', "other"),
        sym(b't', "dup"),
        sym(b'T', "dup"),
        sym(b'U', "only_undef"),
    ];
    let symtab = OwnedSymtab::from_symbols(&symbols);
    let cap = module_name_index_capacity(&symtab);
    let layout = NameIndexLayout::for_len(cap);
    let (mut dir, mut entries, mut keys) = (
        vec![0u32; layout.directory_words],
        vec![0u32; cap],
        vec![0u64; cap],
    );
    let ix = build_module_name_index(&symtab, layout, &mut dir, &mut entries, &mut keys)
        .expect("storage of the documented size");
    let dup = ix.lookup_module(&symtab, b"dup").expect("dup is defined");
    assert_eq!(symtab.name(dup), b"dup");
    assert!(!symtab.is_undef(dup));
    assert_eq!(Some(dup), linear(&symtab, b"dup"));
    assert!(symtab.is_undef(dup - 2), "an undefined dup comes first");
    assert_eq!(ix.lookup_module(&symtab, b"only_undef"), None);
    assert_eq!(ix.lookup_module(&symtab, b"absent"), None);
}
