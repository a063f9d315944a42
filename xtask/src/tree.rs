//! The patched source tree: a series applied to a copy of the pristine
//! tree, incrementally (only the files an old or new series touches are
//! reset and patched again; unchanged ones keep their times, so the
//! kernel's incremental build recompiles what the series changed).
//!
//! `kernel` builds from it when the flavour is patched; `fast-uml-test`
//! makes one per base.

use crate::patches::diff::diff_paths;
use crate::{env, run, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The stamp beside the patched tree: the series' identity, then the
/// files it touches (one per line).
const SERIES_STAMP: &str = ".kfast-series";

/// The series' patch files, in order, without the cover letter.
fn series_patches(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("{}: {e} (run `cargo xtask patches`)", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "patch")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("0000-"))
        })
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(format!("{}: no patches", dir.display()));
    }
    Ok(v)
}

/// Applies the committed series to a copy of the pristine tree, unless
/// the copy already carries exactly this series. Returns the series'
/// identity for the configuration stamp.
///
/// The first time, the copy is made with `cp -a`, which keeps the pristine
/// files' times. When the series changes, only the files the old or the
/// new series touches are reset from the pristine tree and patched again,
/// and each one whose content came out the same gets its old time back:
/// the incremental build in `fast-build` then recompiles exactly what the
/// new series changed (touching `include/linux/module.h` for nothing would
/// rebuild most of the kernel).
pub fn prepare_tree() -> Result<String> {
    // Unpacked when missing: a suite may be the first step to need it
    // (`uml-test --patched-off` alone on an empty cache).
    let pristine = crate::linux_source::ensure_source()?;
    prepare_tree_at(
        &env::repo_root().join("patches").join("kallsyms-fast"),
        &pristine,
        &env::patched_src(),
    )
}

/// [`prepare_tree`] for any base: the series in `series` applied to a copy
/// of the pristine tree `pristine` at `dst` (the stamp beside `dst`).
pub fn prepare_tree_at(series: &Path, pristine: &Path, dst: &Path) -> Result<String> {
    let patches = series_patches(series)?;
    let mut all = Vec::new();
    let mut touched = Vec::new();
    for p in &patches {
        let text = fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        // The generator's own reader of diff headers: both sides of every
        // change, deletions and renames included.
        touched.extend(diff_paths(&text, p)?.into_iter().map(|(_, path)| path));
        all.extend_from_slice(text.as_bytes());
    }
    let id = format!(" series {:016x}", run::fnv1a(&all));
    let parent = dst.parent().ok_or("patched tree has no parent")?;
    let stamp = parent.join(SERIES_STAMP);
    let old = fs::read_to_string(&stamp).unwrap_or_default();
    let have_tree = dst.join("Makefile").exists() && old.lines().next().is_some();
    if have_tree && old.lines().next() == Some(id.as_str()) {
        return Ok(id);
    }
    let t = Instant::now();
    // The stamp goes first: a run interrupted below re-makes the tree.
    let _ = fs::remove_file(&stamp);
    touched.sort();
    touched.dedup();
    let mut paths: Vec<String> = touched.clone();
    let mut before = Vec::new();
    if have_tree {
        paths.extend(old.lines().skip(1).map(str::to_string));
        paths.sort();
        paths.dedup();
        before = reset_files(pristine, dst, &paths)?;
    } else {
        if parent.exists() {
            fs::remove_dir_all(parent)
                .map_err(|e| format!("cannot remove {}: {e}", parent.display()))?;
        }
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        run::status(Command::new("cp").arg("-a").arg(pristine).arg(parent))?;
    }
    for p in &patches {
        // GIT_CEILING_DIRECTORIES: never let git find a repository above
        // the cache and apply relative to it.
        run::status(
            Command::new("git")
                .current_dir(dst)
                .env("GIT_CEILING_DIRECTORIES", parent)
                .args(["apply", "--whitespace=nowarn"])
                .arg(p),
        )
        .map_err(|e| format!("applying {}: {e}", p.display()))?;
    }
    let kept = restore_times(dst, &before)?;
    let mut text = id.clone();
    for f in &touched {
        text.push('\n');
        text.push_str(f);
    }
    text.push('\n');
    fs::write(&stamp, text).map_err(|e| format!("{}: {e}", stamp.display()))?;
    eprintln!(
        "fast: applied {} patches to {} in {:.1?} ({} of {} files unchanged since the last series)",
        patches.len(),
        dst.display(),
        t.elapsed(),
        kept,
        before.len()
    );
    Ok(id)
}

/// One file of the patched tree before it was reset: its content and time.
struct Before {
    path: PathBuf,
    data: Vec<u8>,
    modified: std::time::SystemTime,
}

/// Resets `paths` in the patched tree `dst` to the pristine tree (removing
/// those the pristine tree lacks); returns what they held before.
fn reset_files(pristine: &Path, dst: &Path, paths: &[String]) -> Result<Vec<Before>> {
    let mut before = Vec::new();
    for rel in paths {
        let path = dst.join(rel);
        if let Ok(md) = fs::metadata(&path) {
            let data = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let modified = md
                .modified()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            before.push(Before {
                path: path.clone(),
                data,
                modified,
            });
            fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        let from = pristine.join(rel);
        if from.exists() {
            run::status(Command::new("cp").arg("-p").arg(&from).arg(&path))?;
        }
    }
    Ok(before)
}

/// Gives every file whose content is what it was before its old time
/// back, and every other one the current time (a file the new series no
/// longer patches is back to pristine content, but with the pristine
/// file's old time it would look older than its stale object); returns
/// how many kept their time.
fn restore_times(dst: &Path, before: &[Before]) -> Result<usize> {
    let mut kept = 0;
    for b in before {
        debug_assert!(b.path.starts_with(dst));
        let Ok(now) = fs::read(&b.path) else {
            continue; // gone with the new series
        };
        let same = now == b.data;
        let f = fs::File::options()
            .write(true)
            .open(&b.path)
            .map_err(|e| format!("{}: {e}", b.path.display()))?;
        f.set_modified(if same {
            b.modified
        } else {
            std::time::SystemTime::now()
        })
        .map_err(|e| format!("{}: {e}", b.path.display()))?;
        kept += usize::from(same);
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_paths_are_both_sides() {
        let p = "diff --git a/kernel/kallsyms.c b/kernel/kallsyms.c\n\
                 --- a/kernel/kallsyms.c\n+++ b/kernel/kallsyms.c\n@@ -1 +1 @@\n\
                 diff --git a/kernel/kallsyms_fast/bench.c b/kernel/kallsyms_fast/bench.c\n\
                 new file mode 100644\n--- /dev/null\n+++ b/kernel/kallsyms_fast/bench.c\n";
        let mut got: Vec<String> = diff_paths(p, Path::new("x"))
            .unwrap()
            .into_iter()
            .map(|(_, path)| path)
            .collect();
        got.sort();
        got.dedup();
        assert_eq!(got, ["kernel/kallsyms.c", "kernel/kallsyms_fast/bench.c"]);
    }
}
