//! `cargo xtask fast-uml-test`: the `CONFIG_KALLSYMS_FAST` series on
//! User-Mode Linux, where kernel code runs at native speed.
//!
//! The same patched tree `fast-test` builds for x86_64
//! (`$KFAST_CACHE/fast-src`, the committed series applied) is built for
//! `ARCH=um` with `xtask/configs/uml.config` + `xtask/configs/fast-kernel.config` into
//! `$KFAST_CACHE/fast-uml-build`, and booted once with
//! `guest/fast-uml-job.sh`:
//!
//! 1. the KUnit suite (fast == stock for every core symbol) at boot, again
//!    with the 60,800-function `ksym_many` loaded (module symbols), and
//!    again after the module was unloaded and loaded (the wchan cache);
//! 2. the in-kernel benchmark (`/sys/kernel/debug/kallsyms_fast/bench`):
//!    the project's native-speed numbers, stock and fast in one boot;
//! 3. whole `/proc/PID/wchan` reads of 5,000 threads (4,000 sleeping in
//!    core code, 1,000 `ksym_many` kthreads), stock and fast alternately;
//! 4. permission parity: every thread's wchan read by uid 1000, stock and
//!    fast, compared as the shim suite compares them;
//! 5. the wchan cache generation must move on each unload and load, and
//!    on a load that fails after the module was formed (the loader's
//!    error path).
//!
//! A failed KUnit case, a missing step, kernel trouble on the console or a
//! permission difference fails the run; the numbers are printed, never
//! asserted. A passing run's benchmark table and its values (index
//! sizes, KUnit counts) are recorded in `bench/results/` (kind
//! `uml-native`), where README.md's headline and `cargo xtask patches`
//! read them.

use crate::patches::input;
use crate::uml::{self, Uml};
use crate::{
    env, initramfs, ktap, kunit_counts, libclang, linux_source, modules, results, shim_test, Result,
};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The guest's job script.
const JOB: &str = "guest/fast-uml-job.sh";

/// Command-line options of `fast-uml-test`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Hard timeout for the UML guest, in seconds.
    #[arg(long, value_name = "SECS", default_value = "900", value_parser = crate::secs)]
    pub timeout: Duration,
    /// The series for this base of `kernel/series/bases` (`7.3`: its
    /// committed series on Debian's linux-source-7.3, built with
    /// `xtask/configs/uml-7.3.config`), not the first (6.12). Its numbers are
    /// printed, not recorded: `bench/results/` holds the 6.12 series'.
    #[arg(long, value_name = "X.Y")]
    pub base: Option<String>,
}

impl Default for Options {
    /// What `cargo xtask test` runs.
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(900),
            base: None,
        }
    }
}

/// The patched UML kernel of a base other than the first: Debian's
/// linux-source-X.Y with `patches/kallsyms-fast-X.Y/` applied in
/// `$KFAST_CACHE/fast-src-X.Y`, built in `fast-uml-build-X.Y` with
/// `xtask/configs/uml-X.Y.config` and `xtask/configs/fast-kernel.config`, and bindgen
/// on the libclang it needs. `None` for the first base.
pub(crate) fn base_kernel(name: &str) -> Result<Option<Uml>> {
    let root = env::repo_root();
    let bases = input::load_bases(&root.join("kernel/series"))?;
    let Some(pos) = bases.iter().position(|b| b.name == name) else {
        let known: Vec<&str> = bases.iter().map(|b| b.name.as_str()).collect();
        return Err(format!(
            "--base {name}: kernel/series/bases lists {}",
            known.join(", ")
        ));
    };
    if pos == 0 {
        return Ok(None);
    }
    let b = &bases[pos];
    let src = linux_source::for_base(&b.package, b.suite.as_deref(), None)?;
    eprintln!("fast-uml-test: base {}", src.label);
    let tree = env::cache_dir()
        .join(format!("fast-src-{name}"))
        .join(&b.package);
    crate::tree::prepare_tree_at(&root.join(&b.out), &src.tree, &tree)?;
    Ok(Some(Uml {
        tree,
        build: env::cache_dir().join(format!("fast-uml-build-{name}")),
        fragments: vec![
            root.join(format!("xtask/configs/uml-{name}.config")),
            root.join("xtask/configs/fast-kernel.config"),
        ],
        env: libclang::env_vars()?,
    }))
}

/// The patched UML kernel: the shared patched tree, its own build dir
/// (also booted by `nproc-uml-test`).
pub(crate) fn kernel() -> Uml {
    Uml::from_options(&uml::BuildOptions {
        tree: Some(env::patched_src()),
        build: Some(env::cache_dir().join("fast-uml-build")),
        fragments: vec![
            env::repo_root().join("xtask/configs/fast-kernel.config"),
            env::repo_root().join("xtask/configs/nproc-lsm.config"),
        ],
    })
}

/// The command, as its results files name it.
pub const COMMAND: &str = "cargo xtask fast-uml-test";

