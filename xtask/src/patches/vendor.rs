//! Copying crates into the kernel tree: the only way their files get there.
//!
//! A vendored crate is its `src/` tree (`*.rs` only, sorted, recursively)
//! plus the license files it ships, copied to the patch's tree directory.
//! `kallsyms-fast` comes from the workspace member, every other package
//! from the registry source of the exact version Cargo.lock pins, found with
//! `cargo metadata --locked --filter-platform <host>` as kmod-shim/Makefile
//! does (a fresh CARGO_HOME downloads it).
//!
//! Kernel rule: every source file carries an SPDX line. A copied `.rs` file
//! without one gets `// SPDX-License-Identifier: <expr>` prepended, `<expr>`
//! being the package's `license` field with `/` turned into ` OR ` (the
//! kernel did the same when it imported rust/alloc).

use crate::{env, run, Result};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the generator needs to know about one package.
#[derive(Debug, Clone)]
pub struct Crate {
    /// Cargo package name.
    pub name: String,
    /// The locked version.
    pub version: String,
    /// The SPDX expression written into files that lack one.
    pub spdx: String,
    /// The package directory (holding `Cargo.toml`, `src/`, licenses).
    pub dir: PathBuf,
    /// Extra license file named by `license-file`, if any.
    pub license_file: Option<PathBuf>,
}

/// Summary of one vendoring step, for the cover letter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// Cargo package name.
    pub package: String,
    /// The locked version.
    pub version: String,
    /// The SPDX expression of the package.
    pub spdx: String,
    /// Tree directory written.
    pub tree_dir: String,
    /// Number of `.rs` files copied.
    pub rs_files: usize,
    /// How many of them got an SPDX line prepended.
    pub spdx_added: usize,
    /// License file names copied beside the sources.
    pub licenses: Vec<String>,
}

/// The `license` field as a kernel SPDX expression (`/` means OR).
pub fn spdx_expr(license: &str) -> String {
    license
        .split('/')
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// Whether a file's text already has an SPDX tag in its leading comments.
///
/// Only the first two lines count: the kernel wants the tag on line 1 (line
/// 2 after a `#!`), and a tag further down is not the file's license line.
pub fn has_spdx(text: &str) -> bool {
    text.lines()
        .take(2)
        .any(|l| l.contains("SPDX-License-Identifier:"))
}

/// The text to write for a copied `.rs` file, and whether a tag was added.
pub fn with_spdx(text: &str, spdx: &str) -> (String, bool) {
    if has_spdx(text) {
        (text.to_string(), false)
    } else {
        (format!("// SPDX-License-Identifier: {spdx}\n{text}"), true)
    }
}

/// The license identifiers of an SPDX expression (operators and
/// parentheses dropped).
pub fn license_ids(expr: &str) -> Vec<&str> {
    expr.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter(|t| !t.is_empty() && !["OR", "AND", "WITH"].contains(t))
        .collect()
}

/// The license and exception identifiers `LICENSES/` declares, upper-case.
///
/// The kernel's `scripts/spdxcheck.py` (which checkpatch calls only in a
/// git tree, so not on our pristine copy) accepts an SPDX tag only when
/// each identifier is declared by a `Valid-License-Identifier:` or
/// `SPDX-Exception-Identifier:` line (before `License-Text:`) of a file
/// under `LICENSES/preferred`, `dual`, `deprecated` or `exceptions`; the
/// same files are read here from each of `trees` (the pristine tree, and
/// the generated one, where the series may add a license).
pub fn declared_licenses(trees: &[&Path]) -> Result<BTreeSet<String>> {
    let mut ids = BTreeSet::new();
    for t in trees {
        for d in ["preferred", "dual", "deprecated", "exceptions"] {
            let dir = t.join("LICENSES").join(d);
            if !dir.is_dir() {
                continue;
            }
            for rel in all_files(&dir)? {
                let f = dir.join(rel);
                let text = fs::read(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
                for line in String::from_utf8_lossy(&text).lines() {
                    // The header ends here; the license text follows.
                    if line.starts_with("License-Text:") {
                        break;
                    }
                    let id = line
                        .strip_prefix("Valid-License-Identifier:")
                        .or_else(|| line.strip_prefix("SPDX-Exception-Identifier:"));
                    if let Some(id) = id {
                        ids.insert(id.trim().to_uppercase());
                    }
                }
            }
        }
    }
    Ok(ids)
}

/// Identifiers of `expr` that `declared` (see [`declared_licenses`]) lacks.
pub fn missing_licenses<'a>(expr: &'a str, declared: &BTreeSet<String>) -> Vec<&'a str> {
    license_ids(expr)
        .into_iter()
        .filter(|id| !declared.contains(&id.to_uppercase()))
        .collect()
}

