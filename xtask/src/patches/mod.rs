//! `cargo xtask patches`: the CONFIG_KALLSYMS_FAST series, generated.
//!
//! The series in `patches/kallsyms-fast/` is `git format-patch` output made
//! from `kernel/series/` (messages, hand-written diffs, vendor lines; format
//! in kernel/series/README.md) and this repository's crates:
//!
//! 1. A scratch git repository (private temp dir) gets the pristine 6.12
//!    copies of every file a `changes.diff` mentions, committed as the base.
//! 2. Per patch: `git apply --index` of the files it adds (from `tree/`,
//!    overlay.rs) and `changes.diff`, then each vendor line
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
mod conflict;
mod cover;
pub(crate) mod diff;
mod diffsum;
mod export;
pub(crate) mod input;
mod numbers;
mod overlay;
mod placeholder;
mod scratch;
mod vendor;

use crate::linux_source::{self, Source};
use crate::{env, run, Result};
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
    /// series directory (message, changes.diff without vendored paths; with
    /// --base X.Y, only what differs from them: changes.X.Y.diff,
    /// fixup.X.Y.diff, message.X.Y).
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
    /// The series description directory.
    #[arg(long, value_name = "DIR", default_value_os_t = env::repo_root().join("kernel/series"))]
    pub series: PathBuf,
    /// Where the generated patches live (default: the base's directory in
    /// `<series>/bases`, else patches/kallsyms-fast).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Generate for this base of `<series>/bases` (`7.3`) instead of the
    /// first (6.12): its `changes.<base>.diff` files override.
    #[arg(long, value_name = "X.Y")]
    pub base: Option<String>,
    /// Work on this Debian version of the base's linux-source package
    /// instead of the installed one (downloaded and unpacked under the
    /// cache); `other` picks the newest linux-source-6.12 Debian serves
    /// with a different sublevel.
    #[arg(long, value_name = "VERSION", conflicts_with_all = ["apply", "export"])]
    pub linux_source: Option<String>,
}

/// The first base of `bases` (`None`) or the one `name` names, as
/// `input::load` takes it, with its entry.
fn chosen_base(series: &Path, name: Option<&str>) -> Result<(Option<String>, Option<input::Base>)> {
    let bases = input::load_bases(series)?;
    let Some(name) = name else {
        return Ok((None, bases.first().cloned()));
    };
    let Some(pos) = bases.iter().position(|b| b.name == name) else {
        let known: Vec<&str> = bases.iter().map(|b| b.name.as_str()).collect();
        return Err(format!(
            "--base {name}: {} lists {}",
            series.join("bases").display(),
            if known.is_empty() {
                "no bases (the file is missing)".to_string()
            } else {
                known.join(", ")
            }
        ));
    };
    // The first base is the plain files': no overrides.
    let over = (pos > 0).then(|| name.to_string());
    Ok((over, Some(bases[pos].clone())))
}

/// Run `cargo xtask patches` with `opts`.
pub fn run(opts: &Options) -> Result<u8> {
    // Absolute: git runs in other directories.
    let abs = |p: &Path| std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()));
    let series = abs(&opts.series)?;
    let (over, base) = chosen_base(&series, opts.base.as_deref())?;
    let out = match (&opts.out, &base) {
        (Some(o), _) => abs(o)?,
        (None, Some(b)) => env::repo_root().join(&b.out),
        (None, None) => env::repo_root().join("patches/kallsyms-fast"),
    };
    if let Some(dir) = &opts.apply {
        return apply(&out, &abs(dir)?).map(|()| 0);
    }
    if let Some(dir) = &opts.export {
        return match &over {
            Some(b) => export::run_base(&series, &abs(dir)?, b),
            None => export::run(&series, &abs(dir)?),
        }
        .map(|()| 0);
    }
    let src = match &base {
        Some(b) => {
            linux_source::for_base(&b.package, b.suite.as_deref(), opts.linux_source.as_deref())?
        }
        None => linux_source::select(opts.linux_source.as_deref())?,
    };
    eprintln!("patches: base {} at {}", src.label, src.tree.display());
    let over = over.as_deref();
    if opts.check {
        return check(&series, over, &out, &src);
    }
    let g = generate(&series, over, &src)?;
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
    /// The pristine tree the series was generated on.
    pub src: Source,
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

