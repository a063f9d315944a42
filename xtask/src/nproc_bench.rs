//! `cargo xtask nproc-bench`: the nproc benchmark (docs/nproc-bench.md),
//! in the QEMU guest.
//!
//! The patched x86_64 kernel (`CONFIG_NPROC=y`), configured as `fast-test`
//! configures it but as a distribution kernel is built: without lock
//! debugging, with -O2 and per-CPU slabs (`xtask/configs/bench-kernel.config`;
//! built in `$KFAST_CACHE/bench-build`, a no-op when current) boots under
//! QEMU TCG with 2 CPUs and
//! `guest/nproc-bench-init.sh`. The initramfs carries Debian's
//! `/bin/ps` (procps-ng 4.0.2, dynamically linked) with every library
//! `ldd` lists and the loader, `nps` and `nproc-guest` built static, and
//! `kfast-nproc-guest` (the population, the timer, both raw readers).
//!
//! In one boot, with about 5,000 tasks (processes and threads sleeping in
//! core code, `ksym_many`'s kthreads sleeping in a module): parity of
//! `nps` with `/bin/ps` on a stable snapshot, `nproc-guest parity` (every
//! field of every task against /proc, processes and threads: this kernel
//! puts numbers in runs, which the UML suites' kernel does not), then N
//! rounds, each a full dump to /dev/null of `/bin/ps ARGS` and `nps ARGS`
//! for five forms (`ax`, `aux`, `-ef`, `-eLf`, `-eo COLS`
//! with wchan), and the raw collections (a reader
//! of every `/proc/PID/stat` + `wchan`, and one of stat's fields + wchan
//! through nproc, in one binary so that both pay the same start-up), and
//! `nps --version` (what a dump pays to start) in turn:
//! interleaved, so that the host's load drifting over a run (TCG shares
//! its cores, and a run's ratios move with it) weighs on every command
//! alike. Every round times each command twice:
//! in the default layout, and with address space layout randomization off
//! (the `@fixed` rows; [`FIXED`] says why both). Then one run each under
//! the tracer, counting syscalls and slab allocations.
//!
//! Then a second boot of the same kernel and image under `-icount
//! shift=0` ([`Clock::Instructions`]), where the guest's clock counts the
//! instructions executed: the same N rounds in the default layout only,
//! without parity or counting (done in the first boot). Its table gives
//! each dump's work in instructions, kernel and user, free of what TCG
//! adds to the host's time (translation, the host's load, its uneven price
//! per instruction); it costs about a minute more.
//!
//! Why QEMU TCG and not UML: TCG emulates kernel and user code alike, so
//! a syscall-heavy and a syscall-light reader compare fairly; UML runs
//! every syscall through the host's ptrace and would flatter nproc. The
//! numbers are still emulated ones: every table says so.
//!
//! Why a kernel of its own: the test kernel has lockdep, which puts a
//! validator call behind every lock, RCU section and irq toggle, on both
//! sides; no distribution kernel runs with it. The tests keep it (the
//! lock-correctness of the series is checked there); only this benchmark
//! runs here. It costs one more x86_64 build on a fresh machine.
//!
//! N: under TCG on this (shared, 2-core) machine, on this kernel, one
//! `/bin/ps ax` dump of this population takes seconds, so every dump per
//! command adds a round of all thirteen commands in both layouts to a
//! run, on top of what every run pays regardless of N (boot, `ksym_many`,
//! the population, parity, the counting runs of each command). So `cargo
//! xtask test` runs [`DEFAULT_DUMPS`] dump per command, the least that
//! still times every command (the timeout grows with N); the step's wall
//! time is in bench/results/ `test-steps` files. The benchmark's full
//! count is `--dumps 100`.

use crate::env::Flavor;
use crate::{console, env, guest_clock, initramfs, kernel, modules, qemu, results, run, Result};
use serde_json::{json, Value};
use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// Dumps per command that `cargo xtask test` runs (see the module docs).
pub const DEFAULT_DUMPS: u32 = 1;
/// The label every table on the host's clock carries.
const LABEL: &str = "QEMU TCG (emulated; not a hardware ratio)";
/// The label every table on the instruction clock carries.
const ICOUNT_LABEL: &str =
    "QEMU icount (instructions executed, kernel and user, 1 each; work, not a hardware time)";

/// The clock a boot's timings are read on. Every run boots twice, once
/// on each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clock {
    /// The host's time, through the guest's TSC at the host's rate: what a
    /// dump costs under TCG, its translation included, in both layouts
    /// ([`FIXED`]). Parity and the syscall and allocation counts run in
    /// this boot.
    Host,
    /// QEMU's instruction counter ([`guest_clock::ICOUNT_QEMU_ARGS`]): the
    /// guest's nanoseconds are instructions executed, kernel and user, on
    /// every vCPU. What TCG adds drops out: translating code (the default
    /// layout's extra cost, so only that layout is timed), the host's load,
    /// and TCG's uneven price per instruction (a syscall, a page fault or
    /// a TLB refill costs it far more than the instructions they run). What
    /// is left is how much work each tool has the machine do, every
    /// instruction weighing the same: nps's counts repeat to half a
    /// percent, ps's to a few percent (docs/nproc-bench.md).
    /// Hardware is not that either: it charges syscalls, cache
    /// misses and TLB refills more than an instruction each, and ps has
    /// far more of them (17.6 syscalls per process against 0.03).
    Instructions,
}

