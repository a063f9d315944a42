//! `cargo xtask top-uml-bench`: procps' own `top`, batch mode, with its
//! WCHAN column shown (guest/top/toprc), on the patched UML kernel at
//! native speed: the CPU top spends per refresh with kallsyms-fast off
//! (the stock lookup, a stack walk for every read) and on, in one boot,
//! the two alternating so that neither always runs first. `ps -eLo
//! pid,wchan` over /proc is measured the same way.
//!
//! The tasks: `kfast-shim-guest waiters` threads blocked in 13 different
//! wait paths, and the kthreads of ksym_many (60,800 functions), which
//! sleep in that module's own code; `top -H` lists every thread. top's
//! user and system time come from the shell's `times` before and after
//! each run (the children's, so top's alone), 10 ms resolution over
//! seconds of CPU. Not part of `cargo xtask test`: a measurement, whose
//! results file (kind `top-uml`) keeps every run.

use crate::{env, fast_uml, initramfs, modules, results, uml, Result};
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The guest's job script.
const JOB: &str = "guest/top-uml-job.sh";
/// top's configuration: procps 4.0.2's defaults with WCHAN shown before
/// COMMAND (written by top itself, that one field switched on).
const TOPRC: &str = "guest/top/toprc";
/// The command, as its results files name it.
pub const COMMAND: &str = "cargo xtask top-uml-bench";
/// The terminal description top is given (Debian's ncurses-base).
const DUMB: &str = "/lib/terminfo/d/dumb";
/// procps' programs measured, from the host (Debian's procps).
const PROGRAMS: &[&str] = &["/usr/bin/top", "/usr/bin/ps"];

/// Command-line options of `top-uml-bench`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Waiting threads besides ksym_many's kthreads.
    #[arg(long, default_value_t = 4000)]
    pub waiters: u32,
    /// ksym_many kthreads (sleeping in the module's code).
    #[arg(long, default_value_t = 1000)]
    pub kthreads: u32,
    /// Rounds; each runs both modes once.
    #[arg(long, default_value_t = 5)]
    pub rounds: u32,
    /// top refreshes per run (`top -b -n`).
    #[arg(long, default_value_t = 5)]
    pub refreshes: u32,
    /// Hard timeout for the UML guest, in seconds.
    #[arg(long, value_name = "SECS", default_value = "1200", value_parser = crate::secs)]
    pub timeout: Duration,
}

/// One measured run: which program, mode and round, and its CPU.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    program: String,
    mode: String,
    round: u32,
    user_s: f64,
    sys_s: f64,
}

/// Seconds of a `times` field such as `1m2.345s`.
fn times_secs(field: &str) -> Option<f64> {
    let (m, s) = field.strip_suffix('s')?.split_once('m')?;
    Some(m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?)
}

/// The children's user and system seconds from a `times` output (its
/// second line).
fn children_times(text: &str) -> Option<(f64, f64)> {
    let line = text.lines().nth(1)?;
    let mut f = line.split_whitespace();
    Some((times_secs(f.next()?)?, times_secs(f.next()?)?))
}

/// The runs of the guest's `out/runs`: blocks `run PROGRAM MODE ROUND`,
/// then the `times` output before, then after.
fn parse_runs(text: &str) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    let mut lines = text.lines();
    while let Some(head) = lines.next() {
        let Some(rest) = head.strip_prefix("run ") else {
            continue;
        };
        let mut w = rest.split_whitespace();
        let (Some(program), Some(mode), Some(round)) = (w.next(), w.next(), w.next()) else {
            return Err(format!(
                "a run line without program, mode and round: {head:?}"
            ));
        };
        let block: Vec<&str> = lines.by_ref().take(4).collect();
        let before = children_times(&block[..2.min(block.len())].join("\n"));
        let after = children_times(&block.get(2..).unwrap_or_default().join("\n"));
        let (Some(b), Some(a)) = (before, after) else {
            return Err(format!("{head}: no `times` output before and after"));
        };
        runs.push(Run {
            program: program.into(),
            mode: mode.into(),
            round: round
                .parse()
                .map_err(|_| format!("bad round in {head:?}"))?,
            user_s: a.0 - b.0,
            sys_s: a.1 - b.1,
        });
    }
    Ok(runs)
}

/// The median and the range of `v` (not empty).
fn median_range(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let med = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (med, v[0], v[n - 1])
}

