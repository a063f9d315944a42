//! Byte-identity of `kallsyms_mirror::build` with Linux 6.12 `scripts/kallsyms`.
//!
//! - Always: the checked-in golden inputs under `tests/golden/` must give
//!   the SHA-256 (and spot-checked lines) of the real tool's output recorded
//!   there, and the produced tables must round-trip to the sorted symbols.
//! - Against the real tool (`#[ignore]`d: they need the 6.12 kernel tree
//!   and `gcc`, which `cargo xtask setup` provides; `cargo xtask test` runs
//!   them after the kernel build with `cargo test -p kallsyms-fast-tests
//!   --test compressor_identity -- --ignored identical_to_real_tool`): the
//!   real `scripts/kallsyms` is built in a temporary directory from the tree
//!   the harness uses (`$KFAST_KERNEL_SRC`, else
//!   `$KFAST_CACHE/src/linux-source-6.12`, `KFAST_CACHE` defaulting to
//!   `/var/cache/kallsyms-fast`) and run on the golden inputs, on
//!   `/proc/kallsyms` (when its addresses are visible) and on generated
//!   inputs, with every flag combination; the output of [`emit_asm`] must be
//!   byte-identical, and where the tool fails, ours must fail too. Without
//!   the tree or gcc they fail, naming what is missing.
//!
//! `KFAST_REGEN_GOLDEN=1 cargo test -p kallsyms-fast-tests --test
//! compressor_identity regen_golden -- --ignored` rewrites the generated
//! golden files (see `tests/golden/README.md`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use kallsyms_mirror::build::{compress, emit_asm, read_nm, CompressOptions};
use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::layout::KernelLayout;
use kallsyms_mirror::mirror::{Algo, Mirror};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::owned::RawSymbol;

/// The flag combinations of `scripts/kallsyms` 6.12.
const COMBOS: [(&str, bool, bool); 4] = [
    ("", false, false),
    ("--all-symbols", true, false),
    ("--absolute-percpu", false, true),
    ("--all-symbols --absolute-percpu", true, true),
];

fn opts(all: bool, pcpu: bool) -> CompressOptions {
    CompressOptions {
        all_symbols: all,
        absolute_percpu: pcpu,
        ..Default::default()
    }
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

/// The checked-in golden inputs.
const GOLDEN_INPUTS: [&str; 3] = [
    "kallsyms-slice.nm",
    "synthetic-mixed.nm",
    "synthetic-percpu0.nm",
];

// ---------------------------------------------------------------------------
// SHA-256 (FIPS 180-4), to check outputs against the recorded digests
// without a dependency.

fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, c) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

// ---------------------------------------------------------------------------
// Deterministic input generation.

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

const PARTS: [&str; 24] = [
    "sys_", "do_", "__x64_", "_", "init", "read", "write", "page", "lock", "un", "mm", "net",
    "dev", "ops", "_fn", "__pfx_", "irq", "x", "q", "aa", "bpf", "trace", "event", "s",
];

fn word(rng: &mut Rng) -> Vec<u8> {
    let mut n = Vec::new();
    for _ in 0..1 + rng.below(5) {
        n.extend_from_slice(rng.pick(&PARTS).as_bytes());
    }
    n
}

fn line(out: &mut Vec<u8>, addr: u64, kind: u8, name: &[u8]) {
    out.extend_from_slice(format!("{addr:016x} ").as_bytes());
    out.push(kind);
    out.push(b' ');
    out.extend_from_slice(name);
    out.push(b'\n');
}

