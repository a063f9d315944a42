//! The benchmark report: a human table and the same data as JSON.

use std::fmt::Write;
use std::time::Duration;

use serde::Serialize;

use super::counters::Counters;
use super::timing::{Case, Samples};
use crate::load::Loaded;

/// One algorithm's result in one workload.
#[derive(Serialize)]
pub struct Row {
    /// Algorithm.
    pub algo: String,
    /// Operations timed per round.
    pub ops_per_round: usize,
    /// Median ns per operation.
    pub ns_per_op: f64,
    /// Speed-up against mainline 6.12 (mainline ns / this ns); > 1 is faster.
    pub vs_mainline: f64,
    /// Median thread CPU time per op: the wall clock minus the time spent
    /// waiting for a CPU on a shared host.
    pub cpu_ns_per_op: f64,
    /// Mainline's CPU ns / this CPU ns.
    pub cpu_vs_mainline: f64,
    /// Module workload only: bytes the algorithm adds to the kernel for the
    /// module (its per-module structure; the wchan cache is global and not
    /// counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_bytes: Option<u64>,
    /// Module workload only: bytes this userspace mirror spends for the
    /// same structure, where it differs from `extra_bytes` (the sorted
    /// symtab baseline sorts the kernel's own symtab, but a copy here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror_bytes: Option<u64>,
    /// Module workload only: time to build the structure when the module
    /// loads (median of the workload's rounds), ns; 0 for none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_ns: Option<f64>,
    /// The address index's extra bytes per core symbol (layout A/B rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_bytes_per_symbol: Option<f64>,
    /// Median user-mode instructions per op, where the host has counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions_per_op: Option<f64>,
    /// Median last-level cache misses per op, where the host has counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_misses_per_op: Option<f64>,
}

/// What an algorithm costs per module, besides its lookups.
#[derive(Clone, Copy, Debug)]
pub struct ModuleCost {
    /// Extra bytes in the kernel.
    pub extra_bytes: u64,
    /// Bytes of the mirror's structure, when not `extra_bytes`.
    pub mirror_bytes: Option<u64>,
    /// Load-time build, ns.
    pub load_ns: f64,
}

/// One workload.
#[derive(Serialize)]
pub struct Workload {
    /// What the stream is.
    pub name: String,
    /// Rounds per algorithm.
    pub rounds: usize,
    /// One row per algorithm.
    pub rows: Vec<Row>,
}

