//! Raw kallsyms table bytes into `KallsymsTables::validate()`: no input may
//! panic, a table that validates must build every fast index, and on it
//! the fast path, the mainline port and the linear scan must agree on every
//! address lookup; when it is also in name order (`check_name_order()`,
//! through the index and through the marker walk alike), the fast and
//! mainline name lookups must agree on every name.
//!
//! Input (little endian): a header of flags (`u8`: bit 0
//! `absolute_percpu`, bit 1 `all_symbols`, bit 2 7.3's PC-relative
//! encoding, bit 7 "build"), `num_syms` (`u32`), `relative_base` (`u64`;
//! with bit 2 the address of `kallsyms_offsets`), nine section bounds (`u64`: `_stext`,
//! `_etext`, `_sinittext`, `_einittext`, `_end`, `__init_begin`,
//! `__init_end`, gate start, gate end; no gate when start == end), and the
//! element counts of the six tables (`u32` each: offsets, names, markers,
//! token table, token index, seqs); then the tables back to back. A short
//! input truncates the tables, so lengths lie as often as contents.
//!
//! Random bytes rarely make a valid table, so with the "build" flag the
//! rest of the input is `[op count][ops][nm -n text]`: the text is encoded,
//! the tables are serialised in the layout above, and each 4-byte op (kind,
//! 16-bit position, value) flips, sets, swaps or truncates bytes of that
//! serialisation. The serialisation is then read back as raw input, so both
//! modes test the same raw-bytes path. The encoder is the project's
//! `scripts/kallsyms` port (real token tables, but slow: it searches 64K
//! pairs per token), or with flag bit 6 the test suite's random
//! multi-byte token tables (`kallsyms_fast_tests::token_tables`, seeded
//! from the op bytes), about a hundred times faster.
#![no_main]

use kallsyms_fast_tests::token_tables;
use kallsyms_mirror::build::{compress, read_nm, CompressOptions};
use kallsyms_mirror::fast::{
    build_addr_index, build_name_index, AddrIndex, AddrIndexLayout, FastCore, NameIndex,
    NameIndexLayout, TokenSlots,
};
use kallsyms_mirror::layout::KernelLayout;
use kallsyms_mirror::linear::Linear;
use kallsyms_mirror::mainline::Mainline;
use kallsyms_mirror::mirror::sections_from_symbols;
use kallsyms_mirror::name::{expand_symbol, NameBuf};
use kallsyms_mirror::owned::{OwnedTables, RawSymbol};
use kallsyms_mirror::{KallsymsTables, OffsetEncoding, Sections, KSYM_NAME_LEN};
use libfuzzer_sys::fuzz_target;

const BUILD: u8 = 0x80;
const QUICK: u8 = 0x40;
/// 7.3's PC-relative `kallsyms_offsets` (bit 0 is then ignored).
const PC_RELATIVE: u8 = 0x04;
/// The kernel caps a table at 2^24 symbols; the fuzzer needs far fewer,
/// and bounding `num_syms` keeps scratch allocation small.
const MAX_SYMS: u32 = 1 << 16;

/// Little-endian reader that yields zeroes past the end of the input.
struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }
    fn int<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        let got = self.bytes(N);
        b[..got.len()].copy_from_slice(got);
        b
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.int())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.int())
    }
    /// Up to `count` elements of `size` bytes each, decoded by `f`.
    fn vec<T>(&mut self, count: u32, size: usize, f: impl Fn(&[u8]) -> T) -> Vec<T> {
        let bytes = self.bytes((count as usize).saturating_mul(size));
        bytes.chunks_exact(size).map(f).collect()
    }
}

struct Raw {
    num_syms: u32,
    tables: OwnedTables,
}

fn parse(data: &[u8]) -> Raw {
    let mut r = Reader { data };
    let flags = r.int::<1>()[0];
    let num_syms = r.u32().min(MAX_SYMS);
    let relative_base = r.u64();
    let bounds: [u64; 7] = core::array::from_fn(|_| r.u64());
    let (g0, g1) = (r.u64(), r.u64());
    let counts: [u32; 6] = core::array::from_fn(|_| r.u32());
    let sections = Sections::from_bounds(bounds, (g0 != g1).then_some((g0, g1)), flags & 2 != 0);
    let offsets = r.vec(counts[0], 4, |c| {
        i32::from_le_bytes([c[0], c[1], c[2], c[3]])
    });
    let names = r.bytes(counts[1] as usize).to_vec();
    let markers = r.vec(counts[2], 4, |c| {
        u32::from_le_bytes([c[0], c[1], c[2], c[3]])
    });
    let token_table = r.bytes(counts[3] as usize).to_vec();
    let token_index = r.vec(counts[4], 2, |c| u16::from_le_bytes([c[0], c[1]]));
    let seqs_of_names = r.bytes(counts[5] as usize).to_vec();
    Raw {
        num_syms,
        tables: OwnedTables {
            offsets,
            encoding: if flags & PC_RELATIVE != 0 {
                OffsetEncoding::PcRelative {
                    table_addr: relative_base,
                }
            } else {
                OffsetEncoding::RelativeBase {
                    base: relative_base,
                    absolute_percpu: flags & 1 != 0,
                }
            },
            names,
            markers,
            token_table,
            token_index,
            seqs_of_names,
            sections,
        },
    }
}