/// A crafted `nm -n`-like input exercising every rule of the tool: aliases
/// (weak, linker-provided, underscores), big names (two-byte lengths and
/// skipped > 511-byte ones), per-cpu symbols at `pcpu_base`, the text and
/// init-text ranges with their corner cases, `__start_`/`__stop_`, ignored
/// types, non-UTF-8 and quote characters, empty names, unsorted lines.
fn synthetic(seed: u64, pcpu_base: u64, n_text: usize) -> Vec<u8> {
    let mut rng = Rng(seed | 1);
    let mut o = Vec::new();
    let text = 0xffff_ffff_8100_0000u64;
    // Per-cpu area.
    line(&mut o, pcpu_base, b'D', b"__per_cpu_start");
    line(&mut o, pcpu_base, b'D', b"fixed_percpu_data");
    let mut a = pcpu_base;
    for i in 0..40 {
        a += 8 * rng.below(4);
        let k = *rng.pick(b"DdBb");
        let mut n = b"pcpu_".to_vec();
        n.extend(word(&mut rng));
        n.extend(format!("{i}").as_bytes());
        line(&mut o, a, k, &n);
    }
    line(&mut o, a + 8, b'D', b"__per_cpu_end");
    // Ignored and kept absolute symbols.
    line(&mut o, 0x1234, b'A', b"some_abs");
    line(&mut o, 0x10, b'a', b"__gp_local");
    line(&mut o, text + 0x40, b'A', b"__gp");
    line(&mut o, text + 0x80, b'a', b"__kernel_sigtramp");
    line(&mut o, text + 0x90, b'u', b"unique_global");
    line(&mut o, text + 0x90, b'n', b"debug_thing");
    line(&mut o, text + 0x98, b'U', b"undef_listed");
    // Start of text, with the usual aliases.
    line(&mut o, text, b'T', b"srso_alias_untrain_ret");
    line(&mut o, text, b'T', b"_stext");
    line(&mut o, text, b'T', b"_text");
    line(&mut o, text, b'W', b"weak_at_text");
    line(&mut o, text, b'T', b"__pi__text");
    line(&mut o, text, b'T', b"__start_text_marker");
    line(&mut o, text, b't', b"__text_start");
    line(&mut o, text, b'T', b"___three");
    line(&mut o, text, b'T', b"");
    let mut a = text + 0x10;
    for i in 0..n_text {
        a += rng.below(4) * 16;
        let r = rng.below(100);
        let k = *rng.pick(b"TTTttttWwVvRrDd");
        let mut n = word(&mut rng);
        match r {
            0..=1 => {
                // A big name: high-entropy so the compressed length stays > 127.
                let len = 120 + rng.below(392) as usize;
                n = (0..len)
                    .map(|_| {
                        b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
                            [rng.below(63) as usize]
                    })
                    .collect();
            }
            2 => n.extend_from_slice(b"\xff\xfe\x80latin\xe9"),
            3 => n.extend_from_slice(b"\"q\\uote"),
            4 => n.extend_from_slice(b" spaced\tname"),
            5 => {
                n = b"__start_".to_vec();
                n.extend(word(&mut rng));
            }
            6 => {
                n = b"__stop_".to_vec();
                n.extend(word(&mut rng));
            }
            7 => {
                n = b"__".to_vec();
                n.extend(word(&mut rng));
                n.extend_from_slice(b"_end");
            }
            _ => {}
        }
        n.extend(format!(".{}", i % 7).as_bytes());
        line(&mut o, a, k, &n);
        if rng.below(8) == 0 {
            // An alias at the same address.
            let alias_kind = *rng.pick(b"TtWw");
            let mut m = b"_".repeat(rng.below(3) as usize);
            m.extend(word(&mut rng));
            line(&mut o, a, alias_kind, &m);
        }
    }
    // Exactly 511 bytes (kept) and 512/700 bytes (dropped with a warning).
    line(&mut o, a + 16, b'T', &b"y".repeat(511));
    line(&mut o, a + 16, b'T', &b"z".repeat(512));
    line(&mut o, a + 16, b'T', &b"w".repeat(700));
    // End of text: symbols at _etext other than _etext are dropped.
    let etext = a + 32;
    line(&mut o, etext, b'T', b"at_etext");
    line(&mut o, etext, b'T', b"_etext");
    line(&mut o, etext, b'R', b"__start_rodata");
    line(&mut o, etext + 0x100, b'R', b"some_rodata");
    line(&mut o, etext + 0x108, b'D', b"some_data");
    line(&mut o, etext + 0x110, b'd', b"__stop_rodata_thing");
    // Init text.
    let init = etext + 0x10000;
    line(&mut o, init, b'T', b"_sinittext");
    line(&mut o, init, b'D', b"__init_begin");
    let mut a = init;
    for i in 0..n_text / 8 {
        a += 16 + rng.below(4) * 16;
        let mut n = word(&mut rng);
        n.extend_from_slice(format!("_init{i}").as_bytes());
        line(&mut o, a, *rng.pick(b"Tt"), &n);
    }
    line(&mut o, a + 16, b'T', b"_einittext");
    line(&mut o, a + 16, b't', b"at_einittext");
    line(&mut o, a + 32, b'D', b"__init_end");
    line(&mut o, a + 64, b'B', b"some_bss");
    line(&mut o, a + 128, b'B', b"_end");
    // A few unsorted lines: the tool sorts by address.
    line(&mut o, text + 0x20, b't', b"late_listed_text");
    line(&mut o, text + 0x20, b'W', b"late_listed_weak");
    o
}

/// Small random inputs, some malformed, for differential runs.
fn fuzz_input(seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut o = Vec::new();
    let base = *rng.pick(&[0u64, 0xffff_ffff_8100_0000, 0x1000, 0xffff_ffff_ffff_f000]);
    let n = rng.below(60) as usize;
    // A third of the inputs get malformed or unusual lines.
    let noisy = rng.below(3) == 0;
    let specials: [&[u8]; 12] = [
        b"_stext",
        b"_etext",
        b"_sinittext",
        b"_einittext",
        b"_text",
        b"__per_cpu_start",
        b"__per_cpu_end",
        b"__start_x",
        b"__stop_x",
        b"__gp",
        b"__foo_start",
        b"",
    ];
    for _ in 0..n {
        let addr = base.wrapping_add(rng.below(0x200));
        let kind = *rng.pick(b"TtWwDdBbRrAauUnN?V");
        let name: Vec<u8> = if rng.below(4) == 0 {
            rng.pick(&specials).to_vec()
        } else {
            let mut w = word(&mut rng);
            if rng.below(30) == 0 {
                w = b"k".repeat(500 + rng.below(30) as usize);
            }
            w
        };
        match if noisy { rng.below(40) } else { 99 } {
            0 => o.extend_from_slice(format!("0x{addr:x} ").as_bytes()),
            1 => o.extend_from_slice(format!("  {addr:x} ").as_bytes()),
            2 => o.extend_from_slice(format!("-{addr:x} ").as_bytes()),
            3 => o.extend_from_slice(format!("+{addr:X} ").as_bytes()),
            4 => o.extend_from_slice(b"1ffffffffffffffff "),
            5 => o.extend_from_slice(b"0xz "),
            6 => o.extend_from_slice(format!("{addr:x}  ").as_bytes()),
            7 => o.extend_from_slice(b"\n"),
            _ => o.extend_from_slice(format!("{addr:016x} ").as_bytes()),
        }
        match if noisy { rng.below(60) } else { 99 } {
            0 => o.push(0xc3),
            1 => o.push(b'\t'),
            _ => o.push(kind),
        }
        o.push(if noisy && rng.below(80) == 0 {
            b'\t'
        } else {
            b' '
        });
        o.extend_from_slice(&name);
        o.push(b'\n');
    }
    if rng.below(4) == 0 {
        // No final newline.
        o.pop();
    }
    o
}