impl Clock {
    /// The run directory's name under `$KFAST_WORK/runs`.
    fn dir(self) -> &'static str {
        match self {
            Clock::Host => "nproc-bench",
            Clock::Instructions => "nproc-bench-icount",
        }
    }
}
/// busybox applets the init script uses.
const APPLETS: &[&str] = &[
    "sh", "mount", "insmod", "cat", "echo", "sleep", "stty", "sed", "grep", "sync", "cmp", "diff",
    "head", "wc", "cut", "true", "awk", "mktemp", "rm", "sort", "id", "mkdir",
];
/// Debian's procps `ps`, called by this path in the guest too.
const PROCPS: &str = "/bin/ps";

/// Command-line options of `nproc-bench`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Full dumps per command (the full benchmark is 100).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_DUMPS,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub dumps: u32,
    /// Hard timeout in seconds (default: 900 + 90 per dump).
    #[arg(long, value_name = "SECS", value_parser = crate::secs)]
    pub timeout: Option<Duration>,
}

impl Default for Options {
    /// What `cargo xtask test` runs.
    fn default() -> Self {
        Options {
            dumps: DEFAULT_DUMPS,
            timeout: None,
        }
    }
}

/// The population: single-threaded processes, threaded processes and
/// their threads, module kthreads. With the guest's ~70 kernel threads,
/// init and the parent, about 5,000 tasks, about 4,000 of them processes
/// (what `ps ax` lists).
const PROCS: u32 = 3400;
const THREADED: u32 = 20;
const THREADS: u32 = 50;
const KTHREADS: u32 = 500;

/// `/bin/ps` and everything `ldd` says it loads, as (path in the image,
/// file on the host).
fn procps_files() -> Result<Vec<(String, PathBuf)>> {
    let text = |c: &mut Command| -> Result<String> {
        Ok(String::from_utf8_lossy(&run::output(c)?.stdout).into_owned())
    };
    let version = text(Command::new(PROCPS).arg("--version"))?;
    if !version.contains("procps-ng 4.0.2") {
        return Err(format!(
            "{PROCPS} is not procps-ng 4.0.2 ({})",
            version.trim()
        ));
    }
    let ldd = text(Command::new("ldd").arg(PROCPS))?;
    let mut files = vec![("bin/ps".to_string(), PathBuf::from(PROCPS))];
    files.extend(ldd_paths(&ldd).into_iter().map(|p| {
        let rel = p.trim_start_matches('/').to_string();
        (rel, PathBuf::from(p))
    }));
    if !files.iter().any(|(p, _)| p.contains("ld-linux")) {
        return Err(format!("ldd {PROCPS} named no loader:\n{ldd}"));
    }
    Ok(files)
}

/// The absolute paths in `ldd` output: `name => /path (addr)` and the
/// loader's `/path (addr)`; the vDSO has none.
fn ldd_paths(ldd: &str) -> Vec<&str> {
    ldd.lines()
        .filter_map(|l| {
            let l = l.split(" => ").last()?.trim();
            let path = l.split_whitespace().next()?;
            path.starts_with('/').then_some(path)
        })
        .collect()
}

/// One command's numbers from the result channel.
#[derive(Default, Debug, Clone, PartialEq)]
struct Row {
    dumps: u64,
    wall_us: u64,
    user_us: u64,
    sys_us: u64,
    syscalls: Option<u64>,
    allocs: Option<u64>,
}

/// The commands, in table order: (label in the guest, what it runs).
const COMMANDS: [(&str, &str); 13] = [
    ("ps-ax", "/bin/ps ax"),
    ("nps-ax", "nps ax"),
    // The other forms: BSD's user format, SysV's full format, and
    // the full format per thread (a line per task, ~5,000, where the
    // others list the ~4,000 processes).
    ("ps-aux", "/bin/ps aux"),
    ("nps-aux", "nps aux"),
    ("ps-ef", "/bin/ps -ef"),
    ("nps-ef", "nps -ef"),
    ("ps-eLf", "/bin/ps -eLf"),
    ("nps-eLf", "nps -eLf"),
    (
        "ps-eo",
        "/bin/ps -eo pid,tid,ppid,uid,stat,vsz,rss,time,nlwp,comm,wchan",
    ),
    ("nps-eo", "nps -eo (the same)"),
    ("proc-raw", "/proc/PID/stat + wchan reader"),
    ("nproc-raw", "nproc reader: stat's fields + wchan"),
    // What every nps dump pays before its first message: exec, the
    // loader-less static start, the argument parse.
    ("nps-start", "nps --version (start-up alone)"),
];

/// The ratios both clocks print, in [`COMMANDS`]' order: every form
/// /bin/ps against nps, the raw /proc reader against the raw nproc one.
/// (The host's clock adds `ps ax` against the raw nproc reader.)
const PAIRS: [(&str, &str); 6] = [
    ("ps-ax", "nps-ax"),
    ("ps-aux", "nps-aux"),
    ("ps-ef", "nps-ef"),
    ("ps-eLf", "nps-eLf"),
    ("ps-eo", "nps-eo"),
    ("proc-raw", "nproc-raw"),
];

