//! The series description in `kernel/series/`: parsing and validation.
//!
//! Every error names the file and, where there is one, the line, so a typo
//! in a hand-edited file is found at once. Parsing is split from reading
//! (`parse_*` take text) so the rules are unit-tested without files.

use super::diff::{check_tree_path, diff_paths, sections};
use super::overlay;
use crate::Result;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// One `<package> <tree dir>` line of a patch's `vendor` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorLine {
    /// The cargo package name (`kallsyms-fast`, `arrayvec`, ...).
    pub package: String,
    /// Directory in the kernel tree that receives the crate's `src/`.
    pub tree_dir: String,
    /// Paths under `src/` (files or directories) left out: the parts of a
    /// crate the kernel build never compiles (`-tests.rs`).
    pub exclude: Vec<String>,
}

/// One patch of the series: a directory under the series directory.
#[derive(Debug, Clone)]
pub struct Patch {
    /// The directory name, as listed in `series`.
    pub name: String,
    /// The commit message (subject, blank line, body), ending in `\n`.
    pub message: String,
    /// Path of `changes.diff`, when the patch has hand-written changes.
    pub changes: Option<PathBuf>,
    /// Path of `changes.<base>.diff` when the series is loaded for a base
    /// other than the first of `bases` and the patch has one: the whole
    /// change of each file whose `changes.diff` part does not apply there
    /// (see [`Patch::diffs`]).
    pub overrides: Option<PathBuf>,
    /// Path of `fixup.<base>.diff`, likewise: what differs on that base
    /// in files whose `changes.diff` part applies there, as a diff on top
    /// of the patch.
    pub fixups: Option<PathBuf>,
    /// The crates this patch copies into the tree.
    pub vendor: Vec<VendorLine>,
    /// The files this patch adds (its `adds` file), with their content
    /// right after it, derived from the series' `tree/` (overlay.rs).
    pub added: Vec<(String, String)>,
    /// Name and e-mail of the first `Signed-off-by:`, the patch's author.
    pub author: Option<(String, String)>,
}

impl Patch {
    /// The patch's change on the first base: a new-file diff for each file
    /// it adds, then `changes.diff`. `None` when it has neither.
    pub fn changes_text(&self) -> Result<Option<String>> {
        let mut out = String::new();
        for (path, content) in &self.added {
            out.push_str(&overlay::new_file_diff(path, content)?);
        }
        if let Some(p) = &self.changes {
            out.push_str(&read(p)?);
        }
        Ok((!out.is_empty()).then_some(out))
    }

    /// The hand-written diffs this patch applies, in order, on the base it
    /// was loaded for: `changes.diff` merged with `changes.<base>.diff`
    /// ([`merge_overrides`]), then `fixup.<base>.diff`. Empty when the
    /// patch only vendors.
    pub fn diffs(&self) -> Result<Vec<String>> {
        let changes = self.changes_text()?;
        let changes = changes.map(|t| (t, self.changes.as_deref().unwrap_or(Path::new("adds"))));
        let overrides = match &self.overrides {
            Some(p) => Some((read(p)?, p.as_path())),
            None => None,
        };
        let mut out = Vec::new();
        match (changes, overrides) {
            (None, None) => {}
            (Some((text, _)), None) => out.push(text),
            (None, Some((text, file))) => {
                diff_paths(&text, file)?;
                out.push(text);
            }
            (Some((c, cf)), Some((o, of))) => out.push(merge_overrides(&c, cf, &o, of)?),
        }
        if let Some(p) = &self.fixups {
            let text = read(p)?;
            diff_paths(&text, p)?;
            out.push(text);
        }
        Ok(out)
    }
}

/// One base the series is generated for: a line of `bases`,
/// `<X.Y> <Debian package> <installed | suite> <generated series dir>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The branch, `6.12` or `7.3`: what `changes.<name>.diff` and
    /// `--base` say.
    pub name: String,
    /// The Debian package whose tarball is the pristine tree
    /// (`linux-source-7.3`).
    pub package: String,
    /// Where the package comes from: `None` (`installed`) for the
    /// installed package, else the Debian suite a private apt
    /// configuration reads (`trixie-backports`).
    pub suite: Option<String>,
    /// The generated series, relative to the repository root.
    pub out: String,
}