// ---------------------------------------------------------------------------
// The real tool.

/// Where the real tool and the generated inputs live for this run.
fn scratch() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"))
}

/// Builds `scripts/kallsyms` once; panics, naming what is missing, when the
/// kernel tree or gcc is not there.
fn real_tool() -> &'static Path {
    static TOOL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let tool = TOOL.get_or_init(|| {
        let src = kallsyms_fast_tests::kernel_src();
        let c = src.join("scripts/kallsyms.c");
        let inc = src.join("scripts/include");
        if !c.is_file() || !inc.join("xalloc.h").is_file() {
            return Err(format!(
                "no 6.12 kernel tree: {} missing (run `cargo xtask setup`, or set \
                 KFAST_CACHE or KFAST_KERNEL_SRC)",
                c.display()
            ));
        }
        let bin = scratch().path().join("kallsyms");
        let st = Command::new("gcc")
            .arg("-O2")
            .arg("-I")
            .arg(&inc)
            .arg("-o")
            .arg(&bin)
            .arg(&c)
            .status();
        match st {
            Ok(s) if s.success() => Ok(bin),
            Ok(s) => Err(format!("gcc failed to build {}: {s}", c.display())),
            Err(e) => Err(format!("cannot run gcc: {e}")),
        }
    });
    match tool {
        Ok(p) => p,
        Err(e) => panic!("real scripts/kallsyms unavailable: {e}"),
    }
}

/// Runs the real tool: `Some(stdout)` on success, `None` when it exits with
/// an error.
fn run_real(tool: &Path, input: &Path, flags: &str) -> Option<Vec<u8>> {
    let out = Command::new(tool)
        .args(flags.split_whitespace())
        .arg(input)
        .output()
        .expect("running scripts/kallsyms");
    out.status.success().then_some(out.stdout)
}

/// Ours: `Ok(asm)`, or `Err(message)` where the tool exits with an error.
fn run_ours(input: &[u8], all: bool, pcpu: bool) -> Result<Vec<u8>, String> {
    let syms = read_nm(input).map_err(|e| e.to_string())?;
    emit_asm(&syms, &opts(all, pcpu)).map_err(|e| e.to_string())
}

fn first_difference(ours: &[u8], real: &[u8]) -> String {
    let mut a = ours.split(|&b| b == b'\n');
    let mut b = real.split(|&b| b == b'\n');
    for n in 1.. {
        match (a.next(), b.next()) {
            (None, None) => break,
            (x, y) if x == y => continue,
            (x, y) => {
                let show = |l: Option<&[u8]>| {
                    l.map_or("<end of output>".into(), |l| {
                        String::from_utf8_lossy(l).into_owned()
                    })
                };
                return format!(
                    "first difference at line {n}:\n  ours: {}\n  real: {}",
                    show(x),
                    show(y)
                );
            }
        }
    }
    "outputs differ only in the final newline".into()
}

/// Compares ours with the real tool on one input file with every flag
/// combination; returns how many of them fail in both.
fn compare_with_real(tool: &Path, path: &Path, what: &str) -> usize {
    let input = std::fs::read(path).expect("reading input");
    let mut failing = 0;
    for (flags, all, pcpu) in COMBOS {
        let real = run_real(tool, path, flags);
        let ours = run_ours(&input, all, pcpu);
        match (&ours, &real) {
            (Ok(o), Some(r)) => assert!(
                o == r,
                "{what} [{flags}]: output differs; {}",
                first_difference(o, r)
            ),
            (Err(_), None) => failing += 1,
            (Ok(_), None) => panic!("{what} [{flags}]: scripts/kallsyms fails, ours succeeds"),
            (Err(e), Some(_)) => {
                panic!("{what} [{flags}]: ours fails ({e}), scripts/kallsyms succeeds")
            }
        }
    }
    failing
}

fn scratch_dir() -> PathBuf {
    scratch().path().to_path_buf()
}

// ---------------------------------------------------------------------------
// Golden data.

/// `expected.sha256`: `digest  input  flags...` (digest `error` where the
/// tool fails).
fn expected_digests() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(golden_dir().join("expected.sha256"))
        .expect("golden/expected.sha256");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut it = l.splitn(3, "  ");
            let d = it.next().unwrap_or_default().to_string();
            let f = it.next().unwrap_or_default().to_string();
            let flags = it.next().unwrap_or_default().trim().to_string();
            (d, f, flags)
        })
        .collect()
}

fn combo(flags: &str) -> (bool, bool) {
    (
        flags.contains("--all-symbols"),
        flags.contains("--absolute-percpu"),
    )
}