/// The suffix of a command's label in the rounds timed with address space
/// layout randomization off (`randomize_va_space` 0), for every command
/// alike. TCG translates the code a process runs into host code and keeps
/// the translation for the next process that runs the same code at the
/// same address: with randomization on, every run of a position-independent
/// binary (`/bin/ps`, its libraries, the static-pie `nps`) lands elsewhere
/// and pays to translate all of its code again; hardware has no such cost
/// (a cold instruction cache costs microseconds, not the ~12 ms `nps
/// --version` pays here). Off, a command's code is translated once and
/// reused, so these rows are what TCG charges for the work itself. Both
/// sets are timed in every round and both are reported.
const FIXED: &str = "@fixed";

/// What the result channel said.
#[derive(Default, Debug)]
struct Results {
    tasks: u64,
    processes: u64,
    source: String,
    parity: Vec<String>,
    /// The scopes whose `nproc-guest parity` passed.
    field_parity: Vec<String>,
    rows: Vec<(String, Row)>,
    verdict: Option<String>,
}

/// Parses the result channel's lines.
fn parse(result: &str) -> Results {
    let mut r = Results::default();
    let row = |r: &mut Results, label: &str| -> usize {
        if let Some(i) = r.rows.iter().position(|(l, _)| l == label) {
            return i;
        }
        r.rows.push((label.to_string(), Row::default()));
        r.rows.len() - 1
    };
    for l in result.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let n = |i: usize| w.get(i).and_then(|s| s.parse::<u64>().ok());
        match w.as_slice() {
            ["population", _, "tasks", _, "processes"] => {
                r.tasks = n(1).unwrap_or(0);
                r.processes = n(3).unwrap_or(0);
            }
            ["nps-source", ..] => r.source = w[1..].join(" "),
            ["parity", name, "identical", ..] => r.parity.push(name.to_string()),
            ["field-parity", scope, "rc", "0:", ..] => r.field_parity.push(scope.to_string()),
            ["time", label, ..] if w.len() == 6 => {
                // One line per round: the rounds add up.
                if let (Some(d), Some(wall), Some(u), Some(s)) = (n(2), n(3), n(4), n(5)) {
                    let i = row(&mut r, label);
                    let x = &mut r.rows[i].1;
                    x.dumps += d;
                    x.wall_us += wall;
                    x.user_us += u;
                    x.sys_us += s;
                }
            }
            ["count", what, label, _] => {
                let i = row(&mut r, label);
                match *what {
                    "sys" => r.rows[i].1.syscalls = n(3),
                    "alloc" => r.rows[i].1.allocs = n(3),
                    _ => {}
                }
            }
            [v, ..] if *v == qemu::VERDICT => r.verdict = Some(w[1..].join(" ")),
            _ => {}
        }
    }
    r
}

/// What a complete run on `clock` must show; timings are reported, never
/// judged.
fn check(r: &Results, dumps: u32, clock: Clock) -> Vec<String> {
    let host = clock == Clock::Host;
    let mut bad = Vec::new();
    match r.verdict.as_deref() {
        Some("ok") => {}
        Some(v) => bad.push(format!("guest verdict: {v}")),
        None => bad.push("no verdict on the result channel".into()),
    }
    if r.tasks == 0 {
        bad.push("no population line".into());
    }
    // The benchmark compares procps with nps on the nproc family: nps on
    // any other source would measure the wrong thing.
    if !r.source.starts_with("nproc") {
        bad.push(format!("nps does not read nproc here: {}", r.source));
    }
    for p in ["ax", "eo"] {
        if host && !r.parity.iter().any(|x| x == p) {
            bad.push(format!("no identical `{p}` parity line"));
        }
    }
    for scope in ["processes", "threads"] {
        if host && !r.field_parity.iter().any(|x| x == scope) {
            bad.push(format!(
                "no passing field parity line for the {scope} scope"
            ));
        }
    }
    for (label, _) in COMMANDS {
        let fixed = format!("{label}{FIXED}");
        let timed: &[&str] = if host { &[label, &fixed] } else { &[label] };
        for &timed in timed {
            match r.rows.iter().find(|(l, _)| *l == timed) {
                None => bad.push(format!("{timed}: no numbers")),
                Some((_, x)) if x.dumps != u64::from(dumps) => {
                    bad.push(format!("{timed}: {} dumps, want {dumps}", x.dumps));
                }
                Some(_) => {}
            }
        }
        // Counted once, in the default layout.
        let counted = r.rows.iter().find(|(l, _)| l == label);
        if host && counted.is_some_and(|(_, x)| x.syscalls.is_none() || x.allocs.is_none()) {
            bad.push(format!("{label}: no syscall or allocation count"));
        }
    }
    bad
}

/// Milliseconds with one decimal.
fn ms(us: u64) -> String {
    format!("{:.1}", us as f64 / 1000.0)
}

