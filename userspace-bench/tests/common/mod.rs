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
