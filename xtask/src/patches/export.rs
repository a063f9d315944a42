//! `--export DIR`: the lead's edit loop back into `kernel/series/`.
//!
//! DIR is a git tree of pristine 6.12 (its first commit) with one commit per
//! series patch on top, e.g. made by `--apply` and then edited. Each commit
//! becomes its series directory's `message` and `changes.diff`, in order;
//! the vendored directories are left out (they come from the crates), and
//! the `vendor` files are not touched. The number of commits must equal the
//! number of series directories: adding or removing a patch is done by hand
//! in `series` first (an error says so rather than guessing names).
//!
//! A file a commit creates is not written into its `changes.diff`: it
//! goes into the commit's `adds` list, and the overlay (`tree/`) gets every
//! added file as the last commit has it; later commits' changes of it stay
//! in their `changes.diff` (overlay.rs).

use super::diff::{diff_paths, sections};
use super::scratch::{git, git_out};
use super::{input, numbers, overlay, vendor};
use crate::{run, Result};
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// Vendored files of commit `c` that are not what the generator copies.
///
/// Such differences are lost by the export (the vendored directories come
/// from the crates), so they are reported: either a hand edit in DIR, or
/// DIR's copy of a crate is older than the repository's.
fn vendored_differences(
    dir: &Path,
    c: &str,
    p: &input::Patch,
    meta: &vendor::Metadata,
) -> Result<Vec<String>> {
    let tmp = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let mut out = Vec::new();
    for v in &p.vendor {
        let krate = meta.find(&v.package)?;
        vendor::copy_into(&krate, tmp.path(), &v.tree_dir, &v.exclude)?;
        let want: BTreeSet<String> = list_files(tmp.path(), &v.tree_dir)?;
        let have: BTreeSet<String> =
            git_out(dir, ["ls-tree", "-r", "--name-only", c, "--", &v.tree_dir])?
                .lines()
                .map(str::to_string)
                .collect();
        for path in want.union(&have) {
            let same = want.contains(path)
                && have.contains(path)
                && run::output(git(dir).args(["show", &format!("{c}:{path}")]))?.stdout
                    == fs::read(tmp.path().join(path))
                        .map_err(|e| format!("cannot read {path}: {e}"))?;
            if !same {
                out.push(format!("{path} (vendored from {})", v.package));
            }
        }
    }
    Ok(out)
}

/// Files under `root/sub`, as sorted `sub/...` paths.
fn list_files(root: &Path, sub: &str) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    let mut todo = vec![sub.to_string()];
    while let Some(d) = todo.pop() {
        let here = root.join(&d);
        let rd = fs::read_dir(&here).map_err(|e| format!("cannot list {}: {e}", here.display()))?;
        for ent in rd {
            let ent = ent.map_err(|e| format!("cannot list {}: {e}", here.display()))?;
            let rel = format!("{d}/{}", ent.file_name().to_string_lossy());
            if ent.path().is_dir() {
                todo.push(rel);
            } else {
                out.insert(rel);
            }
        }
    }
    Ok(out)
}