/// The tables and the ratios, as printed and as README.md quotes them:
/// first the rounds in the default layout (with the syscall and
/// allocation counts), then the same rounds' runs with randomization off.
fn table(r: &Results) -> String {
    let mut t = String::new();
    t.push_str(&format!(
        "nproc benchmark, {LABEL}; the patched kernel built as a distribution \
         kernel is: -O2, per-CPU slabs, without lock debugging (xtask/configs/bench-kernel.config)\n\
         {} tasks, {} processes (what ps ax lists); nps source: {}\n\n",
        r.tasks, r.processes, r.source
    ));
    section(
        r,
        "",
        "address space layout randomized (the default): every run translates its code anew",
        &mut t,
    );
    t.push('\n');
    section(
        r,
        FIXED,
        "randomization off for every command (randomize_va_space 0): \
         TCG's translations reused, the work itself",
        &mut t,
    );
    t
}

/// One layout's table and ratios: the rows labelled `label` + `suffix`.
fn section(r: &Results, suffix: &str, heading: &str, t: &mut String) {
    let per = r.processes.max(1);
    let get = |l: &str| {
        r.rows
            .iter()
            .find(|(x, _)| *x == format!("{l}{suffix}"))
            .map(|(_, x)| x.clone())
    };
    t.push_str(&format!("{heading}\n\n"));
    t.push_str(
        "| command | dumps | wall ms/dump | user ms/dump | sys ms/dump | syscalls/process (one run) | slab allocs/process (one run) |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (label, what) in COMMANDS {
        let Some(x) = get(label) else {
            continue;
        };
        let d = x.dumps.max(1);
        let each = |c: Option<u64>| {
            c.map_or("-".into(), |c| {
                format!("{:.2} ({c})", c as f64 / per as f64)
            })
        };
        t.push_str(&format!(
            "| `{what}` | {} | {} | {} | {} | {} | {} |\n",
            x.dumps,
            ms(x.wall_us / d),
            ms(x.user_us / d),
            ms(x.sys_us / d),
            each(x.syscalls),
            each(x.allocs)
        ));
    }
    t.push('\n');
    for (a, b) in PAIRS.into_iter().chain([("ps-ax", "nproc-raw")]) {
        let (Some(x), Some(y)) = (get(a), get(b)) else {
            continue;
        };
        let ratio = |p: u64, q: u64| {
            if q == 0 {
                "-".to_string()
            } else {
                format!("{:.1}x", p as f64 / q as f64)
            }
        };
        t.push_str(&format!(
            "ratio {a}{suffix} / {b}{suffix}: wall {}, user+sys {} ({LABEL})\n",
            ratio(x.wall_us * y.dumps, y.wall_us * x.dumps),
            ratio(
                (x.user_us + x.sys_us) * y.dumps,
                (y.user_us + y.sys_us) * x.dumps
            )
        ));
    }
}

/// The instruction clock's table and ratios: millions of instructions
/// per dump (the guest's wall milliseconds on that clock; its user and
/// sys split is tick-sampled, 10 M instructions a tick, and left out).
fn instruction_table(r: &Results) -> String {
    let mut t = format!(
        "the same commands on the instruction clock, {ICOUNT_LABEL}; \
         the default layout (translation costs nothing on this clock)\n\n\
         | command | dumps | M instructions/dump | instructions/process |\n\
         |---|---|---|---|\n"
    );
    let per = r.processes.max(1);
    let get = |l: &str| r.rows.iter().find(|(x, _)| x == l).map(|(_, x)| x);
    for (label, what) in COMMANDS {
        let Some(x) = get(label) else {
            continue;
        };
        // ns on this clock are instructions.
        let each = x.wall_us * 1000 / x.dumps.max(1);
        // Start-up alone reads no process.
        let per_process = match label {
            "nps-start" => "-".to_string(),
            _ => (each / per).to_string(),
        };
        t.push_str(&format!(
            "| `{what}` | {} | {:.2} | {per_process} |\n",
            x.dumps,
            each as f64 / 1e6,
        ));
    }
    t.push('\n');
    for (a, b) in PAIRS {
        let (Some(x), Some(y)) = (get(a), get(b)) else {
            continue;
        };
        if y.wall_us == 0 {
            continue;
        }
        t.push_str(&format!(
            "ratio {a} / {b}: instructions {:.1}x ({ICOUNT_LABEL})\n",
            (x.wall_us * y.dumps) as f64 / (y.wall_us * x.dumps) as f64
        ));
    }
    t
}