#[test]
fn golden_digests() {
    let digests = expected_digests();
    assert_eq!(
        digests.len(),
        GOLDEN_INPUTS.len() * COMBOS.len(),
        "expected.sha256 is incomplete"
    );
    for (digest, file, flags) in digests {
        let input = std::fs::read(golden_dir().join(&file)).expect("golden input");
        let (all, pcpu) = combo(&flags);
        match run_ours(&input, all, pcpu) {
            Ok(asm) => assert_eq!(
                sha256_hex(&asm),
                digest,
                "{file} [{flags}]: SHA-256 of emit_asm differs"
            ),
            Err(e) => assert_eq!(
                digest, "error",
                "{file} [{flags}]: ours fails ({e}), the tool did not"
            ),
        }
    }
}

#[test]
fn golden_spot_checks() {
    // `spot-checks.txt`: `input<TAB>flags<TAB>line number<TAB>line`.
    let text = std::fs::read(golden_dir().join("spot-checks.txt")).expect("golden/spot-checks.txt");
    let mut cache: std::collections::HashMap<(String, String), Vec<Vec<u8>>> = Default::default();
    let mut checked = 0;
    for l in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut f = l.splitn(4, |&b| b == b'\t');
        let file = String::from_utf8_lossy(f.next().unwrap_or_default()).into_owned();
        let flags = String::from_utf8_lossy(f.next().unwrap_or_default()).into_owned();
        let n: usize = String::from_utf8_lossy(f.next().unwrap_or_default())
            .parse()
            .expect("line number");
        let want = f.next().unwrap_or_default();
        let lines = cache
            .entry((file.clone(), flags.clone()))
            .or_insert_with(|| {
                let input = std::fs::read(golden_dir().join(&file)).expect("golden input");
                let (all, pcpu) = combo(&flags);
                let asm = run_ours(&input, all, pcpu).expect("golden input builds");
                asm.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
            });
        let got = lines
            .get(n - 1)
            .map(Vec::as_slice)
            .unwrap_or(b"<end of output>");
        assert!(
            got == want,
            "{file} [{flags}]: line {n} differs:\n  ours: {}\n  real: {}",
            String::from_utf8_lossy(got),
            String::from_utf8_lossy(want)
        );
        checked += 1;
    }
    assert!(checked > 500, "too few spot checks ({checked})");
}

/// Expands every name record of the tables and checks it against the input:
/// the names come back in address order, each with the address it was
/// given, as exactly the symbols the tool keeps (which the emitted text
/// lists, in order, in its `kallsyms_offsets` comments).
fn check_round_trip(input: &[u8], all: bool, pcpu: bool, what: &str) {
    let syms = read_nm(input).expect("input parses");
    let o = opts(all, pcpu);
    let tables = compress(&syms, &o).expect("tables build");
    let view = tables.view();
    let mut scratch = vec![0u64; view.len().div_ceil(64)];
    // The validator refuses empty names, which the tool emits for
    // `ADDR TYPE ` lines (the synthetic inputs have one).
    if !syms.iter().any(|s| s.name.is_empty()) {
        view.validate(&mut scratch)
            .unwrap_or_else(|e| panic!("{what}: invalid tables: {e}"));
        view.check_name_order(|pos| kallsyms_mirror::name::record_offset(&view, pos))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
    }

    // Address order, from the tables.
    let mut expanded = Vec::with_capacity(view.len());
    let mut off = 0;
    for pos in 0..view.len() {
        let (data, len) = view.record_at(off).expect("record");
        let mut s = Vec::new();
        for &t in &view.names[data..data + len] {
            s.extend_from_slice(view.token(t).expect("token"));
        }
        off = data + len;
        let addr = view.sym_address(pos).expect("address");
        expanded.push((s[0], s[1..].to_vec(), addr));
    }

    // The kept symbols, from the emitted `kallsyms_offsets` comments.
    let asm = emit_asm(&syms, &o).expect("asm");
    let text: Vec<&[u8]> = asm.split(|&b| b == b'\n').collect();
    let start = text
        .iter()
        .position(|l| *l == b"kallsyms_offsets:")
        .expect("offsets label")
        + 1;
    let listed: Vec<&[u8]> = text[start..]
        .iter()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let c = l.windows(3).position(|w| w == b"/* ").expect("comment") + 3;
            &l[c..l.len() - 3]
        })
        .collect();
    assert_eq!(listed.len(), expanded.len(), "{what}: symbol count");

    // Every kept symbol is an input symbol with that address.
    let mut by_name: std::collections::HashMap<&[u8], Vec<u64>> = Default::default();
    for s in &syms {
        by_name.entry(&s.name[..]).or_default().push(s.addr);
    }
    let mut prev = 0u64;
    for (i, ((kind, name, addr), l)) in expanded.iter().zip(&listed).enumerate() {
        assert_eq!(&l[1..], &name[..], "{what}: name {i}");
        assert_eq!(l[0], *kind, "{what}: type of {i}");
        let addrs = by_name
            .get(&name[..])
            .unwrap_or_else(|| panic!("{what}: {i} not an input name"));
        assert!(
            addrs.contains(addr),
            "{what}: {i} has address {addr:#x}, input has {addrs:x?}"
        );
        assert!(i == 0 || *addr >= prev, "{what}: {i} out of address order");
        prev = *addr;
    }

    // kallsyms_seqs_of_names lists the same symbols in name order.
    let mut last: Option<&[u8]> = None;
    for i in 0..view.len() {
        let pos = view.symbol_seq(i).expect("seq");
        let name = &expanded[pos].1[..];
        assert!(
            last.is_none_or(|p| p <= name),
            "{what}: seqs_of_names not in name order at {i}"
        );
        last = Some(name);
    }

    // With --all-symbols, exactly the non-ignored, not over-long input
    // symbols are kept.
    if all {
        let mut want: Vec<(Vec<u8>, u64)> = syms
            .iter()
            .filter(|s| s.name.len() < 512 && !matches!(s.kind, b'u' | b'n'))
            .filter(|s| {
                !s.kind.eq_ignore_ascii_case(&b'A')
                    || [
                        &b"__kernel_syscall_via_break"[..],
                        b"__kernel_syscall_via_epc",
                        b"__kernel_sigtramp",
                        b"__gp",
                    ]
                    .contains(&&s.name[..])
            })
            .map(|s| (s.name.clone(), s.addr))
            .collect();
        let mut got: Vec<(Vec<u8>, u64)> =
            expanded.iter().map(|(_, n, a)| (n.clone(), *a)).collect();
        want.sort();
        got.sort();
        assert_eq!(want, got, "{what}: kept symbols");
    }
}

