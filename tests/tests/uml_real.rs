//! A real User-Mode Linux capture (Linux 6.12.117, `ARCH=um` x86_64,
//! `xtask/configs/uml.config`, made by `cargo xtask uml-test`), resolved by the
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

use kallsyms_fast_tests::capture::{assert_derived_layouts, assert_resolves_as_kernel, mirror};
use kallsyms_mirror::mirror::sections_from_symbols;
use kallsyms_mirror::parse::machine::Machine;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/regions/uml-6.12.117")
}

#[test]
fn uml_regions_are_the_kernels() {
    let machine = Machine::load(&root()).expect("capture loads");
    assert_derived_layouts(&root(), &machine, 5);
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
    // As `kallsyms-bench` does: KALLSYMS_ALL inferred from the data symbols.
    let sections = sections_from_symbols(&machine.core);
    assert!(sections.all_symbols);
    assert!(
        sections.sinittext < sections.stext,
        "init text below _stext"
    );
    assert_eq!(sections.gate, None);
    let checked = assert_resolves_as_kernel(&root(), &mirror(&machine, sections));
    let raw_init = checked
        .iter()
        .filter(|(addr, _)| *addr >= sections.sinittext && *addr < sections.einittext)
        .inspect(|(addr, want)| assert!(want.starts_with("0x"), "{addr:x} {want}"))
        .count();
    assert!(checked.len() > 3000, "{} truth lines", checked.len());
    assert!(raw_init > 100, "{raw_init} init text lines");
}
