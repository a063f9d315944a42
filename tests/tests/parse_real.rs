//! The std parsers against this machine's real `/proc/kallsyms` (when the
//! addresses are visible) and against the checked-in sample root in
//! `tests/data/parse/root` (always).

use std::path::{Path, PathBuf};
use std::time::Instant;

use kallsyms_fast::parse::{
    read_nm, Machine, ModuleState, ParseError, ParseErrorKind, ProcKallsyms,
};

fn sample_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/parse/root")
}

/// A fresh, empty directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!(
            "kallsyms-fast-parse-real-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// This machine's `/proc/kallsyms`, or `None` (with a note on stderr) if it
/// cannot be read or its addresses are hidden.
fn live_kallsyms() -> Option<(Vec<u8>, Result<ProcKallsyms, ParseError>)> {
    let path = Path::new("/proc/kallsyms");
    let data = match std::fs::read(path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("skip: cannot read /proc/kallsyms: {e}");
            return None;
        }
    };
    let parsed = ProcKallsyms::parse(path, &data);
    if let Err(e) = &parsed {
        if matches!(
            e.kind,
            ParseErrorKind::ZeroedAddresses | ParseErrorKind::Empty
        ) {
            eprintln!("skip: {e}");
            return None;
        }
    }
    Some((data, parsed))
}

fn check_sorted(syms: &[kallsyms_fast::owned::RawSymbol]) {
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
    let dir = TempDir::new("sample");
    let stats = Machine::capture(&sample_root(), &dir.0).expect("capture");
    // kallsyms, modules, layout, 7 + 2 section files.
    assert_eq!(stats.files, 12);
    let a = Machine::load(&sample_root()).expect("load source");
    let mut b = Machine::load(&dir.0).expect("load copy");
    assert_eq!(b.root, dir.0);
    b.root = a.root.clone();
    assert_eq!(a, b);
}

#[test]
fn sample_errors_name_file_and_line() {
    let dir = TempDir::new("errors");
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
    std::fs::create_dir_all(dir.0.join("proc")).expect("mkdir");
    std::fs::write(dir.0.join("proc/kallsyms"), &bad).expect("write");
    let e = Machine::load(&dir.0).expect_err("bad address");
    let msg = e.to_string();
    assert!(msg.contains("proc/kallsyms:3: bad address"), "{msg}");
}

#[test]
fn real_proc_kallsyms() {
    let Some((data, parsed)) = live_kallsyms() else {
        // Still check something real: the sample is an excerpt of a real
        // /proc/kallsyms.
        sample_root_loads();
        return;
    };
    let k = parsed.expect("this machine's /proc/kallsyms parses");
    assert!(!k.core.is_empty());
    check_sorted(&k.core);
    assert!(k.core.iter().any(|s| s.name == b"_stext"));
    assert!(k.core.iter().any(|s| s.name == b"_sinittext"));
    let lines = data.iter().filter(|&&b| b == b'\n').count();
    let n: usize = k.core.len()
        + k.modules.iter().map(|m| m.symbols.len()).sum::<usize>()
        + k.pseudo.iter().map(|m| m.symbols.len()).sum::<usize>();
    assert_eq!(n, lines, "every line is one symbol");

    // Timing (meaningful with --release).
    let mut best = std::time::Duration::MAX;
    for _ in 0..20 {
        let t = Instant::now();
        let k2 = ProcKallsyms::parse(Path::new("/proc/kallsyms"), &data).expect("parse");
        best = best.min(t.elapsed());
        assert_eq!(k2.core.len(), k.core.len());
    }
    eprintln!(
        "/proc/kallsyms: {} lines, {} bytes, {} core, {} modules, {} pseudo groups; best parse {:?}",
        lines,
        data.len(),
        k.core.len(),
        k.modules.len(),
        k.pseudo.len(),
        best
    );
}

#[test]
fn real_capture_round_trip() {
    if live_kallsyms().is_none() {
        sample_capture_round_trip();
        return;
    }
    let dir = TempDir::new("live");
    let stats = Machine::capture(Path::new("/"), &dir.0).expect("capture /");
    assert!(stats.files >= 1 && stats.bytes > 0);
    let copy = Machine::load(&dir.0).expect("load snapshot");
    let live = Machine::load(Path::new("/")).expect("load live");
    // Modules may come and go between the two reads; the core cannot.
    assert_eq!(copy.core, live.core);
    eprintln!(
        "captured {} files, {} bytes, {} modules",
        stats.files,
        stats.bytes,
        copy.modules.len()
    );
}