#[test]
fn golden_round_trip() {
    for file in GOLDEN_INPUTS {
        let input = std::fs::read(golden_dir().join(file)).expect("golden input");
        for (flags, all, pcpu) in COMBOS {
            if run_ours(&input, all, pcpu).is_ok() {
                check_round_trip(&input, all, pcpu, &format!("{file} [{flags}]"));
            }
        }
    }
}

#[test]
fn generated_round_trip() {
    for seed in 1..4 {
        let input = synthetic(seed, 0xffff_ffff_8300_0000, 3000);
        for (flags, all, pcpu) in COMBOS {
            // Per-cpu symbols above 2 GiB cannot be absolute: the tool
            // fails there (checked against it elsewhere).
            if all && pcpu {
                assert!(run_ours(&input, all, pcpu).is_err());
                continue;
            }
            check_round_trip(
                &input,
                all,
                pcpu,
                &format!("synthetic seed {seed} [{flags}]"),
            );
        }
    }
}

#[test]
fn errors_name_the_culprit() {
    let e = read_nm(b"ffffffff81000000 T _text\nnot a line\n").unwrap_err();
    assert!(e.to_string().contains("line 2"), "{e}");
    let syms = vec![
        RawSymbol {
            addr: 0,
            kind: b'T',
            name: b"_stext".to_vec(),
        },
        RawSymbol {
            addr: 0x1_0000_0000,
            kind: b'T',
            name: b"far_away".to_vec(),
        },
        RawSymbol {
            addr: 0x1_0000_0000,
            kind: b'T',
            name: b"_etext".to_vec(),
        },
    ];
    let e = emit_asm(&syms, &opts(true, false)).unwrap_err();
    assert!(e.to_string().contains("far_away"), "{e}");
    let long = vec![RawSymbol {
        addr: 0,
        kind: b'T',
        name: vec![b'x'; 600],
    }];
    assert!(compress(&long, &opts(true, false))
        .expect("skipped")
        .offsets
        .is_empty());
    let strict = CompressOptions {
        reject_long_names: true,
        ..opts(true, false)
    };
    assert!(compress(&long, &strict)
        .unwrap_err()
        .to_string()
        .contains("too long"));
    // Empty input: an empty but valid table.
    let t = compress(&[], &opts(false, false)).expect("empty");
    assert!(t.offsets.is_empty() && t.token_index.len() == 256);
}

// ---------------------------------------------------------------------------
// Against the real tool.

#[test]
#[ignore = "needs the 6.12 kernel tree and gcc; `cargo xtask test` runs it"]
fn identical_to_real_tool_on_golden_and_proc() {
    let tool = real_tool();
    let mut n = 0;
    let mut failing = 0;
    for file in GOLDEN_INPUTS {
        failing += compare_with_real(tool, &golden_dir().join(file), file);
        n += 1;
    }
    // This machine's /proc/kallsyms, when addresses are visible.
    if let Ok(text) = std::fs::read("/proc/kallsyms") {
        let visible = text
            .split(|&b| b == b'\n')
            .take(10)
            .any(|l| l.iter().take(16).any(|&b| b != b'0' && b != b' '));
        if visible && !text.is_empty() {
            let p = scratch_dir().join("proc-kallsyms.nm");
            std::fs::write(&p, &text).expect("write");
            failing += compare_with_real(tool, &p, "/proc/kallsyms");
            n += 1;
        }
    }
    eprintln!(
        "{n} inputs x {} flag combinations agree with scripts/kallsyms: {} byte-identical outputs, {failing} runs failing in both",
        COMBOS.len(),
        n * COMBOS.len() - failing
    );
}

