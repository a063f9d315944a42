//! Test address generation from the captured kallsyms and module layout.

use std::collections::{BTreeMap, HashSet};

/// Where a test address came from (reported per category by the host).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Cat {
    /// Exactly a vmlinux symbol's address.
    VmStart,
    /// start+1, start-1, middle, next-1 around vmlinux symbols.
    VmNear,
    /// Exactly a module symbol's address.
    ModStart,
    /// Around module symbols.
    ModNear,
    /// Bounds of module memory regions (from module_layout).
    ModBounds,
    /// Random inside module memory regions.
    ModRandom,
    /// Around every module section start (sysfs).
    ModSections,
    /// Between the last symbol of a module region and the region's end.
    ModTail,
    /// Around linker-provided markers (_stext, _etext, _end, ...).
    Markers,
    /// Random in the kernel image.
    VmRandom,
    /// Random in the init text.
    InitRandom,
    /// Random in the upper (kernel) half.
    HighRandom,
    /// Random 64-bit values.
    AnyRandom,
    /// Return addresses from the kernel stacks of all tasks.
    Stack,
}

impl Cat {
    fn name(self) -> &'static str {
        match self {
            Cat::VmStart => "vm-start",
            Cat::VmNear => "vm-near",
            Cat::ModStart => "mod-start",
            Cat::ModNear => "mod-near",
            Cat::ModBounds => "mod-bounds",
            Cat::ModRandom => "mod-random",
            Cat::ModSections => "mod-sections",
            Cat::ModTail => "mod-tail",
            Cat::Markers => "markers",
            Cat::VmRandom => "vm-random",
            Cat::InitRandom => "init-random",
            Cat::HighRandom => "high-random",
            Cat::AnyRandom => "any-random",
            Cat::Stack => "stack",
        }
    }
}

/// One address to resolve and its category.
pub type Addr = (u64, Cat);

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            lo
        } else {
            lo + self.next() % (hi - lo)
        }
    }
}

struct Gen {
    seen: HashSet<u64>,
    out: Vec<Addr>,
}

impl Gen {
    fn push(&mut self, a: u64, c: Cat) {
        if self.seen.insert(a) {
            self.out.push((a, c));
        }
    }

    /// start, +1, -1, middle and last byte for each distinct address.
    fn around(&mut self, starts: &[u64], stride: usize, tail: u64, start: Cat, near: Cat) {
        for (i, &a) in starts.iter().enumerate().step_by(stride.max(1)) {
            let next = starts.get(i + 1).copied().unwrap_or(a.saturating_add(tail));
            self.push(a, start);
            self.push(a.wrapping_add(1), near);
            self.push(a.wrapping_sub(1), near);
            self.push(a + (next - a) / 2, near);
            self.push(next.wrapping_sub(1), near);
        }
    }
}

/// Parse `/proc/kallsyms`: per module name ("" for vmlinux) the sorted distinct
/// addresses, plus a name -> address map for vmlinux symbols.
fn parse(kallsyms: &str) -> (BTreeMap<String, Vec<u64>>, BTreeMap<String, u64>) {
    let mut by_mod: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut names = BTreeMap::new();
    for line in kallsyms.lines() {
        let (sym, module) = match line.split_once('\t') {
            Some((s, m)) => (s, m.trim_start_matches('[').trim_end_matches(']')),
            None => (line, ""),
        };
        let mut it = sym.split_whitespace();
        let (Some(a), Some(_ty), Some(name)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        let Ok(a) = u64::from_str_radix(a, 16) else {
            continue;
        };
        if module.is_empty() {
            names.entry(name.to_string()).or_insert(a);
        }
        by_mod.entry(module.to_string()).or_default().push(a);
    }
    for v in by_mod.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    (by_mod, names)
}

/// Parse module_layout lines: `(module, type, base, size)`.
fn parse_layout(layout: &str) -> Vec<(String, u32, u64, u64)> {
    layout
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let m = it.next()?.to_string();
            let t = it.next()?.parse().ok()?;
            let b = u64::from_str_radix(it.next()?, 16).ok()?;
            let s = u64::from_str_radix(it.next()?, 16).ok()?;
            Some((m, t, b, s))
        })
        .collect()
}

const MARKERS: &[&str] = &[
    "_text",
    "_stext",
    "_etext",
    "_sinittext",
    "_einittext",
    "_end",
    "_sdata",
    "_edata",
    "__start_rodata",
    "__end_rodata",
    "__bss_start",
    "__bss_stop",
    "__init_begin",
    "__init_end",
    "_sinittext",
    "__per_cpu_start",
    "__per_cpu_end",
    "__start___ex_table",
    "__stop___ex_table",
];