/// Copies `program` and every library `ldd` names into `root` at the same
/// absolute paths.
fn copy_with_libs(program: &str, root: &Path) -> Result<()> {
    let out = Command::new("ldd")
        .arg(program)
        .output()
        .map_err(|e| format!("ldd {program}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut files: Vec<PathBuf> =
        vec![fs::canonicalize(program).map_err(|e| format!("{program}: {e}"))?];
    files.push(PathBuf::from(program));
    for l in text.lines() {
        let path = l
            .split("=>")
            .last()
            .and_then(|p| p.split_whitespace().next())
            .filter(|p| p.starts_with('/'));
        if let Some(p) = path {
            files.push(PathBuf::from(p));
        }
    }
    for f in files {
        let dest = root.join(f.strip_prefix("/").map_err(|e| e.to_string())?);
        if let Some(d) = dest.parent() {
            fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        if !dest.exists() {
            fs::copy(&f, &dest)
                .map_err(|e| format!("{} -> {}: {e}", f.display(), dest.display()))?;
        }
    }
    Ok(())
}

/// `cargo xtask top-uml-bench`: build (incremental), boot, measure;
/// returns the exit code.
pub fn run(o: &Options) -> Result<u8> {
    crate::tree::prepare_tree()?;
    let k = fast_uml::kernel();
    k.build()?;
    let kos = modules::build_for(
        &["ksym_many"],
        &k.build,
        &k.make_vars(),
        &env::work_dir().join("fast-uml-modules"),
    )?;
    let agent = initramfs::build_static("kfast-guest-agents", "kfast-shim-guest")?;
    let script = fs::read_to_string(env::repo_root().join(JOB))
        .map_err(|e| format!("cannot read {JOB}: {e}"))?;
    let job = format!(
        "WAITERS={}\nKTHREADS={}\nROUNDS={}\nREFRESHES={}\n{script}",
        o.waiters, o.kthreads, o.rounds, o.refreshes
    );
    let root = uml::make_root(&uml::RootSpec {
        bins: &[("kfast-shim-guest", &agent)],
        modules: &kos,
        load: false,
        job: &job,
    })?;
    for p in PROGRAMS {
        copy_with_libs(p, root.path())?;
    }
    // top (ncurses) refuses to start without a terminal description,
    // even in batch mode: the job runs it with TERM=dumb.
    let terminfo = root.path().join("lib/terminfo/d");
    fs::create_dir_all(&terminfo).map_err(|e| format!("{}: {e}", terminfo.display()))?;
    fs::copy(DUMB, terminfo.join("dumb")).map_err(|e| format!("{DUMB}: {e}"))?;
    let rc = root.path().join("root/.config/procps");
    fs::create_dir_all(&rc).map_err(|e| format!("{}: {e}", rc.display()))?;
    fs::copy(env::repo_root().join(TOPRC), rc.join("toprc"))
        .map_err(|e| format!("{TOPRC}: {e}"))?;
    let dir = env::work_dir().join("uml-runs").join("top-latest");
    // As fast-uml-test: 5,000 threads need more than 512M (threads-max).
    let boot = uml::boot(&k.image(), root.path(), "mem=2G", o.timeout, &dir)?;
    eprintln!(
        "top-uml-bench: guest ran {:.1?} (exit {:?})",
        boot.elapsed, boot.exit_code
    );
    let out = boot.dir.join("out");
    let mut fails = boot.faults(o.timeout);
    match boot.verdict.as_deref() {
        Some("ok") => {}
        Some(v) => fails.push(format!("guest verdict: {v}")),
        None => fails.push("the guest wrote no verdict".into()),
    }
    let text = fs::read_to_string(out.join("runs")).unwrap_or_default();
    let runs = parse_runs(&text)?;
    let sample = fs::read_to_string(out.join("top-sample")).unwrap_or_default();
    if !sample.lines().any(|l| l.contains("WCHAN")) {
        fails.push("top's output has no WCHAN column (out/top-sample)".into());
    }
    if runs.len() != 2 * PROGRAMS.len() * o.rounds as usize {
        fails.push(format!(
            "{} runs measured, {} expected",
            runs.len(),
            2 * PROGRAMS.len() * o.rounds as usize
        ));
    }
    if !fails.is_empty() {
        for f in &fails {
            eprintln!("top-uml-bench: {f}");
        }
        eprintln!(
            "top-uml-bench: FAIL (console: {})",
            dir.join("console.log").display()
        );
        return Ok(1);
    }
    let mut summary = Vec::new();
    for program in ["top", "ps"] {
        let mut med = std::collections::BTreeMap::new();
        for mode in ["stock", "fast"] {
            let of = |f: fn(&Run) -> f64| -> Vec<f64> {
                runs.iter()
                    .filter(|r| r.program == program && r.mode == mode)
                    .map(f)
                    .collect()
            };
            let per = f64::from(if program == "top" { o.refreshes } else { 1 });
            let sys = median_range(of(|r| r.sys_s).into_iter().map(|x| x / per).collect());
            let total = median_range(
                of(|r| r.user_s + r.sys_s)
                    .into_iter()
                    .map(|x| x / per)
                    .collect(),
            );
            eprintln!(
                "top-uml-bench: {program} {mode}: per refresh, system {:.3} s ({:.3}-{:.3}), total {:.3} s ({:.3}-{:.3}), {} runs",
                sys.0, sys.1, sys.2, total.0, total.1, total.2, o.rounds
            );
            med.insert(mode, (sys, total));
            summary.push(json!({
                "program": program,
                "mode": mode,
                "sys_s_per_refresh": {"median": sys.0, "min": sys.1, "max": sys.2},
                "total_s_per_refresh": {"median": total.0, "min": total.1, "max": total.2},
            }));
        }
        let (s, f) = (med["stock"], med["fast"]);
        if f.0 .0 > 0.0 && f.1 .0 > 0.0 {
            eprintln!(
                "top-uml-bench: {program}: stock / fast, medians: system {:.2}x, total {:.2}x",
                s.0 .0 / f.0 .0,
                s.1 .0 / f.1 .0
            );
        }
    }
    let body = json!({
        "kernel": crate::linux_source::makefile_version(&env::patched_src())?,
        "tasks": {"waiters": o.waiters, "ksym_many_kthreads": o.kthreads},
        "refreshes": o.refreshes,
        "rounds": o.rounds,
        "label": "UML, native: kernel code runs on the host CPU; system calls are slower than on hardware",
        "summary": summary,
        "runs": runs.iter().map(|r| json!({
            "program": r.program, "mode": r.mode, "round": r.round,
            "user_s": r.user_s, "sys_s": r.sys_s,
        })).collect::<Vec<_>>(),
    });
    let file = results::write("top-uml", COMMAND, results::Origin::Run, body)?;
    eprintln!("top-uml-bench: numbers in {}", file.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_fields() {
        assert_eq!(times_secs("0m0.01s"), Some(0.01));
        assert_eq!(times_secs("1m2.5s"), Some(62.5));
        assert_eq!(times_secs("2.5s"), None);
        assert_eq!(
            children_times("0m0.00s 0m0.01s\n0m1.25s 0m3.50s\n"),
            Some((1.25, 3.5))
        );
    }

    #[test]
    fn runs_from_guest_output() {
        let text = "run top fast 1\n0m0.00s 0m0.00s\n0m1.00s 0m2.00s\n\
                    0m0.00s 0m0.00s\n0m1.50s 0m4.00s\nnoise\n";
        let r = parse_runs(text).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(
            (r[0].program.as_str(), r[0].mode.as_str(), r[0].round),
            ("top", "fast", 1)
        );
        assert!((r[0].user_s - 0.5).abs() < 1e-9 && (r[0].sys_s - 2.0).abs() < 1e-9);
        assert!(parse_runs("run top fast\n").is_err());
    }

    #[test]
    fn medians() {
        assert_eq!(median_range(vec![3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(median_range(vec![4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
    }

    #[test]
    fn toprc_shows_wchan() {
        // procps 4.0.x: a field's code is (index + 37) * 2, plus 1 when
        // shown; WCHAN is index 33, COMMAND 32.
        let rc = fs::read_to_string(env::repo_root().join(TOPRC)).unwrap();
        let def: Vec<u32> = rc
            .lines()
            .skip_while(|l| !l.starts_with("Def\tfieldscur="))
            .take_while(|l| !l.starts_with("\twinflags"))
            .flat_map(|l| l.rsplit('=').next().unwrap_or(l).split_whitespace())
            .filter_map(|n| n.parse().ok())
            .collect();
        let wchan = def.iter().position(|&n| n == 141).expect("WCHAN shown");
        let command = def.iter().position(|&n| n == 139).expect("COMMAND shown");
        assert_eq!(wchan + 1, command, "WCHAN right before COMMAND");
    }
}
