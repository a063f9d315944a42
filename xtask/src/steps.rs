//! The step table of `cargo xtask test`: each step's wall time, exit code
//! and what it built, the CPU time of each round, and the same as a
//! results file (kind `test-steps`, `results.rs`).
//!
//! A round is one call of [`Steps::run`] (one step, alone) or of
//! [`Steps::run_lanes`] (two lanes of steps at the same time). CPU time is
//! the user+sys time of the child processes that ended during the round
//! (`getrusage(RUSAGE_CHILDREN)` before and after it; a child's figure
//! includes the descendants it waited for, as make does for its compilers).
//! Two lanes run in one process, so their children's CPU cannot be told
//! apart: a lane round has one CPU figure for the whole round, on a line
//! of its own, and its rows have none. A child still running when its
//! round ends (none of the steps leaves one) would count in the round it
//! ends in.
//!
//! What a step built: any build function calls [`note_built`]; the note
//! lands on the row of the step running on the calling thread.

use crate::Result;
use serde_json::{json, Value};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A step of `cargo xtask test`: its name in the table and what it runs.
pub type Step<'a> = (&'static str, Box<dyn FnOnce() -> Result<u8> + Send + 'a>);

/// One row of the step table.
struct Row {
    name: &'static str,
    took: Duration,
    /// The step's exit code; `u8::MAX` when it could not run at all.
    code: u8,
    /// The step this one ran beside (at the same time), if any.
    beside: Option<&'static str>,
    /// What the step built ([`note_built`]), in the order noted.
    built: Vec<String>,
}

/// One round: a step alone, or two lanes at once.
struct Round {
    /// Its rows in [`Steps::done`].
    rows: std::ops::Range<usize>,
    /// Whether it ran lanes ([`Steps::run_lanes`]): then its CPU time is
    /// the round's, not any one row's.
    lanes: bool,
    took: Duration,
    /// User+sys time of the child processes that ended during the round;
    /// `None` when `getrusage` failed.
    cpu: Option<Duration>,
}

/// The steps of `cargo xtask test`, timed: the table at the end is how
/// the wall times xtask/README.md describes are measured.
#[derive(Default)]
pub struct Steps {
    done: Vec<Row>,
    rounds: Vec<Round>,
    /// When the first round started, and the children's CPU time then.
    start: Option<(Instant, Option<Duration>)>,
}

/// The user+sys time of this process's children that have ended and been
/// waited for (with the descendants they waited for), as
/// `getrusage(RUSAGE_CHILDREN)` gives it.
fn children_cpu() -> Option<Duration> {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the rusage it is given a pointer to.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: zeroed is a valid rusage, and getrusage succeeded.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| {
        Some(
            Duration::from_secs(u64::try_from(t.tv_sec).ok()?)
                + Duration::from_micros(u64::try_from(t.tv_usec).ok()?),
        )
    };
    Some(tv(ru.ru_utime)? + tv(ru.ru_stime)?)
}

/// CPU time spent between two [`children_cpu`] readings.
fn cpu_since(before: Option<Duration>) -> Option<Duration> {
    children_cpu()?.checked_sub(before?)
}

/// Notes of the steps running now, by step id; [`timed`] takes a step's
/// own when it ends. Ids, not names: two tables can run at once (unit
/// tests) with steps of the same name.
static NOTES: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The id of the step running on this thread, set by [`timed`].
    static CURRENT: Cell<Option<u64>> = const { Cell::new(None) };
}

fn notes() -> MutexGuard<'static, Vec<(u64, String)>> {
    NOTES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records what a build made (e.g. `"x86_64 fast-build: incremental"`)
/// on the row of the step running on this thread. Outside `cargo xtask
/// test` (no step running), nothing is recorded.
pub fn note_built(what: impl Into<String>) {
    if let Some(id) = CURRENT.with(Cell::get) {
        notes().push((id, what.into()));
    }
}