impl Workload {
    /// Builds the rows from measured samples.
    pub fn from_samples(name: &str, cases: &[Case<'_>], samples: &[Samples]) -> Self {
        let medians: Vec<f64> = samples.iter().map(Samples::median).collect();
        let cpu: Vec<f64> = samples.iter().map(Samples::cpu_median).collect();
        let main_at = cases.iter().position(|c| c.name == "mainline 6.12");
        let main = main_at.map_or(f64::NAN, |i| medians[i]);
        let cpu_main = main_at.map_or(f64::NAN, |i| cpu[i]);
        let rows = cases
            .iter()
            .zip(medians.iter().zip(cpu.iter()))
            .zip(samples.iter().map(Samples::counts_median))
            .map(|((c, (&ns, &cpu_ns)), counts)| Row {
                algo: c.name.to_string(),
                ops_per_round: c.ops,
                ns_per_op: ns,
                vs_mainline: main / ns,
                cpu_ns_per_op: cpu_ns,
                cpu_vs_mainline: cpu_main / cpu_ns,
                extra_bytes: None,
                mirror_bytes: None,
                load_ns: None,
                index_bytes_per_symbol: None,
                instructions_per_op: counts.map(|c| c.0),
                cache_misses_per_op: counts.map(|c| c.1),
            })
            .collect();
        Self {
            name: name.to_string(),
            rounds: samples.first().map_or(0, |s| s.0.len()),
            rows,
        }
    }

    /// Records the per-module costs of the row named `algo`.
    pub fn set_bytes_per_symbol(&mut self, algo: &str, bytes: f64) {
        for r in self.rows.iter_mut().filter(|r| r.algo == algo) {
            r.index_bytes_per_symbol = Some(bytes);
        }
    }

    pub fn set_cost(&mut self, algo: &str, cost: ModuleCost) {
        for r in self.rows.iter_mut().filter(|r| r.algo == algo) {
            r.extra_bytes = Some(cost.extra_bytes);
            r.mirror_bytes = cost.mirror_bytes;
            r.load_ns = Some(cost.load_ns);
        }
    }
}

/// The whole report.
#[derive(Serialize)]
pub struct Report {
    /// Where the table came from.
    pub source: String,
    /// Core symbols.
    pub symbols: usize,
    /// Modules with symbols.
    pub modules: usize,
    /// Whether every module's bounds came from a `module_layout` capture
    /// (otherwise estimated: sizes of a region's last symbol may differ).
    pub exact_module_layout: bool,
    /// Loading the machine: reading /proc/kallsyms (the kernel generates
    /// it on read), /proc/modules and sysfs, and parsing them, ms.
    pub load_ms: f64,
    /// Reading and parsing a copy of the kallsyms text in a regular file
    /// (median of 5), ms.
    pub parse_ms: f64,
    /// blazesym's symbolizer creation plus first lookup (it parses then) on
    /// the same copy (median of 5), ms.
    pub blazesym_parse_ms: Option<f64>,
    /// Re-encoding the core table like scripts/kallsyms (the kernel has it), ms.
    pub encode_ms: f64,
    /// Validating the tables and building every fast index, ms.
    pub index_build_ms: f64,
    /// Address index + record offsets, extra bytes per symbol.
    pub addr_index_bytes_per_symbol: f64,
    /// Name index (xxh64-hashed), extra bytes per symbol.
    pub name_index_bytes_per_symbol: f64,
    /// The kernel's own tables, bytes per symbol (for scale).
    pub kernel_tables_bytes_per_symbol: f64,
    /// Which per-op hardware counts the rows have, or why none.
    pub counters: String,
    /// The workloads.
    pub workloads: Vec<Workload>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl Report {
    /// Header facts of a loaded table.
    pub fn new(source: &str, l: &Loaded, parse: Duration, blaze_parse: Option<Duration>) -> Self {
        let t = l.mirror.tables();
        let n = t.offsets.len().max(1) as f64;
        let (addr_bytes, name_bytes) = l.mirror.extra_bytes();
        let kernel = t.offsets.len() * 4
            + t.names.len()
            + t.markers.len() * 4
            + t.token_table.len()
            + t.token_index.len() * 2
            + t.seqs_of_names.len();
        Self {
            source: source.to_string(),
            symbols: t.offsets.len(),
            modules: l.mirror.modules().len(),
            exact_module_layout: l.exact_module_layout,
            load_ms: ms(l.parse),
            parse_ms: ms(parse),
            blazesym_parse_ms: blaze_parse.map(ms),
            encode_ms: ms(l.encode),
            index_build_ms: ms(l.index),
            addr_index_bytes_per_symbol: addr_bytes as f64 / n,
            name_index_bytes_per_symbol: name_bytes as f64 / n,
            kernel_tables_bytes_per_symbol: kernel as f64 / n,
            counters: match Counters::open() {
                Ok(_) => {
                    "instructions and last-level cache misses per op (perf_event_open, user mode)"
                        .to_string()
                }
                Err(e) => format!("none on this host ({e})"),
            },
            workloads: Vec::new(),
        }
    }

    /// Adds a workload.
    pub fn push(&mut self, w: Workload) {
        self.workloads.push(w);
    }

    /// The human table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "table: {} ({} core symbols, {} modules)",
            self.source, self.symbols, self.modules
        );
        let _ = write!(
            s,
            "load: {:.1} ms; parse of a file copy: {:.1} ms",
            self.load_ms, self.parse_ms
        );
        if let Some(b) = self.blazesym_parse_ms {
            let _ = write!(
                s,
                " (blazesym {:.1} ms, we are {:.1}x faster)",
                b,
                b / self.parse_ms
            );
        }
        let _ = writeln!(
            s,
            "; re-encode like scripts/kallsyms: {:.1} ms",
            self.encode_ms
        );
        let _ = writeln!(
            s,
            "index build: {:.2} ms; extra bytes/symbol: {:.2} address index + {:.2} name index (kernel tables: {:.1})",
            self.index_build_ms,
            self.addr_index_bytes_per_symbol,
            self.name_index_bytes_per_symbol,
            self.kernel_tables_bytes_per_symbol
        );
        let _ = writeln!(s, "hardware counters: {}", self.counters);
        for w in &self.workloads {
            let costs = w.rows.iter().any(|r| r.extra_bytes.is_some());
            let counted = w.rows.iter().any(|r| r.instructions_per_op.is_some());
            let _ = writeln!(s, "\n{} (median of {} rounds)", w.name, w.rounds);
            let _ = write!(
                s,
                "  {:<34} {:>12} {:>14} {:>12} {:>10} {:>10}",
                "algorithm", "ns/op", "vs mainline", "cpu ns/op", "cpu vs", "ops/round"
            );
            if costs {
                let _ = write!(s, " {:>12} {:>10}", "extra bytes", "load us");
            }
            if counted {
                let _ = write!(s, " {:>10} {:>10}", "instr/op", "LLC miss");
            }
            let _ = writeln!(s);
            for r in &w.rows {
                let _ = write!(
                    s,
                    "  {:<34} {:>12.1} {:>13.2}x {:>12.1} {:>9.2}x {:>10}",
                    r.algo,
                    r.ns_per_op,
                    r.vs_mainline,
                    r.cpu_ns_per_op,
                    r.cpu_vs_mainline,
                    r.ops_per_round
                );
                if let (true, Some(b), Some(ns)) = (costs, r.extra_bytes, r.load_ns) {
                    let _ = write!(s, " {:>12} {:>10.1}", b, ns / 1e3);
                }
                if let (Some(i), Some(m)) = (r.instructions_per_op, r.cache_misses_per_op) {
                    let _ = write!(s, " {:>10.1} {:>10.2}", i, m);
                }
                let _ = writeln!(s);
            }
            for r in &w.rows {
                if let (Some(b), Some(m)) = (r.extra_bytes, r.mirror_bytes) {
                    let _ = writeln!(
                        s,
                        "  ({}: {} extra bytes in the kernel; this mirror's copy: {} bytes)",
                        r.algo, b, m
                    );
                }
            }
        }
        s
    }
}
