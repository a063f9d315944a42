//! `--export DIR`: the lead's edit loop back into `kernel/series/`.
//!
//! DIR is a git tree of pristine 6.12 (its first commit) with one commit per
//! series patch on top, e.g. made by `--apply` and then edited. Each commit
//! becomes its series directory's `message` and `changes.diff`, in order;
//! the vendored directories are left out (they come from the crates), and
//! the `vendor` files are not touched. The number of commits must equal the
//! number of series directories: adding or removing a patch is done by hand
//! in `series` first (an error says so rather than guessing names).

use super::input;
use super::scratch::git_out;
use crate::Result;
use std::fs;
use std::path::Path;

/// Write DIR's commits back into the series directory.
pub fn run(series_dir: &Path, dir: &Path) -> Result<()> {
    let series = input::load(series_dir)?;
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
    let excludes: Vec<String> = vendor_dirs
        .iter()
        .map(|d| format!(":(exclude){d}"))
        .collect();
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
        args.extend(range.iter().cloned());
        args.push("--".into());
        args.push(".".into());
        args.extend(excludes.iter().cloned());
        let diff = git_out(dir, &args)?;
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
        fs::write(pdir.join("message"), &msg)
            .map_err(|e| format!("cannot write {}: {e}", pdir.join("message").display()))?;
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
    Ok(())
}
