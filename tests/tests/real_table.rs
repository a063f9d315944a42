//! Real data, re-encoded in the kernel's order: the embedded real table the
//! benchmark ships (a Linux 6.18 x86_64 machine's, on any host), and this
//! machine's /proc/kallsyms (`#[ignore]`d: it needs root with visible
//! addresses; `cargo xtask test` runs it, and there it fails without them). For every symbol: the fast path and the
//! mainline port print the same `%pS`, `%ps` and wchan text at its start,
//! inside it and just before it (wchan also through the cache, on two
//! misses and a hit), and resolve its name to the same address.
//! Independently of both: an address resolves exactly when the kernel's
//! `is_ksym_addr()` says the core table covers it, and at each distinct
//! text address `%ps` prints the first symbol `/proc/kallsyms` lists there
//! (it lists the table in kernel order, so that is the alias the kernel
//! prints).

use std::io::Read;

use kallsyms_mirror::build::encode_kernel_order;
use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::mirror::{sections_from_symbols, Algo, Mirror};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::parse::ProcKallsyms;

/// The embedded sample: `/proc/kallsyms` of a Linux 6.18.44 x86_64 machine.
fn sample_text() -> Vec<u8> {
    let mut t = Vec::new();
    flate2::read::GzDecoder::new(
        &include_bytes!("../../userspace-bench/data/sample-kallsyms.gz")[..],
    )
    .read_to_end(&mut t)
    .expect("embedded sample decompresses");
    t
}

#[test]
fn fast_equals_mainline_on_the_embedded_sample() {
    fast_equals_mainline(&sample_text(), "embedded sample");
}

#[test]
#[ignore = "needs root and visible kernel addresses; `cargo xtask test` runs it"]
fn fast_equals_mainline_on_this_machines_table() {
    let text = std::fs::read("/proc/kallsyms").expect("/proc/kallsyms readable");
    assert!(
        text.len() > 1000 && !text.starts_with(b"0000000000000000"),
        "/proc/kallsyms hides its addresses from this process: run as root"
    );
    fast_equals_mainline(&text, "/proc/kallsyms");
}

fn fast_equals_mainline(text: &[u8], source: &str) {
    let parsed = ProcKallsyms::parse(std::path::Path::new(source), text).expect("parses");
    let core = parsed.core;
    assert!(core.len() > 10_000, "{source}: only {} symbols", core.len());
    let sections = sections_from_symbols(&core);
    let abs = core
        .iter()
        .any(|s| s.name == b"__per_cpu_start" && s.addr < sections.stext);
    let tables = encode_kernel_order(&core, abs, sections).expect("encodes");
    let view = tables.view();
    view.check_name_order(|pos| kallsyms_mirror::name::record_offset(&view, pos))
        .expect("the kernel-order encoder writes seqs_of_names in name order");
    let m = Mirror::new(tables, Vec::new()).expect("validates");
    let (mut n1, mut n2) = (NameBuf::new(), NameBuf::new());
    let (mut a, mut b) = (SymbolBuf::new(), SymbolBuf::new());
    let mut first_aliases = 0usize;
    for (i, s) in core.iter().enumerate() {
        for addr in [s.addr, s.addr + 1, s.addr.wrapping_sub(1)] {
            m.sprint(Algo::Mainline, addr, true, &mut n1, &mut a);
            m.sprint(Algo::Fast, addr, true, &mut n2, &mut b);
            assert_eq!(a.as_bytes(), b.as_bytes(), "%pS of {addr:#x}");
            m.wchan(Algo::Mainline, addr, &mut n1, &mut a);
            m.wchan(Algo::Fast, addr, &mut n2, &mut b);
            assert_eq!(a.as_bytes(), b.as_bytes(), "wchan of {addr:#x}");
            // Through the cache: two misses (the second inserts), a hit.
            for round in ["first miss", "second miss", "hit"] {
                m.wchan(Algo::Cached, addr, &mut n2, &mut b);
                assert_eq!(
                    a.as_bytes(),
                    b.as_bytes(),
                    "cached wchan of {addr:#x}, {round}"
                );
            }
            assert_eq!(
                a.as_bytes() != b"0",
                sections.is_ksym_addr(addr),
                "wchan of {addr:#x}: {:?}",
                String::from_utf8_lossy(a.as_bytes())
            );
        }
        let first = i == 0 || core[i - 1].addr != s.addr;
        if first && sections.is_ksym_addr(s.addr) {
            m.sprint(Algo::Fast, s.addr, false, &mut n2, &mut b);
            assert_eq!(
                b.as_bytes(),
                s.name.as_slice(),
                "%ps of {:#x}: {:?}",
                s.addr,
                String::from_utf8_lossy(b.as_bytes())
            );
            first_aliases += 1;
        }
    }
    assert!(
        first_aliases > 0,
        "{source}: no symbol inside the kernel's bounds"
    );
    for s in core.iter().step_by(7) {
        assert_eq!(
            m.lookup_name(Algo::Mainline, &s.name, &mut n1),
            m.lookup_name(Algo::Fast, &s.name, &mut n2),
            "name {:?}",
            String::from_utf8_lossy(&s.name)
        );
    }
    // The very first alias at _stext is what the kernel prints there.
    let stext = sections.stext;
    m.sprint(Algo::Fast, stext, true, &mut n1, &mut a);
    let first = core
        .iter()
        .find(|s| s.addr == stext)
        .expect("a symbol at _stext");
    assert!(
        a.as_bytes().starts_with(&first.name),
        "{:?}",
        String::from_utf8_lossy(a.as_bytes())
    );
}
