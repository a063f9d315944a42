//! `cargo xtask patches`: the CONFIG_KALLSYMS_FAST series, generated.
//!
//! The series in `patches/kallsyms-fast/` is `git format-patch` output made
//! from `kernel/series/` (messages, hand-written diffs, vendor lines; format
//! in kernel/series/README.md) and this repository's crates:
//!
//! 1. A scratch git repository (private temp dir) gets the pristine 6.12
//!    copies of every file a `changes.diff` mentions, committed as the base.
//! 2. Per patch: `git apply --index changes.diff`, then each vendor line
//!    copies a crate's `src/**/*.rs` and license files into its tree
//!    directory (see [`vendor`]: a `// SPDX-License-Identifier:` line from
//!    the crate's `license` field, `/` as ` OR `, is prepended to every
//!    `.rs` file lacking one, as the kernel did for rust/alloc), then a
//!    commit with the patch's message, its first `Signed-off-by:` as the
//!    author, and fixed dates.
//! 3. `git format-patch --zero-commit --no-signature --cover-letter`, and the
//!    cover letter's subject and blurb filled from `kernel/series/`.
//!
//! Vendored directories belong to the generator: a `changes.diff` may not
//! touch them, and `--export` leaves them out. git runs without the user's
//! configuration so that every machine generates the same bytes.
//!
//! `--check` regenerates into a temp dir and fails when the committed series
//! differs (naming the file and first differing line), when `git am` of the
//! series onto a fresh base does not give the generator's tree, or when
//! `checkpatch.pl --strict` finds anything not listed in
//! `kernel/series/checkpatch-exceptions`.

mod checkpatch;
mod cover;
mod diffsum;
mod export;
pub(crate) mod input;
mod scratch;
mod vendor;

use crate::{env, kernel, run, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use scratch::{git_out, Scratch};

/// Options of `cargo xtask patches`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Regenerate into a temporary directory and fail if the committed
    /// series differs, does not round-trip through `git am`, or has
    /// checkpatch findings not listed as exceptions.
    #[arg(long, conflicts_with_all = ["apply", "export"])]
    pub check: bool,
    /// `git am` the committed series onto DIR, a git tree of pristine 6.12.
    #[arg(long, value_name = "DIR", conflicts_with = "export")]
    pub apply: Option<PathBuf>,
    /// Write each commit of DIR on top of its first commit back into the
    /// series directory (message, changes.diff without vendored paths).
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
    /// The series description directory.
    #[arg(long, value_name = "DIR", default_value_os_t = env::repo_root().join("kernel/series"))]
    pub series: PathBuf,
    /// Where the generated patches live.
    #[arg(long, value_name = "DIR", default_value_os_t = env::repo_root().join("patches/kallsyms-fast"))]
    pub out: PathBuf,
}

/// Run `cargo xtask patches` with `opts`.
pub fn run(opts: &Options) -> Result<u8> {
    // Absolute: git runs in other directories.
    let abs = |p: &Path| std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()));
    let (series, out) = (abs(&opts.series)?, abs(&opts.out)?);
    if let Some(dir) = &opts.apply {
        return apply(&out, &abs(dir)?).map(|()| 0);
    }
    if let Some(dir) = &opts.export {
        return export::run(&series, &abs(dir)?).map(|()| 0);
    }
    if opts.check {
        return check(&series, &out);
    }
    let g = generate(&series)?;
    write_out(&out, &g.patches)?;
    eprintln!(
        "patches: wrote {} files to {}",
        g.patches.len(),
        out.display()
    );
    Ok(0)
}

/// A generated series: the scratch repository and the patch texts.
pub struct Generated {
    /// The repository the patches were made from (HEAD = last patch).
    pub scratch: Scratch,
    /// The files of the tree's base commit.
    pub base_files: Vec<String>,
    /// File name -> contents, cover letter included.
    pub patches: BTreeMap<String, String>,
    /// The directory holding the same files, for checkpatch and `git am`.
    pub dir: PathBuf,
    /// The vendoring steps that changed the tree.
    pub steps: Vec<cover::Step>,
}

