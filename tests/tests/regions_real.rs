//! Module regions derived from a real capture: the test guest (Linux
//! 6.12.117, x86_64) with eight modules loaded (ksym_truth and seven
//! in-tree ones), cut down to the module parts and 1 in 4 of the kernel's
//! answers for module addresses. `truth/` holds what the kernel itself
//! said: `mod->mem[]` (ksym_truth's dump) and `sprint_symbol()` output.

use std::path::{Path, PathBuf};

use kallsyms_fast::format::SymbolBuf;
use kallsyms_fast::mirror::{sections_from_symbols, Algo, Mirror, MirrorModule};
use kallsyms_fast::module::{MemRegion, ModuleLayout};
use kallsyms_fast::name::NameBuf;
use kallsyms_fast::parse::layout::parse_module_layout;
use kallsyms_fast::parse::machine::Machine;
use kallsyms_fast::parse::regions::{machine_layouts, LayoutSource, DEFAULT_PAGE_SIZE};
use kallsyms_fast_tests::plain_tables;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/regions/guest-6.12.117")
}

#[test]
fn derived_regions_are_the_kernels() {
    let machine = Machine::load(&root()).expect("capture loads");
    let truth_path = root().join("truth/module_layout");
    let truth = parse_module_layout(&truth_path, &std::fs::read(&truth_path).unwrap()).unwrap();
    let got = machine_layouts(&machine, DEFAULT_PAGE_SIZE);
    assert_eq!(machine.modules.len(), 8);
    for (m, (layout, source)) in machine.modules.iter().zip(&got) {
        assert_eq!(*source, LayoutSource::Derived, "{}", m.name);
        let (_, want) = truth.iter().find(|(n, _)| *n == m.name).expect("in truth");
        // The dump lists freed init regions as `0 0`.
        let want = want.map(|r| r.filter(|r| r.1 != 0));
        assert_eq!(*layout, want, "{}", m.name);
    }
}

#[test]
fn resolve_matches_sprint_symbol() {
    let machine = Machine::load(&root()).expect("capture loads");
    let layouts = machine_layouts(&machine, DEFAULT_PAGE_SIZE);
    let modules = machine
        .modules
        .iter()
        .zip(&layouts)
        .map(|(m, (l, _))| {
            let mut layout = ModuleLayout::default();
            for (d, s) in layout.iter_mut().zip(l) {
                if let Some((base, size)) = *s {
                    *d = MemRegion { base, size };
                }
            }
            MirrorModule::new(m.name.as_bytes(), &m.symbols, layout)
        })
        .collect();
    let mut sections = sections_from_symbols(&machine.core);
    sections.all_symbols = true; // CONFIG_KALLSYMS_ALL=y in the test kernel
    let mirror = Mirror::new(plain_tables(&machine.core, false, sections), modules).unwrap();
    let truth = std::fs::read_to_string(root().join("truth/sprint_symbol.txt")).unwrap();
    let (mut name, mut out) = (NameBuf::new(), SymbolBuf::new());
    let mut n = 0;
    for line in truth.lines() {
        let (addr, want) = line.split_once(' ').unwrap();
        let addr = u64::from_str_radix(addr, 16).unwrap();
        for algo in [Algo::Fast, Algo::Mainline] {
            mirror.sprint(algo, addr, true, &mut name, &mut out);
            assert_eq!(String::from_utf8_lossy(out.as_bytes()), want, "{addr:x}");
        }
        n += 1;
    }
    assert!(n > 1000, "{n} truth lines");
}