/// Write DIR's commits back into the series directory.
pub fn run(series_dir: &Path, dir: &Path) -> Result<()> {
    let series = input::load_without_overlay(series_dir)?;
    let roots = git_out(dir, ["rev-list", "--max-parents=0", "HEAD"])?;
    let roots: Vec<&str> = roots.lines().collect();
    let [root] = roots[..] else {
        return Err(format!(
            "{}: expected one root commit (the pristine tree), found {}",
            dir.display(),
            roots.len()
        ));
    };
    let commits = git_out(dir, ["rev-list", "--reverse", &format!("{root}..HEAD")])?;
    let commits: Vec<&str> = commits.lines().collect();
    if commits.len() != series.patches.len() {
        return Err(format!(
            "{} has {} commits on top of its first, {}/series lists {} patches: \
             add or remove series directories first",
            dir.display(),
            commits.len(),
            series_dir.display(),
            series.patches.len()
        ));
    }
    let dirty = git_out(dir, ["status", "--porcelain", "--untracked-files=no"])?;
    if !dirty.trim().is_empty() {
        eprintln!(
            "patches: warning: {} has uncommitted changes; only commits are exported",
            dir.display()
        );
    }
    let vendor_dirs = series.vendor_dirs();
    let meta = if vendor_dirs.is_empty() {
        None
    } else {
        Some(vendor::Metadata::load()?)
    };
    let excludes: Vec<String> = vendor_dirs
        .iter()
        .map(|d| format!(":(exclude){d}"))
        .collect();
    let mut all_adds = BTreeSet::new();
    for (c, p) in commits.iter().zip(&series.patches) {
        let pdir = series_dir.join(&p.name);
        let msg = git_out(dir, ["log", "-1", "--format=%B", c])?;
        let msg = format!("{}\n", msg.trim_end());
        input::parse_message(&msg, &pdir.join("message"))
            .map_err(|e| format!("commit {c}: {e}"))?;
        let range = [format!("{c}^"), c.to_string()];
        let mut args: Vec<String> = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--src-prefix=a/",
            "--dst-prefix=b/",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // The commit's change of the tree, vendored directories left out.
        let mut what: Vec<String> = range.to_vec();
        what.extend(["--".to_string(), ".".to_string()]);
        what.extend(excludes.iter().cloned());
        args.extend(what.iter().cloned());
        // The files this commit creates: the overlay's, not its diff's.
        let mut created = vec![
            "diff".to_string(),
            "--no-renames".into(),
            "--diff-filter=A".into(),
            "--name-only".into(),
        ];
        created.extend(what);
        let adds: Vec<String> = git_out(dir, &created)?
            .lines()
            .map(str::to_string)
            .collect();
        args.extend(adds.iter().map(|a| format!(":(exclude){a}")));
        let diff = git_out(dir, &args)?;
        let had: Vec<&str> = p.added.iter().map(|(a, _)| a.as_str()).collect();
        if had != adds {
            let text: String = if adds.is_empty() {
                String::new()
            } else {
                ADDS_HEADER.to_string() + &adds.iter().map(|a| format!("{a}\n")).collect::<String>()
            };
            write_or_remove(&pdir.join("adds"), &text)?;
        }
        all_adds.extend(adds);
        // Vendored paths this commit changes although its patch does not
        // vendor them: such edits are lost, so say so.
        let mut name_args = vec!["diff".to_string(), "--name-only".into()];
        name_args.extend(range.iter().cloned());
        name_args.push("--".into());
        name_args.extend(vendor_dirs.iter().cloned());
        for path in git_out(dir, &name_args)?.lines() {
            if !p.vendor.iter().any(|v| input::is_under(path, &v.tree_dir)) {
                eprintln!(
                    "patches: warning: commit {} changes vendored {path}, which {} does not vendor: \
                     not exported (edit the crate instead)",
                    &c[..12.min(c.len())],
                    p.name
                );
            }
        }
        if let Some(meta) = &meta {
            let diffs = vendored_differences(dir, c, p, meta)?;
            for d in diffs.iter().take(10) {
                eprintln!(
                    "patches: warning: commit {}: {d} differs from what the generator copies: \
                     not exported (change the crate; `--apply` a regenerated series)",
                    &c[..12.min(c.len())]
                );
            }
            if diffs.len() > 10 {
                eprintln!("patches: warning: ... and {} more", diffs.len() - 10);
            }
        }
        // The message as generated (measured numbers filled in): keep the
        // source, whose `{{...}}` templates would be lost.
        if msg != p.message {
            if numbers::has_templates(&fs::read_to_string(pdir.join("message")).unwrap_or_default())
            {
                eprintln!(
                    "patches: warning: {}'s message changed: its {{{{...}}}} numbers are now \
                     literal text; put the templates back (see numbers.rs)",
                    p.name
                );
            }
            fs::write(pdir.join("message"), &msg)
                .map_err(|e| format!("cannot write {}: {e}", pdir.join("message").display()))?;
        }
        let changes = pdir.join("changes.diff");
        if diff.is_empty() {
            if changes.exists() {
                fs::remove_file(&changes)
                    .map_err(|e| format!("cannot remove {}: {e}", changes.display()))?;
            }
        } else {
            fs::write(&changes, &diff)
                .map_err(|e| format!("cannot write {}: {e}", changes.display()))?;
        }
        eprintln!(
            "patches: exported {} -> {}",
            &c[..12.min(c.len())],
            pdir.display()
        );
    }
    write_overlay(series_dir, dir, commits.last().copied(), &all_adds)
}