fn serialise(t: &OwnedTables, flags: u8) -> Vec<u8> {
    let s = &t.sections;
    let (flags, base) = match t.encoding {
        OffsetEncoding::RelativeBase {
            base,
            absolute_percpu,
        } => (
            (flags & !(1 | PC_RELATIVE)) | u8::from(absolute_percpu),
            base,
        ),
        OffsetEncoding::PcRelative { table_addr } => (flags | PC_RELATIVE, table_addr),
    };
    let mut out = vec![flags & !BUILD];
    out.extend((t.offsets.len() as u32).to_le_bytes());
    out.extend(base.to_le_bytes());
    let (g0, g1) = s.gate.unwrap_or((0, 0));
    for v in s.bounds().into_iter().chain([g0, g1]) {
        out.extend(v.to_le_bytes());
    }
    for c in [
        t.offsets.len(),
        t.names.len(),
        t.markers.len(),
        t.token_table.len(),
        t.token_index.len(),
        t.seqs_of_names.len(),
    ] {
        out.extend((c as u32).to_le_bytes());
    }
    out.extend(t.offsets.iter().flat_map(|o| o.to_le_bytes()));
    out.extend(&t.names);
    out.extend(t.markers.iter().flat_map(|m| m.to_le_bytes()));
    out.extend(&t.token_table);
    out.extend(t.token_index.iter().flat_map(|i| i.to_le_bytes()));
    out.extend(&t.seqs_of_names);
    out
}

/// Applies one 4-byte op to `buf`: flip, set, swap 4-byte words, truncate.
fn mutate(buf: &mut Vec<u8>, op: &[u8]) {
    if buf.is_empty() {
        return;
    }
    let pos = u16::from_le_bytes([op[1], op[2]]) as usize % buf.len();
    let val = op[3];
    match op[0] % 4 {
        0 => buf[pos] ^= val.max(1),
        1 => buf[pos] = val,
        2 => {
            let other = (pos + 4 * (val as usize + 1)) % buf.len();
            if pos + 4 <= buf.len() && other + 4 <= buf.len() && pos.abs_diff(other) >= 4 {
                for k in 0..4 {
                    buf.swap(pos + k, other + k);
                }
            }
        }
        _ => buf.truncate(pos),
    }
}

/// Raw bytes, or built tables serialised and mutated.
fn input(data: &[u8]) -> Option<Vec<u8>> {
    let (&flags, rest) = data.split_first()?;
    if flags & BUILD == 0 {
        return Some(data.to_vec());
    }
    let (&ops, rest) = rest.split_first()?;
    let ops_len = (ops as usize % 8) * 4;
    let (ops, text) = rest.split_at(ops_len.min(rest.len()));
    let symbols = read_nm(text).ok()?;
    let tables = if flags & QUICK != 0 {
        quick_tables(symbols, flags & 2 != 0, ops)
    } else {
        let pc_relative = flags & PC_RELATIVE != 0;
        let opts = CompressOptions {
            layout: if pc_relative {
                KernelLayout::Linux7_3
            } else {
                KernelLayout::Linux6_12
            },
            all_symbols: flags & 2 != 0,
            absolute_percpu: !pc_relative && flags & 1 != 0,
            pc_relative,
            // Where a 7.3 kernel keeps it: in .rodata, above the text.
            offsets_addr: symbols.iter().map(|s| s.addr).max().unwrap_or(0) & !3,
            reject_long_names: true,
        };
        compress(&symbols, &opts).ok()?
    };
    let mut buf = serialise(&tables, flags);
    for op in ops.chunks_exact(4) {
        mutate(&mut buf, op);
    }
    Some(buf)
}