#[test]
#[ignore = "needs the 6.12 kernel tree and gcc; `cargo xtask test` runs it"]
fn identical_to_real_tool_on_generated() {
    let tool = real_tool();
    let dir = scratch_dir();
    let mut cases = 0;
    let mut failing = 0;
    for seed in 1..4 {
        for base in [0u64, 0xffff_ffff_8300_0000] {
            let p = dir.join(format!("synthetic-{seed}-{base:x}.nm"));
            std::fs::write(&p, synthetic(seed, base, 2000 * seed as usize)).expect("write");
            failing +=
                compare_with_real(tool, &p, &format!("synthetic seed {seed} base {base:#x}"));
            cases += 1;
        }
    }
    // Hand-written edge cases.
    let edges: [&[u8]; 8] = [
        b"",
        b"\n",
        b"ffffffff81000000 T _stext",
        b"ffffffff81000000 T _stext\nffffffff81000010 T _etext\n",
        b"0 T \n0 t x\n",
        b"0 T _stext\n100000000 T far\n100000001 T _etext\n",
        b"80000000 D __per_cpu_start\n80000000 D big_pcpu\n80000008 D __per_cpu_end\n",
        b"  +0x10 T a\n-1 T b\n1ffffffffffffffff T c\n",
    ];
    for (i, e) in edges.iter().enumerate() {
        let p = dir.join(format!("edge-{i}.nm"));
        std::fs::write(&p, e).expect("write");
        failing += compare_with_real(tool, &p, &format!("edge case {i}"));
        cases += 1;
    }
    for seed in 0..300 {
        let p = dir.join(format!("fuzz-{seed}.nm"));
        std::fs::write(&p, fuzz_input(seed)).expect("write");
        failing += compare_with_real(tool, &p, &format!("fuzz seed {seed}"));
        cases += 1;
    }
    eprintln!(
        "{cases} generated inputs x {} flag combinations agree with scripts/kallsyms: {} byte-identical outputs, {failing} runs failing in both",
        COMBOS.len(),
        cases * COMBOS.len() - failing
    );
}

/// Rewrites the generated golden inputs, `expected.sha256` and
/// `spot-checks.txt` from the real tool. Run explicitly (see the README).
#[test]
#[ignore = "a tool, not a test: rewrites tests/golden when KFAST_REGEN_GOLDEN=1"]
fn regen_golden() {
    assert!(
        std::env::var_os("KFAST_REGEN_GOLDEN").is_some(),
        "regen_golden rewrites tests/golden: set KFAST_REGEN_GOLDEN=1 to run it"
    );
    let tool = real_tool();
    let dir = golden_dir();
    std::fs::write(
        dir.join("synthetic-mixed.nm"),
        synthetic(7, 0xffff_ffff_8300_0000, 1500),
    )
    .expect("write");
    std::fs::write(dir.join("synthetic-percpu0.nm"), synthetic(11, 0, 1500)).expect("write");
    let mut digests =
        String::from("# SHA-256 of scripts/kallsyms (Linux 6.12) stdout: digest  input  flags\n");
    let mut spots = Vec::new();
    for file in GOLDEN_INPUTS {
        for (flags, _, _) in COMBOS {
            let real = run_real(tool, &dir.join(file), flags);
            let digest = real.as_deref().map_or("error".to_string(), sha256_hex);
            digests.push_str(&format!("{digest}  {file}  {flags}\n"));
            let Some(real) = real else { continue };
            // Whole small sections, and a sample of all lines.
            let mut in_section = false;
            for (i, l) in real.split(|&b| b == b'\n').enumerate() {
                if l.ends_with(b":") {
                    in_section = [
                        &b"kallsyms_markers:"[..],
                        b"kallsyms_token_table:",
                        b"kallsyms_token_index:",
                        b"kallsyms_relative_base:",
                        b"kallsyms_num_syms:",
                    ]
                    .contains(&l);
                }
                let full = file == "kallsyms-slice.nm" && flags.is_empty() && in_section;
                if full || i < 12 || i % 211 == 0 {
                    spots.extend_from_slice(format!("{file}\t{flags}\t{}\t", i + 1).as_bytes());
                    spots.extend_from_slice(l);
                    spots.push(b'\n');
                }
            }
        }
    }
    std::fs::write(dir.join("expected.sha256"), digests).expect("write");
    std::fs::write(dir.join("spot-checks.txt"), spots).expect("write");
}

#[test]
fn sections_come_from_the_symbols() {
    let input = std::fs::read(golden_dir().join("kallsyms-slice.nm")).expect("golden input");
    let syms = read_nm(&input).expect("parses");
    let t = compress(&syms, &opts(true, false)).expect("builds");
    let s = t.sections;
    assert_eq!(s.stext, 0xffff_ffff_8100_0000);
    assert_eq!(s.etext, 0xffff_ffff_8220_9988);
    assert_eq!(s.sinittext, 0xffff_ffff_8378_3000);
    assert_eq!(s.einittext, 0xffff_ffff_837f_8910);
    assert_eq!(s.init_begin, 0xffff_ffff_8378_3000);
    // Absent from the slice.
    assert_eq!((s.end, s.init_end), (0, 0));
    assert!(s.all_symbols && s.gate.is_none() && !t.encoding.absolute_percpu());
    let t = compress(&syms, &opts(false, true)).expect("builds");
    assert!(!t.sections.all_symbols && t.encoding.absolute_percpu());
}

// ---------------------------------------------------------------------------
// Linux 7.3's scripts/kallsyms (`KernelLayout::Linux7_3`).

/// The flag combinations of `scripts/kallsyms` 7.3 (`--absolute-percpu` is
/// gone, `--pc-relative` is new).
const COMBOS_73: [(&str, bool, bool); 4] = [
    ("", false, false),
    ("--all-symbols", true, false),
    ("--pc-relative", false, true),
    ("--all-symbols --pc-relative", true, true),
];