fn host_triple() -> Result<String> {
    let out = run::output(Command::new("rustc").arg("-vV"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .ok_or_else(|| "`rustc -vV` printed no `host:` line".to_string())
}

/// The workspace's locked packages, from `cargo metadata`.
pub struct Metadata {
    packages: Vec<serde_json::Value>,
}

impl Metadata {
    /// Run `cargo metadata` in the repository (downloads missing sources).
    pub fn load() -> Result<Metadata> {
        let mut cmd = Command::new(env::cargo());
        cmd.current_dir(env::repo_root())
            .args(["metadata", "--format-version", "1", "--locked"])
            .arg("--filter-platform")
            .arg(host_triple()?);
        let out = run::output(&mut cmd)?;
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("cannot parse `cargo metadata` output: {e}"))?;
        let packages = v["packages"]
            .as_array()
            .ok_or("`cargo metadata` output has no packages array")?
            .clone();
        Ok(Metadata { packages })
    }

    /// Look up one package; it must be in the lock file exactly once.
    pub fn find(&self, name: &str) -> Result<Crate> {
        let hits: Vec<&serde_json::Value> = self
            .packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(name))
            .collect();
        let p = match hits[..] {
            [p] => p,
            [] => {
                return Err(format!(
                    "package {name:?} is not in the workspace's Cargo.lock (for this host)"
                ))
            }
            _ => {
                let versions: Vec<&str> =
                    hits.iter().filter_map(|p| p["version"].as_str()).collect();
                return Err(format!(
                    "package {name:?} is locked in several versions ({}): which one to vendor is ambiguous",
                    versions.join(", ")
                ));
            }
        };
        let field = |k: &str| {
            p[k].as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("package {name}: `cargo metadata` gives no {k}"))
        };
        let manifest = PathBuf::from(field("manifest_path")?);
        let dir = manifest
            .parent()
            .ok_or_else(|| format!("package {name}: odd manifest path {}", manifest.display()))?
            .to_path_buf();
        let license = field("license").map_err(|_| {
            format!("package {name} has no `license` field: cannot write SPDX lines for it")
        })?;
        Ok(Crate {
            name: name.to_string(),
            version: field("version")?,
            spdx: spdx_expr(&license),
            license_file: p["license_file"].as_str().map(|f| dir.join(f)),
            dir,
        })
    }
}

/// `*.rs` files under `dir`, as sorted relative paths.
pub fn rs_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = all_files(dir)?;
    files.retain(|f| f.extension().is_some_and(|e| e == "rs"));
    Ok(files)
}

/// Regular files under `dir`, as sorted relative paths; symlinks refused.
pub fn all_files(dir: &Path) -> Result<Vec<PathBuf>> {
    fn walk(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        let here = root.join(rel);
        let rd = fs::read_dir(&here).map_err(|e| format!("cannot list {}: {e}", here.display()))?;
        for ent in rd {
            let ent = ent.map_err(|e| format!("cannot list {}: {e}", here.display()))?;
            let rel = rel.join(ent.file_name());
            let ty = fs::symlink_metadata(root.join(&rel))
                .map_err(|e| format!("{}: {e}", root.join(&rel).display()))?;
            if ty.file_type().is_symlink() {
                // A link could leave the tree or loop; crates.io sources
                // and LICENSES/ have none, so refuse rather than guess.
                return Err(format!(
                    "{}: a symlink: not followed",
                    root.join(&rel).display()
                ));
            }
            if ty.is_dir() {
                walk(root, &rel, out)?;
            } else {
                out.push(rel);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, Path::new(""), &mut out)?;
    out.sort();
    Ok(out)
}

/// License files a crate ships in its top directory (LICENSE*, LICENCE*,
/// COPYING*), plus its `license-file`, sorted.
pub fn license_files(c: &Crate) -> Result<Vec<PathBuf>> {
    let rd = fs::read_dir(&c.dir).map_err(|e| format!("cannot list {}: {e}", c.dir.display()))?;
    let mut out = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| format!("cannot list {}: {e}", c.dir.display()))?;
        let name = ent.file_name().to_string_lossy().to_uppercase();
        if ["LICENSE", "LICENCE", "COPYING"]
            .iter()
            .any(|p| name.starts_with(p))
            && ent.path().is_file()
        {
            out.push(ent.path());
        }
    }
    if let Some(f) = &c.license_file {
        if !out.contains(f) {
            out.push(f.clone());
        }
    }
    out.sort();
    Ok(out)
}