/// Valid tables through the test suite's encoder: names the kernel could
/// hold, addresses folded into a 1 GiB text window (so every offset fits
/// the relative encoding), kernel order by address.
fn quick_tables(mut symbols: Vec<RawSymbol>, all_symbols: bool, seed: &[u8]) -> OwnedTables {
    const TEXT: u64 = 0xffff_ffff_8100_0000;
    symbols.retain(|s| !s.name.is_empty() && s.name.len() < KSYM_NAME_LEN && !s.name.contains(&0));
    for s in &mut symbols {
        s.addr = TEXT + (s.addr & 0x3fff_ffff);
    }
    symbols.sort_by_key(|s| s.addr);
    let mut sections = sections_from_symbols(&symbols);
    sections.all_symbols = all_symbols;
    let seed = seed
        .iter()
        .fold(0u64, |h, &b| h.rotate_left(8) ^ u64::from(b));
    token_tables(&symbols, false, sections, seed)
}

fn view(raw: &Raw) -> KallsymsTables<'_> {
    let t = &raw.tables;
    KallsymsTables {
        num_syms: raw.num_syms,
        ..t.view()
    }
}

fn check(raw: &Raw) {
    let view = view(raw);
    let sections = raw.tables.sections;
    let mut scratch = vec![0u64; view.len().div_ceil(64)];
    if let Err(e) = view.validate(&mut scratch) {
        let _ = e.to_string();
        return;
    }
    let al = AddrIndexLayout::for_table(&view, &sections);
    let mut buckets = vec![0; al.bucket_words];
    let mut deltas = vec![0; al.delta_words];
    let addr =
        build_addr_index(&view, al, &mut buckets, &mut deltas).expect("valid table: address index");
    // Name lookups are defined on tables in the kernel's name order only;
    // the marker walk and the address index must agree on it.
    let name_order = view.check_name_order(|pos| addr.name_offset(&view, pos));
    assert_eq!(
        name_order,
        view.check_name_order(|pos| kallsyms_mirror::name::record_offset(&view, pos)),
        "name order through the index and the walk"
    );
    let tokens = TokenSlots::new(&view).expect("valid table: tokens in bounds");
    let nl = NameIndexLayout::for_len(view.len());
    let mut dir = vec![0; nl.directory_words];
    let mut entries = vec![0; nl.entry_words];
    let mut hashes = vec![0; view.len()];
    build_name_index(&view, nl, &tokens, &mut dir, &mut entries, &mut hashes)
        .expect("valid table: name index");
    let fast = FastCore {
        tables: view,
        sections,
        addr: AddrIndex::from_parts(al, &buckets, &deltas),
        tokens: &tokens,
    };
    let names = NameIndex::from_parts(nl, &dir, &entries);
    let main = Mainline::new(view, sections);
    let linear = Linear::new(view, sections);

    let (mut n1, mut n2, mut n3) = (NameBuf::new(), NameBuf::new(), NameBuf::new());
    let mut probes = vec![0, u64::MAX];
    let g = sections.gate.unwrap_or((0, 0));
    for b in sections.bounds().into_iter().chain([g.0, g.1]) {
        probes.extend([b, b.wrapping_sub(1), b.wrapping_add(1)]);
    }
    for pos in 0..view.len() {
        let a = view.sym_address(pos).expect("valid table: address");
        probes.extend([a, a.wrapping_sub(1), a.wrapping_add(1)]);
    }
    for &addr in &probes {
        let m = main.lookup(addr, &mut n1);
        let f = fast.lookup(addr, &mut n2);
        let l = linear.lookup(addr, &mut n3);
        assert_eq!(m, f, "fast at {addr:#x}");
        assert_eq!(m, l, "linear at {addr:#x}");
        if m.is_some() {
            assert_eq!(n1.as_bytes(), n2.as_bytes(), "fast name at {addr:#x}");
            assert_eq!(n1.as_bytes(), n3.as_bytes(), "linear name at {addr:#x}");
        }
    }
    if name_order.is_err() {
        return;
    }
    // Every name in the table, then names that are not in it.
    let mut off = 0usize;
    for _ in 0..view.len() {
        off = expand_symbol(&view, off, &mut n3).expect("valid table: record");
        let name = n3.as_bytes().to_vec();
        assert_eq!(
            main.lookup_name(&name, &mut n1),
            fast.lookup_name(&names, &name, &mut n2),
            "name {name:?}"
        );
        let mut longer = name.clone();
        longer.push(b'~');
        assert_eq!(
            main.lookup_name(&longer, &mut n1),
            fast.lookup_name(&names, &longer, &mut n2)
        );
        if let Some((_, shorter)) = name.split_last() {
            assert_eq!(
                main.lookup_name(shorter, &mut n1),
                fast.lookup_name(&names, shorter, &mut n2)
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(buf) = input(data) else { return };
    check(&parse(&buf));
});
