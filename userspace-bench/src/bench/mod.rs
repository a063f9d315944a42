//! `kallsyms-bench bench`: every algorithm on the same table and the same
//! address streams, in one run, reported as ns/op and as a ratio against the
//! mainline 6.12 port. The module workload adds the sorted-symtab baseline
//! (`kallsyms_mirror::sorted_symtab`) and each module algorithm's
//! extra bytes and load-time build.

mod counters;
mod layouts;
mod record;
mod report;
mod timing;
mod workloads;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kallsyms_mirror::fast::module_index::module_index_capacity;
use kallsyms_mirror::fast::{build_module_index, ModEntry};
use kallsyms_mirror::format::SymbolBuf;
use kallsyms_mirror::mirror::{Algo, Mirror, MirrorModule};
use kallsyms_mirror::module::{MemRegion, ModuleLayout, MOD_TEXT};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::sorted_symtab::{sort_symtab, sorted_symtab_capacity};

use kallsyms_mirror::parse::{read_capped, ProcKallsyms, KALLSYMS_CAP};

use crate::blaze::Blaze;
use crate::load::{load, Loaded};
use layouts::{Layout, Layouts};
use report::ModuleCost;
pub use report::{Report, Workload};
use timing::{measure, Case};
use workloads::Rng;

/// The embedded fallback table: `/proc/kallsyms` of the machine this project
/// was developed on (Linux 6.18.44 x86_64 SMP, 122,132 symbols, no modules),
/// captured as root and gzip-compressed.
const SAMPLE: &[u8] = include_bytes!("../../data/sample-kallsyms.gz");

/// Options of the subcommand.
pub struct Options {
    /// Machine root (`/` for the live machine).
    pub root: PathBuf,
    /// Print JSON instead of a table.
    pub json: bool,
    /// Fewer operations and rounds, for a smoke run.
    pub quick: bool,
    /// Where to write the run as a dated JSON file (see [`record_dir`]).
    pub record: Option<PathBuf>,
}

/// Where a run is recorded: `--results DIR`, or for a full run (not
/// `--quick`, not `--no-record`) this checkout's `bench/results/`.
pub fn record_dir(results: Option<PathBuf>, no_record: bool, quick: bool) -> Option<PathBuf> {
    if no_record {
        return None;
    }
    if results.is_some() {
        return results;
    }
    if quick {
        return None;
    }
    let dir = record::default_dir();
    if dir.is_none() {
        eprintln!(
            "kallsyms-bench: not recording this run: no bench/results/ beside the sources \
             (--results DIR names one)"
        );
    }
    dir
}

/// Where the benchmarked table came from.
struct Source {
    /// Description for the report.
    label: String,
    /// The kallsyms file, for blazesym (which reads a path).
    path: PathBuf,
    /// Keeps the private directory holding the unpacked sample alive;
    /// removed, with the sample, when the run ends.
    _sample_dir: Option<tempfile::TempDir>,
}

/// Loads the root, or the embedded sample when the live table is unusable.
///
/// The sample is unpacked into a fresh private directory (`tempfile`: a
/// random name, mode 0700, created with `O_EXCL` semantics) that is removed
/// when the run ends, never under a predictable name another user could
/// plant a symlink at.
fn load_or_sample(opts: &Options) -> Result<(Loaded, Source), String> {
    match load(&opts.root) {
        Ok(l) => {
            let path = opts.root.join("proc/kallsyms");
            let label = path.display().to_string();
            Ok((
                l,
                Source {
                    label,
                    path,
                    _sample_dir: None,
                },
            ))
        }
        Err(e) if opts.root == Path::new("/") => {
            eprintln!("kallsyms-bench: {e}");
            eprintln!("kallsyms-bench: using the embedded sample table instead (see --help)");
            let dir = tempfile::Builder::new()
                .prefix("kallsyms-bench-sample-")
                .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
                .tempdir()
                .map_err(|e| format!("creating a temporary directory: {e}"))?;
            let proc = dir.path().join("proc");
            std::fs::create_dir(&proc).map_err(|e| format!("{}: {e}", proc.display()))?;
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(SAMPLE)
                .read_to_end(&mut text)
                .map_err(|e| format!("embedded sample: {e}"))?;
            let path = proc.join("kallsyms");
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .and_then(|mut f| f.write_all(&text))
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let l = load(dir.path())?;
            Ok((
                l,
                Source {
                    label: "embedded sample (Linux 6.18.44 x86_64, 122k symbols)".into(),
                    path,
                    _sample_dir: Some(dir),
                },
            ))
        }
        Err(e) => Err(e),
    }
}