/// Parse `bases`. The first line is the base the plain `changes.diff`
/// and `message` files are written for.
pub fn parse_bases(text: &str, file: &Path) -> Result<Vec<Base>> {
    let mut out: Vec<Base> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", file.display(), i + 1);
        let line = strip_comment(line);
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, package, suite, dir] = fields[..] else {
            return Err(format!(
                "{}: expected `<X.Y> <Debian package> <installed | suite> <series dir>`, got {line:?}",
                at()
            ));
        };
        let numeric =
            name.split('.').count() == 2 && name.split('.').all(|p| p.parse::<u32>().is_ok());
        if !numeric {
            return Err(format!("{}: {name:?} is not a branch (X.Y)", at()));
        }
        let word = |w: &str| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
        };
        if !word(package) || !word(suite) {
            return Err(format!(
                "{}: {package:?} / {suite:?}: a Debian package and suite are lower-case names",
                at()
            ));
        }
        check_tree_path(dir).map_err(|e| format!("{}: {e}", at()))?;
        if let Some(prev) = out.iter().find(|b| b.name == name || b.out == dir) {
            return Err(format!(
                "{}: {name} {dir} repeats the base {} {}",
                at(),
                prev.name,
                prev.out
            ));
        }
        out.push(Base {
            name: name.to_string(),
            package: package.to_string(),
            suite: (suite != "installed").then(|| suite.to_string()),
            out: dir.to_string(),
        });
    }
    if out.is_empty() {
        return Err(format!("{}: lists no bases", file.display()));
    }
    Ok(out)
}

/// The bases of the series directory: `bases`, or none when the file is
/// absent (a series for one base, named by `base`).
pub fn load_bases(dir: &Path) -> Result<Vec<Base>> {
    let file = dir.join("bases");
    if !file.exists() {
        return Ok(Vec::new());
    }
    parse_bases(&read(&file)?, &file)
}

/// `changes` with the sections of every file `overrides` has a section
/// for replaced by `overrides`' sections (in the place of the first one
/// replaced; a file `changes` does not touch follows at the end). The
/// granule is the file: its change on the base is all in
/// `changes.<base>.diff`.
pub fn merge_overrides(
    changes: &str,
    changes_file: &Path,
    overrides: &str,
    overrides_file: &Path,
) -> Result<String> {
    diff_paths(changes, changes_file)?;
    diff_paths(overrides, overrides_file)?;
    let paths = |s: &str, f: &Path| -> Result<BTreeSet<String>> {
        Ok(diff_paths(s, f)?.into_iter().map(|(_, p)| p).collect())
    };
    let over: Vec<(&str, BTreeSet<String>)> = sections(overrides, overrides_file)?
        .into_iter()
        .map(|s| Ok((s, paths(s, overrides_file)?)))
        .collect::<Result<_>>()?;
    let replaced: BTreeSet<&String> = over.iter().flat_map(|(_, p)| p).collect();
    let mut used = vec![false; over.len()];
    let mut out = String::new();
    for s in sections(changes, changes_file)? {
        let mine = paths(s, changes_file)?;
        if !mine.iter().any(|p| replaced.contains(p)) {
            out.push_str(s);
            continue;
        }
        for (n, (o, op)) in over.iter().enumerate() {
            if !used[n] && !op.is_disjoint(&mine) {
                used[n] = true;
                out.push_str(o);
            }
        }
    }
    for (n, (o, _)) in over.iter().enumerate() {
        if !used[n] {
            out.push_str(o);
        }
    }
    Ok(out)
}

/// The whole series as described in the series directory.
#[derive(Debug, Clone)]
pub struct Series {
    /// The one-line base: the branch the series follows (`Linux 6.12`).
    pub base: String,
    /// Cover letter subject.
    pub cover_subject: String,
    /// Cover letter body (may be empty), ending in `\n` when not empty.
    pub cover_body: String,
    /// The patches, in order.
    pub patches: Vec<Patch>,
}

