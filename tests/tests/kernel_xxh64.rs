//! The name indexes hash the same in the kernel and in userspace.
//!
//! In the kernel build (`kernel-xxh64`), [`kallsyms_mirror::fast::name_hash`]
//! calls the kernel's own `xxh64()` from `lib/xxhash.c`; in userspace it
//! calls `xxhash_rust::xxh64::xxh64`. Both with seed 0. They must agree on
//! every input, or the same tables would index differently in the two
//! builds (and the userspace tests would not test what the kernel runs).
//!
//! `kernel_xxh64_agrees` (`#[ignore]`d: it needs the 6.12 kernel tree and
//! `gcc`, which `cargo xtask setup` provides; `cargo xtask test` runs it
//! with `cargo test -p kallsyms-fast-tests --test kernel_xxh64 -- --ignored
//! kernel_xxh64_agrees`) compiles the tree's `lib/xxhash.c`, unchanged,
//! with gcc on the host, against a small compatibility header written
//! here (`-include compat.h` and a `linux/` directory of empty headers plus
//! the tree's own `include/linux/xxhash.h`), together with a small `main`
//! that hashes length-prefixed inputs from stdin with
//! `xxh64(input, len, 0)`. Every result must equal both Rust functions',
//! for every name in `tests/golden/kallsyms-slice.nm` (21k real kernel
//! symbol names), every prefix (lengths 0 to 300) of a pseudo-random byte
//! string, and a few thousand generated names of up to 511 bytes. The
//! tree is `$KFAST_KERNEL_SRC`, else `$KFAST_CACHE/src/linux-source-6.12`
//! (`KFAST_CACHE` defaulting to `/var/cache/kallsyms-fast`), as in
//! `compressor_identity.rs`. Without the tree or gcc the test fails,
//! naming what is missing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kallsyms_mirror::build::read_nm;
use kallsyms_mirror::fast::name_hash;

/// What `lib/xxhash.c` and `include/linux/xxhash.h` need of the kernel's
/// headers: the fixed-width types, `memcpy`/`memset` (from the C library),
/// the little-endian unaligned loads, `EINVAL`, and the module macros as
/// nothing.
const COMPAT_H: &str = r#"/* Host stand-ins for the kernel headers lib/xxhash.c includes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define __LITTLE_ENDIAN 1234
#endif

/* Byte by byte: no alignment or host byte order assumed. */
static inline u32 get_unaligned_le32(const void *p)
{
	const u8 *b = p;
	return (u32)b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24;
}

static inline u64 get_unaligned_le64(const void *p)
{
	const u8 *b = p;
	return (u64)get_unaligned_le32(b) | (u64)get_unaligned_le32(b + 4) << 32;
}

/* asm-generic/errno-base.h. Not the C library's <errno.h>: it includes
 * <linux/errno.h>, which is one of the empty headers here. */
#define EINVAL 22

#define EXPORT_SYMBOL(sym)
#define MODULE_LICENSE(s)
#define MODULE_DESCRIPTION(s)
"#;

/// The headers `lib/xxhash.c` includes besides `linux/xxhash.h`: empty,
/// since `compat.h` provides what they would.
const EMPTY_HEADERS: [&str; 7] = [
    "unaligned.h",
    "errno.h",
    "compiler.h",
    "kernel.h",
    "module.h",
    "string.h",
    "types.h",
];

/// Reads records (a 4-byte little-endian length, then the bytes) from
/// stdin; prints `xxh64(bytes, length, 0)` in hex, one line per record.
/// The bytes are hashed at an odd address, as names inside
/// `kallsyms_names` or a module's strtab may be.
const MAIN_C: &str = r#"#include <stdio.h>
#include <linux/xxhash.h>

static unsigned char buf[1 + (1 << 20)];

int main(void)
{
	unsigned char l[4];

	while (fread(l, 1, 4, stdin) == 4) {
		size_t n = (size_t)l[0] | (size_t)l[1] << 8 |
			   (size_t)l[2] << 16 | (size_t)l[3] << 24;

		if (n > sizeof(buf) - 1 || fread(buf + 1, 1, n, stdin) != n)
			return 2;
		printf("%016llx\n", (unsigned long long)xxh64(buf + 1, n, 0));
	}
	return ferror(stdin) ? 3 : 0;
}
"#;