/// The header of a written `adds` file.
const ADDS_HEADER: &str = "# The files this patch adds; each is tree/<path>, as after the whole\n\
                           # series (kernel/series/README.md, \"tree/ and adds\").\n";

/// Every added file into `tree/` as the last commit has it; overlay files
/// no patch adds any more are removed.
fn write_overlay(
    series_dir: &Path,
    dir: &Path,
    last: Option<&str>,
    adds: &BTreeSet<String>,
) -> Result<()> {
    let tree = overlay::dir(series_dir);
    if let Some(last) = last {
        for a in adds {
            let text = run::output(git(dir).args(["show", &format!("{last}:{a}")]))
                .map_err(|_| {
                    format!(
                        "{a} is added by a commit and gone at {last}: \
                         the overlay holds files as after the whole series"
                    )
                })?
                .stdout;
            let path = tree.join(a);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    for stale in overlay::files(&tree)?.difference(adds) {
        let path = tree.join(stale);
        fs::remove_file(&path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        eprintln!("patches: removed {} (no commit adds it)", path.display());
    }
    Ok(())
}

/// The section of `changes` (a `changes.diff`) for `path`, if any.
fn section_for<'a>(changes: &'a str, file: &Path, path: &str) -> Result<Option<&'a str>> {
    for s in sections(changes, file)? {
        if diff_paths(s, file)?.iter().any(|(_, p)| p == path) {
            return Ok(Some(s));
        }
    }
    Ok(None)
}

/// `--export DIR --base X.Y`: DIR is a git tree of pristine X.Y with one
/// commit per series patch (from `--base X.Y --apply`, then edited). For
/// each commit and each file it changes outside the vendored directories,
/// the file's part of `changes.diff` is applied to the file as the
/// commit's parent has it: when that gives the commit's file, nothing is
/// written for it; when it applies but gives something else, the
/// difference goes into `fixup.X.Y.diff`; when it does not apply (or
/// `changes.diff` has no part for the file), the commit's whole change of
/// the file goes into `changes.X.Y.diff`. A commit message that differs
/// from the shared `message` becomes `message.X.Y`. A file `changes.diff`
/// changes but the commit does not is an error: the per-base files cannot
/// say "not on this base".
pub fn run_base(series_dir: &Path, dir: &Path, base: &str) -> Result<()> {
    let series = input::load(series_dir, Some(base))?;
    let shared = input::load(series_dir, None)?;
    let roots = git_out(dir, ["rev-list", "--max-parents=0", "HEAD"])?;
    let roots: Vec<&str> = roots.lines().collect();
    let [root] = roots[..] else {
        return Err(format!(
            "{}: expected one root commit (the pristine tree), found {}",
            dir.display(),
            roots.len()
        ));
    };
    let commits = git_out(dir, ["rev-list", "--reverse", &format!("{root}..HEAD")])?;
    let commits: Vec<&str> = commits.lines().collect();
    if commits.len() != series.patches.len() {
        return Err(format!(
            "{} has {} commits on top of its first, {}/series lists {} patches",
            dir.display(),
            commits.len(),
            series_dir.display(),
            series.patches.len()
        ));
    }
    let vendor_dirs = series.vendor_dirs();
    let tmp = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    for ((c, p), sp) in commits.iter().zip(&series.patches).zip(&shared.patches) {
        let pdir = series_dir.join(&p.name);
        let changes = p.changes_text()?.unwrap_or_default();
        let changes_file = pdir.join("changes.diff");
        let files: Vec<String> = git_out(
            dir,
            ["diff", "--no-renames", "--name-only", &format!("{c}^"), c],
        )?
        .lines()
        .filter(|f| !vendor_dirs.iter().any(|d| input::is_under(f, d)))
        .map(str::to_string)
        .collect();
        if !changes.is_empty() {
            for (_, path) in diff_paths(&changes, &changes_file)? {
                if !files.contains(&path) {
                    return Err(format!(
                        "commit {c} ({}) does not change {path}, which {} changes: \
                         a per-base file cannot leave a file out",
                        p.name,
                        changes_file.display()
                    ));
                }
            }
        }
        let (mut over, mut fix) = (String::new(), String::new());
        for f in &files {
            let whole = git_out(
                dir,
                [
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--no-renames",
                    "--src-prefix=a/",
                    "--dst-prefix=b/",
                    &format!("{c}^"),
                    c,
                    "--",
                    f,
                ],
            )?;
            let Some(sec) = section_for(&changes, &changes_file, f)? else {
                over.push_str(&whole);
                continue;
            };
            // The file as the commit's parent has it, in a scratch
            // repository; the shared part applied there.
            let work = tmp.path().join(&p.name).join(f.replace('/', "%"));
            fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
            git_out(&work, ["init", "-q"])?;
            let parent = run::output(git(dir).args(["cat-file", "-e", &format!("{c}^:{f}")]))
                .is_ok()
                .then(|| run::output(git(dir).args(["show", &format!("{c}^:{f}")])))
                .transpose()?;
            let target = work.join(f);
            if let Some(parent) = parent {
                fs::create_dir_all(target.parent().ok_or("no parent")?)
                    .map_err(|e| format!("{e}"))?;
                fs::write(&target, parent.stdout).map_err(|e| format!("{e}"))?;
            }
            let sec_file = tmp.path().join("section.diff");
            fs::write(&sec_file, sec).map_err(|e| format!("{e}"))?;
            if git_out(&work, [std::ffi::OsStr::new("apply"), sec_file.as_os_str()]).is_err() {
                over.push_str(&whole);
                continue;
            }
            let want = run::output(git(dir).args(["show", &format!("{c}:{f}")]))
                .map(|o| o.stdout)
                .ok();
            if want.as_deref() == fs::read(&target).ok().as_deref() {
                continue;
            }
            git_out(&work, ["add", "-A", "-f"])?;
            git_out(&work, ["commit", "-q", "-m", "shared part"])?;
            match want {
                Some(w) => fs::write(&target, w).map_err(|e| format!("{e}"))?,
                None => fs::remove_file(&target).map_err(|e| format!("{e}"))?,
            }
            fix.push_str(&git_out(
                &work,
                [
                    "diff",
                    "--no-color",
                    "--no-renames",
                    "--src-prefix=a/",
                    "--dst-prefix=b/",
                    "--",
                    f,
                ],
            )?);
        }
        for (name, text) in [
            (format!("changes.{base}.diff"), over),
            (format!("fixup.{base}.diff"), fix),
        ] {
            write_or_remove(&pdir.join(name), &text)?;
        }
        let msg = git_out(dir, ["log", "-1", "--format=%B", c])?;
        let msg = format!("{}\n", msg.trim_end());
        let own = if msg == sp.message {
            String::new()
        } else {
            msg
        };
        if !own.is_empty() {
            eprintln!(
                "patches: note: {}'s message on {base} differs from the shared one: message.{base}",
                p.name
            );
        }
        write_or_remove(&pdir.join(format!("message.{base}")), &own)?;
        eprintln!(
            "patches: exported {} -> {} (base {base})",
            &c[..12.min(c.len())],
            pdir.display()
        );
    }
    Ok(())
}

/// Write `text` to `path`, or remove `path` when `text` is empty.
fn write_or_remove(path: &Path, text: &str) -> Result<()> {
    if text.is_empty() {
        if path.exists() {
            fs::remove_file(path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
        return Ok(());
    }
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