/// `cargo xtask fast-uml-test`: build, boot, check; returns the exit code.
pub fn run(o: &Options) -> Result<u8> {
    let t = Instant::now();
    let (k, base) = match o.base.as_deref().map(base_kernel).transpose()?.flatten() {
        Some(k) => (k, o.base.clone()),
        None => {
            crate::tree::prepare_tree()?;
            (kernel(), None)
        }
    };
    // Another base's artefacts and run directory beside the first's.
    let suffix = base.as_ref().map_or(String::new(), |b| format!("-{b}"));
    k.build()?;
    let tb = t.elapsed();
    let kos = modules::build_for(
        &["ksym_many"],
        &k.build,
        &k.make_vars(),
        &env::work_dir().join(format!("fast-uml-modules{suffix}")),
    )?;
    let shim_guest = initramfs::build_static("kfast-guest-agents", "kfast-shim-guest")?;
    let bench = initramfs::build_static("userspace-bench", "kallsyms-bench")?;
    let job = fs::read_to_string(env::repo_root().join(JOB))
        .map_err(|e| format!("cannot read {JOB}: {e}"))?;
    let root = uml::make_root(&uml::RootSpec {
        bins: &[
            ("kfast-shim-guest", &shim_guest),
            ("kallsyms-bench", &bench),
        ],
        // Loaded by the job, with parameters, and unloaded and loaded
        // again there.
        modules: &kos,
        load: false,
        job: &job,
    })?;
    let dir: PathBuf = env::work_dir()
        .join("uml-runs")
        .join(format!("fast-latest{suffix}"));
    let ta = t.elapsed();
    // 5,000 threads need more than the default 512M: UML's threads-max
    // is memory / (8 * THREAD_SIZE), and with the 32 KiB stacks of
    // xtask/configs/uml.config 1G allowed 4,096 threads (the sleepers stopped
    // at about 2,900: EAGAIN); 2G allows 8,192. Pages are only used
    // when touched.
    let boot = uml::boot(&k.image(), root.path(), "mem=2G", o.timeout, &dir)?;
    eprintln!(
        "fast-uml-test: guest ran {:.1?} (exit {:?}); kernel build step {tb:.1?}, artefacts {:.1?}",
        boot.elapsed,
        boot.exit_code,
        ta - tb
    );
    let out = boot.dir.join("out");
    let mut fails = boot.faults(o.timeout);
    match boot.verdict.as_deref() {
        Some("ok") => {}
        Some(v) => fails.push(format!("guest verdict: {v}")),
        None => fails.push("the guest wrote no verdict".into()),
    }
    for l in boot
        .console
        .lines()
        .filter(|l| l.contains("fast-uml-job: FAIL"))
    {
        fails.push(l.trim().to_string());
    }
    fails.extend(check_kunit(&out));
    print_bench(&out);
    print_scale(&out);
    fails.extend(shim_test::check_unpriv(
        &out,
        &["unpriv-stock1", "unpriv-stock2"],
        &["unpriv-fast1", "unpriv-fast2"],
        "fast-uml",
        // UML tasks sleep in its own `um_set_signals`, not in the
        // nanosleep path: any real name (not the guarded "0") will do.
        &|w| !w.is_empty() && w != "0",
    ));
    fails.extend(check_generation(&read(&out, "generation")));
    eprintln!("fast-uml-test: results in {}", out.display());
    if fails.is_empty() {
        if let Some(b) = &base {
            eprintln!(
                "fast-uml-test: base {b}: numbers printed above, not recorded in bench/results/"
            );
            eprintln!("fast-uml-test: PASS (base {b}) in {:.1?}", t.elapsed());
            return Ok(0);
        }
        // Only a passing run's numbers are the project's in-kernel
        // figures: README.md's headline, the series' texts.
        let file = record(&out, &boot.console)?;
        eprintln!(
            "fast-uml-test: numbers in {} (`cargo xtask patches` and `readme` put them in the series and README.md)",
            file.display()
        );
        eprintln!("fast-uml-test: PASS in {:.1?}", t.elapsed());
        Ok(0)
    } else {
        eprintln!(
            "fast-uml-test: FAIL:\n  {}\n  console: {}",
            fails.join("\n  "),
            dir.join("console.log").display()
        );
        Ok(1)
    }
}

/// The run's `uml-native` results file: the bench table as rows, and as
/// `values` with the boot log's index lines and the KUnit summaries.
fn record(out: &Path, console: &str) -> Result<PathBuf> {
    let mut body = results::kernel_bench(&read(out, "bench"))
        .ok_or("fast-uml-test: the bench file holds no benchmark table")?;
    let mut v = results::values::Values::new();
    results::values::bench(&body, &mut v);
    results::values::parse_console(console, &mut v);
    for run in ["boot", "module", "after"] {
        results::values::parse_kunit(run, &read(out, &format!("kunit-{run}")), &mut v);
    }
    body["kernel"] = linux_source::makefile_version(&env::patched_src())?.into();
    body["values"] = serde_json::json!(v);
    results::write("uml-native", COMMAND, results::Origin::Run, body)
}

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap_or_default()
}

