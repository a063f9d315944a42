//! The files the series adds, as real files: `<series>/tree/`.
//!
//! Every file the series creates in the kernel tree lives once, under
//! `tree/` at its kernel path, as it is after the whole series (on the
//! first base). The patch that creates it lists it in its `adds` file; a
//! later patch that changes it keeps that change in its `changes.diff`,
//! as for any kernel file. The generator derives what the creating patch
//! adds by taking the later patches' parts of the file back off the real
//! file (`git apply -R`, last patch first), so the real file is what
//! the applied tree compiles, formats and lints, and a reviewer reads
//! each later change as the small diff it is.
//!
//! A `changes.diff` may not create a file (`new file mode`): the one way to
//! add a file is `tree/` plus `adds`.

use super::diff::{check_tree_path, diff_paths, sections};
use crate::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Command;

/// The overlay directory of a series directory.
pub fn dir(series_dir: &Path) -> std::path::PathBuf {
    series_dir.join("tree")
}

/// Parse an `adds` file: one tree path per line, `#` comments allowed.
pub fn parse_adds(text: &str, file: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", file.display(), i + 1);
        let p = line.split('#').next().unwrap_or("").trim();
        if p.is_empty() {
            continue;
        }
        if p.contains(char::is_whitespace) {
            return Err(format!("{}: one path per line, got {p:?}", at()));
        }
        check_tree_path(p).map_err(|e| format!("{}: {e}", at()))?;
        if !seen.insert(p.to_string()) {
            return Err(format!("{}: {p:?} is listed twice", at()));
        }
        out.push(p.to_string());
    }
    Ok(out)
}

/// Every file below `tree`, as tree paths, sorted. A missing directory is
/// an empty overlay.
pub fn files(tree: &Path) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    if !tree.exists() {
        return Ok(out);
    }
    let mut todo = vec![String::new()];
    while let Some(d) = todo.pop() {
        let here = if d.is_empty() {
            tree.to_path_buf()
        } else {
            tree.join(&d)
        };
        let rd = fs::read_dir(&here).map_err(|e| format!("cannot list {}: {e}", here.display()))?;
        for ent in rd {
            let ent = ent.map_err(|e| format!("cannot list {}: {e}", here.display()))?;
            let name = ent.file_name().to_string_lossy().into_owned();
            let rel = if d.is_empty() {
                name
            } else {
                format!("{d}/{name}")
            };
            let ty = ent
                .file_type()
                .map_err(|e| format!("cannot stat {}: {e}", ent.path().display()))?;
            if ty.is_dir() {
                todo.push(rel);
            } else if ty.is_file() {
                out.insert(rel);
            } else {
                return Err(format!(
                    "{}: neither a file nor a directory (a link?): the overlay holds plain files",
                    ent.path().display()
                ));
            }
        }
    }
    Ok(out)
}

/// A git-style diff that creates `path` with `content` (mode 100644).
pub fn new_file_diff(path: &str, content: &str) -> Result<String> {
    if content.is_empty() {
        return Err(format!("{path}: an empty file cannot be added by a patch"));
    }
    if !content.ends_with('\n') {
        return Err(format!(
            "{path}: no newline at the end of the file (kernel files end in one)"
        ));
    }
    let n = content.lines().count();
    let mut out = format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1{} @@\n",
        if n == 1 { String::new() } else { format!(",{n}") }
    );
    for line in content.split_inclusive('\n') {
        out.push('+');
        out.push_str(line);
    }
    Ok(out)
}

/// `content` of `path` with the diff section `part` taken back off it.
pub fn reverse_apply(path: &str, content: &str, part: &str, label: &str) -> Result<String> {
    let tmp = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let file = tmp.path().join("t").join(path);
    if let Some(parent) = file.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    fs::write(&file, content).map_err(|e| format!("{}: {e}", file.display()))?;
    let diff = tmp.path().join("part.diff");
    fs::write(&diff, part).map_err(|e| format!("{}: {e}", diff.display()))?;
    // Outside any repository: `git apply` works as a plain patch tool.
    let out = Command::new("git")
        .current_dir(tmp.path().join("t"))
        .env("GIT_CEILING_DIRECTORIES", tmp.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["apply", "-R", "--whitespace=nowarn"])
        .arg(&diff)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{label}: its change of {path} cannot be taken back off the overlay's file \
             (tree/{path} must be the file after the whole series): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))
}

/// One patch as the overlay needs it: its name, the paths it adds and the
/// text of its plain `changes.diff` (empty when it has none).
pub struct PatchParts<'a> {
    /// The patch directory name.
    pub name: &'a str,
    /// Its `adds` paths.
    pub adds: &'a [String],
    /// Its `changes.diff`, and that file's path for errors.
    pub changes: Option<(&'a str, &'a Path)>,
}

