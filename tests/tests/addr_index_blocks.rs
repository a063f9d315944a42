//! The address index's blocks follow the 64-byte lines of
//! `kallsyms_offsets`, wherever the table lies, and each block carries the
//! offset of its first name record. On the embedded real table (122k
//! symbols, aliases included), for each of the 16 positions the first
//! indexed entry can take in its line:
//!
//! - the layout's `lead` is that position, and every block but the first
//!   starts a line;
//! - every block's record offset is the record's real offset (the walk
//!   from its marker), the last word is the end of the last record, and
//!   every record found from its block (the name index's way) is the
//!   record at that position;
//! - at the first two and last two symbols of every block (where a wrong
//!   boundary, record offset or next-block end would show), and inside
//!   and just before them, the fast path's position, size, offset and name
//!   equal the mainline port's;
//! - an index built at one alignment, used over a copy at another, still
//!   answers exactly (only its speed depends on where the table lies).

use std::io::Read;

use kallsyms_mirror::build::encode_kernel_order;
use kallsyms_mirror::fast::{build_addr_index, AddrIndex, AddrIndexLayout, FastCore, TokenSlots};
use kallsyms_mirror::mainline::Mainline;
use kallsyms_mirror::mirror::sections_from_symbols;
use kallsyms_mirror::name::{record_offset, skip_record, NameBuf};
use kallsyms_mirror::owned::OwnedTables;
use kallsyms_mirror::parse::ProcKallsyms;
use kallsyms_mirror::{KallsymsTables, Sections};

const FAN: usize = kallsyms_mirror::fast::addr_index::FAN;

fn sample() -> (OwnedTables, Sections) {
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(
        &include_bytes!("../../userspace-bench/data/sample-kallsyms.gz")[..],
    )
    .read_to_end(&mut text)
    .expect("embedded sample decompresses");
    let parsed = ProcKallsyms::parse(std::path::Path::new("sample"), &text).expect("parses");
    let core = parsed.core;
    let sections = sections_from_symbols(&core);
    let abs = core
        .iter()
        .any(|s| s.name == b"__per_cpu_start" && s.addr < sections.stext);
    (
        encode_kernel_order(&core, abs, sections).expect("encodes"),
        sections,
    )
}

/// A copy of `offsets` whose entry `first` lies `lead` entries into a
/// 64-byte line; returns the storage and where the copy starts in it.
fn offsets_at(offsets: &[i32], first: usize, lead: usize) -> (Vec<i32>, usize) {
    let mut v = vec![0i32; offsets.len() + FAN];
    let base = v.as_ptr() as usize;
    let at = (0..FAN)
        .find(|k| (base + (k + first) * 4) % 64 / 4 == lead)
        .expect("a Vec<i32> is 4-aligned: one of 16 starts fits");
    v[at..at + offsets.len()].copy_from_slice(offsets);
    (v, at)
}

struct Index {
    layout: AddrIndexLayout,
    words: Vec<u32>,
    deltas: Vec<u16>,
}

fn index(view: &KallsymsTables<'_>, sections: &Sections) -> Index {
    let layout = AddrIndexLayout::for_table(view, sections);
    let mut words = vec![0; layout.bucket_words];
    let mut deltas = vec![0; layout.delta_words];
    build_addr_index(view, layout, &mut words, &mut deltas).expect("index builds");
    Index {
        layout,
        words,
        deltas,
    }
}