/// The largest module, or a synthetic 60k-function one added to a copy of
/// the mirror when the machine has no module of at least 10,000 symbols.
fn big_module(l: &Loaded, rng: &mut Rng) -> Result<(Mirror, usize, bool), String> {
    let mut modules: Vec<MirrorModule> = l.mirror.modules().to_vec();
    if let Some((i, _)) = modules
        .iter()
        .enumerate()
        .max_by_key(|(_, m)| m.symtab_len())
    {
        if modules[i].symtab_len() >= 10_000 {
            let m = Mirror::new(l.mirror.tables().clone(), modules).map_err(|e| e.to_string())?;
            return Ok((m, i, false));
        }
    }
    let (syms, base, size) =
        workloads::synthetic_module(l.mirror.tables().sections.end, 60_000, rng);
    let mut layout = ModuleLayout::default();
    layout[MOD_TEXT] = MemRegion { base, size };
    modules.insert(0, MirrorModule::new(b"ksym_many", &syms, layout));
    let m = Mirror::new(l.mirror.tables().clone(), modules).map_err(|e| e.to_string())?;
    Ok((m, 0, true))
}

/// Parse time of the same kallsyms text, copied to a regular file so that
/// the kernel's cost of generating /proc/kallsyms is not counted: our
/// parser (read + parse) and blazesym's symbolizer creation (which reads
/// and parses on first use). Median of `rounds`.
///
/// The copy holds real kernel addresses when run as root, so it is a
/// `tempfile` (random name, `O_EXCL`, mode 0600), removed when this returns
/// or fails.
fn parse_race(kallsyms: &Path, rounds: usize) -> Result<(Duration, Option<Duration>), String> {
    let text = read_capped(kallsyms, KALLSYMS_CAP).map_err(|e| e.to_string())?;
    let mut copy = tempfile::Builder::new()
        .prefix("kallsyms-bench-copy-")
        .tempfile()
        .map_err(|e| format!("creating a temporary file: {e}"))?;
    copy.write_all(&text)
        .and_then(|()| copy.flush())
        .map_err(|e| format!("{}: {e}", copy.path().display()))?;
    let copy_path = copy.path();
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let parsed = ProcKallsyms::read(copy_path).map_err(|e| e.to_string())?;
        ours.push(t.elapsed());
        std::hint::black_box(parsed);
        let t = Instant::now();
        if let Ok(b) = Blaze::new(copy_path) {
            theirs.push(t.elapsed());
            std::hint::black_box(b);
        }
    }
    let blaze = (!theirs.is_empty()).then(|| median(theirs));
    Ok((median(ours), blaze))
}

