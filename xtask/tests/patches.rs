//! `cargo xtask patches` end to end, on the tiny example series in
//! tests/fixtures/example-series (a Kconfig entry, a Makefile, cfg-if and
//! xxhash-rust vendored; cfg-if re-vendored unchanged by patch 2).
//!
//! The generator needs the pristine 6.12 tree (from `cargo xtask kernel` or
//! setup), so the end-to-end test is #[ignore]d; `cargo xtask test` runs it
//! after its kernel step.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/example-series")
}

fn pristine() -> PathBuf {
    std::env::var_os("KFAST_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/kallsyms-fast"))
        .join("src/linux-source-6.12")
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for ent in fs::read_dir(from).unwrap() {
        let ent = ent.unwrap();
        let dest = to.join(ent.file_name());
        if ent.file_type().unwrap().is_dir() {
            copy_dir(&ent.path(), &dest);
        } else {
            fs::copy(ent.path(), dest).unwrap();
        }
    }
}

/// Run `xtask patches ARGS` with a fixed git identity for `--apply`.
fn xtask(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut cmd = Command::new(XTASK);
    cmd.arg("patches");
    for a in args {
        cmd.arg(a);
    }
    identity(&mut cmd).output().unwrap()
}

fn identity(cmd: &mut Command) -> &mut Command {
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.org")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.org")
}

fn ok(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "xtask failed:\n{err}");
    err
}