impl Series {
    /// Every tree directory any patch vendors into, sorted.
    ///
    /// These directories belong to the generator: `changes.diff` may not
    /// touch them and `--export` leaves them out.
    pub fn vendor_dirs(&self) -> BTreeSet<String> {
        self.patches
            .iter()
            .flat_map(|p| p.vendor.iter().map(|v| v.tree_dir.clone()))
            .collect()
    }
}

fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Drop a `#` comment and surrounding blanks from one line.
fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("").trim()
}

/// Parse `series`: patch directory names in order, `#` comments allowed.
pub fn parse_series_list(text: &str, file: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", file.display(), i + 1);
        let name = strip_comment(line);
        if name.is_empty() {
            continue;
        }
        if name.contains(char::is_whitespace) {
            return Err(format!(
                "{}: one patch directory per line, got {name:?}",
                at()
            ));
        }
        if name.contains('/') || name == "." || name == ".." {
            return Err(format!(
                "{}: {name:?} is not a directory name in the series directory",
                at()
            ));
        }
        if !seen.insert(name.to_string()) {
            return Err(format!("{}: {name:?} is listed twice", at()));
        }
        names.push(name.to_string());
    }
    if names.is_empty() {
        return Err(format!("{}: lists no patches", file.display()));
    }
    Ok(names)
}

/// Parse a `vendor` file: `<cargo package> <tree dir> [-<path under src/>...]`
/// per line.
pub fn parse_vendor(text: &str, file: &Path) -> Result<Vec<VendorLine>> {
    let mut out: Vec<VendorLine> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", file.display(), i + 1);
        let line = strip_comment(line);
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [package, tree_dir, ref rest @ ..] = fields[..] else {
            return Err(format!(
                "{}: expected `<cargo package> <tree dir> [-<path>...]`, got {line:?}",
                at()
            ));
        };
        let mut exclude = Vec::new();
        for f in rest {
            let Some(path) = f.strip_prefix('-') else {
                return Err(format!(
                    "{}: {f:?}: only `-<path under src/>` may follow the tree dir",
                    at()
                ));
            };
            check_tree_path(path).map_err(|e| format!("{}: {e}", at()))?;
            exclude.push(path.to_string());
        }
        check_tree_path(tree_dir).map_err(|e| format!("{}: {e}", at()))?;
        for prev in &out {
            if prev.tree_dir == tree_dir
                || is_under(tree_dir, &prev.tree_dir)
                || is_under(&prev.tree_dir, tree_dir)
            {
                return Err(format!(
                    "{}: {tree_dir} overlaps {} (vendored from {})",
                    at(),
                    prev.tree_dir,
                    prev.package
                ));
            }
        }
        out.push(VendorLine {
            package: package.to_string(),
            tree_dir: tree_dir.to_string(),
            exclude,
        });
    }
    Ok(out)
}

/// Whether tree path `p` is `dir` itself or inside it.
pub fn is_under(p: &str, dir: &str) -> bool {
    p == dir || (p.starts_with(dir) && p.as_bytes().get(dir.len()) == Some(&b'/'))
}

/// Split "subject\n\nbody" text; `what` names the file for errors.
///
/// The subject is one non-empty line; if anything follows, line 2 is blank.
pub fn parse_message(text: &str, file: &Path) -> Result<(String, String)> {
    let mut lines = text.lines();
    let subject = lines.next().unwrap_or("").trim_end();
    if subject.trim().is_empty() {
        return Err(format!(
            "{}:1: the first line (subject) is empty",
            file.display()
        ));
    }
    match lines.next() {
        None => return Ok((subject.to_string(), String::new())),
        Some(l) if !l.trim().is_empty() => {
            return Err(format!(
                "{}:2: a blank line must separate the subject from the body",
                file.display()
            ))
        }
        Some(_) => {}
    }
    let body: Vec<&str> = lines.map(str::trim_end).collect();
    let body = body.join("\n");
    let body = body.trim_matches('\n');
    Ok((
        subject.to_string(),
        if body.is_empty() {
            String::new()
        } else {
            format!("{body}\n")
        },
    ))
}

