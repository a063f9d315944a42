//! Arbitrary `nm -n` text into the table builder, then every lookup: no
//! input may panic; a table the builder accepts must validate, and on it
//! the fast path must give the mainline port's answers.
#![no_main]

use kallsyms_mirror::build::{compress, read_nm, CompressOptions};
use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::layout::KernelLayout;
use kallsyms_mirror::mirror::{Algo, Mirror};
use kallsyms_mirror::name::NameBuf;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, text)) = data.split_first() else {
        return;
    };
    let Ok(symbols) = read_nm(text) else { return };
    // Bit 3: 7.3's tool, bit 1 then meaning --pc-relative.
    let v73 = flags & 8 != 0;
    let opts = CompressOptions {
        layout: if v73 {
            KernelLayout::Linux7_3
        } else {
            KernelLayout::Linux6_12
        },
        all_symbols: flags & 1 != 0,
        absolute_percpu: !v73 && flags & 2 != 0,
        pc_relative: v73 && flags & 2 != 0,
        offsets_addr: symbols.iter().map(|s| s.addr).max().unwrap_or(0) & !3,
        reject_long_names: flags & 4 != 0,
    };
    let Ok(tables) = compress(&symbols, &opts) else {
        return;
    };
    // Empty names are legal for scripts/kallsyms but refused by validation.
    let Ok(m) = Mirror::new(tables, Vec::new()) else {
        return;
    };
    let (mut n1, mut n2) = (NameBuf::new(), NameBuf::new());
    let (mut a, mut b) = (SymbolBuf::new(), SymbolBuf::new());
    for s in &symbols {
        for addr in [s.addr, s.addr.wrapping_add(1), s.addr.wrapping_sub(1)] {
            m.sprint(Algo::Mainline, addr, true, &mut n1, &mut a);
            m.sprint(Algo::Fast, addr, true, &mut n2, &mut b);
            assert_eq!(a.as_bytes(), b.as_bytes());
        }
        assert_eq!(
            m.lookup_name(Algo::Mainline, &s.name, &mut n1),
            m.lookup_name(Algo::Fast, &s.name, &mut n2)
        );
    }
});