/// Runs the benchmark and prints the report.
pub fn run(opts: &Options) -> Result<(), String> {
    let load_before = record::loadavg();
    let (loaded, source) = load_or_sample(opts)?;
    let kallsyms_path = &source.path;
    let m = &loaded.mirror;
    let core = &loaded.machine.core;
    let n = m.tables().offsets.len();
    let (rounds, ops, linear_ops) = if opts.quick {
        (5, 5_000, 20)
    } else {
        (7, 50_000, 200)
    };
    let mut rng = Rng::new(0x6b61_6c6c_7379_6d73);

    eprintln!(
        "kallsyms-bench: {n} symbols from {}; blazesym parsing the same file...",
        source.label
    );
    let (ours_parse, blaze_parse) = parse_race(kallsyms_path, 5)?;
    let blaze = Blaze::new(kallsyms_path);
    if let Err(e) = &blaze {
        eprintln!("kallsyms-bench: blazesym unavailable: {e}");
    }
    let blaze = blaze.ok();

    let mut report = Report::new(
        &source.label,
        &loaded,
        ours_parse,
        blaze.as_ref().and(blaze_parse),
    );
    let uniform = workloads::uniform_text(m, ops, &mut rng);
    let wchan = workloads::wchan_mix(m, core, 64, ops, &mut rng);
    let names = workloads::names(core, ops, &mut rng);
    // Patch 5's in-kernel streams, repeated as the in-kernel bench repeats
    // its passes, to about as many lookups per round as the others.
    let (kcore, kzipf) = workloads::kernel_streams(m);
    let passes = (ops / workloads::KERNEL_STREAM).max(1);
    let kcore = kcore.repeat(passes);
    let kzipf = kzipf.repeat(passes);
    let ab = Layouts::new(m, &[&uniform, &kcore, &kzipf])?;

    eprintln!("kallsyms-bench: uniform text addresses...");
    report.push(address_workload(
        "uniform text addresses",
        m,
        &uniform,
        linear_ops,
        rounds,
        Also {
            blaze: blaze.as_ref(),
            layouts: Some(&ab),
        },
        false,
    ));
    eprintln!("kallsyms-bench: in-kernel streams...");
    report.push(address_workload(
        "in-kernel stream: core-uniform (patch 5's 4,096 addresses, in table order)",
        m,
        &kcore,
        linear_ops,
        rounds,
        Also {
            blaze: None,
            layouts: Some(&ab),
        },
        false,
    ));
    report.push(address_workload(
        "in-kernel stream: core-zipf (patch 5's wchan draws over 64 functions)",
        m,
        &kzipf,
        linear_ops,
        rounds,
        Also {
            blaze: None,
            layouts: Some(&ab),
        },
        true,
    ));
    eprintln!("kallsyms-bench: wchan mix...");
    report.push(address_workload(
        "wchan mix (Zipf over 64 functions, 10% cold)",
        m,
        &wchan,
        linear_ops,
        rounds,
        Also {
            blaze: blaze.as_ref(),
            layouts: Some(&ab),
        },
        true,
    ));
    eprintln!("kallsyms-bench: large module...");
    let (mm, mi, synthetic) = big_module(&loaded, &mut rng)?;
    let mod_addrs = workloads::module_text(&mm, mi, ops, &mut rng);
    let label = format!(
        "module text ({} symbols{})",
        mm.modules()[mi].symtab_len(),
        if synthetic { ", synthetic" } else { "" }
    );
    report.push(module_workload(
        &label,
        &mm,
        mi,
        &mod_addrs,
        (ops / 50).max(20),
        rounds,
    ));
    eprintln!("kallsyms-bench: name -> address...");
    report.push(name_workload(m, &names, rounds, blaze.as_ref()));

    if opts.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", report.table());
    }
    if let Some(dir) = &opts.record {
        let path = record::write(dir, &report, load_before)?;
        eprintln!("kallsyms-bench: recorded in {}", path.display());
    }
    Ok(())
}

fn resolve_case<'a>(
    name: &'static str,
    m: &'a Mirror,
    addrs: &'a [u64],
    algo: Algo,
    ops: usize,
) -> Case<'a> {
    let mut buf = NameBuf::new();
    // Built once, as the kernel's indexes are.
    let cores = m.cores();
    Case {
        name,
        ops: ops.min(addrs.len()),
        run: Box::new(move |k| {
            let mut sum = 0u64;
            for &a in &addrs[..k] {
                if let Some(r) = m.resolve_with(&cores, algo, a, &mut buf) {
                    sum = sum.wrapping_add(r.offset ^ buf.len() as u64);
                }
            }
            sum
        }),
    }
}

