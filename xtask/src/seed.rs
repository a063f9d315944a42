//! A new kernel build directory seeded from a sibling build.
//!
//! `cargo xtask test` builds four kernels from two trees: x86_64 stock
//! (`build`, pristine tree) and patched (`fast-build`, series applied);
//! UML with the series off (`uml-build`) and on (`fast-uml-build`). From
//! nothing each is 8-23 minutes on two cores, yet two builds of one
//! architecture differ only in the files the series touches and a few
//! config options. Kbuild is incremental across exactly such a change:
//! objects are newer than their unchanged sources, every saved command
//! line (`.cmd`) still matches, and fixdep makes an object depend on the
//! options it uses, not on the whole `.config`. So the first build of a
//! directory starts from a copy of a sibling that is already built, with
//! the sibling's absolute paths (its tree, its own directory) rewritten to
//! the new ones and every file's time kept; `make` then rebuilds what the
//! series and the config change, as it would in the sibling itself.
//!
//! Kbuild keeps out-of-tree builds' source paths absolute (`srctree` is
//! `$(abs_srctree)` unless the build directory sits inside the tree), in
//! `.cmd` files, dependency lists, the generated `Makefile` and the
//! `source` link. Binary files (objects, tools) are copied as they are:
//! a path inside them is not what make compares.
//!
//! The copy is made in a private directory beside the target and renamed
//! into place only when complete, so an interrupted seed leaves no
//! half-copied build behind; a directory that was ever configured is never
//! seeded over.

use crate::{run, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The tree a configured build directory was built from: Kbuild's
/// `source` link (made by every out-of-tree `make`).
fn tree_of(build: &Path) -> Option<PathBuf> {
    fs::read_link(build.join("source")).ok()
}

/// Whether `build` holds a finished kernel: configured and linked.
fn is_built(build: &Path) -> bool {
    build.join(".config").is_file() && build.join("vmlinux").is_file()
}

/// The build directory [`build_dir`] seeds `to` from: the first of
/// `candidates`, other than `to`, that holds a finished build.
pub fn source<'a>(to: &Path, candidates: &'a [PathBuf]) -> Option<&'a PathBuf> {
    candidates.iter().find(|c| c.as_path() != to && is_built(c))
}

/// Seeds `to` (the build directory for `tree`) from the first of
/// `candidates` that holds a finished build, unless `to` was configured
/// before. Returns the number of files copied and of those rewritten, or
/// `None` when there was nothing to do or nothing to seed from; then the
/// build starts from nothing, as it always may.
pub fn build_dir(to: &Path, tree: &Path, candidates: &[PathBuf]) -> Result<Option<(usize, usize)>> {
    if to.join(".config").exists() {
        return Ok(None);
    }
    let Some(from) = source(to, candidates) else {
        return Ok(None);
    };
    let Some(from_tree) = tree_of(from) else {
        return Ok(None);
    };
    let t = Instant::now();
    let parent = to
        .parent()
        .ok_or_else(|| format!("{}: no parent directory", to.display()))?;
    fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    // A directory left without a `.config` (a build interrupted before
    // configuring) holds nothing worth keeping.
    if to.exists() {
        fs::remove_dir_all(to).map_err(|e| format!("cannot remove {}: {e}", to.display()))?;
    }
    let tmp = tempfile::Builder::new()
        .prefix(".seed-")
        .tempdir_in(parent)
        .map_err(|e| format!("cannot make a directory in {}: {e}", parent.display()))?;
    let mut from_contents = from.as_os_str().to_owned();
    from_contents.push("/.");
    run::status(
        Command::new("cp")
            .arg("-a")
            .arg(&from_contents)
            .arg(tmp.path()),
    )?;
    let pairs = [
        (path_bytes(&from_tree)?, path_bytes(tree)?),
        (path_bytes(from)?, path_bytes(to)?),
    ];
    let mut files = 0;
    let mut rewritten = 0;
    rewrite_dir(tmp.path(), &pairs, &mut files, &mut rewritten)?;
    fs::rename(tmp.path(), to).map_err(|e| {
        format!(
            "cannot rename {} to {}: {e}",
            tmp.path().display(),
            to.display()
        )
    })?;
    // Renamed away: nothing left for the guard to remove.
    let _ = tmp.keep();
    eprintln!(
        "seed: {} from {} ({files} files, {rewritten} with paths rewritten) in {:.1?}",
        to.display(),
        from.display(),
        t.elapsed()
    );
    Ok(Some((files, rewritten)))
}

fn path_bytes(p: &Path) -> Result<Vec<u8>> {
    p.to_str()
        .map(|s| s.as_bytes().to_vec())
        .ok_or_else(|| format!("{}: not UTF-8", p.display()))
}

/// Rewrites the paths in every text file and link under `dir`, keeping
/// each file's modification time.
fn rewrite_dir(
    dir: &Path,
    pairs: &[(Vec<u8>, Vec<u8>)],
    files: &mut usize,
    rewritten: &mut usize,
) -> Result<()> {
    // An explicit stack: build trees are deep, and no recursion is cheaper
    // to reason about than some.
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", d.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", d.display()))?;
            let path = entry.path();
            let ty = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if ty.is_dir() {
                todo.push(path);
            } else if ty.is_symlink() {
                rewrite_link(&path, pairs)?;
            } else if ty.is_file() {
                *files += 1;
                *rewritten += usize::from(rewrite_file(&path, pairs)?);
            }
        }
    }
    Ok(())
}

