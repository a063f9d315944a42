//! Module regions derived from a real capture: the test guest (Linux
//! 6.12.117, x86_64) with eight modules loaded (ksym_truth and seven
//! in-tree ones), cut down to the module parts and 1 in 4 of the kernel's
//! answers for module addresses. `truth/` holds what the kernel itself
//! said: `mod->mem[]` (ksym_truth's dump) and `sprint_symbol()` output.

use std::path::{Path, PathBuf};

use kallsyms_fast_tests::capture::{assert_derived_layouts, assert_resolves_as_kernel, mirror};
use kallsyms_mirror::mirror::sections_from_symbols;
use kallsyms_mirror::parse::machine::Machine;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/regions/guest-6.12.117")
}

#[test]
fn derived_regions_are_the_kernels() {
    let machine = Machine::load(&root()).expect("capture loads");
    assert_derived_layouts(&root(), &machine, 8);
}

#[test]
fn resolve_matches_sprint_symbol() {
    let machine = Machine::load(&root()).expect("capture loads");
    let mut sections = sections_from_symbols(&machine.core);
    sections.all_symbols = true; // CONFIG_KALLSYMS_ALL=y in the test kernel
    let checked = assert_resolves_as_kernel(&root(), &mirror(&machine, sections));
    assert!(checked.len() > 1000, "{} truth lines", checked.len());
}