/// Replace `tree/<tree_dir>` with a fresh copy of the crate, leaving out
/// the `exclude`d paths under `src/` (files, or directories and all
/// below them).
///
/// The directory is removed first, so files the crate no longer has show as
/// deletions when a later patch re-vendors updated sources.
pub fn copy_into(c: &Crate, tree: &Path, tree_dir: &str, exclude: &[String]) -> Result<Copied> {
    let dest = tree.join(tree_dir);
    if dest.exists() {
        fs::remove_dir_all(&dest).map_err(|e| format!("cannot remove {}: {e}", dest.display()))?;
    }
    let src = c.dir.join("src");
    let mut files = rs_files(&src)?;
    files.retain(|rel| {
        let rel = rel.to_string_lossy();
        !exclude
            .iter()
            .any(|x| crate::patches::input::is_under(&rel, x))
    });
    if files.is_empty() {
        return Err(format!("{}: no .rs files to vendor", src.display()));
    }
    let mut spdx_added = 0;
    for rel in &files {
        let from = src.join(rel);
        let to = dest.join(rel);
        let text = fs::read_to_string(&from)
            .map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        let (text, added) = with_spdx(&text, &c.spdx);
        spdx_added += usize::from(added);
        write_file(&to, text.as_bytes())?;
    }
    let mut licenses = Vec::new();
    for from in license_files(c)? {
        let name = from
            .file_name()
            .ok_or_else(|| format!("odd license path {}", from.display()))?;
        let data = fs::read(&from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        write_file(&dest.join(name), &data)?;
        licenses.push(name.to_string_lossy().into_owned());
    }
    Ok(Copied {
        package: c.name.clone(),
        version: c.version.clone(),
        spdx: c.spdx.clone(),
        tree_dir: tree_dir.to_string(),
        rs_files: files.len(),
        spdx_added,
        licenses,
    })
}

fn write_file(to: &Path, data: &[u8]) -> Result<()> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    fs::write(to, data).map_err(|e| format!("cannot write {}: {e}", to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spdx_expressions() {
        assert_eq!(spdx_expr("MIT/Apache-2.0"), "MIT OR Apache-2.0");
        assert_eq!(spdx_expr("MIT OR Apache-2.0"), "MIT OR Apache-2.0");
        assert_eq!(spdx_expr("GPL-2.0-only"), "GPL-2.0-only");
        assert_eq!(spdx_expr("A / B/C"), "A OR B OR C");
    }

    #[test]
    fn license_texts_looked_up() {
        assert_eq!(
            license_ids("(MIT OR Apache-2.0) AND GPL-2.0 WITH Linux-syscall-note"),
            ["MIT", "Apache-2.0", "GPL-2.0", "Linux-syscall-note"]
        );
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::create_dir_all(a.join("LICENSES/preferred")).unwrap();
        fs::create_dir_all(a.join("LICENSES/exceptions")).unwrap();
        fs::create_dir_all(b.join("LICENSES/deprecated")).unwrap();
        fs::write(
            a.join("LICENSES/preferred/GPL-2.0"),
            "Valid-License-Identifier: GPL-2.0\nValid-License-Identifier: GPL-2.0-only\nLicense-Text:\nValid-License-Identifier: MIT\n",
        )
        .unwrap();
        fs::write(
            a.join("LICENSES/exceptions/Linux-syscall-note"),
            "SPDX-Exception-Identifier: Linux-syscall-note\n",
        )
        .unwrap();
        fs::write(
            b.join("LICENSES/deprecated/Zlib"),
            "Valid-License-Identifier: zlib\n",
        )
        .unwrap();
        let both = declared_licenses(&[&a, &b]).unwrap();
        assert_eq!(
            missing_licenses(
                "GPL-2.0-only WITH Linux-syscall-note OR Zlib OR BSL-1.0",
                &both
            ),
            ["BSL-1.0"]
        );
        // The declaration lines count, not file names; the header ends at
        // License-Text:, as in spdxcheck.py.
        assert_eq!(missing_licenses("MIT", &both), ["MIT"]);
        let only_a = declared_licenses(&[&a]).unwrap();
        assert_eq!(missing_licenses("GPL-2.0-only OR Zlib", &only_a), ["Zlib"]);
    }

    #[test]
    fn spdx_prepended_once() {
        let (t, added) = with_spdx("//! doc\n#![no_std]\n", "BSL-1.0");
        assert!(added);
        assert_eq!(
            t,
            "// SPDX-License-Identifier: BSL-1.0\n//! doc\n#![no_std]\n"
        );
        let (again, added) = with_spdx(&t, "BSL-1.0");
        assert!(!added);
        assert_eq!(again, t);
        // A tag deep in the file is not the file's license line.
        let late = "//! a\n//! b\n// SPDX-License-Identifier: MIT\n";
        assert!(with_spdx(late, "MIT").1);
        assert!(with_spdx("", "MIT").1);
    }

    #[test]
    fn copy_sorted_with_licenses_and_deletions() {
        let tmp = tempfile::tempdir().unwrap();
        let krate = tmp.path().join("crate");
        fs::create_dir_all(krate.join("src/sub")).unwrap();
        fs::write(krate.join("src/lib.rs"), "pub mod sub;\n").unwrap();
        fs::write(
            krate.join("src/sub/mod.rs"),
            "// SPDX-License-Identifier: MIT\n",
        )
        .unwrap();
        fs::write(krate.join("src/notes.txt"), "not rust\n").unwrap();
        fs::write(krate.join("LICENSE-MIT"), "mit\n").unwrap();
        fs::write(krate.join("README.md"), "readme\n").unwrap();
        let c = Crate {
            name: "demo".into(),
            version: "1.0.0".into(),
            spdx: "MIT".into(),
            dir: krate.clone(),
            license_file: None,
        };
        let tree = tmp.path().join("tree");
        fs::create_dir_all(tree.join("k/demo")).unwrap();
        fs::write(tree.join("k/demo/stale.rs"), "old\n").unwrap();
        let got = copy_into(&c, &tree, "k/demo", &[]).unwrap();
        assert_eq!((got.rs_files, got.spdx_added), (2, 1));
        assert_eq!(got.licenses, ["LICENSE-MIT"]);
        let mut listed: Vec<String> = fs::read_dir(tree.join("k/demo"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        listed.sort();
        assert_eq!(listed, ["LICENSE-MIT", "lib.rs", "sub"]);
        assert_eq!(
            fs::read_to_string(tree.join("k/demo/lib.rs")).unwrap(),
            "// SPDX-License-Identifier: MIT\npub mod sub;\n"
        );
        assert_eq!(
            rs_files(&krate.join("src")).unwrap(),
            [PathBuf::from("lib.rs"), PathBuf::from("sub/mod.rs")]
        );
        // An excluded directory is left out with everything below it.
        let got = copy_into(&c, &tree, "k/demo", &["sub".into()]).unwrap();
        assert_eq!(got.rs_files, 1);
        assert!(!tree.join("k/demo/sub").exists());
        assert!(tree.join("k/demo/lib.rs").exists());
        std::os::unix::fs::symlink("..", krate.join("src/sub/up")).unwrap();
        let e = rs_files(&krate.join("src")).unwrap_err();
        assert!(e.ends_with("src/sub/up: a symlink: not followed"), "{e}");
    }
}