/// The first `Signed-off-by: Name <email>` of a message, if any.
///
/// The first sign-off is the patch's author (the kernel's rule: the
/// author signs off first), so the generated `From:` matches it and
/// checkpatch's author/sign-off checks hold. A malformed sign-off line is
/// an error naming its line.
pub fn first_sign_off(text: &str, file: &Path) -> Result<Option<(String, String)>> {
    for (i, line) in text.lines().enumerate() {
        let Some(who) = line.strip_prefix("Signed-off-by:") else {
            continue;
        };
        let who = who.trim();
        let parsed = who
            .strip_suffix('>')
            .and_then(|w| w.rsplit_once('<'))
            .map(|(name, email)| (name.trim(), email.trim()))
            .filter(|(name, email)| {
                !name.is_empty()
                    && !name.contains(['<', '>'])
                    && email.contains('@')
                    && !email.contains(char::is_whitespace)
            });
        let Some((name, email)) = parsed else {
            return Err(format!(
                "{}:{}: expected `Signed-off-by: Full Name <email>`, got {who:?}",
                file.display(),
                i + 1
            ));
        };
        return Ok(Some((name.to_string(), email.to_string())));
    }
    Ok(None)
}

/// Parse `base`: exactly one non-empty line.
pub fn parse_base(text: &str, file: &Path) -> Result<String> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i, l.trim()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    match lines[..] {
        [(_, l)] => Ok(l.to_string()),
        [] => Err(format!(
            "{}: empty (one line naming the base)",
            file.display()
        )),
        [_, (i, _), ..] => Err(format!(
            "{}:{}: the base is one line",
            file.display(),
            i + 1
        )),
    }
}

/// The `X.Y.Z` after "Linux " in the base line, if any.
pub fn base_version(base: &str) -> Option<&str> {
    let rest = &base[base.find("Linux ")? + "Linux ".len()..];
    let v = rest.split(|c: char| c.is_whitespace() || c == '(').next()?;
    (v.split('.').count() >= 2 && v.split('.').all(|p| p.parse::<u32>().is_ok())).then_some(v)
}

/// Read and validate the series directory, for the base named `base`
/// (one of `bases` other than the first, whose `changes.<base>.diff`,
/// `message.<base>` and `cover-letter.<base>` files then replace or
/// override the plain ones), or for the first base (`None`).
pub fn load(dir: &Path, for_base: Option<&str>) -> Result<Series> {
    load_with(dir, for_base, true)
}

/// [`load`] for `--export`, which rewrites the overlay: each patch's
/// `added` names its `adds` paths with empty contents, and the overlay is
/// neither read nor checked.
pub fn load_without_overlay(dir: &Path) -> Result<Series> {
    load_with(dir, None, false)
}