/// What a kernel build directory held before a build: what decides
/// whether the build is from nothing or incremental.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Before {
    /// No `.config`.
    Nothing,
    /// A `.config` but no `vmlinux`: an earlier build that did not finish.
    Configured,
    /// A `.config` and a `vmlinux`.
    Built,
}

impl Before {
    /// What `dir` holds now.
    pub fn of(dir: &Path) -> Before {
        if !dir.join(".config").is_file() {
            Before::Nothing
        } else if !dir.join("vmlinux").is_file() {
            Before::Configured
        } else {
            Before::Built
        }
    }

    /// How the build went from this state; `seeded_from` names the build
    /// directory `seed::build_dir` copied first, if it did.
    pub fn describe(self, seeded_from: Option<&str>) -> String {
        match (self, seeded_from) {
            (_, Some(from)) => format!("from nothing (seeded from {from})"),
            (Before::Nothing, None) => "from nothing".to_string(),
            (Before::Configured, None) => "an unfinished build resumed".to_string(),
            (Before::Built, None) => "incremental".to_string(),
        }
    }
}

/// The name of the build directory `seed::build_dir(to, _, candidates)`
/// seeds from ([`crate::seed::source`]). Asked after it returned `Some`,
/// this is the one it copied.
pub fn seed_source(to: &Path, candidates: &[std::path::PathBuf]) -> Option<String> {
    crate::seed::source(to, candidates)
        .and_then(|c| c.file_name())
        .map(|n| n.to_string_lossy().into_owned())
}

/// `"fresh"` when no build directory in the kernel cache holds a built
/// kernel (a `vmlinux`: the x86_64 and UML builds both leave one), else
/// `"cached"`. Not "the directory is empty": `.ci/run`'s `setup` and
/// `patches --check` put bindgen and the unpacked sources there before
/// the test command starts, and those take minutes, not the hour of
/// kernel builds.
pub fn cache_state(dir: &Path) -> &'static str {
    let built = std::fs::read_dir(dir)
        .is_ok_and(|rd| rd.flatten().any(|e| e.path().join("vmlinux").is_file()));
    if built {
        "cached"
    } else {
        "fresh"
    }
}

/// The exit code a step's result stands for in the table.
fn code_of(r: &Result<u8>) -> u8 {
    match r {
        Ok(c) => *c,
        Err(_) => u8::MAX,
    }
}

/// Runs one step, timed, as the current step of this thread (for
/// [`note_built`]): its row in the table and its result.
fn timed(
    name: &'static str,
    beside: Option<&'static str>,
    f: impl FnOnce() -> Result<u8>,
) -> (Row, Result<u8>) {
    /// Puts back the thread's previous step, also when the step panics.
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let restore = Restore(CURRENT.with(|c| c.replace(Some(id))));
    let t = Instant::now();
    let r = f();
    let took = t.elapsed();
    drop(restore);
    let built = {
        let mut all = notes();
        let (mine, rest): (Vec<_>, Vec<_>) = all.drain(..).partition(|(i, _)| *i == id);
        *all = rest;
        mine.into_iter().map(|(_, n)| n).collect()
    };
    let row = Row {
        name,
        took,
        code: code_of(&r),
        beside,
        built,
    };
    (row, r)
}