/// One boot of the benchmark on `clock`: its results, and what is wrong
/// with them.
fn boot_on(
    clock: Clock,
    opts: &Options,
    initrd: &std::path::Path,
    timeout: Duration,
) -> Result<(Results, Vec<String>)> {
    let dir = env::work_dir().join("runs").join(clock.dir());
    let (tsc, qemu_args): (String, &[&str]) = match clock {
        Clock::Host => (guest_clock::boot_args(), &[]),
        Clock::Instructions => (
            format!(
                "{} nprocbench.clock=icount",
                guest_clock::icount_boot_args()
            ),
            &guest_clock::ICOUNT_QEMU_ARGS,
        ),
    };
    let boot = qemu::boot_with(
        &kernel::bzimage(FLAVOR),
        initrd,
        &dir,
        timeout,
        &format!(
            "{tsc} nprocbench.dumps={} nprocbench.procs={PROCS} nprocbench.threaded={THREADED} \
             nprocbench.threads={THREADS} nprocbench.kthreads={KTHREADS}",
            opts.dumps
        ),
        qemu_args,
    )?;
    let console = fs::read_to_string(&boot.console).unwrap_or_default();
    let result = fs::read_to_string(&boot.result).unwrap_or_default();
    let r = parse(&result);
    let mut failures = Vec::new();
    if boot.timed_out {
        failures.push(format!("timed out after {}s", timeout.as_secs()));
    }
    failures.extend(console::faults("console", &console));
    failures.extend(check(&r, opts.dumps, clock));
    if clock == Clock::Instructions {
        for f in &mut failures {
            *f = format!("instruction clock: {f}");
        }
    }
    if !failures.is_empty() {
        failures.push(format!(
            "console: {}\n  results: {}",
            boot.console.display(),
            boot.result.display()
        ));
    }
    Ok((r, failures))
}

/// The command, as its results files name it.
pub const COMMAND: &str = "cargo xtask nproc-bench";

/// One clock's rows as data: per command (its guest label, `@fixed` for
/// the rounds with randomization off), the dumps and their summed wall,
/// user and sys microseconds (on the instruction clock a microsecond is
/// 1,000 instructions), and the one-run syscall and allocation counts.
fn rows_data(r: &Results) -> Vec<Value> {
    r.rows
        .iter()
        .map(|(label, x)| {
            let base = label.trim_end_matches(FIXED);
            let runs = COMMANDS.iter().find(|(l, _)| *l == base).map(|(_, c)| *c);
            json!({
                "label": label,
                "runs": runs,
                "randomization_off": label.ends_with(FIXED),
                "dumps": x.dumps,
                "wall_us": x.wall_us,
                "user_us": x.user_us,
                "sys_us": x.sys_us,
                "syscalls": x.syscalls,
                "allocs": x.allocs,
            })
        })
        .collect()
}

/// A run's results file body: both boots' rows.
fn record(host: &Results, icount: &Results) -> Value {
    json!({
        "tasks": host.tasks,
        "processes": host.processes,
        "nps_source": host.source,
        "kernel": "the patched x86_64 kernel built as a distribution kernel is \
                   (xtask/configs/bench-kernel.config: -O2, per-CPU slabs, no lock debugging)",
        "host_clock": { "label": LABEL, "rows": rows_data(host) },
        "instruction_clock": {
            "label": ICOUNT_LABEL,
            "note": "wall_us here is the guest's microseconds on QEMU's instruction \
                     clock: 1,000 instructions each",
            "rows": rows_data(icount),
        },
    })
}

/// `cargo xtask record nproc`: the results file of a run from the result
/// channels its two boots left.
pub fn record_output(host: &std::path::Path, icount: &std::path::Path) -> Result<PathBuf> {
    let read =
        |p: &std::path::Path| fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let (h, i) = (parse(&read(host)?), parse(&read(icount)?));
    for (r, p) in [(&h, host), (&i, icount)] {
        if r.verdict.as_deref() != Some("ok") || r.rows.is_empty() {
            return Err(format!(
                "{}: not a passing run's result channel",
                p.display()
            ));
        }
    }
    results::write(
        "nproc",
        COMMAND,
        results::Origin::Output(host),
        record(&h, &i),
    )
}

/// The kernel this benchmark builds and boots: the patched one, built as
/// a distribution kernel is.
const FLAVOR: Flavor = Flavor::Bench;