fn load_with(dir: &Path, for_base: Option<&str>, overlay: bool) -> Result<Series> {
    let list = dir.join("series");
    if !list.exists() {
        return Err(format!(
            "no series at {} ({} is missing; see kernel/series/README.md)",
            dir.display(),
            list.display()
        ));
    }
    let names = parse_series_list(&read(&list)?, &list)?;
    let base_file = dir.join("base");
    let base = parse_base(&read(&base_file)?, &base_file)?;
    let bases = load_bases(dir)?;
    if let Some(first) = bases.first() {
        if base_version(&base) != Some(first.name.as_str()) {
            return Err(format!(
                "{}: the first base is {}, but {} says {base:?}",
                dir.join("bases").display(),
                first.name,
                base_file.display()
            ));
        }
    }
    let others: Vec<&str> = bases.iter().skip(1).map(|b| b.name.as_str()).collect();
    if let Some(b) = for_base {
        if !others.contains(&b) {
            return Err(format!(
                "{}: no base {b} to generate for (other bases: {})",
                dir.join("bases").display(),
                if others.is_empty() {
                    "none".to_string()
                } else {
                    others.join(", ")
                }
            ));
        }
    }
    // The base's own version of a file when it has one.
    let pick = |plain: PathBuf| -> PathBuf {
        let Some(b) = for_base else { return plain };
        let name = plain.file_name().map(|n| n.to_string_lossy().into_owned());
        let own = plain.with_file_name(format!("{}.{b}", name.unwrap_or_default()));
        if own.exists() {
            own
        } else {
            plain
        }
    };
    // Measured numbers: `{{...}}` templates, filled from the newest
    // results file (see numbers.rs).
    let mut numbers = super::numbers::Lazy::new(crate::env::repo_root().join("bench/results"));
    let cover_file = pick(dir.join("cover-letter"));
    let cover = numbers.fill(&read(&cover_file)?, &cover_file)?;
    let (cover_subject, cover_body) = parse_message(&cover, &cover_file)?;
    let mut patches = Vec::new();
    for name in names {
        let pdir = dir.join(&name);
        if !pdir.is_dir() {
            return Err(format!(
                "{}: lists {name}, but {} is not a directory",
                list.display(),
                pdir.display()
            ));
        }
        check_per_base_files(&pdir, &others)?;
        let msg_file = pick(pdir.join("message"));
        let message = numbers.fill(&read(&msg_file)?, &msg_file)?;
        let (subject, body) = parse_message(&message, &msg_file)?;
        let author = first_sign_off(&message, &msg_file)?;
        let message = if body.is_empty() {
            format!("{subject}\n")
        } else {
            format!("{subject}\n\n{body}")
        };
        let changes = Some(pdir.join("changes.diff")).filter(|p| p.exists());
        let overrides = for_base
            .map(|b| pdir.join(format!("changes.{b}.diff")))
            .filter(|p| p.exists());
        let fixups = for_base
            .map(|b| pdir.join(format!("fixup.{b}.diff")))
            .filter(|p| p.exists());
        let vendor_file = pdir.join("vendor");
        let vendor = if vendor_file.exists() {
            parse_vendor(&read(&vendor_file)?, &vendor_file)?
        } else {
            Vec::new()
        };
        let adds_file = pdir.join("adds");
        let adds = if adds_file.exists() {
            overlay::parse_adds(&read(&adds_file)?, &adds_file)?
        } else {
            Vec::new()
        };
        if changes.is_none()
            && overrides.is_none()
            && fixups.is_none()
            && vendor.is_empty()
            && adds.is_empty()
        {
            return Err(format!(
                "{}: has neither changes.diff, adds nor vendor lines: the patch would be empty",
                pdir.display()
            ));
        }
        patches.push((
            Patch {
                name,
                message,
                changes,
                overrides,
                fixups,
                vendor,
                added: Vec::new(),
                author,
            },
            adds,
        ));
    }
    let patches = if overlay {
        with_overlay(dir, patches)?
    } else {
        patches
            .into_iter()
            .map(|(mut p, adds)| {
                p.added = adds.into_iter().map(|a| (a, String::new())).collect();
                p
            })
            .collect()
    };
    Ok(Series {
        // A base of `bases` other than the first follows its branch.
        base: for_base.map_or(base, |b| format!("Linux {b}")),
        cover_subject,
        cover_body,
        patches,
    })
}

/// Fill each patch's `added` from the overlay (`tree/`, overlay.rs), and
/// check that no `changes.<base>.diff` replaces a file a patch adds (its
/// change on that base goes into `fixup.<base>.diff`).
fn with_overlay(dir: &Path, patches: Vec<(Patch, Vec<String>)>) -> Result<Vec<Patch>> {
    let texts: Vec<Option<String>> = patches
        .iter()
        .map(|(p, _)| p.changes.as_deref().map(read).transpose())
        .collect::<Result<_>>()?;
    let parts: Vec<overlay::PatchParts<'_>> = patches
        .iter()
        .zip(&texts)
        .map(|((p, adds), t)| overlay::PatchParts {
            name: &p.name,
            adds,
            changes: t.as_deref().zip(p.changes.as_deref()),
        })
        .collect();
    let added = overlay::derive(&overlay::dir(dir), &parts)?;
    let all: BTreeSet<String> = patches.iter().flat_map(|(_, a)| a.clone()).collect();
    let mut out = Vec::new();
    for ((mut p, _), added) in patches.into_iter().zip(added) {
        if let Some(o) = &p.overrides {
            for (line, path) in diff_paths(&read(o)?, o)? {
                if all.contains(&path) {
                    return Err(format!(
                        "{}:{line}: {path} is a file the series adds: put what differs in the fixup diff",
                        o.display()
                    ));
                }
            }
        }
        p.added = added;
        out.push(p);
    }
    Ok(out)
}

