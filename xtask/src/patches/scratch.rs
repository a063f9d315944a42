//! A scratch git repository holding only the files the series touches.
//!
//! git runs with no system or global configuration, a fixed identity and
//! fixed dates, so the same inputs give byte-identical patches on every
//! machine (only the git version could change the output format).

use crate::{run, Result};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Author of a patch whose message has no sign-off, and committer of every
/// generated commit (the committer appears nowhere in the patches).
pub const AUTHOR_NAME: &str = "kallsyms-fast developers";
/// E-mail of [`AUTHOR_NAME`].
pub const AUTHOR_EMAIL: &str = "kallsyms-fast@users.noreply.github.com";
/// Date of every generated commit: fixed, so the output is deterministic.
pub const DATE: &str = "Thu, 1 Jan 2026 00:00:00 +0000";

/// A git command for `dir` that ignores the user's configuration.
pub fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir);
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
    ] {
        cmd.env_remove(var);
    }
    // No optional lock-taking writes (index refreshes): `--export` reads
    // a developer's tree and must not write to it.
    cmd.env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", AUTHOR_NAME)
        .env("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL)
        .env("GIT_COMMITTER_NAME", AUTHOR_NAME)
        .env("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL)
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .args(["-c", "core.abbrev=12", "-c", "core.autocrlf=false"]);
    cmd
}

/// Run a git command quietly; its stderr goes into the error on failure.
pub fn git_out<I, S>(dir: &Path, args: I) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = run::output(git(dir).args(args))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A scratch repository in a private temporary directory.
pub struct Scratch {
    _tmp: tempfile::TempDir,
    /// The work tree (also the repository: `.git` inside).
    pub tree: PathBuf,
    /// The base commit (pristine copies of the touched files).
    pub base: String,
}

impl Scratch {
    /// Make a repository whose first commit holds `files` copied from the
    /// pristine tree `pristine` (relative paths, each an existing file).
    pub fn new(pristine: &Path, files: &[String]) -> Result<Scratch> {
        let tmp = tempfile::Builder::new()
            .prefix("kfast-patches.")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
        let tree = tmp.path().join("linux");
        fs::create_dir_all(&tree).map_err(|e| format!("cannot create {}: {e}", tree.display()))?;
        git_out(&tree, ["init", "-q", "-b", "series"])?;
        for f in files {
            let from = pristine.join(f);
            let to = tree.join(f);
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
            fs::copy(&from, &to)
                .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))?;
        }
        // -f: Debian's tarball has a top-level .gitignore ignoring `/*`.
        git_out(&tree, ["add", "-A", "-f", "."])?;
        git_out(
            &tree,
            [
                "commit",
                "-q",
                "--allow-empty",
                "--no-verify",
                "-m",
                "base: pristine copies of the files the series touches",
            ],
        )?;
        let base = git_out(&tree, ["rev-parse", "HEAD"])?.trim().to_string();
        Ok(Scratch {
            _tmp: tmp,
            tree,
            base,
        })
    }

    /// The tree object of `HEAD`.
    pub fn head_tree(&self) -> Result<String> {
        Ok(git_out(&self.tree, ["rev-parse", "HEAD^{tree}"])?
            .trim()
            .to_string())
    }
}