fn wchan_case<'a>(
    name: &'static str,
    m: &'a Mirror,
    addrs: &'a [u64],
    algo: Algo,
    ops: usize,
) -> Case<'a> {
    let mut buf = NameBuf::new();
    let mut out = SymbolBuf::new();
    let cores = m.cores();
    Case {
        name,
        ops: ops.min(addrs.len()),
        run: Box::new(move |k| {
            let mut sum = 0u64;
            for &a in &addrs[..k] {
                m.wchan_with(&cores, algo, a, &mut buf, &mut out);
                sum = sum.wrapping_add(out.as_bytes().len() as u64);
            }
            sum
        }),
    }
}

fn blaze_cases<'a>(b: &'a Blaze, addrs: &'a [u64]) -> Vec<Case<'a>> {
    vec![
        Case {
            name: "blazesym (batch)",
            ops: addrs.len(),
            run: Box::new(move |k| b.symbolize_batch(&addrs[..k]).1),
        },
        Case {
            name: "blazesym (one by one)",
            ops: addrs.len() / 10,
            run: Box::new(move |k| {
                addrs[..k]
                    .iter()
                    .map(|&a| b.symbolize_one(a).map_or(0, |(_, o)| o))
                    .sum()
            }),
        },
    ]
}

/// What an address workload runs beside the mainline and fast rows.
#[derive(Clone, Copy)]
struct Also<'a> {
    /// blazesym's rows.
    blaze: Option<&'a Blaze>,
    /// The address index layouts' core-only rows.
    layouts: Option<&'a Layouts<'a>>,
}

fn address_workload(
    title: &str,
    m: &Mirror,
    addrs: &[u64],
    linear_ops: usize,
    rounds: usize,
    also: Also<'_>,
    wchan: bool,
) -> Workload {
    let Also { blaze, layouts } = also;
    let ops = addrs.len();
    let mut cases = if wchan {
        vec![
            wchan_case("2.6.9 linear scan", m, addrs, Algo::Linear, linear_ops),
            wchan_case("mainline 6.12", m, addrs, Algo::Mainline, ops),
            wchan_case("kallsyms-fast", m, addrs, Algo::Fast, ops),
            wchan_case("kallsyms-fast + wchan cache", m, addrs, Algo::Cached, ops),
        ]
    } else {
        vec![
            resolve_case("2.6.9 linear scan", m, addrs, Algo::Linear, linear_ops),
            resolve_case("mainline 6.12", m, addrs, Algo::Mainline, ops),
            resolve_case("kallsyms-fast", m, addrs, Algo::Fast, ops),
        ]
    };
    if let Some(ls) = layouts {
        cases.extend(Layout::ALL.map(|l| layout_case(ls, l, addrs)));
    }
    if let Some(b) = blaze {
        cases.extend(blaze_cases(b, addrs));
    }
    let samples = measure(&mut cases, rounds);
    let mut w = Workload::from_samples(title, &cases, &samples);
    if let Some(ls) = layouts {
        for l in Layout::ALL {
            w.set_bytes_per_symbol(l.row(), ls.bytes_per_symbol(l));
        }
    }
    w
}

/// The core lookup alone (no module or wchan step) through one address
/// index layout, for the same-process A/B rows.
fn layout_case<'a>(ls: &'a Layouts<'a>, l: Layout, addrs: &'a [u64]) -> Case<'a> {
    let mut buf = [0u8; kallsyms_mirror::KSYM_NAME_LEN];
    Case {
        name: l.row(),
        ops: addrs.len(),
        run: Box::new(move |k| {
            let mut sum = 0u64;
            for &a in &addrs[..k] {
                if let Some((p, n)) = ls.lookup(l, a, &mut buf) {
                    sum = sum.wrapping_add(p.offset ^ n as u64);
                }
            }
            sum
        }),
    }
}

/// Row name of the sorted-symtab baseline ([`Algo::Sorted`]).
const SORTED: &str = "sorted symtab baseline";

