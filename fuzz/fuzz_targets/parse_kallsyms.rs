//! Arbitrary bytes into every text parser of `kallsyms_mirror::parse`: no
//! input may panic, and accepted input must satisfy the documented
//! invariants.
#![no_main]

use std::path::Path;

use kallsyms_mirror::parse::{
    parse_module_layout, parse_nm, parse_proc_modules, parse_section_address, ProcKallsyms,
};
use kallsyms_mirror::KSYM_NAME_LEN;
use libfuzzer_sys::fuzz_target;

fn name_ok(name: &[u8]) -> bool {
    !name.is_empty() && name.len() < KSYM_NAME_LEN && std::str::from_utf8(name).is_ok()
}

fuzz_target!(|data: &[u8]| {
    let file = Path::new("fuzz");
    match ProcKallsyms::parse(file, data) {
        Ok(k) => {
            assert!(k.core.windows(2).all(|w| w[0].addr <= w[1].addr));
            assert!(k.core.iter().all(|s| name_ok(&s.name)));
            for g in k.modules.iter().chain(&k.pseudo) {
                assert!(!g.name.is_empty() && !g.symbols.is_empty());
                assert!(g.symbols.iter().all(|s| name_ok(&s.name)));
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    match parse_nm(file, data) {
        Ok(v) => {
            assert!(v.windows(2).all(|w| w[0].addr <= w[1].addr));
            assert!(v.iter().all(|s| name_ok(&s.name)));
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    match parse_proc_modules(file, data) {
        // A zero base is a module without text, but never every base.
        Ok(v) => assert!(
            v.iter().all(|m| !m.name.is_empty()) && (v.is_empty() || v.iter().any(|m| m.base != 0))
        ),
        Err(e) => {
            let _ = e.to_string();
        }
    }
    if let Err(e) = parse_section_address(file, data) {
        let _ = e.to_string();
    }
    if let Err(e) = parse_module_layout(file, data) {
        let _ = e.to_string();
    }
});
