//! Real captures kept under `tests/data/regions/`: the checks every such
//! capture must pass, shared by the x86_64 and UML suites.

use std::path::Path;

use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::mirror::{Algo, Mirror, MirrorModule};
use kallsyms_mirror::module::{MemRegion, ModuleLayout};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::parse::layout::parse_module_layout;
use kallsyms_mirror::parse::machine::Machine;
use kallsyms_mirror::parse::regions::{machine_layouts, LayoutSource, DEFAULT_PAGE_SIZE};
use kallsyms_mirror::Sections;

use crate::plain_tables;

/// Asserts that the regions derived for each of the capture's `modules`
/// modules equal the kernel's `mod->mem[]` in `truth/module_layout` (the
/// dump lists freed init regions as `0 0`).
pub fn assert_derived_layouts(root: &Path, machine: &Machine, modules: usize) {
    let truth_path = root.join("truth/module_layout");
    let truth = parse_module_layout(&truth_path, &std::fs::read(&truth_path).unwrap()).unwrap();
    let got = machine_layouts(machine, DEFAULT_PAGE_SIZE);
    assert_eq!(machine.modules.len(), modules);
    for (m, (layout, source)) in machine.modules.iter().zip(&got) {
        assert_eq!(*source, LayoutSource::Derived, "{}", m.name);
        let (_, want) = truth.iter().find(|(n, _)| *n == m.name).expect("in truth");
        let want = want.map(|r| r.filter(|r| r.1 != 0));
        assert_eq!(*layout, want, "{}", m.name);
    }
}

/// The mirror over the capture, its module regions derived as on a machine
/// with no layout file.
pub fn mirror(machine: &Machine, sections: Sections) -> Mirror {
    let layouts = machine_layouts(machine, DEFAULT_PAGE_SIZE);
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
    Mirror::new(plain_tables(&machine.core, false, sections), modules).unwrap()
}

/// Asserts that both algorithms print every line of
/// `truth/sprint_symbol.txt` (`<hex addr> <text>`) as the kernel did;
/// returns the lines checked.
pub fn assert_resolves_as_kernel(root: &Path, mirror: &Mirror) -> Vec<(u64, String)> {
    let truth = std::fs::read_to_string(root.join("truth/sprint_symbol.txt")).unwrap();
    let (mut name, mut out) = (NameBuf::new(), SymbolBuf::new());
    let mut checked = Vec::new();
    for line in truth.lines() {
        let (addr, want) = line.split_once(' ').unwrap();
        let addr = u64::from_str_radix(addr, 16).unwrap();
        for algo in [Algo::Fast, Algo::Mainline] {
            mirror.sprint(algo, addr, true, &mut name, &mut out);
            assert_eq!(String::from_utf8_lossy(out.as_bytes()), want, "{addr:x}");
        }
        checked.push((addr, want.to_string()));
    }
    checked
}