fn opts73(all: bool, pc_relative: bool) -> CompressOptions {
    CompressOptions {
        layout: KernelLayout::Linux7_3,
        all_symbols: all,
        pc_relative,
        ..Default::default()
    }
}

fn run_ours73(input: &[u8], all: bool, pc: bool) -> Result<Vec<u8>, String> {
    let syms = read_nm(input).map_err(|e| e.to_string())?;
    emit_asm(&syms, &opts73(all, pc)).map_err(|e| e.to_string())
}

/// `expected-7.3.sha256`: what the real 7.3.4 tool printed for the golden
/// inputs (tests/golden/README.md says how it was made).
#[test]
fn golden_digests_7_3() {
    let text = std::fs::read_to_string(golden_dir().join("expected-7.3.sha256"))
        .expect("golden/expected-7.3.sha256");
    let mut n = 0;
    for l in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let mut it = l.splitn(3, "  ");
        let digest = it.next().unwrap_or_default();
        let file = it.next().unwrap_or_default();
        let flags = it.next().unwrap_or_default().trim();
        let input = std::fs::read(golden_dir().join(file)).expect("golden input");
        let all = flags.contains("--all-symbols");
        let pc = flags.contains("--pc-relative");
        match run_ours73(&input, all, pc) {
            Ok(asm) => assert_eq!(
                sha256_hex(&asm),
                digest,
                "{file} [{flags}]: SHA-256 of the 7.3 emit_asm differs"
            ),
            Err(e) => assert_eq!(digest, "error", "{file} [{flags}]: ours fails ({e})"),
        }
        n += 1;
    }
    assert_eq!(n, GOLDEN_INPUTS.len() * COMBOS_73.len());
}

/// The 7.3 text differs from 6.12's where 7.3's tool does: no preamble,
/// `.balign 4`, `.size` lines, `_text - . + (N)` offsets, no relative base;
/// and each tool refuses the other's option.
#[test]
fn layout_7_3_text_and_options() {
    let input = b"ffffffff81000000 T _text\nffffffff81000000 T _stext\n\
ffffffff81000010 T f\nffffffff81000020 T _etext\n";
    let asm = String::from_utf8(run_ours73(input, false, true).unwrap()).unwrap();
    assert!(asm.starts_with("\t.section .rodata, \"a\"\n.globl kallsyms_num_syms\n\t.balign 4\n"));
    assert!(
        asm.contains("\t.long\t_text - . + (16)\t/* Tf */\n"),
        "{asm}"
    );
    assert!(asm.contains(".size kallsyms_offsets, . - kallsyms_offsets\n"));
    assert!(!asm.contains("kallsyms_relative_base"));
    let abs = String::from_utf8(run_ours73(input, false, false).unwrap()).unwrap();
    assert!(abs.contains("\t.long\t0x81000010\t/* Tf */\n"), "{abs}");
    let syms = read_nm(input).unwrap();
    let bad73 = CompressOptions {
        absolute_percpu: true,
        ..opts73(false, false)
    };
    assert!(emit_asm(&syms, &bad73).is_err());
    let bad612 = CompressOptions {
        pc_relative: true,
        ..Default::default()
    };
    assert!(emit_asm(&syms, &bad612).is_err());
}

/// 7.3 PC-relative tables hold the same symbols at the same addresses as
/// 6.12's, and every lookup over them agrees with the mainline port.
#[test]
fn pc_relative_tables_round_trip() {
    for file in GOLDEN_INPUTS {
        let input = std::fs::read(golden_dir().join(file)).expect("golden input");
        let syms = read_nm(&input).expect("parses");
        let t612 = compress(&syms, &opts(false, false)).expect("6.12 tables");
        let at = t612.sections.etext.next_multiple_of(0x20_0000);
        let t73 = compress(
            &syms,
            &CompressOptions {
                offsets_addr: at,
                ..opts73(false, true)
            },
        );
        let t73 = match t73 {
            Ok(t) => t,
            // synthetic-percpu0 has symbols near 0: out of 32-bit reach of
            // a table above the text, as a linker would say.
            Err(e) => {
                assert!(file.contains("percpu0"), "{file}: {e}");
                continue;
            }
        };
        assert_eq!(
            t73.encoding,
            kallsyms_mirror::OffsetEncoding::PcRelative { table_addr: at }
        );
        let (a, b) = (t612.view(), t73.view());
        assert_eq!(a.len(), b.len());
        for i in 0..a.len() {
            assert_eq!(a.sym_address(i), b.sym_address(i), "{file}: symbol {i}");
        }
        assert_eq!(t612.names, t73.names);
        assert_eq!(t612.seqs_of_names, t73.seqs_of_names);
        // synthetic-mixed has names validation refuses (empty, 512 bytes):
        // then both layouts are refused alike.
        let m = match (Mirror::new(t612, Vec::new()), Mirror::new(t73, Vec::new())) {
            (Ok(_), Ok(m)) => m,
            (Err(e1), Err(e2)) => {
                assert_eq!(e1, e2, "{file}");
                continue;
            }
            (x, y) => panic!("{file}: 6.12 {:?}, 7.3 {:?}", x.err(), y.err()),
        };
        let (mut n1, mut n2) = (NameBuf::new(), NameBuf::new());
        let (mut s1, mut s2) = (SymbolBuf::new(), SymbolBuf::new());
        for s in syms.iter().step_by(7) {
            for addr in [s.addr, s.addr.wrapping_add(1), s.addr.wrapping_sub(1)] {
                m.sprint(Algo::Mainline, addr, true, &mut n1, &mut s1);
                m.sprint(Algo::Fast, addr, true, &mut n2, &mut s2);
                assert_eq!(s1.as_bytes(), s2.as_bytes(), "{file}: {addr:#x}");
            }
        }
    }
}

