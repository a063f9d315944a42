//! Shared helpers for the integration suites: table encoders independent of
//! the project's compressor, so the lookup suites do not depend on it.
//!
//! [`plain_tables`] encodes sorted symbols with the trivial token table
//! (token `b` expands to the byte `b`). [`token_tables`] encodes them with a
//! random multi-byte token table shaped like the ones `scripts/kallsyms`
//! builds: every byte the symbols use keeps its single-byte token, and the
//! free slots hold longer tokens, substrings of the symbols (type character
//! included) and concatenations of earlier tokens (the tool's pair merges,
//! expanded), up to a whole `KSYM_NAME_LEN` symbol and so past the 16-byte
//! slots of `fast::expand`.

pub mod capture;

use kallsyms_mirror::mirror::{Mirror, MirrorModule};
use kallsyms_mirror::owned::{OwnedTables, RawSymbol};
use kallsyms_mirror::{OffsetEncoding, Sections, KSYM_NAME_LEN};

/// Whether `addr` is encoded as an absolute per-CPU value (`--absolute-percpu`).
pub fn is_percpu(addr: u64) -> bool {
    addr < 0x8000_0000
}

/// Encodes `symbols` (already in kernel order: ascending address, aliases in
/// the wanted order) into kallsyms tables with one token per byte.
pub fn plain_tables(
    symbols: &[RawSymbol],
    absolute_percpu: bool,
    sections: Sections,
) -> OwnedTables {
    // Token b = the single byte b (token 0 = the empty string).
    let tokens: Vec<Vec<u8>> = (0..=255u8)
        .map(|b| if b == 0 { Vec::new() } else { vec![b] })
        .collect();
    encode(symbols, absolute_percpu, sections, &tokens, |data| {
        data.to_vec()
    })
}

/// A small deterministic generator (SplitMix64), so a failing case
/// reproduces from its seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Encodes `symbols` (kernel order) with a random multi-byte token table
/// drawn from `seed` (see the crate docs). Each name is split into tokens
/// at random among those that match, preferring the longest, so records
/// mix long tokens, slot-sized ones and single bytes.
pub fn token_tables(
    symbols: &[RawSymbol],
    absolute_percpu: bool,
    sections: Sections,
    seed: u64,
) -> OwnedTables {
    let mut rng = Rng::new(seed);
    let data: Vec<Vec<u8>> = symbols.iter().map(symbol_data).collect();
    let mut used = [false; 256];
    for d in &data {
        for &b in d {
            used[b as usize] = true;
        }
    }
    let mut tokens: Vec<Vec<u8>> = (0..=255u8)
        .map(|b| {
            if used[b as usize] {
                vec![b]
            } else {
                Vec::new()
            }
        })
        .collect();
    let free: Vec<usize> = (0..256).filter(|&b| !used[b]).collect();
    // Leave some free slots empty, as the tool does when it runs out of
    // profitable pairs.
    let fill = if free.is_empty() {
        0
    } else {
        free.len() - rng.below(free.len().min(8) + 1).min(free.len())
    };
    for &slot in free.iter().take(fill) {
        let tok = match (rng.below(8), data.is_empty()) {
            // Pair merge of two existing tokens.
            (0..=2, _) | (_, true) => {
                let live: Vec<&Vec<u8>> = tokens.iter().filter(|t| !t.is_empty()).collect();
                if live.is_empty() {
                    continue;
                }
                let (a, b) = (live[rng.below(live.len())], live[rng.below(live.len())]);
                let mut t = a.clone();
                t.extend_from_slice(b);
                t
            }
            // A substring of a symbol: short, slot-sized, long or whole.
            (k, false) => {
                let d = &data[rng.below(data.len())];
                let max = match k {
                    3..=5 => 4,
                    6 => 16,
                    _ => KSYM_NAME_LEN,
                };
                let len = 2 + rng.below(max.min(d.len()).max(2) - 1);
                let len = len.min(d.len());
                let start = rng.below(d.len() - len + 1);
                d[start..start + len].to_vec()
            }
        };
        if tok.len() >= 2 && tok.len() <= KSYM_NAME_LEN && !tokens.contains(&tok) {
            tokens[slot] = tok;
        }
    }
    // Candidates by first byte, longest first.
    let mut by_first: Vec<Vec<u8>> = vec![Vec::new(); 256];
    for (slot, t) in tokens.iter().enumerate() {
        if let Some(&f) = t.first() {
            by_first[f as usize].push(slot as u8);
        }
    }
    for list in &mut by_first {
        list.sort_by_key(|&s| std::cmp::Reverse(tokens[s as usize].len()));
    }
    let tok = tokens.clone();
    encode(symbols, absolute_percpu, sections, &tokens, move |d| {
        let mut out = Vec::new();
        let mut i = 0;
        while i < d.len() {
            let fits: Vec<u8> = by_first[d[i] as usize]
                .iter()
                .copied()
                .filter(|&s| d[i..].starts_with(&tok[s as usize]))
                .collect();
            // The single byte always fits; take the longest three times in
            // four, else any.
            let pick = if rng.below(4) != 0 {
                fits[0]
            } else {
                fits[rng.below(fits.len())]
            };
            out.push(pick);
            i += tok[pick as usize].len();
        }
        out
    })
}