/// Builds the host program in `dir`; panics, naming what is missing, when
/// the kernel tree or gcc is not there.
fn build_kernel_xxh64(dir: &Path) -> PathBuf {
    let src = kallsyms_fast_tests::kernel_src();
    let c = src.join("lib/xxhash.c");
    let h = src.join("include/linux/xxhash.h");
    for f in [&c, &h] {
        assert!(
            f.is_file(),
            "no 6.12 kernel tree: {} missing (run `cargo xtask setup`, or set KFAST_CACHE \
             or KFAST_KERNEL_SRC)",
            f.display()
        );
    }
    let linux = dir.join("include/linux");
    std::fs::create_dir_all(&linux).expect("create include/linux");
    for name in EMPTY_HEADERS {
        std::fs::write(
            linux.join(name),
            "/* empty: compat.h provides what lib/xxhash.c needs */\n",
        )
        .expect("write header");
    }
    std::fs::copy(&h, linux.join("xxhash.h")).expect("copy linux/xxhash.h");
    let compat = dir.join("compat.h");
    std::fs::write(&compat, COMPAT_H).expect("write compat.h");
    let main = dir.join("main.c");
    std::fs::write(&main, MAIN_C).expect("write main.c");
    let bin = dir.join("kernel-xxh64");
    let out = Command::new("gcc")
        .args(["-O2", "-std=gnu11", "-fno-strict-aliasing", "-Wall"])
        .arg("-include")
        .arg(&compat)
        .arg("-I")
        .arg(dir.join("include"))
        .arg("-o")
        .arg(&bin)
        .arg(&c)
        .arg(&main)
        .output()
        .unwrap_or_else(|e| panic!("cannot run gcc (needed to build {}): {e}", c.display()));
    assert!(
        out.status.success(),
        "gcc failed to build {} ({}):\n{}",
        c.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

/// The kernel's `xxh64(input, len, 0)` of every input, from the host build.
fn kernel_hashes(bin: &Path, inputs: &[Vec<u8>]) -> Vec<u64> {
    let mut stdin = Vec::new();
    for i in inputs {
        stdin.extend_from_slice(&u32::try_from(i.len()).expect("short input").to_le_bytes());
        stdin.extend_from_slice(i);
    }
    let mut child = Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the host build of lib/xxhash.c");
    // Written from a thread: the child's stdout fills while we write.
    let mut pipe = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || pipe.write_all(&stdin));
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer").expect("write stdin");
    assert!(out.status.success(), "host xxh64 program: {}", out.status);
    let text = String::from_utf8(out.stdout).expect("hex output");
    text.lines()
        .map(|l| u64::from_str_radix(l, 16).expect("a hex line"))
        .collect()
}

const PARTS: [&str; 16] = [
    "sys_", "do_", "__x64_", "_", "init", "read", "page", "lock", "net", "__pfx_", "irq", "bpf",
    "trace", ".cold", ".isra.0", "$x",
];

/// A name like the kernel's (word parts, digits, suffixes) or, one in
/// eight, arbitrary bytes; up to 511 bytes, `KSYM_NAME_LEN - 1`.
fn random_name(rng: &mut kallsyms_fast_tests::Rng) -> Vec<u8> {
    let mut n = Vec::new();
    if rng.below(8) == 0 {
        let len = rng.below(512);
        n.extend((0..len).map(|_| rng.next_u64() as u8));
        return n;
    }
    for _ in 0..1 + rng.below(12) {
        n.extend_from_slice(PARTS[rng.below(PARTS.len())].as_bytes());
        if rng.below(4) == 0 {
            n.extend_from_slice(rng.below(1000).to_string().as_bytes());
        }
    }
    n.truncate(511);
    n
}

#[test]
#[ignore = "needs the 6.12 kernel tree and gcc; `cargo xtask test` runs it"]
fn kernel_xxh64_agrees() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = build_kernel_xxh64(dir.path());

    // (what, input)
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let slice = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/kallsyms-slice.nm");
    let syms = read_nm(&std::fs::read(&slice).expect("golden slice")).expect("slice parses");
    assert!(syms.len() > 20_000, "{} names in the slice", syms.len());
    let n_real = syms.len();
    cases.extend(syms.into_iter().map(|s| {
        (
            format!("kallsyms-slice.nm name \"{}\"", s.name.escape_ascii()),
            s.name,
        )
    }));
    let mut rng = kallsyms_fast_tests::Rng::new(0x6b61_6c6c_7379_6d73);
    let bytes: Vec<u8> = (0..300).map(|_| rng.next_u64() as u8).collect();
    for len in 0..=bytes.len() {
        cases.push((format!("{len} pseudo-random bytes"), bytes[..len].to_vec()));
    }
    for i in 0..4000 {
        let n = random_name(&mut rng);
        cases.push((format!("random name {i} ({} bytes)", n.len()), n));
    }

    let inputs: Vec<Vec<u8>> = cases.iter().map(|(_, i)| i.clone()).collect();
    let kernel = kernel_hashes(&bin, &inputs);
    assert_eq!(kernel.len(), cases.len(), "one kernel hash per input");
    let mut wrong = Vec::new();
    for ((what, input), &k) in cases.iter().zip(&kernel) {
        let rust = xxhash_rust::xxh64::xxh64(input, 0);
        let ours = name_hash(input);
        if rust != k || ours != k {
            wrong.push(format!(
                "{what}: kernel xxh64 {k:016x}, xxhash_rust {rust:016x}, name_hash {ours:016x}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} inputs hash differently, first ones:\n  {}",
        wrong.len(),
        cases.len(),
        wrong[..wrong.len().min(10)].join("\n  ")
    );
    eprintln!(
        "lib/xxhash.c xxh64(.., 0) = xxhash_rust xxh64 = name_hash on {} inputs ({n_real} \
         real names, lengths 0..=300, 4000 generated names)",
        cases.len()
    );
}
