//! The std parsers against the checked-in sample root in
//! `tests/data/parse/root` (always) and against this machine's real
//! `/proc/kallsyms` and `/` (`#[ignore]`d: they need root with visible
//! addresses, `kptr_restrict` <= 1; `cargo xtask test`, which runs as root,
//! runs them with `cargo test -p kallsyms-fast-tests --test parse_real --
//! --ignored`, and there they fail when the addresses are hidden).

use std::path::{Path, PathBuf};

use kallsyms_mirror::parse::{read_nm, Machine, ModuleState, ParseErrorKind, ProcKallsyms};

fn sample_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/parse/root")
}

/// A fresh, empty, randomly named directory, removed on drop.
fn temp_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("kallsyms-fast-parse-real-{tag}-"))
        .tempdir()
        .expect("create temp dir")
}

/// This machine's `/proc/kallsyms` and its parse; panics, saying why,
/// when it cannot be read or its addresses are hidden (the tests using it
/// are run where they are visible).
fn live_kallsyms() -> (Vec<u8>, ProcKallsyms) {
    let path = Path::new("/proc/kallsyms");
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read /proc/kallsyms: {e}"));
    match ProcKallsyms::parse(path, &data) {
        Ok(k) => (data, k),
        Err(e)
            if matches!(
                e.kind,
                ParseErrorKind::ZeroedAddresses | ParseErrorKind::Empty
            ) =>
        {
            panic!("{e}: run as root with kernel.kptr_restrict <= 1")
        }
        Err(e) => panic!("this machine's /proc/kallsyms does not parse: {e}"),
    }
}

fn check_sorted(syms: &[kallsyms_mirror::owned::RawSymbol]) {
    assert!(syms.windows(2).all(|w| w[0].addr <= w[1].addr));
}

#[test]
fn sample_root_loads() {
    let m = Machine::load(&sample_root()).expect("sample root");
    assert_eq!(m.core.len(), 44);
    check_sorted(&m.core);
    assert!(m.core.iter().any(|s| s.name == b"_stext" && s.kind == b'T'));
    assert!(m.core.iter().any(|s| s.name == b"_einittext"));

    let names: Vec<&str> = m.modules.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["nf_demo", "crc_demo", "hidden_demo"]);

    let nf = &m.modules[0];
    // File (symtab) order, with the duplicate address kept in order; the
    // ftrace entry for the freed nf_demo_init (listed after crc_demo) is not
    // part of the symtab.
    let syms: Vec<&[u8]> = nf.symbols.iter().map(|s| &s.name[..]).collect();
    assert_eq!(
        syms,
        [
            &b"nf_demo_hook"[..],
            b"nf_demo_register",
            b"nf_demo_unregister",
            b"nf_demo_ops",
            b"__func__.0",
            b"nf_demo_count"
        ]
    );
    let p = nf.proc.as_ref().expect("nf_demo in /proc/modules");
    assert_eq!(
        (p.size, p.state, p.base),
        (28672, ModuleState::Live, 0xffffffffc0a01000)
    );
    assert_eq!(nf.sections.len(), 7);
    assert_eq!(nf.sections[0], (".text".to_string(), 0xffffffffc0a01000));
    assert!(nf.sections.windows(2).all(|w| w[0].1 <= w[1].1));
    let l = nf.layout.expect("nf_demo layout");
    assert_eq!(l[0], Some((0xffffffffc0a01000, 0x1000)));
    assert_eq!(l[4], Some((0, 0)));
    assert_eq!(l[5], None);

    let hidden = &m.modules[2];
    assert!(hidden.symbols.is_empty() && hidden.sections.is_empty());
    assert_eq!(
        hidden.proc.as_ref().map(|p| p.state),
        Some(ModuleState::Coming)
    );

    let ks = ProcKallsyms::read(&sample_root().join("proc/kallsyms")).expect("sample kallsyms");
    let pseudo: Vec<(&str, usize)> = ks
        .pseudo
        .iter()
        .map(|g| (g.name.as_str(), g.symbols.len()))
        .collect();
    assert_eq!(
        pseudo,
        [
            ("nf_demo", 1),
            ("__builtin__ftrace", 1),
            ("bpf", 2),
            ("__builtin__kprobes", 1)
        ]
    );
}

#[test]
fn sample_system_map() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/parse/System.map");
    let v = read_nm(&path).expect("System.map");
    // Undefined (blank-address) symbols are skipped.
    assert_eq!(v.len(), 44);
    let m = Machine::load(&sample_root()).expect("sample root");
    assert_eq!(v, m.core);
}

#[test]
fn sample_capture_round_trip() {
    let dir = temp_dir("sample");
    let stats = Machine::capture(&sample_root(), dir.path()).expect("capture");
    // kallsyms, modules, layout, 7 + 2 section files.
    assert_eq!(stats.files, 12);
    let a = Machine::load(&sample_root()).expect("load source");
    let mut b = Machine::load(dir.path()).expect("load copy");
    assert_eq!(b.root, dir.path());
    b.root = a.root.clone();
    assert_eq!(a, b);
}

#[test]
fn sample_errors_name_file_and_line() {
    let dir = temp_dir("errors");
    let src = std::fs::read(sample_root().join("proc/kallsyms")).expect("sample");
    let mut bad = src.clone();
    // Break line 3's address.
    let line3 = bad
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(1)
        .map(|(i, _)| i + 1)
        .expect("three lines");
    bad[line3] = b'g';
    std::fs::create_dir_all(dir.path().join("proc")).expect("mkdir");
    std::fs::write(dir.path().join("proc/kallsyms"), &bad).expect("write");
    let e = Machine::load(dir.path()).expect_err("bad address");
    let msg = e.to_string();
    assert!(msg.contains("proc/kallsyms:3: bad address"), "{msg}");
}

#[test]
#[ignore = "needs root and visible kernel addresses; `cargo xtask test` runs it"]
fn real_proc_kallsyms() {
    let (data, k) = live_kallsyms();
    assert!(!k.core.is_empty());
    check_sorted(&k.core);
    assert!(k.core.iter().any(|s| s.name == b"_stext"));
    assert!(k.core.iter().any(|s| s.name == b"_sinittext"));
    let lines = data.iter().filter(|&&b| b == b'\n').count();
    let n: usize = k.core.len()
        + k.modules.iter().map(|m| m.symbols.len()).sum::<usize>()
        + k.pseudo.iter().map(|m| m.symbols.len()).sum::<usize>();
    assert_eq!(n, lines, "every line is one symbol");
}

#[test]
#[ignore = "needs root and visible kernel addresses; `cargo xtask test` runs it"]
fn real_capture_round_trip() {
    live_kallsyms();
    let dir = temp_dir("live");
    let stats = Machine::capture(Path::new("/"), dir.path()).expect("capture /");
    assert!(stats.files >= 1 && stats.bytes > 0);
    let copy = Machine::load(dir.path()).expect("load snapshot");
    let live = Machine::load(Path::new("/")).expect("load live");
    // Modules may come and go between the two reads; the core cannot.
    assert_eq!(copy.core, live.core);
}
