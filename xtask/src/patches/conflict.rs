//! Naming the patch, file and hunk that does not apply.
//!
//! `git apply` and `git am` say `error: patch failed: FILE:LINE`, LINE
//! being where the failing hunk starts in the old file; `git am` adds
//! `Patch failed at NNNN <subject>`. A stable update that changes the
//! context of one of our hunks is reported as the patch file, the path
//! and the hunk's header, with its line in the patch.

use crate::Result;
use std::fs;
use std::path::Path;
use std::process::Command;

/// Run a `git am` of the patches in `dir`; on failure, the error names the
/// patch, file and hunk. (git prints `Patch failed at` on stdout and the
/// `error:` lines on stderr: both are read.)
pub fn run_am(am: &mut Command, dir: &Path) -> Result<()> {
    let out = am.output().map_err(|e| format!("cannot run git am: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    Err(describe_am(&text, dir))
}

/// `(file, old start line)` of the first `error: patch failed:` line.
fn failed_at(err: &str) -> Option<(&str, u32)> {
    err.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("error: patch failed: ")?;
        let (file, line) = rest.rsplit_once(':')?;
        Some((file, line.trim().parse().ok()?))
    })
}

/// The hunk header of `file` starting at old line `start` in a diff, with
/// its line number in the diff.
fn hunk(diff: &str, file: &str, start: u32) -> Option<(usize, String)> {
    let mut in_file = false;
    for (i, l) in diff.lines().enumerate() {
        if let Some(rest) = l.strip_prefix("diff --git a/") {
            in_file = rest.split(" b/").next() == Some(file);
        } else if in_file && l.starts_with("@@ -") {
            let old = l["@@ -".len()..].split([',', ' ']).next()?;
            if old.parse() == Ok(start) {
                return Some((i + 1, l.to_string()));
            }
        }
    }
    None
}

fn place(err: &str, diff_path: &Path) -> Option<String> {
    let (file, start) = failed_at(err)?;
    let text = fs::read_to_string(diff_path).ok()?;
    Some(match hunk(&text, file, start) {
        Some((n, h)) => format!("file {file}, hunk `{h}` ({}:{n})", diff_path.display()),
        None => format!("file {file}, the hunk at its line {start}"),
    })
}

/// A `git apply` error of `diff_path`, with the file and hunk named.
pub fn describe(err: &str, diff_path: &Path) -> String {
    match place(err, diff_path) {
        Some(p) => format!("{p}\n{err}"),
        None => err.to_string(),
    }
}

/// A `git am` error of the patches in `dir`, with the patch file, the file
/// and the hunk named.
pub fn describe_am(err: &str, dir: &Path) -> String {
    let number = err.lines().find_map(|l| {
        let n = l.trim().strip_prefix("Patch failed at ")?.get(..4)?;
        n.bytes().all(|b| b.is_ascii_digit()).then_some(n)
    });
    let patch = number.and_then(|n| {
        fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                p.file_name()
                    .is_some_and(|f| f.to_string_lossy().starts_with(&format!("{n}-")))
            })
    });
    match patch {
        Some(p) => {
            let name = p
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            match place(err, &p) {
                Some(at) => format!("patch {name}: {at}\n{err}"),
                None => format!("patch {name}\n{err}"),
            }
        }
        None => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/init/Kconfig b/init/Kconfig\n\
        index 1..2 100644\n--- a/init/Kconfig\n+++ b/init/Kconfig\n\
        @@ -10,3 +10,4 @@ config A\n a\n+b\n c\n d\n\
        @@ -200,3 +201,4 @@ config B\n a\n+b\n c\n d\n\
        diff --git a/kernel/Makefile b/kernel/Makefile\n\
        --- a/kernel/Makefile\n+++ b/kernel/Makefile\n\
        @@ -200 +200,2 @@\n x\n+y\n";

    #[test]
    fn names_the_hunk_of_the_failing_file() {
        assert_eq!(
            hunk(DIFF, "init/Kconfig", 200),
            Some((10, "@@ -200,3 +201,4 @@ config B".to_string()))
        );
        assert_eq!(
            hunk(DIFF, "kernel/Makefile", 200),
            Some((18, "@@ -200 +200,2 @@".to_string()))
        );
        assert_eq!(hunk(DIFF, "init/Kconfig", 11), None);
    }

    #[test]
    fn am_errors_name_patch_file_and_hunk() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("0002-kallsyms-x.patch"), DIFF).unwrap();
        let err = "error: patch failed: init/Kconfig:200\n\
                   error: init/Kconfig: patch does not apply\n\
                   Patch failed at 0002 kallsyms: x\n";
        let d = describe_am(err, tmp.path());
        assert!(
            d.starts_with("patch 0002-kallsyms-x.patch: file init/Kconfig, hunk `@@ -200,3 +201,4 @@ config B` ("),
            "{d}"
        );
        assert!(d.ends_with(err), "{d}");
        // Nothing to parse: the error as git gave it.
        assert_eq!(describe_am("fatal: x\n", tmp.path()), "fatal: x\n");
    }
}
