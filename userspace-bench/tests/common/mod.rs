//! Helpers shared by the `kallsyms-bench` integration tests (cli.rs,
//! hostile.rs): the binary, the captured sample tree, and a run that feeds
//! stdin and cannot hang the suite.

// Each test binary compiles its own copy of this module and uses only part
// of it; what one leaves unused is not dead.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kallsyms-bench"))
}

/// The captured sample tree (tests/data/parse/root): two modules, exact
/// module layouts, sections, and bpf/ftrace/kprobes pseudo-modules.
pub fn sample_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/parse/root")
}

/// Runs `cmd` with `stdin` fed in, killing it if it has not finished after
/// a minute (a hang is a failure some tests look for, not a timing).
pub fn run(mut cmd: Command, stdin: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    // A writer thread, so a child that stops reading cannot block us.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let start = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("kallsyms-bench hung: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = writer.join();
    child.wait_with_output().expect("output")
}

/// `kallsyms-bench resolve --root <root> <args...>` with empty stdin.
pub fn resolve(root: &Path, args: &[&str]) -> Output {
    let mut cmd = bin();
    cmd.args(["resolve", "--root"]).arg(root).args(args);
    run(cmd, b"")
}

/// The run's stderr, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The run's stdout, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Fails unless `o` failed with a message containing every one of `want`.
pub fn assert_error(o: &Output, want: &[&str]) {
    let e = stderr(o);
    assert!(!o.status.success(), "succeeded: {}", stdout(o));
    for w in want {
        assert!(e.contains(w), "{w:?} not in {e}");
    }
}

/// Writes `rel` (parents created) under `root`.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("has a parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// A `CONFIG_KALLSYMS_ALL` machine written into `root`: core text and
/// data, a module `a` with text and data, and, with `nls`, a module `nls`
/// without text as Debian's 7.3 kernel has them (`nls_ucs2_utils`:
/// tables only), which `/proc/modules` lists with base 0. `kernel` is
/// `"6.12"` (the list has `kallsyms_relative_base`) or `"7.3"` (only
/// `kallsyms_offsets`), so that each kernel's module rules apply.
///
/// The true regions (those a kernel with this layout has, from which the
/// expected answers are derived by hand):
/// - `a`: text `[c0001000, c0002000)`, data `[c0003000, c0004000)`;
/// - `nls`: no text; rodata `[c0010000, c0011000)`, data (with a `.bss`
///   nothing shows the size of) `[c0012000, c0014000)`; 12288 bytes.
pub fn kallsyms_all_root(root: &Path, nls: bool, kernel: &str) {
    let relative_base = match kernel {
        "6.12" => "ffffffff81200100 R kallsyms_relative_base\n",
        "7.3" => "",
        _ => panic!("kernel {kernel}: 6.12 or 7.3"),
    };
    let mut kallsyms = format!(
        "ffffffff81000000 T _stext\n\
         ffffffff81000000 T _text\n\
         ffffffff81000100 T core_fn\n\
         ffffffff81000200 T core_fn2\n\
         ffffffff81001000 T _etext\n\
         ffffffff81200000 R kallsyms_offsets\n\
         {relative_base}\
         ffffffff81300000 D core_data\n\
         ffffffff81300100 D core_data2\n\
         ffffffff81400000 B _end\n\
         ffffffffc0001000 t a_fn\t[a]\n\
         ffffffffc0001100 T a_fn2\t[a]\n\
         ffffffffc0003000 d a_state\t[a]\n\
         ffffffffc0003040 D __this_module\t[a]\n"
    );
    let mut modules = String::from("a 8192 0 - Live 0xffffffffc0001000\n");
    write(root, "sys/module/a/sections/.text", "0xffffffffc0001000\n");
    write(root, "sys/module/a/sections/.data", "0xffffffffc0003000\n");
    write(
        root,
        "sys/module/a/sections/.gnu.linkonce.this_module",
        "0xffffffffc0003040\n",
    );
    if nls {
        kallsyms.push_str(
            "ffffffffc0010000 R nls_upper\t[nls]\n\
             ffffffffc0010800 R nls_lower\t[nls]\n\
             ffffffffc0012000 d nls_state\t[nls]\n\
             ffffffffc0012040 D __this_module\t[nls]\n",
        );
        // Loaded before `a`, which uses it: listed after it.
        modules.push_str("nls 12288 1 a, Live 0x0000000000000000\n");
        for (section, addr) in [
            (".rodata", "ffffffffc0010000"),
            (".data", "ffffffffc0012000"),
            (".gnu.linkonce.this_module", "ffffffffc0012040"),
            (".bss", "ffffffffc0012580"),
        ] {
            write(
                root,
                &format!("sys/module/nls/sections/{section}"),
                &format!("0x{addr}\n"),
            );
        }
    }
    write(root, "proc/kallsyms", &kallsyms);
    write(root, "proc/modules", &modules);
}
