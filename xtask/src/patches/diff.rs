//! Git-style diffs as the series' hand-written files are (`changes.diff`,
//! `changes.<base>.diff`, `fixup.<base>.diff`): their `diff --git`
//! sections and the tree paths they name, each checked to be a plain
//! relative path inside the kernel tree.

use crate::Result;
use std::path::{Component, Path};

/// The `diff --git` sections of a diff (text before the first header is
/// an error: there is nothing it could belong to).
pub fn sections<'a>(text: &'a str, file: &Path) -> Result<Vec<&'a str>> {
    let mut starts: Vec<usize> = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            starts.push(pos);
        } else if starts.is_empty() && !line.trim().is_empty() {
            return Err(format!(
                "{}:1: text before the first `diff --git` header",
                file.display()
            ));
        }
        pos += line.len();
    }
    let mut out = Vec::new();
    for (n, s) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(text.len());
        out.push(&text[*s..end]);
    }
    Ok(out)
}

/// Check that `p` is a plain relative path inside the tree (no `..`, not
/// absolute, no `.` components, no trailing slash games).
pub fn check_tree_path(p: &str) -> std::result::Result<(), String> {
    if p.is_empty() {
        return Err("empty path".into());
    }
    if p.ends_with('/') || p.contains("//") {
        return Err(format!(
            "{p:?}: write the path without a trailing or doubled '/'"
        ));
    }
    for c in Path::new(p).components() {
        if !matches!(c, Component::Normal(_)) {
            return Err(format!("{p:?}: not a plain relative path inside the tree"));
        }
    }
    Ok(())
}

/// Tree paths a git-style diff mentions, with the line each was found on.
///
/// Reads `--- a/P`, `+++ b/P`, `rename from P`, `copy from P` and the
/// `diff --git a/P b/P` header (for mode-only changes). `/dev/null` is
/// skipped. Paths are validated with [`check_tree_path`].
pub fn diff_paths(text: &str, file: &Path) -> Result<Vec<(usize, String)>> {
    let mut out = Vec::new();
    let mut in_header = false;
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", file.display(), i + 1);
        let mut found: Vec<&str> = Vec::new();
        if let Some(rest) = line.strip_prefix("diff --git ") {
            in_header = true;
            let Some((a, b)) = rest.split_once(" b/") else {
                return Err(format!("{}: cannot read the paths of {line:?}", at()));
            };
            let Some(a) = a.strip_prefix("a/") else {
                return Err(format!("{}: expected `diff --git a/... b/...`", at()));
            };
            found.extend([a, b]);
        } else if line.starts_with("@@") {
            in_header = false;
        } else if in_header {
            for (prefix, strip) in [
                ("--- ", "a/"),
                ("+++ ", "b/"),
                ("rename from ", ""),
                ("rename to ", ""),
                ("copy from ", ""),
                ("copy to ", ""),
            ] {
                if let Some(rest) = line.strip_prefix(prefix) {
                    let rest = rest.split('\t').next().unwrap_or(rest);
                    if rest == "/dev/null" {
                        continue;
                    }
                    let Some(p) = rest.strip_prefix(strip) else {
                        return Err(format!(
                            "{}: expected a git-style path ({strip}...), got {rest:?}",
                            at()
                        ));
                    };
                    found.push(p);
                }
            }
        }
        for p in found {
            check_tree_path(p).map_err(|e| format!("{}: {e}", at()))?;
            out.push((i + 1, p.to_string()));
        }
    }
    if out.is_empty() {
        return Err(format!(
            "{}: no `diff --git` headers: not a git-style diff",
            file.display()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f() -> &'static Path {
        Path::new("kernel/series/x")
    }

    #[test]
    fn paths_of_a_diff() {
        let d = "\
diff --git a/init/Kconfig b/init/Kconfig
index 1..2 100644
--- a/init/Kconfig
+++ b/init/Kconfig
@@ -1 +1,2 @@
--- a/not/a/header
+x
diff --git a/k/new.c b/k/new.c
new file mode 100644
--- /dev/null
+++ b/k/new.c
@@ -0,0 +1 @@
+y
";
        let got: Vec<String> = diff_paths(d, f())
            .unwrap()
            .into_iter()
            .map(|p| p.1)
            .collect();
        assert_eq!(
            got,
            [
                "init/Kconfig",
                "init/Kconfig",
                "init/Kconfig",
                "init/Kconfig",
                "k/new.c",
                "k/new.c",
                "k/new.c"
            ]
        );
        let bad = "diff --git a/../etc/passwd b/../etc/passwd\n";
        assert!(diff_paths(bad, f())
            .unwrap_err()
            .contains("x:1: \"../etc/passwd\": not a plain relative path"));
        assert!(diff_paths("just text\n", f())
            .unwrap_err()
            .contains("not a git-style diff"));
        let bad = "diff --git a/x b/x\n--- x\n";
        assert!(diff_paths(bad, f())
            .unwrap_err()
            .contains("x:2: expected a git-style path"));
    }
}