/// Check that `src` is on the branch `base` names ("Linux 6.12" follows
/// 6.12.y; "Linux 6.12.117" pins one sublevel).
fn check_branch(base: &str, series_dir: &Path, src: &Source) -> Result<()> {
    let Some(want) = input::base_version(base) else {
        return Ok(());
    };
    let have = src.version()?;
    let on_branch = have == want || have.starts_with(&format!("{want}."));
    if !on_branch {
        return Err(format!(
            "{}/base says Linux {want}, but {} is {have}",
            series_dir.display(),
            src.tree.display()
        ));
    }
    Ok(())
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
        let adds = PathBuf::from(format!("{}/adds", p.name));
        let Some(diff) = p
            .changes
            .as_ref()
            .or(p.overrides.as_ref())
            .or(p.fixups.as_ref())
            .or((!p.added.is_empty()).then_some(&adds))
        else {
            continue;
        };
        for (line, path) in diff::diff_paths(&p.diffs()?.concat(), diff)? {
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

/// Generate the series into a scratch repository and a temp directory,
/// for the first base of the series (`base` `None`) or the one named.
pub fn generate(series_dir: &Path, base: Option<&str>, src: &Source) -> Result<Generated> {
    let series = input::load(series_dir, base)?;
    check_branch(&series.base, series_dir, src)?;
    let base_files = base_files(&series, &src.tree)?;
    let scratch = Scratch::new(&src.tree, &base_files)?;
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
        for (n, text) in p.diffs()?.iter().enumerate() {
            // The diff as applied, for the error's hunk reference:
            // changes.diff itself, or on another base changes.diff merged
            // with changes.<base>.diff, then fixup.<base>.diff.
            let diff = match (&p.changes, &p.overrides, &p.fixups) {
                (Some(c), None, None) if p.added.is_empty() => c.clone(),
                _ => {
                    let d = work.join(format!("{}.{n}.diff", p.name));
                    fs::write(&d, text)
                        .map_err(|e| format!("cannot write {}: {e}", d.display()))?;
                    d
                }
            };
            git_out(
                &scratch.tree,
                [
                    std::ffi::OsStr::new("apply"),
                    "--index".as_ref(),
                    diff.as_os_str(),
                ],
            )
            .map_err(|e| {
                let from = match (&p.overrides, &p.fixups) {
                    (None, None) => String::new(),
                    (o, f) => format!(
                        " (diff {} of {}: {})",
                        n + 1,
                        p.name,
                        [o, f]
                            .into_iter()
                            .flatten()
                            .map(|x| x.display().to_string())
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                };
                format!(
                    "patch {} does not apply to {}: {}{from}",
                    p.name,
                    src.label,
                    conflict::describe(&e, &diff)
                )
            })?;
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
    let blurb = cover::blurb(&series.cover_body, &steps, &src.label)?;
    let cover = cover::fill(&patches[&cover_name], &series.cover_subject, &blurb)?;
    fs::write(dir.join(&cover_name), &cover)
        .map_err(|e| format!("cannot write {}: {e}", dir.join(&cover_name).display()))?;
    patches.insert(cover_name, cover);
    placeholder::refuse(&patches)?;
    Ok(Generated {
        src: src.clone(),
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

/// `git am` of the patches in `dir` onto a fresh copy of `g`'s base;
/// returns the tree it gives. A patch that does not apply is named with
/// its file and hunk.
fn am_onto_base(g: &Generated, dir: &Path) -> Result<String> {
    let fresh = Scratch::new(&g.src.tree, &g.base_files)?;
    let mut am = scratch::git(&fresh.tree);
    am.args(["am", "-q"]).args(am_files(dir)?);
    conflict::run_am(&mut am, dir).map_err(|e| {
        format!(
            "the series in {} does not `git am` onto {}: {e}",
            dir.display(),
            g.src.label,
        )
    })?;
    fresh.head_tree()
}

/// `git am` of the generated series onto a fresh base gives HEAD's tree.
fn round_trip(g: &Generated) -> Result<()> {
    let (want, have) = (g.scratch.head_tree()?, am_onto_base(g, &g.dir)?);
    if want != have {
        return Err(format!(
            "`git am` of the series gives tree {have}, the generator made {want}"
        ));
    }
    Ok(())
}

/// A patch without what depends on the base rather than on the sources:
/// the cover letter's `Base:` line, and in the diffs the `index` lines,
/// the hunk headers and the context lines. Messages and the lines a patch
/// adds or removes stay.
fn without_base_lines(text: &str) -> String {
    let mut out = String::new();
    let mut in_diff = false;
    for l in text.lines() {
        in_diff |= l.starts_with("diff --git ");
        let base_dependent = l.starts_with("Base: ")
            || (in_diff && (l.starts_with("index ") || l.starts_with("@@ ") || l.starts_with(' ')));
        if !base_dependent {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The `Base:` line of a cover letter, if any.
fn cover_base(patches: &BTreeMap<String, String>) -> Option<&str> {
    let (_, cover) = patches.iter().find(|(k, _)| k.starts_with("0000-"))?;
    cover.lines().find_map(|l| l.strip_prefix("Base: "))
}

/// checkpatch over each patch; returns the number of unexcused findings.
fn run_checkpatch(series_dir: &Path, g: &Generated) -> Result<usize> {
    let src = &g.src.tree;
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
        let findings = checkpatch::run_one(src, &file)?;
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
    let mut bad = 0;
    let declared = vendor::declared_licenses(&[&g.src.tree, &g.scratch.tree])?;
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
///
/// When the committed series was made on another base (its cover letter's
/// `Base:` line differs: Debian moved to a new 6.12.y sublevel) and it
/// still `git am`s onto this base to the tree the sources generate, the
/// differences are the base's, not the sources': a notice with the command
/// that refreshes the series, not a failure.
fn check(series_dir: &Path, base: Option<&str>, out: &Path, src: &Source) -> Result<u8> {
    let g = generate(series_dir, base, src)?;
    let committed = diffsum::read_patches(out)?;
    let mut diffs = diffsum::summary(&committed, &g.patches);
    let committed_base = cover_base(&committed).unwrap_or("(no Base: line)");
    if !diffs.is_empty() && committed_base != g.src.label {
        let same_text = committed.len() == g.patches.len()
            && committed
                .iter()
                .zip(&g.patches)
                .all(|((n1, t1), (n2, t2))| {
                    n1 == n2 && without_base_lines(t1) == without_base_lines(t2)
                });
        let have = am_onto_base(&g, out)?;
        if !same_text || have != g.scratch.head_tree()? {
            for d in &diffs {
                eprintln!("patches: {}/{d}", out.display());
            }
            return Err(format!(
                "the sources no longer generate the committed series: made on {committed_base}, \
                 it applies to {}, but its messages, changed lines or resulting tree differ \
                 from what the sources generate (run `cargo xtask patches`)",
                g.src.label
            ));
        }
        eprintln!(
            "patches: notice: the base moved: the committed series was made on {committed_base}; \
             on {} it still applies and gives the tree the sources generate ({} file(s) differ \
             only in base-dependent lines). Refresh it with `cargo xtask patches`.",
            g.src.label,
            diffs.len()
        );
        diffs.clear();
    }
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
        "patches: PASS ({} files in {} are what the sources generate on {}, checkpatch clean, \
         licenses in LICENSES/)",
        g.patches.len(),
        out.display(),
        g.src.label
    );
    Ok(0)
}

/// `--apply DIR`: `git am` the committed series onto DIR.
fn apply(out: &Path, dir: &Path) -> Result<()> {
    let files = am_files(out)?;
    let mut am = Command::new("git");
    am.arg("-C").arg(dir).arg("am").args(&files);
    conflict::run_am(&mut am, out).map_err(|e| {
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