/// Module `mi`'s addresses: the stock scan, the per-module index (with and
/// without the wchan cache) and the sorted-symtab baseline, on the same
/// stream; then what each costs per module: extra bytes, and the build at
/// module load timed on module `mi` (median of `rounds`).
fn module_workload(
    title: &str,
    m: &Mirror,
    mi: usize,
    addrs: &[u64],
    slow_ops: usize,
    rounds: usize,
) -> Workload {
    let mut cases = vec![
        resolve_case("mainline 6.12", m, addrs, Algo::Mainline, slow_ops),
        resolve_case("kallsyms-fast", m, addrs, Algo::Fast, addrs.len()),
        wchan_case(
            "kallsyms-fast + wchan cache",
            m,
            addrs,
            Algo::Cached,
            addrs.len(),
        ),
        resolve_case(SORTED, m, addrs, Algo::Sorted, addrs.len()),
    ];
    let samples = measure(&mut cases, rounds);
    let mut w = Workload::from_samples(title, &cases, &samples);
    if let Some(module) = m.modules().get(mi) {
        let (index_ns, sort_ns) = load_costs(module, rounds);
        let index = ModuleCost {
            extra_bytes: module.index_bytes() as u64,
            mirror_bytes: None,
            load_ns: index_ns,
        };
        w.set_cost(
            "mainline 6.12",
            ModuleCost {
                extra_bytes: 0,
                mirror_bytes: None,
                load_ns: 0.0,
            },
        );
        w.set_cost("kallsyms-fast", index);
        w.set_cost("kallsyms-fast + wchan cache", index);
        // The patch reorders the module's own symtab: nothing is added.
        w.set_cost(
            SORTED,
            ModuleCost {
                extra_bytes: 0,
                mirror_bytes: Some(module.sorted_copy_bytes() as u64),
                load_ns: sort_ns,
            },
        );
    }
    w
}

/// The load-time work of the two module structures, on `module`'s symtab,
/// median of `rounds` fresh builds each, ns: the per-module index
/// (`build_module_index()`: collect, sort, drop aliases) and the sorted
/// symtab (`sort_symtab()`: collect, sort). Both write into a buffer
/// allocated beforehand, so neither time includes an allocation (the
/// kernel's index allocates its array; the patch needs none).
fn load_costs(module: &MirrorModule, rounds: usize) -> (f64, f64) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let symtab = &module.symtab;
    let mut index = vec![ModEntry::default(); module_index_capacity(symtab)];
    let mut sorted = vec![ModEntry::default(); sorted_symtab_capacity(symtab)];
    let (mut index_ns, mut sort_ns) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        std::hint::black_box(build_module_index(symtab, &mut index));
        index_ns.push(t.elapsed().as_nanos() as f64);
        let t = Instant::now();
        std::hint::black_box(sort_symtab(symtab, &mut sorted));
        sort_ns.push(t.elapsed().as_nanos() as f64);
    }
    (median(index_ns), median(sort_ns))
}

fn name_workload(m: &Mirror, names: &[Vec<u8>], rounds: usize, blaze: Option<&Blaze>) -> Workload {
    let mut cases = Vec::new();
    for (label, algo) in [
        ("mainline 6.12", Algo::Mainline),
        ("kallsyms-fast", Algo::Fast),
    ] {
        let mut buf = NameBuf::new();
        let cores = m.cores();
        cases.push(Case {
            name: label,
            ops: names.len(),
            run: Box::new(move |k| {
                names[..k]
                    .iter()
                    .map(|n| m.lookup_name_with(&cores, algo, n, &mut buf))
                    .fold(0, u64::wrapping_add)
            }),
        });
    }
    if let Some(b) = blaze.filter(|b| b.supports_name_lookup()) {
        let strs: Vec<String> = names
            .iter()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect();
        cases.push(Case {
            name: "blazesym",
            ops: names.len(),
            run: Box::new(move |k| {
                strs[..k]
                    .iter()
                    .map(|n| b.lookup_name(n).unwrap_or(0))
                    .fold(0, u64::wrapping_add)
            }),
        });
    }
    let samples = measure(&mut cases, rounds);
    Workload::from_samples("name -> address", &cases, &samples)
}