/// For each patch, the files it adds with their content right after it:
/// the overlay's file with every later patch's part for that file taken
/// back off, last patch first. Checks that the overlay and the `adds`
/// lists name the same files, that no `changes.diff` creates a file, and
/// that no patch changes a file before the patch that adds it.
pub fn derive(tree: &Path, patches: &[PatchParts<'_>]) -> Result<Vec<Vec<(String, String)>>> {
    let on_disk = files(tree)?;
    let mut adder: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, p) in patches.iter().enumerate() {
        for a in p.adds {
            if let Some(j) = adder.insert(a, i) {
                return Err(format!(
                    "{a} is added by both {} and {}: a file is added once",
                    patches[j].name, p.name
                ));
            }
            if !on_disk.contains(a) {
                return Err(format!(
                    "{}/adds lists {a}, but {} does not exist",
                    p.name,
                    tree.join(a).display()
                ));
            }
        }
    }
    if let Some(stray) = on_disk.iter().find(|f| !adder.contains_key(f.as_str())) {
        return Err(format!(
            "{} is not listed in any patch's adds file: say which patch adds it",
            tree.join(stray).display()
        ));
    }
    // Each patch's parts, by path.
    let mut parts: Vec<BTreeMap<String, &str>> = Vec::new();
    for (i, p) in patches.iter().enumerate() {
        let mut mine = BTreeMap::new();
        if let Some((text, file)) = p.changes {
            for s in sections(text, file)? {
                if s.lines().any(|l| l.starts_with("new file mode ")) {
                    let path = diff_paths(s, file)?
                        .pop()
                        .map(|(_, p)| p)
                        .unwrap_or_default();
                    return Err(format!(
                        "{}: creates {path}: put the file in {} and list it in {}/adds",
                        file.display(),
                        tree.join(&path).display(),
                        p.name
                    ));
                }
                for (_, path) in diff_paths(s, file)? {
                    if let Some(&a) = adder.get(path.as_str()) {
                        if a >= i {
                            return Err(format!(
                                "{}: changes {path}, which {} adds: change tree/{path} instead",
                                file.display(),
                                patches[a].name
                            ));
                        }
                        if s.lines().any(|l| l.starts_with("deleted file mode ")) {
                            return Err(format!(
                                "{}: deletes {path}, which the overlay holds as after the series",
                                file.display()
                            ));
                        }
                    }
                    mine.insert(path, s);
                }
            }
        }
        parts.push(mine);
    }
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new(); patches.len()];
    for (path, &a) in &adder {
        let real = tree.join(path);
        let mut content = fs::read_to_string(&real)
            .map_err(|e| format!("cannot read {}: {e}", real.display()))?;
        for (j, p) in patches.iter().enumerate().skip(a + 1).rev() {
            if let Some(part) = parts[j].get(*path) {
                let label = p
                    .changes
                    .map_or(p.name.to_string(), |(_, f)| f.display().to_string());
                content = reverse_apply(path, &content, part, &label)?;
            }
        }
        out[a].push((path.to_string(), content));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_lines_and_errors() {
        let f = Path::new("s/01/adds");
        let got = parse_adds("# files\na/b.c\n\nc/d.rs  # glue\n", f).unwrap();
        assert_eq!(got, ["a/b.c", "c/d.rs"]);
        for (text, want) in [
            ("a\na\n", "s/01/adds:2: \"a\" is listed twice"),
            ("a b\n", "s/01/adds:1: one path per line"),
            ("../x\n", "s/01/adds:1: \"../x\": not a plain relative path"),
        ] {
            let e = parse_adds(text, f).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn new_file_diff_round_trips_through_git_apply() {
        let d = new_file_diff("k/a.c", "one\ntwo\n").unwrap();
        assert_eq!(
            d,
            "diff --git a/k/a.c b/k/a.c\nnew file mode 100644\n--- /dev/null\n+++ b/k/a.c\n@@ -0,0 +1,2 @@\n+one\n+two\n"
        );
        assert!(new_file_diff("k/a.c", "one\n")
            .unwrap()
            .contains("@@ -0,0 +1 @@\n"));
        assert!(new_file_diff("k/a.c", "no newline").is_err());
        assert!(new_file_diff("k/a.c", "").is_err());
    }

    /// A file added by patch 1 and changed by patch 2: patch 1 adds the
    /// overlay's file without patch 2's change; a change that is not in
    /// the overlay's file is an error naming the patch.
    #[test]
    fn derive_takes_later_changes_back_off() {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        fs::create_dir_all(tree.join("k")).unwrap();
        fs::write(tree.join("k/a.c"), "one\ntwo\nthree\n").unwrap();
        let later = "diff --git a/k/a.c b/k/a.c\n--- a/k/a.c\n+++ b/k/a.c\n@@ -1,2 +1,3 @@\n one\n+two\n three\n";
        let f = Path::new("02/changes.diff");
        let adds = vec!["k/a.c".to_string()];
        let mk = |changes: &'static str| {
            vec![
                PatchParts {
                    name: "01",
                    adds: &adds,
                    changes: None,
                },
                PatchParts {
                    name: "02",
                    adds: &[],
                    changes: Some((changes, f)),
                },
            ]
        };
        let got = derive(&tree, &mk(later)).unwrap();
        assert_eq!(got[0], [("k/a.c".to_string(), "one\nthree\n".to_string())]);
        assert!(got[1].is_empty());
        let wrong = "diff --git a/k/a.c b/k/a.c\n--- a/k/a.c\n+++ b/k/a.c\n@@ -1,2 +1,3 @@\n one\n+four\n three\n";
        let e = derive(&tree, &mk(wrong)).unwrap_err();
        assert!(
            e.contains("02/changes.diff: its change of k/a.c cannot be taken back"),
            "{e}"
        );
        let creates = "diff --git a/k/b.c b/k/b.c\nnew file mode 100644\n--- /dev/null\n+++ b/k/b.c\n@@ -0,0 +1 @@\n+x\n";
        let e = derive(&tree, &mk(creates)).unwrap_err();
        assert!(e.contains("creates k/b.c: put the file in"), "{e}");
        fs::write(tree.join("k/stray.h"), "x\n").unwrap();
        let e = derive(&tree, &mk(later)).unwrap_err();
        assert!(
            e.contains("stray.h is not listed in any patch's adds file"),
            "{e}"
        );
    }
}