/// The pristine kernel tree, unpacked if missing, checked against `base`.
fn pristine(base: &str, series_dir: &Path) -> Result<PathBuf> {
    let src = kernel::ensure_source()?;
    let Some(want) = input::base_version(base) else {
        return Ok(src);
    };
    let mk = fs::read_to_string(src.join("Makefile"))
        .map_err(|e| format!("cannot read {}/Makefile: {e}", src.display()))?;
    let var = |name: &str| {
        mk.lines()
            .find_map(|l| l.strip_prefix(name)?.trim_start().strip_prefix('='))
            .map(str::trim)
            .unwrap_or("")
            .to_string()
    };
    let have = format!(
        "{}.{}.{}",
        var("VERSION"),
        var("PATCHLEVEL"),
        var("SUBLEVEL")
    );
    if have != want && format!("{}.{}", var("VERSION"), var("PATCHLEVEL")) != want {
        return Err(format!(
            "{}/base says Linux {want}, but {} is {have}",
            series_dir.display(),
            src.display()
        ));
    }
    Ok(src)
}

/// The pristine files the series needs in its base commit.
fn base_files(series: &input::Series, src: &Path) -> Result<Vec<String>> {
    let vendor_dirs = series.vendor_dirs();
    for d in &vendor_dirs {
        if src.join(d).exists() {
            return Err(format!(
                "vendor directory {d} already exists in the pristine tree {}: vendor into a new directory",
                src.display()
            ));
        }
    }
    let mut files = BTreeSet::new();
    for p in &series.patches {
        let Some(diff) = &p.changes else { continue };
        let text =
            fs::read_to_string(diff).map_err(|e| format!("cannot read {}: {e}", diff.display()))?;
        for (line, path) in input::diff_paths(&text, diff)? {
            if let Some(d) = vendor_dirs.iter().find(|d| input::is_under(&path, d)) {
                return Err(format!(
                    "{}:{line}: {path} is in the vendored directory {d}: change the crate, not its copy",
                    diff.display()
                ));
            }
            if src.join(&path).is_file() {
                files.insert(path);
            }
        }
    }
    Ok(files.into_iter().collect())
}

