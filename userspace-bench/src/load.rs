//! From a machine's files to a [`Mirror`]: parse, re-encode the core table
//! in the kernel's own order, build every index.

use std::path::Path;
use std::time::{Duration, Instant};

use kallsyms_mirror::build::{encode_kernel_order_with, CompressOptions};
use kallsyms_mirror::layout::{KernelLayout, SeenTables};
use kallsyms_mirror::mirror::{sections_from_symbols, Mirror, MirrorModule};
use kallsyms_mirror::module::{MemRegion, ModuleLayout};
use kallsyms_mirror::owned::RawSymbol;
use kallsyms_mirror::parse::machine::Machine;
use kallsyms_mirror::parse::regions::{machine_layouts_for, LayoutSource, DEFAULT_PAGE_SIZE};

/// A loaded mirror and what loading it cost.
pub struct Loaded {
    /// The mirror.
    pub mirror: Mirror,
    /// Parsed machine (kept for workloads that need raw symbols).
    pub machine: Machine,
    /// Time to read and parse the files.
    pub parse: Duration,
    /// Time to re-encode the core table (the kernel has it already).
    pub encode: Duration,
    /// Time to validate the tables and build the fast indexes.
    pub index: Duration,
    /// Whether module bounds are exact (from a `module_layout` file) for
    /// every module.
    pub exact_module_layout: bool,
}

/// Whether the kernel stores per-CPU symbols as absolute values: x86_64
/// SMP kernels do (`CONFIG_KALLSYMS_ABSOLUTE_PERCPU`), and show it with a
/// `__per_cpu_start` below `_stext`.
fn absolute_percpu(core: &[RawSymbol], stext: u64) -> bool {
    core.iter()
        .any(|s| s.name == b"__per_cpu_start" && s.addr < stext)
}

/// The mirror's form of a parsed layout (absent regions are empty).
fn to_mirror_layout(exact: &kallsyms_mirror::parse::ModuleLayout) -> ModuleLayout {
    let mut l = ModuleLayout::default();
    for (dst, src) in l.iter_mut().zip(exact.iter()) {
        if let Some((base, size)) = *src {
            *dst = MemRegion { base, size };
        }
    }
    l
}

/// Builds the mirror for an already parsed machine.
pub fn mirror_of(machine: Machine, parse: Duration) -> Result<Loaded, String> {
    let t0 = Instant::now();
    let sections = sections_from_symbols(&machine.core);
    // The kernel's own encoding when its list shows it: 7.3 (no
    // kallsyms_relative_base, kallsyms_offsets listed) is re-encoded
    // PC-relative at its own kallsyms_offsets; otherwise 6.12's. Lookups
    // answer the same either way.
    let seen = SeenTables::of_symbols(&machine.core);
    let opts = match seen {
        Some(SeenTables {
            layout: KernelLayout::Linux7_3,
            offsets_addr: Some(at),
        }) => CompressOptions {
            layout: KernelLayout::Linux7_3,
            pc_relative: true,
            offsets_addr: at,
            ..Default::default()
        },
        _ => CompressOptions {
            absolute_percpu: absolute_percpu(&machine.core, sections.stext),
            ..Default::default()
        },
    };
    let tables = encode_kernel_order_with(&machine.core, &opts, sections)
        .map_err(|e| format!("{}/proc/kallsyms: {e}", machine.root.display()))?;
    let encode = t0.elapsed();
    let t1 = Instant::now();
    // The module rules of the kernel the tables show (6.12 when unknown).
    let kernel = seen.map_or(KernelLayout::Linux6_12, |s| s.layout);
    let layouts = machine_layouts_for(&machine, DEFAULT_PAGE_SIZE, kernel);
    // Modules without symbols never resolve anything: they do not count.
    let exact = machine
        .modules
        .iter()
        .zip(&layouts)
        .all(|(m, (_, s))| m.symbols.is_empty() || *s == LayoutSource::Exact);
    let modules = machine
        .modules
        .iter()
        .zip(&layouts)
        .filter(|(m, _)| !m.symbols.is_empty())
        .map(|(m, (l, _))| MirrorModule::new(m.name.as_bytes(), &m.symbols, to_mirror_layout(l)))
        .collect();
    let mirror = Mirror::new(tables, modules).map_err(|e| {
        format!(
            "{}/proc/kallsyms: rebuilt table fails validation: {e}",
            machine.root.display()
        )
    })?;
    let index = t1.elapsed();
    Ok(Loaded {
        mirror,
        machine,
        parse,
        encode,
        index,
        exact_module_layout: exact,
    })
}

/// Loads `root/proc/kallsyms` and friends.
pub fn load(root: &Path) -> Result<Loaded, String> {
    let t0 = Instant::now();
    let machine = Machine::load(root).map_err(|e| e.to_string())?;
    let parse = t0.elapsed();
    if machine.core.is_empty() {
        return Err(format!(
            "{}/proc/kallsyms: no core kernel symbols",
            root.display()
        ));
    }
    mirror_of(machine, parse)
}