fn rewrite_link(path: &Path, pairs: &[(Vec<u8>, Vec<u8>)]) -> Result<()> {
    let target = fs::read_link(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let Some(new) = replace_paths(&path_bytes(&target)?, pairs) else {
        return Ok(());
    };
    let new = String::from_utf8(new).map_err(|e| format!("{}: {e}", path.display()))?;
    fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    std::os::unix::fs::symlink(&new, path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Returns whether the file changed. Files with a NUL byte are binary and
/// left alone.
fn rewrite_file(path: &Path, pairs: &[(Vec<u8>, Vec<u8>)]) -> Result<bool> {
    let data = fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if data.contains(&0) {
        return Ok(false);
    }
    let Some(new) = replace_paths(&data, pairs) else {
        return Ok(false);
    };
    let modified = fs::metadata(path)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    fs::write(path, &new).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(modified))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(true)
}

/// A byte that continues a path component: `old` followed by one of these
/// is a different path (`/x/build` in `/x/build-2`), not `old`.
fn continues_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.'
}

/// `data` with each whole-path occurrence (the old paths are absolute and
/// end where a name cannot continue) of a pair's first element
/// replaced by its second; `None` if nothing matched.
fn replace_paths(data: &[u8], pairs: &[(Vec<u8>, Vec<u8>)]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    let mut any = false;
    'scan: while i < data.len() {
        for (old, new) in pairs {
            if !old.is_empty()
                && data[i..].starts_with(old)
                && data.get(i + old.len()).is_none_or(|&b| !continues_name(b))
            {
                out.extend_from_slice(new);
                i += old.len();
                any = true;
                continue 'scan;
            }
        }
        out.push(data[i]);
        i += 1;
    }
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs() -> Vec<(Vec<u8>, Vec<u8>)> {
        vec![
            (b"/c/src/linux".to_vec(), b"/c/fast-src/linux".to_vec()),
            (b"/c/build".to_vec(), b"/c/fast-build".to_vec()),
        ]
    }

    #[test]
    fn whole_paths_only() {
        let got = replace_paths(
            b"gcc -I/c/src/linux/include -o /c/build/x.o /c/build-2/y /c/builds /c/build",
            &pairs(),
        )
        .unwrap();
        assert_eq!(
            got,
            b"gcc -I/c/fast-src/linux/include -o /c/fast-build/x.o /c/build-2/y /c/builds /c/fast-build"
                .to_vec()
        );
        assert_eq!(replace_paths(b"nothing here /c/buildx", &pairs()), None);
    }

    #[test]
    fn seeds_a_copy_with_times_kept_and_never_twice() {
        let top = tempfile::tempdir().unwrap();
        let tree = top.path().join("tree");
        let from = top.path().join("build");
        let to = top.path().join("fast-build");
        let new_tree = top.path().join("fast-tree");
        fs::create_dir_all(from.join("kernel")).unwrap();
        fs::create_dir_all(&tree).unwrap();
        std::os::unix::fs::symlink(&tree, from.join("source")).unwrap();
        fs::write(from.join(".config"), "CONFIG_X=y\n").unwrap();
        fs::write(from.join("vmlinux"), b"\x7fELF\0 binary with /tree").unwrap();
        let cmd = format!(
            "savedcmd := gcc -I{}/include -c -o {}/kernel/a.o\n",
            tree.display(),
            from.display()
        );
        fs::write(from.join("kernel/.a.o.cmd"), &cmd).unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        fs::File::options()
            .write(true)
            .open(from.join("kernel/.a.o.cmd"))
            .unwrap()
            .set_modified(old)
            .unwrap();

        let s = build_dir(&to, &new_tree, std::slice::from_ref(&from))
            .unwrap()
            .unwrap();
        assert_eq!(s, (3, 1));
        let got = fs::read_to_string(to.join("kernel/.a.o.cmd")).unwrap();
        assert_eq!(
            got,
            format!(
                "savedcmd := gcc -I{}/include -c -o {}/kernel/a.o\n",
                new_tree.display(),
                to.display()
            )
        );
        let md = fs::metadata(to.join("kernel/.a.o.cmd")).unwrap();
        assert_eq!(md.modified().unwrap(), old);
        assert_eq!(fs::read_link(to.join("source")).unwrap(), new_tree);
        assert_eq!(
            fs::read(to.join("vmlinux")).unwrap(),
            b"\x7fELF\0 binary with /tree"
        );
        // The source is untouched, and nothing is left beside the target.
        assert_eq!(
            fs::read_to_string(from.join("kernel/.a.o.cmd")).unwrap(),
            cmd
        );
        let names: Vec<_> = fs::read_dir(top.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(".seed-"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
        // Configured now: never seeded over.
        assert!(build_dir(&to, &new_tree, &[from]).unwrap().is_none());
    }

    #[test]
    fn nothing_to_seed_from() {
        let top = tempfile::tempdir().unwrap();
        let unbuilt = top.path().join("unbuilt");
        fs::create_dir_all(&unbuilt).unwrap();
        fs::write(unbuilt.join(".config"), "").unwrap();
        let to = top.path().join("to");
        assert!(build_dir(&to, top.path(), &[unbuilt]).unwrap().is_none());
        assert!(!to.exists());
    }
}