/// Generate the series into a scratch repository and a temp directory.
pub fn generate(series_dir: &Path) -> Result<Generated> {
    let series = input::load(series_dir)?;
    let src = pristine(&series.base, series_dir)?;
    let base_files = base_files(&series, &src)?;
    let scratch = Scratch::new(&src, &base_files)?;
    let meta = if series.patches.iter().any(|p| !p.vendor.is_empty()) {
        Some(vendor::Metadata::load()?)
    } else {
        None
    };
    let total = series.patches.len();
    let mut steps = Vec::new();
    let work = scratch
        .tree
        .parent()
        .ok_or("scratch tree has no parent")?
        .to_path_buf();
    for (i, p) in series.patches.iter().enumerate() {
        if let Some(diff) = &p.changes {
            git_out(
                &scratch.tree,
                [
                    std::ffi::OsStr::new("apply"),
                    "--index".as_ref(),
                    diff.as_os_str(),
                ],
            )
            .map_err(|e| format!("patch {}: {}: {e}", p.name, diff.display()))?;
        }
        for v in &p.vendor {
            let meta = meta.as_ref().ok_or("metadata not loaded")?;
            let c = meta
                .find(&v.package)
                .map_err(|e| format!("{}/vendor: {e}", series_dir.join(&p.name).display()))?;
            let copied = vendor::copy_into(&c, &scratch.tree, &v.tree_dir, &v.exclude)?;
            git_out(&scratch.tree, ["add", "-A", "-f", "--", &v.tree_dir])?;
            // Re-vendoring identical sources changes nothing: not listed.
            let same = scratch::git(&scratch.tree)
                .args(["diff", "--cached", "--quiet", "--", &v.tree_dir])
                .status()
                .map_err(|e| format!("cannot run git: {e}"))?;
            if !same.success() {
                steps.push((i + 1, total, copied));
            }
        }
        let staged = scratch::git(&scratch.tree)
            .args(["diff", "--cached", "--quiet"])
            .status()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if staged.success() {
            return Err(format!(
                "patch {}: changes nothing in the tree (its diff and vendored crates are already there)",
                p.name
            ));
        }
        let msg = work.join("message");
        fs::write(&msg, &p.message).map_err(|e| format!("cannot write {}: {e}", msg.display()))?;
        let mut commit = scratch::git(&scratch.tree);
        if let Some((name, email)) = &p.author {
            commit
                .env("GIT_AUTHOR_NAME", name)
                .env("GIT_AUTHOR_EMAIL", email);
        }
        commit
            .args(["commit", "-q", "--no-verify", "--cleanup=verbatim", "-F"])
            .arg(&msg);
        run::output(&mut commit).map_err(|e| format!("patch {}: {e}", p.name))?;
    }
    let dir = work.join("out");
    let mut fp = scratch::git(&scratch.tree);
    // The cover letter is from the committer identity: the series' sender,
    // taken to be the first patch's author.
    if let Some((name, email)) = series.patches.first().and_then(|p| p.author.as_ref()) {
        fp.env("GIT_COMMITTER_NAME", name)
            .env("GIT_COMMITTER_EMAIL", email);
    }
    fp.args([
        "format-patch",
        "-q",
        "-M",
        "--zero-commit",
        "--no-signature",
        "--cover-letter",
        "--no-binary",
        "-o",
    ])
    .arg(&dir)
    .arg(format!("{}..HEAD", scratch.base));
    run::output(&mut fp)?;
    let mut patches = diffsum::read_patches(&dir)?;
    let cover_name = patches
        .keys()
        .find(|k| k.starts_with("0000-"))
        .cloned()
        .ok_or("git format-patch wrote no cover letter")?;
    let blurb = cover::blurb(&series.cover_body, &steps, &series.base)?;
    let cover = cover::fill(&patches[&cover_name], &series.cover_subject, &blurb)?;
    fs::write(dir.join(&cover_name), &cover)
        .map_err(|e| format!("cannot write {}: {e}", dir.join(&cover_name).display()))?;
    patches.insert(cover_name, cover);
    Ok(Generated {
        scratch,
        base_files,
        patches,
        dir,
        steps,
    })
}

/// Replace the `*.patch` files of `out` with `patches`.
fn write_out(out: &Path, patches: &BTreeMap<String, String>) -> Result<()> {
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for old in diffsum::read_patches(out)?.keys() {
        let p = out.join(old);
        fs::remove_file(&p).map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
    }
    for (name, text) in patches {
        let p = out.join(name);
        fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    Ok(())
}

/// The patch files of `dir` to `git am`, in order (cover letter left out).
fn am_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let files: Vec<PathBuf> = diffsum::read_patches(dir)?
        .into_keys()
        .filter(|n| !n.starts_with("0000-"))
        .map(|n| dir.join(n))
        .collect();
    if files.is_empty() {
        return Err(format!("no patches in {}", dir.display()));
    }
    Ok(files)
}

/// `git am` of the generated series onto a fresh base gives HEAD's tree.
fn round_trip(g: &Generated) -> Result<()> {
    let src = kernel::ensure_source()?;
    let fresh = Scratch::new(&src, &g.base_files)?;
    let mut am = scratch::git(&fresh.tree);
    am.args(["am", "-q"]).args(am_files(&g.dir)?);
    run::output(&mut am).map_err(|e| format!("the series does not `git am` onto its base: {e}"))?;
    let (want, have) = (g.scratch.head_tree()?, fresh.head_tree()?);
    if want != have {
        return Err(format!(
            "`git am` of the series gives tree {have}, the generator made {want}"
        ));
    }
    Ok(())
}