/// A per-base file (`changes.X.diff`, `fixup.X.diff`, `message.X`) names a base of
/// `bases` other than the first: a typo would otherwise be ignored.
fn check_per_base_files(pdir: &Path, others: &[&str]) -> Result<()> {
    let rd = fs::read_dir(pdir).map_err(|e| format!("cannot list {}: {e}", pdir.display()))?;
    for ent in rd {
        let ent = ent.map_err(|e| format!("cannot list {}: {e}", pdir.display()))?;
        let name = ent.file_name().to_string_lossy().into_owned();
        let b = name
            .strip_prefix("changes.")
            .or_else(|| name.strip_prefix("fixup."))
            .and_then(|r| r.strip_suffix(".diff"))
            .or_else(|| name.strip_prefix("message."));
        if let Some(b) = b.filter(|b| !others.contains(b)) {
            return Err(format!(
                "{}: {b} is not a base of the series' bases file other than the first",
                pdir.join(&name).display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f() -> &'static Path {
        Path::new("kernel/series/x")
    }

    #[test]
    fn series_list_comments_and_errors() {
        let got = parse_series_list("# head\n01-a\n\n02-b  # trailing\n", f()).unwrap();
        assert_eq!(got, ["01-a", "02-b"]);
        for (text, want) in [
            ("a\na\n", "x:2: \"a\" is listed twice"),
            ("a b\n", "x:1: one patch directory per line"),
            ("ok\n../up\n", "x:2: \"../up\" is not a directory name"),
            ("# nothing\n", "x: lists no patches"),
        ] {
            let e = parse_series_list(text, f()).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn vendor_lines_and_errors() {
        let got = parse_vendor(
            "# crates\narrayvec kernel/kallsyms_fast/arrayvec\nxxhash-rust k/x -a.rs -d/e # pinned\n",
            f(),
        )
        .unwrap();
        assert_eq!(
            got,
            [
                VendorLine {
                    package: "arrayvec".into(),
                    tree_dir: "kernel/kallsyms_fast/arrayvec".into(),
                    exclude: vec![],
                },
                VendorLine {
                    package: "xxhash-rust".into(),
                    tree_dir: "k/x".into(),
                    exclude: vec!["a.rs".into(), "d/e".into()],
                }
            ]
        );
        for (text, want) in [
            ("arrayvec\n", "x:1: expected `<cargo package> <tree dir>"),
            ("a b c\n", "x:1: \"c\": only `-<path under src/>`"),
            ("a b -../c\n", "x:1: \"../c\": not a plain relative path"),
            ("a ../b\n", "x:1: \"../b\": not a plain relative path"),
            ("a /abs\n", "x:1: \"/abs\": not a plain relative path"),
            ("a k/d/\n", "x:1: \"k/d/\": write the path without"),
            (
                "a k/d\nb k/d/e\n",
                "x:2: k/d/e overlaps k/d (vendored from a)",
            ),
            ("a k/d\n\nb k/d\n", "x:3: k/d overlaps"),
        ] {
            let e = parse_vendor(text, f()).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        // A sibling with a common prefix is not "under".
        assert!(parse_vendor("a k/d\nb k/dd\n", f()).is_ok());
    }

    #[test]
    fn messages() {
        let (s, b) = parse_message("kallsyms: x\n\nbody 1\n\nbody 2  \n\n", f()).unwrap();
        assert_eq!(
            (s.as_str(), b.as_str()),
            ("kallsyms: x", "body 1\n\nbody 2\n")
        );
        assert_eq!(
            parse_message("only subject\n", f()).unwrap(),
            ("only subject".into(), String::new())
        );
        assert!(parse_message("\nbody\n", f())
            .unwrap_err()
            .contains("x:1: the first line (subject) is empty"));
        assert!(parse_message("s\nbody\n", f())
            .unwrap_err()
            .contains("x:2: a blank line must separate"));
    }

    #[test]
    fn sign_offs() {
        let m =
            "s\n\nbody\n\nSigned-off-by: Jane Q. Doe <jane@example.org>\nSigned-off-by: B <b@x>\n";
        assert_eq!(
            first_sign_off(m, f()).unwrap(),
            Some(("Jane Q. Doe".into(), "jane@example.org".into()))
        );
        assert_eq!(first_sign_off("s\n\nno sign-off\n", f()).unwrap(), None);
        for bad in [
            "s\n\nSigned-off-by: Jane\n",
            "s\n\nSigned-off-by: <jane@x>\n",
            "s\n\nSigned-off-by: Jane <no-at>\n",
        ] {
            let e = first_sign_off(bad, f()).unwrap_err();
            assert!(
                e.contains("x:3: expected `Signed-off-by: Full Name <email>`"),
                "{e}"
            );
        }
    }

    #[test]
    fn base_line_and_version() {
        let b = parse_base(
            "\nLinux 6.12.117 (Debian linux-source-6.12 6.12.117-1)\n",
            f(),
        )
        .unwrap();
        assert_eq!(base_version(&b), Some("6.12.117"));
        assert_eq!(base_version("Linux 6.12"), Some("6.12"));
        assert_eq!(base_version("v6.12.117"), None);
        assert!(parse_base("a\nb\n", f())
            .unwrap_err()
            .contains("x:2: the base is one line"));
        assert!(parse_base("  \n", f()).unwrap_err().contains("x: empty"));
    }

    #[test]
    fn bases_lines_and_errors() {
        let b = parse_bases(
            "# c\n6.12 linux-source-6.12 installed patches/a\n7.3 linux-source-7.3 trixie-backports patches/b # x\n",
            f(),
        )
        .unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].suite, None);
        assert_eq!(b[1].name, "7.3");
        assert_eq!(b[1].package, "linux-source-7.3");
        assert_eq!(b[1].suite.as_deref(), Some("trixie-backports"));
        assert_eq!(b[1].out, "patches/b");
        for (text, want) in [
            ("6.12 p installed\n", "x:1: expected"),
            ("6 p installed o\n", "x:1: \"6\" is not a branch"),
            ("6.12 P installed o\n", "lower-case"),
            ("6.12 p installed ../o\n", "x:1: \"../o\": not a plain"),
            ("6.12 p installed o\n6.12 q s o2\n", "x:2: 6.12 o2 repeats"),
            ("6.12 p installed o\n7.3 q s o\n", "x:2: 7.3 o repeats"),
            ("# none\n", "lists no bases"),
        ] {
            let err = parse_bases(text, f()).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn overrides_replace_whole_files() {
        let changes = "\
diff --git a/a b/a
--- a/a
+++ b/a
@@ -1 +1 @@
-a
+A
diff --git a/b b/b
--- a/b
+++ b/b
@@ -1 +1 @@
-b
+B
diff --git a/c b/c
--- a/c
+++ b/c
@@ -1 +1 @@
-c
+C
";
        let over = "\
diff --git a/b b/b
--- a/b
+++ b/b
@@ -2 +2 @@
-b
+B7
diff --git a/d b/d
--- a/d
+++ b/d
@@ -1 +1 @@
-d
+D
";
        let got = merge_overrides(changes, f(), over, f()).unwrap();
        let want = "\
diff --git a/a b/a
--- a/a
+++ b/a
@@ -1 +1 @@
-a
+A
diff --git a/b b/b
--- a/b
+++ b/b
@@ -2 +2 @@
-b
+B7
diff --git a/c b/c
--- a/c
+++ b/c
@@ -1 +1 @@
-c
+C
diff --git a/d b/d
--- a/d
+++ b/d
@@ -1 +1 @@
-d
+D
";
        assert_eq!(got, want);
        let err = merge_overrides(changes, f(), "junk\n", f()).unwrap_err();
        assert!(err.contains("not a git-style diff"), "{err}");
        let err = merge_overrides(changes, f(), &format!("junk\n{over}"), f()).unwrap_err();
        assert!(err.contains("text before the first"), "{err}");
    }

    #[test]
    fn under() {
        assert!(is_under("a/b", "a/b"));
        assert!(is_under("a/b/c", "a/b"));
        assert!(!is_under("a/bc", "a/b"));
        assert!(!is_under("a", "a/b"));
    }
}