/// `cargo xtask nproc-bench`.
pub fn run(opts: &Options) -> Result<u8> {
    let t = Instant::now();
    // The patched tree's prepare and the bench kernel's build: no-ops when
    // current.
    kernel::run(FLAVOR)?;
    let kos = modules::build_these(FLAVOR, &["ksym_many"])?;
    let agent = initramfs::build_agent()?;
    let helper = initramfs::build_static("kfast-guest-agents", "kfast-nproc-guest")?;
    let nps = initramfs::build_static("nps", "nps")?;
    let guest = initramfs::build_static("nproc-guest", "nproc-guest")?;
    // nps against /bin/ps over every form it knows, on the nproc source.
    let parity = env::repo_root().join("guest/nps/parity.sh");
    let initrd = initramfs::pack_with(
        &initramfs::Spec {
            init: "guest/nproc-bench-init.sh",
            applets: APPLETS,
            bins: &[
                ("kfast-guest", &agent),
                ("kfast-nproc-guest", &helper),
                ("nps", &nps),
                ("nproc-guest", &guest),
                ("nps-parity.sh", &parity),
            ],
            modules: &kos,
            out: &FLAVOR.guest_dir().join("nproc-bench-initramfs.cpio"),
        },
        &procps_files()?,
    )?;
    let timeout = opts
        .timeout
        .unwrap_or(Duration::from_secs(900 + 90 * u64::from(opts.dumps)));
    let (host, mut failures) = boot_on(Clock::Host, opts, &initrd, timeout)?;
    let (icount, more) = boot_on(Clock::Instructions, opts, &initrd, timeout)?;
    failures.extend(more);
    let text = format!("{}\n{}", table(&host), instruction_table(&icount));
    let dir = env::work_dir().join("runs").join(Clock::Host.dir());
    let _ = fs::write(dir.join("table.md"), &text);
    for l in text.lines() {
        eprintln!("nproc-bench: {l}");
    }
    if failures.is_empty() {
        if let Err(e) = results::write(
            "nproc",
            COMMAND,
            results::Origin::Run,
            record(&host, &icount),
        ) {
            eprintln!("nproc-bench: not recorded: {e}");
        }
        eprintln!("nproc-bench: PASS in {:.1?}", t.elapsed());
        Ok(0)
    } else {
        eprintln!("nproc-bench: FAIL:\n  {}", failures.join("\n  "));
        Ok(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "population 5001 tasks 3990 processes\n\
        nps-source nproc (the default)\n\
        parity ax identical 3990 lines (try 1)\nparity eo identical 3990 lines (try 1)\n\
        field-parity processes rc 0: parity-processes: PASS 3989 tasks x 44 fields\n\
        field-parity threads rc 0: parity-threads: PASS 4989 tasks x 44 fields\n\
        time ps-ax 2 20000000 4000000 12000000\ntime nps-ax 2 8000000 2000000 5000000\n\
        time ps-aux 2 24000000 5000000 13000000\ntime nps-aux 2 8000000 2000000 5000000\n\
        time ps-ef 2 21000000 4000000 12000000\ntime nps-ef 2 7000000 2000000 4000000\n\
        time ps-eLf 2 30000000 6000000 18000000\ntime nps-eLf 2 12000000 3000000 7000000\n\
        time ps-eo 2 22000000 4000000 14000000\ntime nps-eo 2 9000000 2000000 6000000\n\
        time proc-raw 2 6000000 100000 5000000\ntime nproc-raw 2 1000000 200000 700000\n\
        time nps-start 2 40000 10000 20000\n\
        time ps-ax@fixed 2 18000000 3000000 11000000\ntime nps-ax@fixed 2 6000000 1000000 4000000\n\
        time ps-aux@fixed 2 22000000 4000000 12000000\ntime nps-aux@fixed 2 6000000 1000000 4000000\n\
        time ps-ef@fixed 2 19000000 3000000 11000000\ntime nps-ef@fixed 2 5000000 1000000 3000000\n\
        time ps-eLf@fixed 2 28000000 5000000 17000000\ntime nps-eLf@fixed 2 8000000 2000000 5000000\n\
        time ps-eo@fixed 2 20000000 4000000 12000000\ntime nps-eo@fixed 2 5000000 1000000 3000000\n\
        time proc-raw@fixed 2 5000000 100000 4000000\ntime nproc-raw@fixed 2 900000 100000 600000\n\
        time nps-start@fixed 2 20000 5000 10000\n\
        count sys ps-ax 64000\ncount sys nps-ax 40000\ncount sys ps-aux 72000\n\
        count sys nps-aux 40000\ncount sys ps-ef 66000\ncount sys nps-ef 40000\n\
        count sys ps-eLf 90000\ncount sys nps-eLf 41000\ncount sys ps-eo 70000\n\
        count sys nps-eo 40000\ncount sys proc-raw 24000\ncount sys nproc-raw 300\n\
        count sys nps-start 20\ncount alloc nps-start 30\n\
        count alloc ps-ax 90000\ncount alloc nps-ax 60000\ncount alloc ps-aux 95000\n\
        count alloc nps-aux 60000\ncount alloc ps-ef 92000\ncount alloc nps-ef 60000\n\
        count alloc ps-eLf 120000\ncount alloc nps-eLf 61000\ncount alloc ps-eo 99000\n\
        count alloc nps-eo 60000\ncount alloc proc-raw 30000\ncount alloc nproc-raw 400\n\
        KFAST-VERDICT ok\n";

    #[test]
    fn a_complete_run_passes_and_tabulates() {
        let r = parse(GOOD);
        assert!(
            check(&r, 2, Clock::Host).is_empty(),
            "{:?}",
            check(&r, 2, Clock::Host)
        );
        assert_eq!((r.tasks, r.processes), (5001, 3990));
        let t = table(&r);
        assert!(
            t.contains(LABEL) && t.contains("without lock debugging"),
            "{t}"
        );
        assert!(
            t.contains(
                "| `/bin/ps ax` | 2 | 10000.0 | 2000.0 | 6000.0 | 16.04 (64000) | 22.56 (90000) |"
            ),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-ax / nps-ax: wall 2.5x, user+sys 2.3x"),
            "{t}"
        );
        assert!(t.contains("ratio proc-raw / nproc-raw: wall 6.0x"), "{t}");
        // The other forms: rows and ratios of their own.
        assert!(
            t.contains(
                "| `/bin/ps -eLf` | 2 | 15000.0 | 3000.0 | 9000.0 | 22.56 (90000) | 30.08 (120000) |"
            ),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-aux / nps-aux: wall 3.0x, user+sys 2.6x"),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-ef / nps-ef: wall 3.0x, user+sys 2.7x"),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-eLf / nps-eLf: wall 2.5x, user+sys 2.4x"),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-eLf@fixed / nps-eLf@fixed: wall 3.5x, user+sys 3.1x"),
            "{t}"
        );
        // The fixed layout's rows: no counts, their own ratios.
        assert!(
            t.contains("| `/bin/ps ax` | 2 | 9000.0 | 1500.0 | 5500.0 | - | - |"),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-eo@fixed / nps-eo@fixed: wall 4.0x, user+sys 4.0x"),
            "{t}"
        );
    }

    #[test]
    fn rounds_add_up() {
        // The same two dumps as GOOD's, timed as two rounds of one.
        let split = GOOD.replace(
            "time ps-ax 2 20000000 4000000 12000000\n",
            "time ps-ax 1 12000000 3000000 7000000\ntime ps-ax 1 8000000 1000000 5000000\n",
        );
        let (a, b) = (parse(GOOD), parse(&split));
        assert!(
            check(&b, 2, Clock::Host).is_empty(),
            "{:?}",
            check(&b, 2, Clock::Host)
        );
        assert_eq!(table(&a), table(&b));
        // A missing round shows as a dump count short of the request.
        let short = GOOD.replace(
            "time ps-ax 2 20000000 4000000 12000000\n",
            "time ps-ax 1 12000000 3000000 7000000\n",
        );
        assert_eq!(
            check(&parse(&short), 2, Clock::Host),
            ["ps-ax: 1 dumps, want 2"]
        );
    }

    #[test]
    fn every_missing_step_is_named() {
        assert_eq!(
            check(&parse(GOOD), 3, Clock::Host).len(),
            2 * COMMANDS.len(),
            "dump counts differ"
        );
        let bad = GOOD.replace("time nps-eo@fixed 2 5000000 1000000 3000000\n", "");
        assert_eq!(
            check(&parse(&bad), 2, Clock::Host),
            ["nps-eo@fixed: no numbers"]
        );
        let bad = GOOD.replace("parity eo identical", "parity eo DIFFERS");
        assert_eq!(check(&parse(&bad), 2, Clock::Host).len(), 1);
        let bad = GOOD.replace("threads rc 0:", "threads rc 1:");
        assert_eq!(
            check(&parse(&bad), 2, Clock::Host),
            ["no passing field parity line for the threads scope"]
        );
        let bad = GOOD.replace("field-parity processes", "# field-parity processes");
        assert_eq!(
            check(&parse(&bad), 2, Clock::Host),
            ["no passing field parity line for the processes scope"]
        );
        let bad = GOOD.replace("count alloc nproc-raw 400\n", "");
        assert_eq!(check(&parse(&bad), 2, Clock::Host).len(), 1);
        let bad = GOOD.replace("KFAST-VERDICT ok", "KFAST-VERDICT time nps-ax");
        assert_eq!(
            check(&parse(&bad), 2, Clock::Host),
            ["guest verdict: time nps-ax"]
        );
        let bad = GOOD.replace("time ps-ax 2 20000000 4000000 12000000\n", "");
        assert_eq!(check(&parse(&bad), 2, Clock::Host).len(), 1);
        // The other forms are required as the first two are.
        let bad = GOOD.replace("time nps-aux 2 8000000 2000000 5000000\n", "");
        // Its counts made the row: no timing shows as no dumps.
        assert_eq!(
            check(&parse(&bad), 2, Clock::Host),
            ["nps-aux: 0 dumps, want 2"]
        );
        let bad = GOOD.replace("time ps-ef@fixed 2 19000000 3000000 11000000\n", "");
        assert_eq!(
            check(&parse(&bad), 2, Clock::Host),
            ["ps-ef@fixed: no numbers"]
        );
        let bad = GOOD.replace("count sys ps-eLf 90000\n", "");
        assert_eq!(
            check(&parse(&bad), 2, Clock::Host),
            ["ps-eLf: no syscall or allocation count"]
        );
        let bad = GOOD.replace("count alloc nps-eLf 61000\n", "");
        assert_eq!(
            check(&parse(&bad), 2, Clock::Host),
            ["nps-eLf: no syscall or allocation count"]
        );
    }

    /// What the instruction clock's boot sends: population, source, one
    /// line per command and round, the verdict.
    const ICOUNT: &str = "population 5001 tasks 3990 processes\n\
        nps-source nproc (the default)\n\
        time ps-ax 1 196000 90000 105000\ntime nps-ax 1 10000 8000 2000\n\
        time ps-aux 1 230000 110000 120000\ntime nps-aux 1 11500 9000 2000\n\
        time ps-ef 1 200000 95000 105000\ntime nps-ef 1 10000 8000 2000\n\
        time ps-eLf 1 260000 120000 140000\ntime nps-eLf 1 13000 10000 3000\n\
        time ps-eo 1 205000 111000 94000\ntime nps-eo 1 10500 5000 5000\n\
        time proc-raw 1 37000 1000 36000\ntime nproc-raw 1 7400 1000 6000\n\
        time nps-start 1 300 200 0\nKFAST-VERDICT ok\n";

    #[test]
    fn the_instruction_clock_needs_only_its_timings() {
        let r = parse(ICOUNT);
        assert!(check(&r, 1, Clock::Instructions).is_empty());
        // The host's clock would miss parity, the fixed layout and counts.
        assert_eq!(check(&r, 1, Clock::Host).len(), 4 + 2 * COMMANDS.len());
        let t = instruction_table(&r);
        assert!(t.contains(ICOUNT_LABEL), "{t}");
        // 205,000 us = 205 M instructions, 51,378 per process.
        assert!(t.contains("| `/bin/ps -eo pid,tid,ppid,uid,stat,vsz,rss,time,nlwp,comm,wchan` | 1 | 205.00 | 51378 |"), "{t}");
        assert!(
            t.contains("ratio ps-eo / nps-eo: instructions 19.5x"),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-ax / nps-ax: instructions 19.6x"),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-aux / nps-aux: instructions 20.0x"),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-ef / nps-ef: instructions 20.0x"),
            "{t}"
        );
        assert!(
            t.contains("ratio ps-eLf / nps-eLf: instructions 20.0x"),
            "{t}"
        );
        let short = ICOUNT.replace("time nps-eo 1 10500 5000 5000\n", "");
        assert_eq!(
            check(&parse(&short), 1, Clock::Instructions),
            ["nps-eo: no numbers"]
        );
        let short = ICOUNT.replace("time ps-eLf 1 260000 120000 140000\n", "");
        assert_eq!(
            check(&parse(&short), 1, Clock::Instructions),
            ["ps-eLf: no numbers"]
        );
    }

    /// The guest's `each()` in the init script, as (label, command line
    /// with `$EO` spelled out).
    fn guest_commands() -> Vec<(String, String)> {
        let script = include_str!("../../guest/nproc-bench-init.sh");
        let body = script
            .split("\neach() {\n")
            .nth(1)
            .and_then(|b| b.split("\n}\n").next())
            .expect("each() in the init script");
        body.lines()
            .filter_map(|l| l.trim().strip_prefix("$f \"$@\" "))
            .map(|l| {
                let (label, cmd) = l.split_once(' ').expect("label and command");
                let eo = "pid,tid,ppid,uid,stat,vsz,rss,time,nlwp,comm,wchan";
                (label.to_string(), cmd.replace("$EO", eo))
            })
            .collect()
    }

    #[test]
    fn the_guest_runs_every_command_in_table_order() {
        let guest = guest_commands();
        let labels: Vec<&str> = guest.iter().map(|(l, _)| l.as_str()).collect();
        let want: Vec<&str> = COMMANDS.iter().map(|(l, _)| *l).collect();
        assert_eq!(labels, want);
        // /bin/ps as the table says; nps with the same arguments.
        for ((label, cmd), (_, what)) in guest.iter().zip(COMMANDS) {
            if what.starts_with(PROCPS) {
                assert_eq!(cmd, what, "{label}");
            }
            if let Some(form) = label.strip_prefix("nps-").filter(|f| *f != "start") {
                let ps = guest.iter().find(|(l, _)| *l == format!("ps-{form}"));
                let ps = ps.expect("a ps row for every nps form").1.as_str();
                assert_eq!(
                    cmd.strip_prefix("/bin/nps"),
                    ps.strip_prefix(PROCPS),
                    "{label}"
                );
            }
        }
    }

    #[test]
    fn every_form_has_its_ratio() {
        for (label, _) in COMMANDS {
            if let Some(form) = label.strip_prefix("ps-") {
                let nps = format!("nps-{form}");
                assert!(PAIRS.contains(&(label, nps.as_str())), "{label}");
            }
        }
        for (a, b) in PAIRS {
            for l in [a, b] {
                assert!(COMMANDS.iter().any(|(c, _)| *c == l), "{l}");
            }
        }
    }

    #[test]
    fn the_results_file_has_every_row() {
        let v = record(&parse(GOOD), &parse(ICOUNT));
        let rows = |clock: &str| v[clock]["rows"].as_array().expect("rows").clone();
        let (host, icount) = (rows("host_clock"), rows("instruction_clock"));
        assert_eq!((host.len(), icount.len()), (26, 13));
        let ps_elf = host
            .iter()
            .find(|r| r["label"] == "ps-eLf@fixed")
            .expect("ps-eLf@fixed");
        assert_eq!(ps_elf["runs"], "/bin/ps -eLf");
        assert_eq!(ps_elf["randomization_off"], true);
        assert_eq!(ps_elf["wall_us"], 28_000_000);
        let nps_aux = icount
            .iter()
            .find(|r| r["label"] == "nps-aux")
            .expect("nps-aux");
        assert_eq!(nps_aux["runs"], "nps aux");
    }

    #[test]
    fn ldd_lines() {
        let ldd = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                   \tlibproc2.so.0 => /lib/x86_64-linux-gnu/libproc2.so.0 (0x00007f)\n\
                   \t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n";
        assert_eq!(
            ldd_paths(ldd),
            [
                "/lib/x86_64-linux-gnu/libproc2.so.0",
                "/lib64/ld-linux-x86-64.so.2"
            ]
        );
    }
}