/// The three KUnit runs: each passed, none failed, and the module run
/// compared the module's symbols.
fn check_kunit(out: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    for run in ["boot", "module", "after"] {
        let text = read(out, &format!("kunit-{run}"));
        for l in text.lines().filter(|l| l.contains("symbols:")) {
            eprintln!(
                "fast-uml-test: KUnit ({run}):{}",
                l.trim_start_matches([' ', '#'])
            );
        }
        bad.extend(kunit_failures(run, &text));
    }
    bad
}

/// What one KUnit results file must show: the suite passed, no case
/// failed, and (for runs with a module loaded) module symbols compared.
fn kunit_failures(run: &str, text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    if !ktap::verdicts(text, "kallsyms_fast").any(|s| s == ktap::Status::Success) {
        bad.push(format!("KUnit ({run}): the suite did not pass"));
    }
    for case in ktap::failures(text) {
        bad.push(format!("KUnit ({run}): {case} failed"));
    }
    if run != "boot" {
        let compared = text
            .lines()
            .filter_map(|l| l.split("module symbols: ").nth(1))
            .filter_map(|r| r.split_whitespace().next()?.parse::<u64>().ok())
            .any(|n| n >= 2048);
        if !compared {
            bad.push(format!(
                "KUnit ({run}): module symbols not compared (>= 2048 addresses)"
            ));
        }
        bad.extend(kunit_counts::module_index_problems(run, text));
    }
    bad
}

fn print_bench(out: &Path) {
    eprintln!("fast-uml-test: in-kernel benchmark (UML, native speed):");
    for l in read(out, "bench").lines() {
        eprintln!("fast-uml-test:   {l}");
    }
}

/// Whole `/proc/PID/wchan` reads, stock and fast, both rounds.
fn print_scale(out: &Path) {
    for g in ["core", "module"] {
        let mut line = format!("fast-uml-test: whole wchan reads, {g}:");
        for run in ["stock1", "fast1", "stock2", "fast2"] {
            if let Some((n, ns)) = shim_test::parse_scale(&out.join(format!("scale-{run}"))).get(g)
            {
                line.push_str(&format!(" {run} {ns} ns ({n} threads);"));
            }
        }
        eprintln!("{line}");
    }
}

/// `before G`, `unloaded G`, `failed-load G`, `reloaded G`: each must be
/// larger than the one before it.
fn check_generation(text: &str) -> Vec<String> {
    let gens: Vec<(String, u64)> = text
        .lines()
        .filter_map(|l| {
            let (what, g) = l.split_once(' ')?;
            Some((what.to_string(), g.trim().parse().ok()?))
        })
        .collect();
    let names: Vec<&str> = gens.iter().map(|(w, _)| w.as_str()).collect();
    if names != ["before", "unloaded", "failed-load", "reloaded"] {
        return vec![format!(
            "wchan cache generation: unreadable record {text:?}"
        )];
    }
    eprintln!("fast-uml-test: wchan cache generation {gens:?}");
    gens.windows(2)
        .filter(|w| w[1].1 <= w[0].1)
        .map(|w| {
            format!(
                "wchan cache generation did not move from {} ({}) to {} ({})",
                w[0].0, w[0].1, w[1].0, w[1].1
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_must_move_each_time() {
        assert!(check_generation("before 3\nunloaded 4\nfailed-load 5\nreloaded 6\n").is_empty());
        assert_eq!(
            check_generation("before 3\nunloaded 3\nfailed-load 4\nreloaded 6\n").len(),
            1
        );
        // The loader's error path without the invalidation.
        assert_eq!(
            check_generation("before 3\nunloaded 4\nfailed-load 4\nreloaded 6\n"),
            ["wchan cache generation did not move from unloaded (4) to failed-load (4)"]
        );
        assert_eq!(
            check_generation("before 3\nunloaded 4\nreloaded 6\n").len(),
            1
        );
        assert_eq!(check_generation("before 3\n").len(), 1);
        assert_eq!(check_generation("").len(), 1);
    }

    #[test]
    fn kunit_needs_a_pass_and_module_symbols() {
        let good = "    # kallsyms_fast_test_modules: module symbols: 3075 addresses (0 answered \
                    by the core index, 3075 of 3075 module addresses by a module index), 0 mismatches\n\
                    # module names: 1024 names (1024 of 1024 module names by a module name index)\n\
                    ok 1 kallsyms_fast\n";
        assert!(kunit_failures("module", good).is_empty());
        assert!(kunit_failures("boot", "ok 1 kallsyms_fast\n").is_empty());
        assert_eq!(kunit_failures("module", "ok 1 kallsyms_fast\n").len(), 3);
        let failed = format!("{good}    not ok 2 kallsyms_fast_test_modules\n");
        assert_eq!(kunit_failures("module", &failed).len(), 1);
        assert_eq!(kunit_failures("boot", "").len(), 1);
    }
}
