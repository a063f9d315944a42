//! Address and name streams, generated from the table itself with a fixed
//! seed so that every algorithm sees the same stream.

use kallsyms_mirror::mirror::Mirror;
use kallsyms_mirror::owned::RawSymbol;

/// A small xorshift generator: deterministic, no dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Text symbols (`t`/`T`) of the core table, ascending.
pub fn text_symbols(core: &[RawSymbol]) -> Vec<&RawSymbol> {
    core.iter()
        .filter(|s| matches!(s.kind, b't' | b'T'))
        .collect()
}

/// Uniform addresses over `[_stext, _etext)`.
pub fn uniform_text(m: &Mirror, count: usize, rng: &mut Rng) -> Vec<u64> {
    let s = &m.tables().sections;
    let span = s.etext.saturating_sub(s.stext).max(1);
    (0..count).map(|_| s.stext + rng.below(span)).collect()
}

/// A wchan-like stream: 90% Zipf(1) over `hot` sleeping functions (an
/// address a little inside each, as a saved return address is), 10%
/// uniform over the text as the cold tail.
pub fn wchan_mix(
    m: &Mirror,
    core: &[RawSymbol],
    hot: usize,
    count: usize,
    rng: &mut Rng,
) -> Vec<u64> {
    let text = text_symbols(core);
    if text.is_empty() {
        return uniform_text(m, count, rng);
    }
    let hot_addrs: Vec<u64> = (0..hot)
        .map(|_| text[rng.below(text.len() as u64) as usize].addr + 5)
        .collect();
    // Zipf(1) by inverse CDF over the harmonic weights (integer arithmetic).
    let weights: Vec<u64> = (1..=hot as u64).map(|k| 1_000_000 / k).collect();
    let total: u64 = weights.iter().sum();
    let s = &m.tables().sections;
    let span = s.etext.saturating_sub(s.stext).max(1);
    (0..count)
        .map(|_| {
            if rng.below(10) == 0 {
                return s.stext + rng.below(span);
            }
            let mut r = rng.below(total);
            for (i, w) in weights.iter().enumerate() {
                if r < *w {
                    return hot_addrs[i];
                }
                r -= w;
            }
            hot_addrs[0]
        })
        .collect()
}

/// Addresses inside module `mi`'s text region.
pub fn module_text(m: &Mirror, mi: usize, count: usize, rng: &mut Rng) -> Vec<u64> {
    let Some(module) = m.modules().get(mi) else {
        return Vec::new();
    };
    let r = module.layout[kallsyms_mirror::module::MOD_TEXT];
    (0..count)
        .map(|_| r.base + rng.below(r.size.max(1)))
        .collect()
}

/// Existing core names (90%) and absent ones (10%).
pub fn names(core: &[RawSymbol], count: usize, rng: &mut Rng) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| {
            if i % 10 == 9 || core.is_empty() {
                format!("no_such_symbol_{}", rng.next()).into_bytes()
            } else {
                core[rng.below(core.len() as u64) as usize].name.clone()
            }
        })
        .collect()
}

/// A synthetic module of `n` functions placed above the core kernel, for
/// machines without a large module: 16..272-byte functions, mixed names.
pub fn synthetic_module(core_end: u64, n: usize, rng: &mut Rng) -> (Vec<RawSymbol>, u64, u64) {
    let base = (core_end | 0xffff_ffff)
        .wrapping_add(1)
        .max(0xffff_ffff_c000_0000);
    let mut addr = base;
    let mut syms = Vec::with_capacity(n);
    for i in 0..n {
        syms.push(RawSymbol {
            addr,
            kind: if i % 3 == 0 { b'T' } else { b't' },
            name: format!("many_fn_{i:05}").into_bytes(),
        });
        addr += 16 + 16 * rng.below(17);
    }
    // The kernel's symtab is in ELF order, not address order: shuffle.
    for i in (1..syms.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        syms.swap(i, j);
    }
    (syms, base, addr - base)
}

/// Addresses per stream of the in-kernel benchmark (patch 5's
/// `BENCH_ADDRS`, kmod-shim's `BENCH_CORE_ADDRS`).
pub const KERNEL_STREAM: usize = 4096;

/// Patch 5's `pick_core()` (`kernel/series/05-bench`, `bench.c`), line
/// for line: the `core-uniform` stream (`KERNEL_STREAM` symbols spread
/// evenly over the table, 7 bytes in, in table order) and the `core-zipf`
/// stream (`KERNEL_STREAM` Zipf draws over 64 of those picks that lie in
/// core text, with the same xorshift32 and seed), so that the userspace
/// rows compare directly with the in-kernel ones.
pub fn kernel_streams(m: &Mirror) -> (Vec<u64>, Vec<u64>) {
    const ZIPF_FUNCS: usize = 64;
    let t = m.tables().view();
    let s = &m.tables().sections;
    let n = t.len();
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    let step = (n / KERNEL_STREAM).max(1);
    let core: Vec<u64> = (0..KERNEL_STREAM)
        .map(|i| t.sym_address((i * step) % n).unwrap_or(0).wrapping_add(7))
        .collect();
    let text: Vec<u64> = core
        .iter()
        .copied()
        .filter(|&a| s.is_kernel_text(a))
        .collect();
    let mut funcs = [0u64; ZIPF_FUNCS];
    let mut weights = [0u32; ZIPF_FUNCS];
    let mut total = 0u32;
    for i in 0..ZIPF_FUNCS {
        funcs[i] = if text.is_empty() {
            core[i * (KERNEL_STREAM / ZIPF_FUNCS)]
        } else {
            text[i * text.len() / ZIPF_FUNCS]
        };
        weights[i] = (1u32 << 20) / (i as u32 + 1);
        total += weights[i];
    }
    let mut seed: u32 = 0x9e37_79b9;
    let mut rand = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let zipf = (0..KERNEL_STREAM)
        .map(|_| {
            let mut x = rand() % total;
            let mut r = 0;
            while x >= weights[r] {
                x -= weights[r];
                r += 1;
            }
            funcs[r]
        })
        .collect();
    (core, zipf)
}