/// checkpatch over each patch; returns the number of unexcused findings.
fn run_checkpatch(series_dir: &Path, g: &Generated) -> Result<usize> {
    let src = kernel::ensure_source()?;
    let known: BTreeSet<String> = g.patches.keys().cloned().collect();
    let exc_file = series_dir.join("checkpatch-exceptions");
    let exceptions = match fs::read_to_string(&exc_file) {
        Ok(t) => checkpatch::parse_exceptions(&t, &exc_file, &known)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", exc_file.display())),
    };
    let mut used = BTreeSet::new();
    let mut bad = 0;
    for file in am_files(&g.dir)? {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let findings = checkpatch::run_one(&src, &file)?;
        for f in &findings {
            if let Some(e) = exceptions
                .iter()
                .find(|e| e.patch == name && e.kind == f.kind)
            {
                used.insert(e.line);
            }
        }
        for f in checkpatch::unexcused(&name, &findings, &exceptions) {
            eprintln!("checkpatch: {name}:\n{}\n", f.text);
            bad += 1;
        }
    }
    for e in exceptions.iter().filter(|e| !used.contains(&e.line)) {
        eprintln!(
            "checkpatch: note: {}:{}: exception {} {} matches nothing (stale?)",
            exc_file.display(),
            e.line,
            e.patch,
            e.kind
        );
    }
    Ok(bad)
}

/// Vendored licenses without a text in `LICENSES/`; returns their number.
fn check_licenses(g: &Generated) -> Result<usize> {
    let src = kernel::ensure_source()?;
    let mut bad = 0;
    let declared = vendor::declared_licenses(&[&src, &g.scratch.tree])?;
    for (n, total, c) in &g.steps {
        for id in vendor::missing_licenses(&c.spdx, &declared) {
            eprintln!(
                "patches: [{n}/{total}] {}/: license {id} of {} is not declared under LICENSES/ \
                 (scripts/spdxcheck.py rejects the SPDX line; the series must add its text)",
                c.tree_dir, c.package
            );
            bad += 1;
        }
    }
    Ok(bad)
}

/// `--check`: regenerate, compare, round-trip, checkpatch, licenses.
fn check(series_dir: &Path, out: &Path) -> Result<u8> {
    let g = generate(series_dir)?;
    let committed = diffsum::read_patches(out)?;
    let diffs = diffsum::summary(&committed, &g.patches);
    for d in &diffs {
        eprintln!("patches: {}/{d}", out.display());
    }
    round_trip(&g)?;
    eprintln!("patches: `git am` round trip gives the generator's tree");
    let bad = run_checkpatch(series_dir, &g)?;
    let licenses = check_licenses(&g)?;
    if !diffs.is_empty() || bad > 0 || licenses > 0 {
        let mut why = Vec::new();
        if !diffs.is_empty() {
            why.push(format!(
                "{} file(s) of {} differ from what the sources generate (run `cargo xtask patches`)",
                diffs.len(),
                out.display()
            ));
        }
        if bad > 0 {
            why.push(format!(
                "{bad} checkpatch finding(s) not in {}",
                series_dir.join("checkpatch-exceptions").display()
            ));
        }
        if licenses > 0 {
            why.push(format!(
                "{licenses} vendored license(s) missing from LICENSES/"
            ));
        }
        return Err(why.join("; "));
    }
    eprintln!(
        "patches: PASS ({} files in {} up to date, checkpatch clean, licenses in LICENSES/)",
        g.patches.len(),
        out.display()
    );
    Ok(0)
}

/// `--apply DIR`: `git am` the committed series onto DIR.
fn apply(out: &Path, dir: &Path) -> Result<()> {
    let files = am_files(out)?;
    let mut am = Command::new("git");
    am.arg("-C").arg(dir).arg("am").args(&files);
    run::status(&mut am).map_err(|e| {
        format!(
            "{e}\n  (`git -C {} am --abort` returns DIR to where it was)",
            dir.display()
        )
    })?;
    eprintln!(
        "patches: applied {} patches onto {}",
        files.len(),
        dir.display()
    );
    Ok(())
}