/// Seconds, as the results file has them.
fn secs(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

impl Steps {
    fn begin(&mut self) -> (Instant, Option<Duration>) {
        let now = (Instant::now(), children_cpu());
        self.start.get_or_insert(now);
        now
    }

    /// Runs one step (a round of its own) and returns its exit code; an
    /// `Err` (the step could not run at all) ends the run after printing
    /// what was done.
    pub fn run(&mut self, name: &'static str, f: impl FnOnce() -> Result<u8>) -> Result<u8> {
        let (t, cpu) = self.begin();
        let (row, r) = timed(name, None, f);
        self.rounds.push(Round {
            rows: self.done.len()..self.done.len() + 1,
            lanes: false,
            took: t.elapsed(),
            cpu: cpu_since(cpu),
        });
        self.done.push(row);
        if r.is_err() {
            self.report();
        }
        r
    }

    /// Runs `main` on this thread and the `chain` of steps, in order, on
    /// another, at the same time: [`Steps::run_lanes`] with one step in
    /// the first lane.
    pub fn run_beside(&mut self, main: Step<'_>, chain: Vec<Step<'_>>) -> Result<u8> {
        self.run_lanes(vec![main], chain)
    }

    /// Runs the steps of `main` in order on this thread and those of
    /// `side` in order on another, the two lanes at the same time;
    /// returns the worst exit code of them all.
    ///
    /// As with [`Steps::run`], an `Err` ends the run, but only once both
    /// lanes are done (a running guest is not abandoned half-way): an
    /// `Err` skips the rest of its own lane, and the first `Err` (main's
    /// lane, else the side's) is returned after the table is printed.
    /// Each row keeps its own wall time, the side lane's rows name the main
    /// lane's first step as the one they ran beside; the table's total
    /// is wall time. The CPU time is the round's alone (see the module
    /// doc): the lanes' children run in this one process.
    pub fn run_lanes(&mut self, main: Vec<Step<'_>>, side: Vec<Step<'_>>) -> Result<u8> {
        let main_name = main.first().map_or("", |s| s.0);
        let (t, cpu) = self.begin();
        let lane = |steps: Vec<Step<'_>>, beside: Option<&'static str>| {
            let mut rows = Vec::new();
            for (name, f) in steps {
                let (row, r) = timed(name, beside, f);
                rows.push(row);
                if let Err(e) = r {
                    return (rows, Err(e));
                }
            }
            (rows, Ok(()))
        };
        let ((main_rows, main_r), (side_rows, side_r)) = std::thread::scope(|s| {
            let side = s.spawn(|| lane(side, Some(main_name)));
            let main = lane(main, None);
            let side = side.join().unwrap_or_else(|_| {
                (
                    Vec::new(),
                    Err(format!("the steps beside {main_name} panicked")),
                )
            });
            (main, side)
        });
        let first = self.done.len();
        self.done.extend(main_rows);
        self.done.extend(side_rows);
        self.rounds.push(Round {
            rows: first..self.done.len(),
            lanes: true,
            took: t.elapsed(),
            cpu: cpu_since(cpu),
        });
        let worst = self.done.iter().map(|d| d.code).max().unwrap_or(0);
        match (main_r, side_r) {
            (Err(e), _) | (Ok(()), Err(e)) => {
                self.report();
                Err(e)
            }
            (Ok(()), Ok(())) => Ok(worst),
        }
    }

    /// A lane round's name: the first step of each lane.
    fn round_name(&self, r: &Round) -> String {
        let rows = &self.done[r.rows.clone()];
        let mut firsts: Vec<&str> = rows.first().map(|d| d.name).into_iter().collect();
        if let Some(side) = rows.iter().find(|d| d.beside.is_some()) {
            firsts.push(side.name);
        }
        format!("{} ({} steps)", firsts.join(" + "), rows.len())
    }

    /// Prints the table; returns the worst exit code.
    pub fn report(&self) -> u8 {
        // CPU seconds in a column `w` wide; `?` when getrusage failed.
        let cpu = |c: Option<Duration>, w: usize| match c {
            Some(c) => format!("CPU {:>w$.1} s", c.as_secs_f64()),
            None => format!("CPU {:>w$} s", "?"),
        };
        eprintln!(
            "test: step times: wall; CPU is user+sys of the child processes that ended, \
             per round (two lanes run in one process: their CPU is the round's)"
        );
        for r in &self.rounds {
            for d in &self.done[r.rows.clone()] {
                let verdict = match d.code {
                    0 => "ok".to_string(),
                    u8::MAX => "error".to_string(),
                    c => format!("exit {c}"),
                };
                let beside = d
                    .beside
                    .map(|b| format!("  (beside {b})"))
                    .unwrap_or_default();
                let own = if r.lanes {
                    " ".repeat(cpu(None, 7).len())
                } else {
                    cpu(r.cpu, 7)
                };
                eprintln!(
                    "test:   {:<30} {:>7.1} s  {own}  {verdict}{beside}",
                    d.name,
                    d.took.as_secs_f64()
                );
                for b in &d.built {
                    eprintln!("test:       built: {b}");
                }
            }
            if r.lanes {
                eprintln!(
                    "test:   round: {}: wall {:.1} s, {}",
                    self.round_name(r),
                    r.took.as_secs_f64(),
                    cpu(r.cpu, 0)
                );
            }
        }
        if let Some((t, c)) = self.start {
            eprintln!(
                "test:   {:<30} {:>7.1} s  {}  (wall clock)",
                "total",
                t.elapsed().as_secs_f64(),
                cpu(cpu_since(c), 7)
            );
        }
        self.done.iter().map(|d| d.code).max().unwrap_or(0)
    }

    /// The table as the `test-steps` results file holds it: `cache` is
    /// [`cache_state`] at the start, `outcome` the run's result.
    fn json(&self, cache: &str, outcome: &Result<u8>) -> Value {
        let rounds: Vec<Value> = self
            .rounds
            .iter()
            .map(|r| {
                json!({
                    "steps": self.done[r.rows.clone()].iter().map(|d| d.name).collect::<Vec<_>>(),
                    "lanes": r.lanes,
                    "wall_s": secs(r.took),
                    "cpu_s": r.cpu.map(secs),
                })
            })
            .collect();
        let mut rows = Vec::new();
        for (i, r) in self.rounds.iter().enumerate() {
            for d in &self.done[r.rows.clone()] {
                rows.push(json!({
                    "name": d.name,
                    "wall_s": secs(d.took),
                    "code": d.code,
                    "error": d.code == u8::MAX,
                    "beside": d.beside,
                    "round": i,
                    "built": d.built,
                }));
            }
        }
        let (wall, cpu) = match self.start {
            Some((t, c)) => (Some(secs(t.elapsed())), cpu_since(c).map(secs)),
            None => (None, None),
        };
        json!({
            "cache": cache,
            "exit": code_of(outcome),
            "error": outcome.as_ref().err(),
            "total_wall_s": wall,
            "total_cpu_s": cpu,
            "cpu_note": "user+sys of the child processes that ended, per round (getrusage \
                RUSAGE_CHILDREN); a round of two lanes has one figure: their children run \
                in one process",
            "rounds": rounds,
            "rows": rows,
        })
    }

    /// Writes the `test-steps` results file; a failure to write is
    /// printed, not returned (the run's own result is what counts).
    pub fn record(&self, cache: &str, outcome: &Result<u8>) {
        let body = self.json(cache, outcome);
        if let Err(e) = crate::results::write(
            "test-steps",
            "cargo xtask test",
            crate::results::Origin::Run,
            body,
        ) {
            eprintln!("results: test steps not recorded: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of a table: (name, code, what it ran beside).
    fn rows(s: &Steps) -> Vec<(&'static str, u8, Option<&'static str>)> {
        s.done.iter().map(|d| (d.name, d.code, d.beside)).collect()
    }

    #[test]
    fn beside_runs_both_sides_at_once_and_keeps_the_worst_code() {
        let mut s = Steps::default();
        let (tx, rx) = std::sync::mpsc::channel();
        // Main waits for the chain's first step: it can only return if
        // the two sides really run at the same time.
        let main: Step = (
            "main",
            Box::new(move || {
                rx.recv_timeout(Duration::from_secs(60))
                    .map_err(|e| e.to_string())?;
                Ok(0)
            }),
        );
        let chain: Vec<Step> = vec![
            (
                "a",
                Box::new(move || {
                    tx.send(()).map_err(|e| e.to_string())?;
                    Ok(2)
                }),
            ),
            ("b", Box::new(|| Ok(0))),
        ];
        assert_eq!(s.run_beside(main, chain), Ok(2));
        assert_eq!(
            rows(&s),
            [
                ("main", 0, None),
                ("a", 2, Some("main")),
                ("b", 0, Some("main"))
            ]
        );
        assert_eq!(s.report(), 2);
    }

    #[test]
    fn beside_error_stops_the_chain_and_ends_the_run_after_main() {
        let mut s = Steps::default();
        let chain: Vec<Step> = vec![
            ("a", Box::new(|| Err("a broke".to_string()))),
            ("b", Box::new(|| panic!("b ran after a failed"))),
        ];
        let r = s.run_beside(("main", Box::new(|| Ok(1))), chain);
        assert_eq!(r, Err("a broke".to_string()));
        assert_eq!(rows(&s), [("main", 1, None), ("a", u8::MAX, Some("main"))]);
        // Main's own error wins over the chain's.
        let mut s = Steps::default();
        let chain: Vec<Step> = vec![("a", Box::new(|| Err("a broke".to_string())))];
        let r = s.run_beside(("main", Box::new(|| Err("main broke".to_string()))), chain);
        assert_eq!(r, Err("main broke".to_string()));
    }

    #[test]
    fn lanes_run_in_order_and_an_error_skips_only_its_own_lane() {
        let mut s = Steps::default();
        let main: Vec<Step> = vec![
            ("m1", Box::new(|| Err("m1 broke".to_string()))),
            ("m2", Box::new(|| panic!("m2 ran after m1 failed"))),
        ];
        let side: Vec<Step> = vec![("s1", Box::new(|| Ok(0))), ("s2", Box::new(|| Ok(3)))];
        let r = s.run_lanes(main, side);
        assert_eq!(r, Err("m1 broke".to_string()));
        assert_eq!(
            rows(&s),
            [
                ("m1", u8::MAX, None),
                ("s1", 0, Some("m1")),
                ("s2", 3, Some("m1"))
            ]
        );
        let mut s = Steps::default();
        let main: Vec<Step> = vec![("m1", Box::new(|| Ok(0))), ("m2", Box::new(|| Ok(1)))];
        assert_eq!(s.run_lanes(main, Vec::new()), Ok(1));
        assert_eq!(rows(&s), [("m1", 0, None), ("m2", 1, None)]);
    }

    /// The notes of each row: (name, notes).
    fn built(s: &Steps) -> Vec<(&'static str, Vec<String>)> {
        s.done.iter().map(|d| (d.name, d.built.clone())).collect()
    }

    /// A step that notes `what`, tells the other lane it did, and waits
    /// until the other lane's step has noted too.
    fn noted_meeting(
        what: &'static str,
        tell: std::sync::mpsc::Sender<()>,
        hear: std::sync::mpsc::Receiver<()>,
    ) -> Box<dyn FnOnce() -> Result<u8> + Send> {
        Box::new(move || {
            note_built(what);
            tell.send(()).map_err(|e| e.to_string())?;
            hear.recv_timeout(Duration::from_secs(60))
                .map_err(|e| e.to_string())?;
            Ok(0)
        })
    }

    #[test]
    fn a_note_lands_on_the_step_running_on_its_thread() {
        // Outside any step: nothing recorded, nothing left behind.
        note_built("before any step");
        let mut s = Steps::default();
        s.run("alone", || {
            note_built("alone: one");
            note_built(String::from("alone: two"));
            Ok(0)
        })
        .expect("alone");
        // Both lanes note at the same time: each side waits for the
        // other's note before it returns, so the two steps overlap.
        let (to_side, from_main) = std::sync::mpsc::channel();
        let (to_main, from_side) = std::sync::mpsc::channel();
        let main: Vec<Step> = vec![
            ("m1", noted_meeting("m1 built", to_side, from_side)),
            ("m2", Box::new(|| Ok(0))),
        ];
        let side: Vec<Step> = vec![
            ("s1", noted_meeting("s1 built", to_main, from_main)),
            (
                "s2",
                Box::new(|| {
                    note_built("s2 built");
                    Ok(0)
                }),
            ),
        ];
        assert_eq!(s.run_lanes(main, side), Ok(0));
        note_built("after the steps");
        let s_ = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            built(&s),
            [
                ("alone", s_(&["alone: one", "alone: two"])),
                ("m1", s_(&["m1 built"])),
                ("m2", s_(&[])),
                ("s1", s_(&["s1 built"])),
                ("s2", s_(&["s2 built"])),
            ]
        );
        // The thread's current step was put back after each.
        assert_eq!(CURRENT.with(Cell::get), None);

        let v = s.json("cached", &Ok(0));
        assert_eq!(v["cache"], "cached");
        assert_eq!(v["rows"][0]["built"], json!(["alone: one", "alone: two"]));
        assert_eq!(v["rows"][3]["beside"], "m1");
        assert_eq!(v["rows"][3]["round"], 1);
        assert_eq!(v["rounds"].as_array().map(Vec::len), Some(2));
        assert_eq!(v["rounds"][1]["steps"], json!(["m1", "m2", "s1", "s2"]));
        assert_eq!(v["rounds"][1]["lanes"], true);
        assert!(v["rounds"][1]["wall_s"].is_f64(), "{v}");
        assert!(v["total_wall_s"].is_f64(), "{v}");
        assert_eq!(s.round_name(&s.rounds[1]), "m1 + s1 (4 steps)");
        assert_eq!(s.report(), 0);
    }

    #[test]
    fn a_round_counts_its_children_cpu() {
        let mut s = Steps::default();
        s.run("child", || {
            // A child that burns some CPU, then is waited for.
            let st = std::process::Command::new("sh")
                .args(["-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"])
                .status()
                .map_err(|e| e.to_string())?;
            Ok(u8::from(!st.success()))
        })
        .expect("child");
        let cpu = s.rounds[0].cpu.expect("getrusage");
        assert!(cpu > Duration::ZERO, "{cpu:?}");
    }

    #[test]
    fn builds_are_told_apart_by_what_the_directory_held() {
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path().join("fast-build");
        let other = tmp.path().join("build");
        assert_eq!(Before::of(&d), Before::Nothing);
        assert_eq!(Before::Nothing.describe(None), "from nothing");
        assert_eq!(seed_source(&d, &[other.clone(), d.clone()]), None);
        std::fs::create_dir_all(&other).expect("mkdir");
        std::fs::write(other.join(".config"), "").expect("write");
        assert_eq!(Before::of(&other), Before::Configured);
        assert_eq!(seed_source(&d, &[other.clone(), d.clone()]), None);
        std::fs::write(other.join("vmlinux"), "").expect("write");
        assert_eq!(Before::of(&other), Before::Built);
        assert_eq!(
            seed_source(&d, &[other.clone(), d.clone()]).as_deref(),
            Some("build")
        );
        assert_eq!(seed_source(&other, std::slice::from_ref(&other)), None);
        assert_eq!(
            Before::Nothing.describe(Some("build")),
            "from nothing (seeded from build)"
        );
        assert_eq!(Before::Built.describe(None), "incremental");
        let cache = tmp.path().join("cache");
        assert_eq!(cache_state(&cache), "fresh");
        std::fs::create_dir_all(cache.join("cargo/bin")).expect("mkdir");
        std::fs::create_dir_all(cache.join("src/linux-source-6.12")).expect("mkdir");
        assert_eq!(cache_state(&cache), "fresh", "sources and tools only");
        std::fs::create_dir_all(cache.join("uml-build")).expect("mkdir");
        std::fs::write(cache.join("uml-build/vmlinux"), "").expect("write");
        assert_eq!(cache_state(&cache), "cached");
    }
}