/// The bytes `scripts/kallsyms` compresses for a symbol: type, then name.
fn symbol_data(s: &RawSymbol) -> Vec<u8> {
    let mut d = vec![s.kind];
    d.extend_from_slice(&s.name);
    d
}

/// Lays out the tables for `symbols` with token strings `tokens` (256
/// entries, no NUL inside) and `compress`, which maps a symbol's type and
/// name to its token bytes.
fn encode(
    symbols: &[RawSymbol],
    absolute_percpu: bool,
    sections: Sections,
    tokens: &[Vec<u8>],
    mut compress: impl FnMut(&[u8]) -> Vec<u8>,
) -> OwnedTables {
    let mut t = OwnedTables {
        sections,
        ..Default::default()
    };
    for tok in tokens {
        t.token_index.push(t.token_table.len() as u16);
        t.token_table.extend_from_slice(tok);
        t.token_table.push(0);
    }
    let relative_base = symbols
        .iter()
        .filter(|s| !(absolute_percpu && is_percpu(s.addr)))
        .map(|s| s.addr)
        .min()
        .unwrap_or(0);
    t.encoding = OffsetEncoding::RelativeBase {
        base: relative_base,
        absolute_percpu,
    };
    for (i, s) in symbols.iter().enumerate() {
        if i % 256 == 0 {
            t.markers.push(t.names.len() as u32);
        }
        let record = compress(&symbol_data(s));
        let len = record.len();
        if len > 0x7f {
            t.names.push((len & 0x7f) as u8 | 0x80);
            t.names.push((len >> 7) as u8);
        } else {
            t.names.push(len as u8);
        }
        t.names.extend_from_slice(&record);
        let off = if !absolute_percpu {
            (s.addr - relative_base) as u32 as i32
        } else if is_percpu(s.addr) {
            s.addr as i32
        } else {
            (relative_base as i64 - s.addr as i64 - 1) as i32
        };
        t.offsets.push(off);
    }
    // compare_names() of scripts/kallsyms: name, then address, then position.
    let mut order: Vec<usize> = (0..symbols.len()).collect();
    order.sort_by(|&a, &b| {
        symbols[a]
            .name
            .cmp(&symbols[b].name)
            .then(symbols[a].addr.cmp(&symbols[b].addr))
            .then(a.cmp(&b))
    });
    for i in order {
        t.seqs_of_names
            .extend_from_slice(&[(i >> 16) as u8, (i >> 8) as u8, i as u8]);
    }
    t
}

/// A symbol as `/proc/kallsyms` lists it: address, type letter, name.
pub fn sym(addr: u64, kind: u8, name: &str) -> RawSymbol {
    RawSymbol {
        addr,
        kind,
        name: name.as_bytes().to_vec(),
    }
}

/// A mirror of a four-symbol core at `core` (`_stext`, `core_fn` at
/// +0x100, `_etext` at +0x1000, `_end` at +0x2000) and `modules`: the
/// smallest machine the module suites need.
pub fn small_core_mirror(core: u64, modules: Vec<MirrorModule>, all_symbols: bool) -> Mirror {
    let symbols = vec![
        sym(core, b'T', "_stext"),
        sym(core + 0x100, b't', "core_fn"),
        sym(core + 0x1000, b'T', "_etext"),
        sym(core + 0x2000, b'B', "_end"),
    ];
    let sections = Sections {
        stext: core,
        etext: core + 0x1000,
        sinittext: 0,
        einittext: 0,
        end: core + 0x2000,
        init_begin: 0,
        init_end: 0,
        gate: None,
        all_symbols,
    };
    Mirror::new(plain_tables(&symbols, false, sections), modules).expect("tables validate")
}

/// The pristine 6.12 kernel tree the host suites compile kernel sources
/// from: `$KFAST_KERNEL_SRC`, else where the xtask harness unpacks it
/// (`$KFAST_CACHE/src/linux-source-6.12`, `KFAST_CACHE` defaulting to
/// `/var/cache/kallsyms-fast`; see `xtask/src/env.rs`).
pub fn kernel_src() -> std::path::PathBuf {
    if let Some(src) = std::env::var_os("KFAST_KERNEL_SRC") {
        return src.into();
    }
    std::env::var_os("KFAST_CACHE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/var/cache/kallsyms-fast".into())
        .join("src/linux-source-6.12")
}

/// Re-encodes `t`'s `kallsyms_offsets` as Linux 7.3's PC-relative entries
/// with the table at `table_addr` (`addr - (table_addr + 4 * i)`), keeping
/// every symbol's address. Panics when an address is out of 32-bit reach,
/// as the linker would refuse it.
pub fn to_pc_relative(t: &mut OwnedTables, table_addr: u64) {
    let addrs: Vec<u64> = {
        let v = t.view();
        (0..v.len()).map(|i| v.sym_address(i).unwrap()).collect()
    };
    for (i, (o, a)) in t.offsets.iter_mut().zip(addrs).enumerate() {
        let entry = table_addr.wrapping_add(4 * i as u64);
        *o = i32::try_from(a.wrapping_sub(entry) as i64).expect("within 32-bit reach");
    }
    t.encoding = OffsetEncoding::PcRelative { table_addr };
}