fn fails(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "xtask succeeded:\n{err}");
    err
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = identity(Command::new("git").arg("-C").arg(dir).args(args))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn listing(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Every file below `dir`, recursively: (relative path, contents).
fn tree_listing(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn missing_series_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let err = fails(&xtask(&[
        &"--check",
        &"--series",
        &tmp.path(),
        &"--out",
        &tmp.path(),
    ]));
    assert!(err.contains("no series at"), "{err}");
}

#[test]
#[ignore = "needs the pristine 6.12 tree: `cargo xtask test` runs it after the kernel step"]
fn example_series_generate_check_apply_export() {
    assert!(
        pristine().join("Makefile").exists(),
        "no pristine tree at {}",
        pristine().display()
    );
    let tmp = tempfile::tempdir().unwrap();
    let series = tmp.path().join("series");
    copy_dir(&fixture(), &series);
    let out = tmp.path().join("out");
    ok(&xtask(&[&"--series", &series, &"--out", &out]));

    let files = listing(&out);
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "0000-cover-letter.patch",
            "0001-kallsyms-add-an-example-option-and-vendor-cfg-if.patch",
            "0002-kallsyms-vendor-xxhash-rust-for-the-example.patch"
        ]
    );
    let (cover, p1, p2) = (&files[0].1, &files[1].1, &files[2].1);
    assert!(cover.contains("Subject: [PATCH 0/2] kallsyms: generator example series\n"));
    // The base line names the tree it was made on: the installed sublevel.
    let base_line = cover
        .lines()
        .find(|l| l.starts_with("Base: Linux 6.12."))
        .expect("a Base: line");
    assert!(
        base_line.ends_with(")") && base_line.contains(" (Debian linux-source-6.12 6.12."),
        "{base_line}"
    );
    assert!(!cover.contains("***"), "template left over:\n{cover}");
    // The vendored list counts what the patches add; cfg-if's identical
    // re-copy in patch 2 is not listed.
    let cfg_if_rs = p1
        .matches("create mode 100644 kernel/kallsyms_fast/cfg_if/")
        .count()
        - 2; // LICENSE-APACHE, LICENSE-MIT
    let want = format!(
        "(MIT OR Apache-2.0): {cfg_if_rs} .rs files ({cfg_if_rs} got an SPDX line), LICENSE-APACHE, LICENSE-MIT\n"
    );
    assert!(cover.contains(&want), "{want} not in:\n{cover}");
    assert!(cover.contains("  kernel/kallsyms_fast/cfg_if/ [1/2]\n"));
    assert!(!cover.contains("cfg_if/ [2/2]"));
    assert!(cover.contains("  kernel/kallsyms_fast/xxhash/ [2/2]\n"));
    assert!(!p2.contains("kernel/kallsyms_fast/cfg_if/"));
    // SPDX prepended from the license field, `/` as OR.
    let lib = p1
        .split("+++ b/kernel/kallsyms_fast/cfg_if/lib.rs\n")
        .nth(1)
        .expect("cfg_if/lib.rs in patch 1");
    assert_eq!(
        lib.lines().nth(1),
        Some("+// SPDX-License-Identifier: MIT OR Apache-2.0")
    );
    assert!(p2.contains("+// SPDX-License-Identifier: BSL-1.0\n"));
    assert!(p1.contains("+config KALLSYMS_FAST_EXAMPLE\n"));
    assert!(p1.starts_with("From 0000000000000000000000000000000000000000 "));
    // The author is each patch's first sign-off; the cover letter is from
    // the first patch's author.
    let from = "From: kallsyms-fast developers <kallsyms-fast@users.noreply.github.com>\n";
    assert!(cover.contains(from) && p1.contains(from));
    assert!(p2.contains("\nFrom: Example Developer <dev@example.org>\n"));

    // Deterministic, and --check agrees with what was written.
    let again = tmp.path().join("again");
    ok(&xtask(&[&"--series", &series, &"--out", &again]));
    assert_eq!(listing(&again), files);
    let err = ok(&xtask(&[&"--check", &"--series", &series, &"--out", &out]));
    assert!(
        err.contains("round trip gives the generator's tree"),
        "{err}"
    );

    // The base moved: the committed series names another sublevel (and
    // other blob ids) but applies to the same tree: a notice, exit 0.
    let cover_path = out.join(&files[0].0);
    let p1_path = out.join(&files[1].0);
    let index = p1
        .lines()
        .find(|l| l.starts_with("index "))
        .expect("an index line");
    fs::write(
        &cover_path,
        cover.replace(base_line, "Base: Linux 6.12.1 (an older sublevel)"),
    )
    .unwrap();
    fs::write(
        &p1_path,
        p1.replacen(index, "index 000000000000..111111111111 100644", 1),
    )
    .unwrap();
    let err = ok(&xtask(&[&"--check", &"--series", &series, &"--out", &out]));
    assert!(
        err.contains("notice: the base moved: the committed series was made on Linux 6.12.1 (an older sublevel)"),
        "{err}"
    );
    // ... but a changed source is a failure even then: here a message.
    let msg = series.join("01-example/message");
    let msg_text = fs::read_to_string(&msg).unwrap();
    fs::write(&msg, msg_text.replacen('\n', "\n\nA new paragraph.\n", 1)).unwrap();
    let err = fails(&xtask(&[&"--check", &"--series", &series, &"--out", &out]));
    assert!(
        err.contains("the sources no longer generate the committed series: made on Linux 6.12.1"),
        "{err}"
    );
    fs::write(&msg, msg_text).unwrap();
    fs::write(&cover_path, cover).unwrap();
    fs::write(&p1_path, p1).unwrap();

    // A hand edit of a committed patch is found, with file and line.
    let p2_path = out.join(&files[2].0);
    fs::write(&p2_path, format!("{p2}extra\n")).unwrap();
    let err = fails(&xtask(&[&"--check", &"--series", &series, &"--out", &out]));
    let n = p2.lines().count() + 1;
    assert!(
        err.contains(&format!("{}:{n}: differs", files[2].0)),
        "{err}"
    );
    fs::write(&p2_path, p2).unwrap();

    // A checkpatch finding that is not excepted fails the check.
    let exc = series.join("checkpatch-exceptions");
    let text = fs::read_to_string(&exc).unwrap();
    let fewer: String = text
        .lines()
        .filter(|l| !l.contains("0002-") || !l.contains(" FILE_PATH_CHANGES "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(fewer, text);
    fs::write(&exc, fewer).unwrap();
    let err = fails(&xtask(&[&"--check", &"--series", &series, &"--out", &out]));
    assert!(err.contains("WARNING:FILE_PATH_CHANGES:"), "{err}");
    assert!(err.contains("1 checkpatch finding(s) not in"), "{err}");
    fs::write(&exc, text).unwrap();

    // --apply onto a git tree of the pristine files, then --export back
    // into a copy of the series regenerates the same patches.
    let tree = tmp.path().join("linux");
    fs::create_dir_all(tree.join("init")).unwrap();
    fs::copy(pristine().join("init/Kconfig"), tree.join("init/Kconfig")).unwrap();
    git(&tree, &["init", "-q"]);
    git(&tree, &["add", "."]);
    git(&tree, &["commit", "-q", "-m", "Linux 6.12"]);
    // A stable update that rewrote a hunk's context: the error names the
    // patch, the file and the hunk.
    let header = p1
        .split("+++ b/init/Kconfig\n")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .expect("patch 1 changes init/Kconfig");
    let start: usize = header["@@ -".len()..]
        .split([',', ' '])
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let kconfig = fs::read_to_string(tree.join("init/Kconfig")).unwrap();
    let rewritten: String = kconfig
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if (start - 1..start + 2).contains(&i) {
                "# rewritten by a stable update\n".to_string()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    fs::write(tree.join("init/Kconfig"), rewritten).unwrap();
    git(&tree, &["commit", "-q", "-a", "-m", "Linux 6.12.y"]);
    let err = fails(&xtask(&[&"--apply", &tree, &"--out", &out]));
    let want = format!("patch {}: file init/Kconfig, hunk `{header}`", files[1].0);
    assert!(err.contains(&want), "{want} not in:\n{err}");
    git(&tree, &["am", "--abort"]);
    git(&tree, &["reset", "-q", "--hard", "HEAD~1"]);
    ok(&xtask(&[&"--apply", &tree, &"--out", &out]));
    assert_eq!(git(&tree, &["rev-list", "--count", "HEAD"]).trim(), "3");
    // A hand edit of a vendored file in DIR is not exported, and said so.
    let lib = tree.join("kernel/kallsyms_fast/xxhash/lib.rs");
    let text = fs::read_to_string(&lib).unwrap();
    fs::write(&lib, format!("{text}// hand edit\n")).unwrap();
    git(&tree, &["commit", "-q", "-a", "--amend", "--no-edit"]);
    let exported = tmp.path().join("exported");
    copy_dir(&series, &exported);
    for p in ["01-example", "02-xxhash"] {
        fs::write(exported.join(p).join("message"), "placeholder\n").unwrap();
        let _ = fs::remove_file(exported.join(p).join("changes.diff"));
        let _ = fs::remove_file(exported.join(p).join("adds"));
    }
    // The overlay (tree/) is written back from the last commit, and a
    // file no commit adds is removed.
    fs::remove_dir_all(exported.join("tree")).unwrap();
    fs::create_dir_all(exported.join("tree/stale")).unwrap();
    fs::write(exported.join("tree/stale/old.c"), "gone\n").unwrap();
    let err = ok(&xtask(&[&"--export", &tree, &"--series", &exported]));
    assert!(
        err.contains(": kernel/kallsyms_fast/xxhash/lib.rs (vendored from xxhash-rust) differs"),
        "{err}"
    );
    assert_eq!(
        err.matches("differs from what the generator copies")
            .count(),
        1,
        "{err}"
    );
    for p in ["01-example", "02-xxhash"] {
        let diff = fs::read_to_string(exported.join(p).join("changes.diff")).unwrap();
        assert!(
            !diff.contains("kallsyms_fast/cfg_if"),
            "{p}: vendored path exported"
        );
        assert!(
            !diff.contains("kallsyms_fast/xxhash/"),
            "{p}: vendored path exported"
        );
    }
    for p in ["01-example/adds", "02-xxhash/adds"] {
        assert_eq!(
            fs::read_to_string(exported.join(p)).unwrap(),
            fs::read_to_string(series.join(p)).unwrap(),
            "{p}"
        );
    }
    assert_eq!(
        tree_listing(&exported.join("tree")),
        tree_listing(&series.join("tree"))
    );
    assert!(
        err.contains("removed ") && err.contains("stale/old.c (no commit adds it)"),
        "{err}"
    );
    // The file patch 1 adds is in the overlay as after patch 2, and patch
    // 2's diff keeps only its own line of it.
    assert!(
        fs::read_to_string(exported.join("tree/kernel/kallsyms_fast/Makefile"))
            .unwrap()
            .ends_with("# xxhash/ holds the xxhash-rust crate.\n")
    );
    let regen = tmp.path().join("regen");
    ok(&xtask(&[&"--series", &exported, &"--out", &regen]));
    assert_eq!(listing(&regen), files);

    // Export refuses when commits and series directories do not match.
    git(&tree, &["reset", "-q", "--hard", "HEAD~1"]);
    let err = fails(&xtask(&[&"--export", &tree, &"--series", &exported]));
    assert!(err.contains("has 1 commits on top of its first"), "{err}");
}
