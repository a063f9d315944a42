//! The path `kallsyms-bench resolve` runs, from a machine's files to
//! printed symbols: `/proc/kallsyms` text, `/proc/modules`, the module
//! layout file and sysfs section files are written under a scratch root,
//! loaded by the bench's own loader (parse, kernel-order encoder, module
//! layouts, `Mirror::new`), and for addresses derived from the input (every
//! core and module symbol, one below and above, every module region's
//! bounds) the fast path must print what the mainline port and the linear
//! scan print: `sprint_symbol()`, `sprint_symbol_no_offset()` and
//! `/proc/PID/wchan`, the latter also through the wchan cache (miss, then
//! hit). Nothing may panic; a load error must name its file.
//!
//! Input: NUL-separated parts. Part 0 is `proc/kallsyms`; part 1, if
//! present, `proc/modules`; part 2, if present,
//! `kallsyms-fast/module_layout`; every further part is one sysfs section
//! file, `<module> <section>\n<content>` (names limited to
//! `[A-Za-z0-9_.-]`, so nothing is written outside the scratch root).
#![no_main]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::mirror::{Algo, Mirror};
use kallsyms_mirror::name::NameBuf;
use libfuzzer_sys::fuzz_target;

// The loader `kallsyms-bench resolve` uses, compiled here unchanged (the
// bench is a binary crate, so it cannot be a dependency).
#[allow(dead_code)]
#[path = "../../userspace-bench/src/load.rs"]
mod load;

/// One scratch root for the whole run, emptied before every input so a
/// crash reproduces from its input alone.
fn root() -> &'static Path {
    static ROOT: OnceLock<tempfile::TempDir> = OnceLock::new();
    ROOT.get_or_init(|| tempfile::tempdir().expect("scratch root"))
        .path()
}

fn safe_name(s: &[u8]) -> Option<&str> {
    let ok = !s.is_empty()
        && s.len() <= 64
        && s != b"."
        && s != b".."
        && s.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
    ok.then(|| std::str::from_utf8(s).ok()).flatten()
}

fn write(path: PathBuf, data: &[u8]) {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).expect("scratch dir");
    }
    fs::write(path, data).expect("scratch file");
}

fn lay_out(root: &Path, data: &[u8]) {
    for sub in ["proc", "sys", "kallsyms-fast"] {
        let _ = fs::remove_dir_all(root.join(sub));
    }
    let mut parts = data.split(|&b| b == 0);
    write(root.join("proc/kallsyms"), parts.next().unwrap_or(&[]));
    if let Some(p) = parts.next() {
        write(root.join("proc/modules"), p);
    }
    if let Some(p) = parts.next() {
        write(root.join("kallsyms-fast/module_layout"), p);
    }
    for p in parts {
        let (head, content) = match p.iter().position(|&b| b == b'\n') {
            Some(i) => (&p[..i], &p[i + 1..]),
            None => (p, &[][..]),
        };
        let mut words = head.splitn(2, |&b| b == b' ');
        let (Some(m), Some(s)) = (
            words.next().and_then(safe_name),
            words.next().and_then(safe_name),
        ) else {
            continue;
        };
        write(
            root.join("sys/module").join(m).join("sections").join(s),
            content,
        );
    }
}

fn probes(loaded: &load::Loaded) -> Vec<u64> {
    let mut v = vec![0, 1, u64::MAX];
    let syms = loaded
        .machine
        .core
        .iter()
        .chain(loaded.machine.modules.iter().flat_map(|m| &m.symbols));
    for s in syms {
        v.extend([s.addr, s.addr.wrapping_sub(1), s.addr.wrapping_add(1)]);
    }
    for m in loaded.mirror.modules() {
        for r in m.layout.iter().filter(|r| r.size != 0) {
            let end = r.base.wrapping_add(r.size);
            v.extend([r.base, r.base.wrapping_sub(1), end, end.wrapping_sub(1)]);
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

fn print(m: &Mirror, algo: Algo, addr: u64, form: u8) -> Vec<u8> {
    let (mut name, mut out) = (NameBuf::new(), SymbolBuf::new());
    match form {
        0 => m.sprint(algo, addr, true, &mut name, &mut out),
        1 => m.sprint(algo, addr, false, &mut name, &mut out),
        _ => m.wchan(algo, addr, &mut name, &mut out),
    }
    out.as_bytes().to_vec()
}

fuzz_target!(|data: &[u8]| {
    let root = root();
    lay_out(root, data);
    let loaded = match load::load(root) {
        Ok(l) => l,
        Err(e) => {
            assert!(
                e.contains(&*root.to_string_lossy()),
                "error does not name its file: {e}"
            );
            return;
        }
    };
    let m = &loaded.mirror;
    for addr in probes(&loaded) {
        for form in 0..3 {
            let want = print(m, Algo::Mainline, addr, form);
            assert_eq!(
                print(m, Algo::Fast, addr, form),
                want,
                "fast, form {form}, {addr:#x}"
            );
            assert_eq!(
                print(m, Algo::Linear, addr, form),
                want,
                "linear, form {form}, {addr:#x}"
            );
        }
        let want = print(m, Algo::Mainline, addr, 2);
        for round in ["miss", "hit"] {
            assert_eq!(
                print(m, Algo::Cached, addr, 2),
                want,
                "cached wchan ({round}) at {addr:#x}"
            );
        }
    }
});