/// Fast against mainline at the edges of every block of `layout`; returns
/// how many probed block boundaries split an alias group.
fn compare_at_block_edges(
    view: KallsymsTables<'_>,
    sections: Sections,
    ix: &Index,
    tokens: &TokenSlots,
) -> usize {
    let fast = FastCore {
        tables: view,
        sections,
        addr: AddrIndex::from_parts(ix.layout, &ix.words, &ix.deltas),
        tokens,
    };
    let main = Mainline::new(view, sections);
    let (mut n1, mut n2) = (NameBuf::new(), NameBuf::new());
    let n = view.len();
    let mut split_aliases = 0;
    for b in 0..ix.layout.blocks {
        let start = ix.layout.block_start(b).expect("block start");
        let end = ix.layout.block_start(b + 1).map_or(n, |e| e.min(n));
        if start > 0 && end < n && view.sym_address(end) == view.sym_address(end - 1) {
            split_aliases += 1;
        }
        let edges = [start, start + 1, end.saturating_sub(2), end - 1];
        for p in edges.into_iter().filter(|&p| p >= start && p < end) {
            let a = view.sym_address(p).expect("address");
            for addr in [a, a.wrapping_sub(1), a + 1, a + 7] {
                let want = main.lookup(addr, &mut n1);
                let got = fast.lookup(addr, &mut n2);
                assert_eq!(
                    got, want,
                    "position of {addr:#x} (block {b}, lead {})",
                    ix.layout.lead
                );
                // Mainline leaves the buffer as it was when it finds
                // nothing: names are compared for answers only.
                if want.is_some() {
                    assert_eq!(n1.as_bytes(), n2.as_bytes(), "name of {addr:#x}");
                }
            }
        }
    }
    split_aliases
}

#[test]
fn blocks_follow_offsets_lines_at_every_alignment() {
    let (tables, sections) = sample();
    let view0 = tables.view();
    let tokens = TokenSlots::new(&view0).expect("tokens");
    let first = AddrIndexLayout::for_table(&view0, &sections).first;
    let mut split_aliases = 0;
    for lead in 0..FAN {
        let (storage, at) = offsets_at(&tables.offsets, first, lead);
        let view = KallsymsTables {
            offsets: &storage[at..at + tables.offsets.len()],
            ..view0
        };
        let ix = index(&view, &sections);
        let l = ix.layout;
        assert_eq!(l.first, first);
        assert_eq!(l.lead, lead, "lead follows where kallsyms_offsets lies");
        assert_eq!(
            l.block_start(1),
            Some(first + FAN - lead),
            "block 0 ends with its line"
        );
        for b in 0..l.blocks {
            let p = l.block_start(b).expect("block start");
            if b > 0 {
                let entry = std::ptr::from_ref(&view.offsets[p]) as usize;
                assert_eq!(entry % 64, 0, "block {b} starts a line (lead {lead})");
            }
            assert_eq!(
                Some(ix.words[l.rec_start + b] as usize),
                record_offset(&view, p),
                "record offset of block {b} (lead {lead})"
            );
        }
        // Every record by position, as the name index finds them (from
        // the block's first record), and the end of the last one.
        let addr = AddrIndex::from_parts(l, &ix.words, &ix.deltas);
        let mut end = 0;
        for p in 0..view.len() {
            assert_eq!(
                addr.name_offset_by_block(&view, p),
                Some(end),
                "record {p} (lead {lead})"
            );
            end = skip_record(&view, end).expect("record");
        }
        assert_eq!(ix.words[l.rec_start + l.blocks] as usize, end);
        split_aliases += compare_at_block_edges(view, sections, &ix, &tokens);
    }
    // The table has alias groups; with 16 alignments some straddle a
    // block boundary, which the next-block end must not be taken for.
    assert!(
        split_aliases > 0,
        "no probed block boundary split an alias group"
    );
}

#[test]
fn an_index_answers_over_a_copy_at_another_alignment() {
    let (tables, sections) = sample();
    let view0 = tables.view();
    let tokens = TokenSlots::new(&view0).expect("tokens");
    let first = AddrIndexLayout::for_table(&view0, &sections).first;
    let (built_at, a) = offsets_at(&tables.offsets, first, 3);
    let built_view = KallsymsTables {
        offsets: &built_at[a..a + tables.offsets.len()],
        ..view0
    };
    let ix = index(&built_view, &sections);
    let (other, b) = offsets_at(&tables.offsets, first, 11);
    let view = KallsymsTables {
        offsets: &other[b..b + tables.offsets.len()],
        ..view0
    };
    assert_ne!(
        AddrIndexLayout::for_table(&view, &sections).lead,
        ix.layout.lead
    );
    compare_at_block_edges(view, sections, &ix, &tokens);
}
