//! A real User-Mode Linux capture (Linux 6.12.117, `ARCH=um` x86_64,
//! `kernel/uml.config`, made by `cargo xtask uml-test`), resolved by the
//! mirror exactly as the kernel answered. UML's table has every type letter
//! lowercase, init text below `_stext` (with KALLSYMS_ALL `%pS` prints it
//! raw), no per-CPU section and a 0x60000000 base; its modules live at
//! 0xab800000.
//!
//! Cut down from the full capture (38,800 core symbols, a 60,800-function
//! module): the section symbols and five contiguous windows of the core
//! table (init text, the start of `.text`, the middle of `.text`, around
//! `__init_begin`, up to `_end`), each starting and ending where the
//! address changes; the modules crc-itu-t, crc7, crc8, binfmt_misc and
//! ksym_truth whole, with their sysfs sections. `truth/sprint_symbol.txt`
//! keeps the kernel's answers that the cut leaves determined: every core
//! address inside a window (its symbol and the next address are kept), 1 in
//! 4 module addresses, 1 in 20 raw answers outside both.

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
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/regions/uml-6.12.117")
}

#[test]
fn uml_regions_are_the_kernels() {
    let machine = Machine::load(&root()).expect("capture loads");
    let truth_path = root().join("truth/module_layout");
    let truth = parse_module_layout(&truth_path, &std::fs::read(&truth_path).unwrap()).unwrap();
    let got = machine_layouts(&machine, DEFAULT_PAGE_SIZE);
    assert_eq!(machine.modules.len(), 5);
    for (m, (layout, source)) in machine.modules.iter().zip(&got) {
        assert_eq!(*source, LayoutSource::Derived, "{}", m.name);
        let (_, want) = truth.iter().find(|(n, _)| *n == m.name).expect("in truth");
        let want = want.map(|r| r.filter(|r| r.1 != 0));
        assert_eq!(*layout, want, "{}", m.name);
    }
}

#[test]
fn uml_capture_resolves_as_the_kernel() {
    let machine = Machine::load(&root()).expect("capture loads");
    // `VERSION { local: *; }`: all but a handful of symbols are local.
    let lower = machine
        .core
        .iter()
        .filter(|s| s.kind.is_ascii_lowercase())
        .count();
    assert!(
        lower * 20 > machine.core.len() * 19,
        "{lower} of {}",
        machine.core.len()
    );
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
    // As `kallsyms-bench` does: KALLSYMS_ALL inferred from the data symbols.
    let sections = sections_from_symbols(&machine.core);
    assert!(sections.all_symbols);
    assert!(
        sections.sinittext < sections.stext,
        "init text below _stext"
    );
    assert_eq!(sections.gate, None);
    let mirror = Mirror::new(plain_tables(&machine.core, false, sections), modules).unwrap();
    let truth = std::fs::read_to_string(root().join("truth/sprint_symbol.txt")).unwrap();
    let (mut name, mut out) = (NameBuf::new(), SymbolBuf::new());
    let (mut n, mut raw_init) = (0, 0);
    for line in truth.lines() {
        let (addr, want) = line.split_once(' ').unwrap();
        let addr = u64::from_str_radix(addr, 16).unwrap();
        for algo in [Algo::Fast, Algo::Mainline] {
            mirror.sprint(algo, addr, true, &mut name, &mut out);
            assert_eq!(String::from_utf8_lossy(out.as_bytes()), want, "{addr:x}");
        }
        if addr >= sections.sinittext && addr < sections.einittext {
            assert!(want.starts_with("0x"), "{line}");
            raw_init += 1;
        }
        n += 1;
    }
    assert!(n > 3000, "{n} truth lines");
    assert!(raw_init > 100, "{raw_init} init text lines");
}
