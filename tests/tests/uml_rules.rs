//! The rules of 6.12 that make a User-Mode Linux table differ from an
//! x86_64 one, each on a small table shaped like UML's (`arch/um/kernel/
//! dyn.lds.S`: `_text`, then `INIT_TEXT_SECTION`, then `.text` opening with
//! `_stext`; `VERSION { local: *; }`, so every type letter is lowercase; no
//! per-CPU section; base 0x60000000).

use kallsyms_fast_tests::plain_tables;
use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::mirror::{sections_from_symbols, Algo, Mirror};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::owned::RawSymbol;

use kallsyms_fast_tests::sym;

/// A UML-like core: init text below `_stext`, data after `_etext`, many
/// data symbols (KALLSYMS_ALL), all lowercase; in table order
/// (`compare_symbols()`: fewer leading underscores first at one address).
fn uml_core() -> Vec<RawSymbol> {
    let mut v = vec![
        sym(0x6000_0000, b't', "start_kernel"),
        sym(0x6000_0000, b't', "_sinittext"),
        sym(0x6000_0000, b't', "_text"),
        sym(0x6000_0400, b't', "uml_init_helper"),
        sym(0x6000_1000, b't', "_einittext"),
        sym(0x6000_2000, b't', "do_one_thing"),
        sym(0x6000_2000, b't', "_stext"),
        sym(0x6000_2100, b't', "um_set_signals"),
        sym(0x6000_3000, b't', "_etext"),
        sym(0x6000_4000, b'd', "__init_begin"),
        sym(0x6000_4800, b'd', "__init_end"),
    ];
    // Data symbols: more than 5% of the table outside text, as with
    // CONFIG_KALLSYMS_ALL.
    for i in 0..8u64 {
        v.push(sym(0x6000_5000 + i * 0x10, b'd', &format!("data_{i}")));
    }
    v.push(sym(0x6000_6000, b'b', "_end"));
    v
}

fn mirror() -> Mirror {
    let core = uml_core();
    let sections = sections_from_symbols(&core);
    Mirror::new(plain_tables(&core, false, sections), Vec::new()).expect("mirror builds")
}

fn sprint(m: &Mirror, addr: u64) -> String {
    let (mut name, mut out) = (NameBuf::new(), SymbolBuf::new());
    let mut got = Vec::new();
    for algo in [Algo::Fast, Algo::Mainline] {
        m.sprint(algo, addr, true, &mut name, &mut out);
        got.push(String::from_utf8_lossy(out.as_bytes()).into_owned());
    }
    assert_eq!(got[0], got[1], "fast and mainline differ at {addr:#x}");
    got.swap_remove(0)
}

/// Lowercase (local) types change nothing: the table is sorted and looked
/// up by address alone, and KALLSYMS_ALL is still inferred from the data
/// symbols.
#[test]
fn lowercase_types_are_ordinary_symbols() {
    let s = sections_from_symbols(&uml_core());
    assert!(s.all_symbols);
    assert_eq!((s.stext, s.etext), (0x6000_2000, 0x6000_3000));
    let m = mirror();
    assert_eq!(sprint(&m, 0x6000_2104), "um_set_signals+0x4/0xf00");
    assert_eq!(sprint(&m, 0x6000_5011), "data_1+0x1/0x10");
}

/// `is_ksym_addr()` with KALLSYMS_ALL is `is_kernel()`: `[_stext, _end)`
/// and `[__init_begin, __init_end)`. UML's init text lies below `_stext`
/// and outside `__init_begin..__init_end`, so `%pS` prints it raw, even
/// though `/proc/kallsyms` lists its symbols.
#[test]
fn init_text_below_stext_prints_raw() {
    let m = mirror();
    assert_eq!(sprint(&m, 0x6000_0000), "0x60000000");
    assert_eq!(sprint(&m, 0x6000_0404), "0x60000404");
    assert_eq!(sprint(&m, 0x6000_1fff), "0x60001fff");
    // The first byte of `_stext` is in, and so is `__init_begin`'s range.
    assert_eq!(sprint(&m, 0x6000_2000), "do_one_thing+0x0/0x100");
    assert_eq!(sprint(&m, 0x6000_4010), "__init_begin+0x10/0x800");
    // `_end` itself is out.
    assert_eq!(sprint(&m, 0x6000_6000), "0x60006000");
}

/// No gate area on UML: x86_64's vsyscall page is recognised only by the
/// presence of `emulate_vsyscall`, which UML does not build.
#[test]
fn no_gate_area_without_emulate_vsyscall() {
    assert_eq!(sections_from_symbols(&uml_core()).gate, None);
    let m = mirror();
    assert_eq!(sprint(&m, 0xffff_ffff_ff60_0000), "0xffffffffff600000");
}