/// Generate the test addresses (deterministic for a given input and seed).
pub fn generate(
    kallsyms: &str,
    layout: &str,
    sections: &[u64],
    stacks: &str,
    seed: u64,
    mod_budget: usize,
) -> Vec<Addr> {
    let (by_mod, names) = parse(kallsyms);
    let mut g = Gen {
        seen: HashSet::new(),
        out: Vec::new(),
    };
    for a in stacks
        .lines()
        .flat_map(|l| l.split_whitespace().skip(1))
        .filter_map(|a| u64::from_str_radix(a, 16).ok())
    {
        g.push(a, Cat::Stack);
    }
    let mut rng = Rng(seed);
    if let Some(vm) = by_mod.get("") {
        g.around(vm, 1, 0x40, Cat::VmStart, Cat::VmNear);
    }
    let mod_syms: usize = by_mod
        .iter()
        .filter(|(m, _)| !m.is_empty())
        .map(|(_, v)| v.len())
        .sum();
    let stride = (mod_syms * 5).div_ceil(mod_budget.max(1)).max(1);
    for (m, v) in by_mod.iter().filter(|(m, _)| !m.is_empty()) {
        let s = if v.len() > 1000 { stride } else { 1 };
        g.around(v, s, 0x40, Cat::ModStart, Cat::ModNear);
        let _ = m;
    }
    let mod_addrs: std::collections::BTreeSet<u64> = by_mod
        .iter()
        .filter(|(m, _)| !m.is_empty())
        .flat_map(|(_, v)| v.iter().copied())
        .collect();
    for (_, _, base, size) in parse_layout(layout) {
        if size == 0 {
            continue;
        }
        for a in [
            base.wrapping_sub(1),
            base,
            base + 1,
            base + size - 1,
            base + size,
            base + size + 1,
        ] {
            g.push(a, Cat::ModBounds);
        }
        for _ in 0..200 {
            let a = rng.range(base, base + size);
            g.push(a, Cat::ModRandom);
        }
        // Past the region's last symbol: the size printed there ends at the
        // region's end, which a capture without layout has to derive.
        let end = base + size;
        let last = mod_addrs.range(base..end).next_back().copied();
        if let Some(last) = last {
            for a in [last + 1, last + (end - last) / 2, end - 1, end - 0x10] {
                if a > last && a < end {
                    g.push(a, Cat::ModTail);
                }
            }
        }
    }
    for &s in sections {
        for a in [s.wrapping_sub(1), s, s.wrapping_add(1), s.wrapping_add(8)] {
            g.push(a, Cat::ModSections);
        }
    }
    for m in MARKERS {
        if let Some(&a) = names.get(*m) {
            for d in [-2i64, -1, 0, 1, 2] {
                g.push(a.wrapping_add_signed(d), Cat::Markers);
            }
        }
    }
    for a in [
        0,
        1,
        u64::MAX,
        0xffff_ffff_8000_0000,
        0xffff_ffff_a000_0000,
        0xffff_ffff_ff00_0000,
    ] {
        g.push(a, Cat::Markers);
    }
    let get = |n: &str| names.get(n).copied().unwrap_or(0);
    for _ in 0..5000 {
        let a = rng.range(get("_text"), get("_end"));
        g.push(a, Cat::VmRandom);
    }
    for _ in 0..2000 {
        let a = rng.range(get("_sinittext"), get("_einittext"));
        g.push(a, Cat::InitRandom);
    }
    for _ in 0..2000 {
        let a = rng.range(0xffff_ffff_8000_0000, u64::MAX);
        g.push(a, Cat::HighRandom);
    }
    for _ in 0..3000 {
        let a = rng.next();
        g.push(a, Cat::AnyRandom);
    }
    g.out
}

/// Per-category counts, one line each.
pub fn summarize(addrs: &[Addr]) -> String {
    let mut counts: BTreeMap<Cat, usize> = BTreeMap::new();
    for &(_, c) in addrs {
        *counts.entry(c).or_default() += 1;
    }
    let mut s = format!("addresses {}\n", addrs.len());
    for (c, n) in counts {
        s.push_str(&format!("  {} {n}\n", c.name()));
    }
    s
}

/// `<addr hex> <category>` lines, in resolution order.
pub fn categories_file(addrs: &[Addr]) -> String {
    let mut s = String::with_capacity(addrs.len() * 30);
    for &(a, c) in addrs {
        s.push_str(&format!("{a:x} {}\n", c.name()));
    }
    s
}