/// The real 7.3 `scripts/kallsyms`, built from `$KFAST_KERNEL73_SRC`,
/// else `$KFAST_CACHE/src/linux-source-7.3` (Debian's linux-source-7.3
/// unpacked; the harness does not unpack it yet).
fn real_tool_7_3() -> &'static Path {
    static TOOL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let tool = TOOL.get_or_init(|| {
        let src = std::env::var_os("KFAST_KERNEL73_SRC")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                std::env::var_os("KFAST_CACHE")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| "/var/cache/kallsyms-fast".into())
                    .join("src/linux-source-7.3")
            });
        let c = src.join("scripts/kallsyms.c");
        let inc = src.join("scripts/include");
        if !c.is_file() || !inc.join("xalloc.h").is_file() {
            return Err(format!(
                "no 7.3 kernel tree: {} missing (set KFAST_KERNEL73_SRC)",
                c.display()
            ));
        }
        let bin = scratch().path().join("kallsyms-7.3");
        match Command::new("gcc")
            .args(["-O2", "-I"])
            .arg(&inc)
            .arg("-o")
            .arg(&bin)
            .arg(&c)
            .status()
        {
            Ok(s) if s.success() => Ok(bin),
            Ok(s) => Err(format!("gcc failed to build {}: {s}", c.display())),
            Err(e) => Err(format!("cannot run gcc: {e}")),
        }
    });
    match tool {
        Ok(p) => p,
        Err(e) => panic!("real 7.3 scripts/kallsyms unavailable: {e}"),
    }
}

fn compare_with_real_7_3(tool: &Path, path: &Path, what: &str) -> usize {
    let input = std::fs::read(path).expect("reading input");
    let mut failing = 0;
    for (flags, all, pc) in COMBOS_73 {
        let real = run_real(tool, path, flags);
        match (run_ours73(&input, all, pc), real) {
            (Ok(o), Some(r)) => assert!(
                o == r,
                "{what} [7.3 {flags}]: output differs; {}",
                first_difference(&o, &r)
            ),
            (Err(_), None) => failing += 1,
            (Ok(_), None) => panic!("{what} [7.3 {flags}]: scripts/kallsyms fails, ours succeeds"),
            (Err(e), Some(_)) => {
                panic!("{what} [7.3 {flags}]: ours fails ({e}), scripts/kallsyms succeeds")
            }
        }
    }
    failing
}

#[test]
#[ignore = "needs the 7.3 kernel tree (KFAST_KERNEL73_SRC) and gcc"]
fn identical_to_real_7_3_tool() {
    let tool = real_tool_7_3();
    let dir = scratch_dir();
    let mut cases = 0;
    let mut failing = 0;
    for file in GOLDEN_INPUTS {
        failing += compare_with_real_7_3(tool, &golden_dir().join(file), file);
        cases += 1;
    }
    for seed in 1..4 {
        for base in [0u64, 0xffff_ffff_8300_0000] {
            let p = dir.join(format!("synthetic73-{seed}-{base:x}.nm"));
            std::fs::write(&p, synthetic(seed, base, 2000 * seed as usize)).expect("write");
            failing += compare_with_real_7_3(tool, &p, &format!("synthetic {seed} {base:#x}"));
            cases += 1;
        }
    }
    let edges: [&[u8]; 7] = [
        b"",
        b"ffffffff81000000 T _stext",
        b"ffffffff81000000 T _text\nffffffff81000000 T _stext\nffffffff81000010 T _etext\n",
        b"0 T _stext\n100000000 T far\n100000001 T _etext\n",
        b"ffffffff81000000 T _text\n0 T _stext\n7effffff T a\n7f000000 T b\nffffffff90000000 T _etext\n",
        b"80000000 D __per_cpu_start\n80000000 D big_pcpu\n80000008 D __per_cpu_end\n",
        b"  +0x10 T a\n-1 T b\n1ffffffffffffffff T c\n",
    ];
    for (i, e) in edges.iter().enumerate() {
        let p = dir.join(format!("edge73-{i}.nm"));
        std::fs::write(&p, e).expect("write");
        failing += compare_with_real_7_3(tool, &p, &format!("edge case {i}"));
        cases += 1;
    }
    for seed in 0..300 {
        let p = dir.join(format!("fuzz73-{seed}.nm"));
        std::fs::write(&p, fuzz_input(seed)).expect("write");
        failing += compare_with_real_7_3(tool, &p, &format!("fuzz seed {seed}"));
        cases += 1;
    }
    eprintln!(
        "{cases} inputs x {} flag combinations agree with 7.3's scripts/kallsyms: {} byte-identical outputs, {failing} runs failing in both",
        COMBOS_73.len(),
        cases * COMBOS_73.len() - failing
    );
}