/// The address stream `kallsyms-bench profile` runs over: one of the
/// benchmark's workloads (`--stream`, spelled as the variant in kebab
/// case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Stream {
    /// uniform text addresses
    Uniform,
    /// the wchan mix
    Wchan,
    /// the wchan mix's repeated addresses
    WchanHot,
    /// the wchan mix's once-drawn addresses
    WchanCold,
    /// patch 5's core-uniform
    KernelCore,
    /// patch 5's core-zipf
    KernelZipf,
    /// name -> address, with mainline or fast
    Names,
}

/// The lookup `kallsyms-bench profile` runs (`--algo`, spelled as the
/// variant in lower case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProfileAlgo {
    /// the mainline 6.12 algorithm
    Mainline,
    /// kallsyms-fast
    Fast,
    /// wchan through kallsyms-fast's cache
    Cached,
    /// core-only index layout: the kernel crate's index
    Current,
    /// core-only index layout: 16-ary search tree
    Tree,
    /// core-only index layout: equal address buckets
    Buckets,
}

/// The command-line spelling of a [`clap::ValueEnum`] value.
fn spelling(v: &impl clap::ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

/// Options of `kallsyms-bench profile`.
pub struct ProfileOptions {
    /// Machine root, as for `bench`.
    pub root: PathBuf,
    /// The address stream; [`Stream::Names`] takes `mainline` or `fast`
    /// only.
    pub stream: Stream,
    /// The lookup.
    pub algo: ProfileAlgo,
    /// Lookups to run (cycling over the stream); 0 runs only the setup, to
    /// subtract it.
    pub ops: usize,
    /// Chain the lookups: each one's input depends on the previous one's
    /// result, so that none overlaps the next.
    pub chain: bool,
}

/// `kallsyms-bench profile`: one algorithm over one of the benchmark's
/// streams and nothing else, for counters that do not depend on the
/// host's load (`valgrind --tool=callgrind --toggle-collect='*profile_loop*'
/// --cache-sim=yes`, or `perf stat` where the host has counters): the
/// timed lookups all run inside [`profile_loop`]. One untimed pass over
/// the stream first, as the benchmark's warm-up round.
pub fn profile(o: &ProfileOptions) -> Result<(), String> {
    let (loaded, source) = load_or_sample(&Options {
        root: o.root.clone(),
        json: false,
        quick: true,
        record: None,
    })?;
    let m = &loaded.mirror;
    // The benchmark's draws, in its order, from its seed.
    let mut rng = Rng::new(0x6b61_6c6c_7379_6d73);
    let uniform = workloads::uniform_text(m, 50_000, &mut rng);
    let wchan = workloads::wchan_mix(m, &loaded.machine.core, 64, 50_000, &mut rng);
    // The name -> address workload's names (drawn next, as `bench` draws
    // them); the `names` stream is their indexes.
    let names = workloads::names(&loaded.machine.core, 50_000, &mut rng);
    let name_idx: Vec<u64> = (0..names.len() as u64).collect();
    let (kcore, kzipf) = workloads::kernel_streams(m);
    let parts;
    let addrs: &[u64] = match o.stream {
        Stream::Uniform => &uniform,
        Stream::Wchan => &wchan,
        Stream::WchanHot => {
            parts = wchan_parts(&wchan);
            &parts.0
        }
        Stream::WchanCold => {
            parts = wchan_parts(&wchan);
            &parts.1
        }
        Stream::Names => &name_idx,
        Stream::KernelCore => &kcore,
        Stream::KernelZipf => &kzipf,
    };
    let ab = Layouts::new(m, &[addrs])?;
    let mut buf = NameBuf::new();
    let mut out = SymbolBuf::new();
    let names_stream = o.stream == Stream::Names;
    if names_stream && !matches!(o.algo, ProfileAlgo::Mainline | ProfileAlgo::Fast) {
        return Err(format!(
            "the names stream takes mainline or fast, not {:?}",
            spelling(&o.algo)
        ));
    }
    let names = &names;
    let cores = m.cores();
    let cores = &cores;
    let mut one: Box<dyn FnMut(u64) -> u64> = match o.algo {
        ProfileAlgo::Mainline | ProfileAlgo::Fast if names_stream => {
            let algo = if o.algo == ProfileAlgo::Fast {
                Algo::Fast
            } else {
                Algo::Mainline
            };
            Box::new(move |i| m.lookup_name_with(cores, algo, &names[i as usize], &mut buf))
        }
        // The offset and the name's length: a chained lookup waits for
        // the name too.
        ProfileAlgo::Mainline | ProfileAlgo::Fast => {
            let algo = if o.algo == ProfileAlgo::Fast {
                Algo::Fast
            } else {
                Algo::Mainline
            };
            Box::new(move |a| {
                let offset = m
                    .resolve_with(cores, algo, a, &mut buf)
                    .map_or(0, |r| r.offset);
                offset ^ buf.len() as u64
            })
        }
        ProfileAlgo::Cached => Box::new(|a| {
            m.wchan_with(cores, Algo::Cached, a, &mut buf, &mut out);
            out.as_bytes().len() as u64
        }),
        ProfileAlgo::Current => layout_lookup(&ab, Layout::Current),
        ProfileAlgo::Tree => layout_lookup(&ab, Layout::Tree),
        ProfileAlgo::Buckets => layout_lookup(&ab, Layout::Buckets),
    };
    let warm = addrs.iter().fold(0u64, |s, &a| s.wrapping_add(one(a)));
    let t = Instant::now();
    let sum = profile_loop(addrs, o.ops, o.chain, &mut one);
    let ns = t.elapsed().as_nanos() as f64 / o.ops.max(1) as f64;
    eprintln!(
        "kallsyms-bench profile: {} lookups of {} over the {} stream ({} addresses) of {}{}: {ns:.1} ns each, wall time (checksum {:x})",
        o.ops,
        spelling(&o.algo),
        spelling(&o.stream),
        addrs.len(),
        source.label,
        if o.chain { ", chained" } else { "" },
        warm ^ sum
    );
    Ok(())
}

/// `profile`'s lookup of one core-only index layout: the symbol's offset.
fn layout_lookup<'a>(ab: &'a Layouts<'a>, l: Layout) -> Box<dyn FnMut(u64) -> u64 + 'a> {
    let mut raw = [0u8; kallsyms_mirror::KSYM_NAME_LEN];
    Box::new(move |a| ab.lookup(l, a, &mut raw).map_or(0, |(p, _)| p.offset))
}

/// The wchan mix's two parts, each in stream order: its hot functions'
/// draws (addresses drawn more than once) and its cold tenth (uniform
/// text addresses, which practically never repeat).
fn wchan_parts(wchan: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let mut seen = std::collections::HashMap::<u64, usize>::new();
    for &a in wchan {
        *seen.entry(a).or_default() += 1;
    }
    wchan
        .iter()
        .partition(|a| seen.get(a).is_some_and(|&n| n > 1))
}

/// The profiled lookups: `ops` of `one`, cycling over `addrs`. Never
/// inlined, so that a profiler can count inside it alone. With `chain`,
/// each input carries a data dependency on the previous result (masked
/// by a zero the compiler cannot see), so the processor cannot start a
/// lookup before the one before it has finished.
#[inline(never)]
fn profile_loop(addrs: &[u64], ops: usize, chain: bool, one: &mut dyn FnMut(u64) -> u64) -> u64 {
    let mask = std::hint::black_box(0u64);
    let (mut sum, mut last) = (0u64, 0u64);
    for &a in addrs.iter().cycle().take(ops) {
        last = if chain {
            one(a | (last & mask))
        } else {
            one(a)
        };
        sum = sum.wrapping_add(last);
    }
    std::hint::black_box(sum)
}
