//! `KallsymsTables::validate()` refuses malformed tables, naming the field,
//! and accepts every well-formed one. The kernel shim and the mirror build
//! their indexes only over tables that pass, so each case here is a table
//! a lookup would otherwise read out of bounds or answer wrongly on.
//!
//! Every case starts from one valid table (random multi-byte tokens, two
//! full marker blocks and a partial one, big names, duplicate names) and
//! breaks exactly one thing.

use kallsyms_fast_tests::token_tables;
use kallsyms_mirror::fast::{build_addr_index, AddrIndexLayout};
use kallsyms_mirror::mainline::Mainline;
use kallsyms_mirror::mirror::{Algo, Mirror};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::owned::{OwnedTables, RawSymbol};
use kallsyms_mirror::{KallsymsTables, OffsetEncoding, Sections, TableError, KSYM_NAME_LEN};

const TEXT: u64 = 0xffff_ffff_8100_0000;
const N: usize = 600;

fn symbols() -> Vec<RawSymbol> {
    (0..N as u64)
        .map(|i| {
            let name = match i {
                // Two symbols share a name: equal names sort by address.
                10 | 400 => b"dup_name".to_vec(),
                // A name of KSYM_NAME_LEN - 1 bytes, the longest accepted.
                300 => vec![b'L'; KSYM_NAME_LEN - 1],
                // Big records: two-byte length headers.
                _ if i % 97 == 0 => format!("big_{}", "x_y".repeat(60 + i as usize % 7)).into(),
                _ => format!("sym_{}", (i * 7919) % 1000).into(),
            };
            RawSymbol {
                addr: TEXT + i * 32,
                kind: b"tTdD"[i as usize % 4],
                name,
            }
        })
        .collect()
}

fn sections() -> Sections {
    Sections {
        stext: TEXT,
        etext: TEXT + N as u64 * 32,
        end: TEXT + N as u64 * 32,
        all_symbols: true,
        ..Default::default()
    }
}

fn good() -> OwnedTables {
    token_tables(&symbols(), false, sections(), 7)
}

fn check(view: &KallsymsTables<'_>) -> Result<(), TableError> {
    let mut scratch = vec![0u64; view.len().div_ceil(64)];
    view.validate(&mut scratch)
}

fn check_owned(t: &OwnedTables) -> Result<(), TableError> {
    check(&t.view())
}

/// validate(), then the name order, through the marker walk and through
/// the address index, which must agree.
fn check_order(t: &OwnedTables) -> Result<(), TableError> {
    let view = t.view();
    check(&view)?;
    let walk = view.check_name_order(|pos| kallsyms_mirror::name::record_offset(&view, pos));
    let layout = AddrIndexLayout::for_table(&view, &t.sections);
    let mut buckets = vec![0; layout.bucket_words];
    let mut deltas = vec![0; layout.delta_words];
    let index = build_addr_index(&view, layout, &mut buckets, &mut deltas).expect("index");
    let indexed = view.check_name_order(|pos| index.name_offset(&view, pos));
    assert_eq!(walk, indexed, "marker walk and address index agree");
    walk
}

/// The token bytes of every record, in address order.
fn records(t: &OwnedTables) -> Vec<Vec<u8>> {
    let view = t.view();
    let mut off = 0;
    (0..view.len())
        .map(|_| {
            let (data, len) = view.record_at(off).expect("record header");
            off = data + len;
            t.names[data..data + len].to_vec()
        })
        .collect()
}

/// Re-lays `kallsyms_names` and `kallsyms_markers` from token records.
fn set_records(t: &mut OwnedTables, records: &[Vec<u8>]) {
    t.names.clear();
    t.markers.clear();
    for (i, r) in records.iter().enumerate() {
        if i % 256 == 0 {
            t.markers.push(t.names.len() as u32);
        }
        if r.len() > 0x7f {
            t.names
                .extend([(r.len() & 0x7f) as u8 | 0x80, (r.len() >> 7) as u8]);
        } else {
            t.names.push(r.len() as u8);
        }
        t.names.extend_from_slice(r);
    }
}

/// Replaces token `slot` by `bytes`, re-laying the token table.
fn set_token(t: &mut OwnedTables, slot: u8, bytes: &[u8]) {
    let view = t.view();
    let mut tokens: Vec<Vec<u8>> = (0..=255u8)
        .map(|b| view.token(b).expect("token").to_vec())
        .collect();
    tokens[slot as usize] = bytes.to_vec();
    t.token_table.clear();
    t.token_index.clear();
    for tok in tokens {
        t.token_index.push(t.token_table.len() as u16);
        t.token_table.extend_from_slice(&tok);
        t.token_table.push(0);
    }
}

fn seq(t: &OwnedTables, i: usize) -> [u8; 3] {
    t.seqs_of_names[3 * i..3 * i + 3]
        .try_into()
        .expect("3 bytes")
}

fn set_seq(t: &mut OwnedTables, i: usize, v: [u8; 3]) {
    t.seqs_of_names[3 * i..3 * i + 3].copy_from_slice(&v);
}

fn seq_value(v: [u8; 3]) -> usize {
    (v[0] as usize) << 16 | (v[1] as usize) << 8 | v[2] as usize
}

/// Fast and mainline agree on every symbol of an accepted table.
fn assert_lookups_agree(t: OwnedTables) {
    let addrs: Vec<u64> = (0..t.offsets.len())
        .map(|i| t.view().sym_address(i).expect("address"))
        .collect();
    let m = Mirror::new(t, Vec::new()).expect("accepted table builds its indexes");
    let (mut n1, mut n2) = (NameBuf::new(), NameBuf::new());
    for a in addrs {
        for addr in [a, a + 5] {
            assert_eq!(
                m.resolve(Algo::Mainline, addr, &mut n1),
                m.resolve(Algo::Fast, addr, &mut n2)
            );
            assert_eq!(n1.as_bytes(), n2.as_bytes(), "{addr:#x}");
            let name = n1.as_bytes().to_vec();
            assert_eq!(
                m.lookup_name(Algo::Mainline, &name, &mut n1),
                m.lookup_name(Algo::Fast, &name, &mut n2)
            );
        }
    }
}

#[test]
fn the_base_table_is_valid_and_has_what_the_cases_need() {
    let t = good();
    assert_eq!(check_order(&t), Ok(()));
    assert_eq!(t.markers.len(), 3);
    let recs = records(&t);
    assert!(recs.iter().any(|r| r.len() > 0x7f), "a two-byte header");
    let main = Mainline::new(t.view(), sections());
    let mut n = NameBuf::new();
    main.lookup(TEXT + 300 * 32, &mut n).expect("symbol 300");
    assert_eq!(n.len(), KSYM_NAME_LEN - 1);
    assert_lookups_agree(t);
}

#[test]
fn more_symbols_than_seqs_of_names_can_number() {
    let t = good();
    let view = KallsymsTables {
        num_syms: (1 << 24) + 1,
        ..t.view()
    };
    assert_eq!(check(&view), Err(TableError::TooMany));
}

/// An empty table validated once, and then the address index refused
/// to build over it (found by the `validate_tables` fuzz target).
#[test]
fn no_symbols() {
    let t = good();
    let view = KallsymsTables {
        num_syms: 0,
        ..t.view()
    };
    assert_eq!(check(&view), Err(TableError::Empty));
}

#[test]
fn truncated_tables() {
    let t = good();
    let v = t.view();
    let cases: [(KallsymsTables<'_>, &str); 4] = [
        (
            KallsymsTables {
                offsets: &t.offsets[..N - 1],
                ..v
            },
            "kallsyms_offsets",
        ),
        (
            KallsymsTables {
                markers: &t.markers[..2],
                ..v
            },
            "kallsyms_markers",
        ),
        (
            KallsymsTables {
                token_index: &t.token_index[..255],
                ..v
            },
            "kallsyms_token_index",
        ),
        (
            KallsymsTables {
                seqs_of_names: &t.seqs_of_names[..3 * N - 1],
                ..v
            },
            "kallsyms_seqs_of_names",
        ),
    ];
    for (view, field) in cases {
        assert_eq!(check(&view), Err(TableError::TooShort(field)));
    }
    let mut small = vec![0u64; N.div_ceil(64) - 1];
    assert_eq!(v.validate(&mut small), Err(TableError::TooShort("scratch")));
}

#[test]
fn names_running_past_the_end() {
    let t = good();
    let last = N as u32 - 1;
    // The last record loses its last byte.
    let view = KallsymsTables {
        names: &t.names[..t.names.len() - 1],
        ..t.view()
    };
    assert_eq!(check(&view), Err(TableError::BadNameRecord { pos: last }));
    // A big record whose second length byte is missing.
    let mut recs = records(&t);
    recs[N - 1] = vec![b'x'; 0x90];
    let mut big = t.clone();
    set_records(&mut big, &recs);
    let cut = big.names.len() - 0x90 - 1;
    let view = KallsymsTables {
        names: &big.names[..cut],
        ..big.view()
    };
    assert_eq!(check(&view), Err(TableError::BadNameRecord { pos: last }));
    // A length header larger than what follows.
    let mut long = t.clone();
    let len = records(&long)[N - 1].len();
    assert!(len < 0x7f, "the last record is small");
    let at = long.names.len() - len - 1;
    long.names[at] = len as u8 + 1;
    assert_eq!(
        check_owned(&long),
        Err(TableError::BadNameRecord { pos: last })
    );
}

#[test]
fn empty_records_and_names() {
    let t = good();
    // A zero-length record.
    let mut recs = records(&t);
    recs[5].clear();
    let mut empty = t.clone();
    set_records(&mut empty, &recs);
    assert_eq!(
        check_owned(&empty),
        Err(TableError::BadNameRecord { pos: 5 })
    );
    // A record that expands to the type character alone.
    let mut recs = records(&t);
    recs[5] = vec![b't'];
    let mut type_only = t.clone();
    set_records(&mut type_only, &recs);
    assert_eq!(check_owned(&type_only), Err(TableError::BadName { pos: 5 }));
}

#[test]
fn names_over_ksym_name_len() {
    let t = good();
    // Symbol 300's name is KSYM_NAME_LEN - 1 bytes: one more is too long.
    let mut recs = records(&t);
    recs[300].push(b'L');
    let mut over = t.clone();
    set_records(&mut over, &recs);
    assert_eq!(check_owned(&over), Err(TableError::BadName { pos: 300 }));
    // A token so long that a short record expands past the limit.
    let mut long_token = t.clone();
    let tok = recs[0][0];
    set_token(&mut long_token, tok, &[b't'; KSYM_NAME_LEN + 1]);
    assert!(matches!(
        check_owned(&long_token),
        Err(TableError::BadName { .. })
    ));
}

#[test]
fn markers_out_of_order_or_pointing_outside() {
    let t = good();
    let mut swapped = t.clone();
    swapped.markers.swap(1, 2);
    assert_eq!(
        check_owned(&swapped),
        Err(TableError::BadMarker { index: 1 })
    );
    let mut outside = t.clone();
    outside.markers[2] = outside.names.len() as u32 + 5;
    assert_eq!(
        check_owned(&outside),
        Err(TableError::BadMarker { index: 2 })
    );
    let mut inside_a_record = t.clone();
    inside_a_record.markers[1] += 1;
    assert_eq!(
        check_owned(&inside_a_record),
        Err(TableError::BadMarker { index: 1 })
    );
    let mut first = t;
    first.markers[0] = 1;
    assert_eq!(check_owned(&first), Err(TableError::BadMarker { index: 0 }));
}

#[test]
fn token_index_out_of_range() {
    let t = good();
    for (slot, to) in [(3u8, t.token_table.len() as u16), (200, u16::MAX)] {
        let mut bad = t.clone();
        bad.token_index[slot as usize] = to;
        assert_eq!(check_owned(&bad), Err(TableError::BadToken { token: slot }));
    }
    // The last token loses its NUL: it runs past the token table.
    let mut unterminated = t.clone();
    unterminated.token_table.pop();
    assert_eq!(
        check_owned(&unterminated),
        Err(TableError::BadToken { token: 255 })
    );
}

#[test]
fn overlapping_tokens_are_legal() {
    // Token 0x80 pointing into the middle of another token shares its
    // suffix: scripts/kallsyms never does it, but the kernel's reader
    // handles it, so validation accepts it and the lookups still agree.
    let mut t = good();
    let v = t.view();
    let (slot, tok) = (0..=255u8)
        .map(|b| (b, v.token(b).expect("token")))
        .find(|(_, tok)| tok.len() >= 3)
        .expect("a multi-byte token");
    let (tok_len, start) = (tok.len(), t.token_index[slot as usize]);
    let unused = (0..=255u8)
        .find(|&b| v.token(b).expect("token").is_empty())
        .expect("an unused slot");
    t.token_index[unused as usize] = start + 1;
    assert_eq!(
        t.view().token(unused).expect("token").len(),
        tok_len - 1,
        "a suffix"
    );
    assert_eq!(check_order(&t), Ok(()));
    assert_lookups_agree(t);
}

#[test]
fn offsets_not_sorted() {
    let mut t = good();
    t.offsets.swap(5, 6);
    assert_eq!(check_owned(&t), Err(TableError::Unsorted { pos: 6 }));
    // Order is checked on decoded addresses: with the per-CPU encoding,
    // non-negative offsets are absolute values.
    let mut p = good();
    p.encoding = OffsetEncoding::RelativeBase {
        base: p.encoding.relative_base().expect("a 6.12 table"),
        absolute_percpu: true,
    };
    p.offsets[0] = 0x10;
    p.offsets[1] = 0x08;
    assert_eq!(check_owned(&p), Err(TableError::Unsorted { pos: 1 }));
    // 7.3 PC-relative: each entry counts from its own address, so equal
    // entries ascend by 4 and an entry 5 below its predecessor descends.
    let mut r = good();
    r.encoding = OffsetEncoding::PcRelative { table_addr: TEXT };
    for o in r.offsets.iter_mut() {
        *o = 0;
    }
    assert_eq!(check_owned(&r), Ok(()));
    r.offsets[4] = -5;
    assert_eq!(check_owned(&r), Err(TableError::Unsorted { pos: 4 }));
    r.offsets[4] = -4;
    assert_eq!(check_owned(&r), Ok(()), "an alias of its predecessor");
}

#[test]
fn seqs_of_names_out_of_range_or_repeated() {
    let t = good();
    let mut out = t.clone();
    set_seq(&mut out, 7, [0, (N >> 8) as u8, N as u8]);
    assert_eq!(check_owned(&out), Err(TableError::BadSeq { index: 7 }));
    let mut far = t.clone();
    set_seq(&mut far, 0, [0xff; 3]);
    assert_eq!(check_owned(&far), Err(TableError::BadSeq { index: 0 }));
    let mut repeated = t.clone();
    let s = seq(&repeated, 3);
    set_seq(&mut repeated, 9, s);
    let first_dup = if seq_value(s) < N { 9 } else { 3 };
    assert_eq!(
        check_owned(&repeated),
        Err(TableError::BadSeq { index: first_dup })
    );
}

#[test]
fn seqs_of_names_out_of_name_order() {
    let t = good();
    // Two neighbours in name order, swapped: a permutation still, but the
    // binary search of kallsyms_lookup_names() would miss names.
    let mut swapped = t.clone();
    let (a, b) = (seq(&swapped, 40), seq(&swapped, 41));
    set_seq(&mut swapped, 40, b);
    set_seq(&mut swapped, 41, a);
    assert_eq!(check_owned(&swapped), Ok(()), "a permutation");
    assert_eq!(
        check_order(&swapped),
        Err(TableError::NameOrder { index: 41 })
    );
    // Equal names must come in address order: the kernel returns the
    // first, the lowest address.
    let mut ties = t.clone();
    let at = |t: &OwnedTables, pos: usize| {
        (0..N)
            .find(|&i| seq_value(seq(t, i)) == pos)
            .expect("in seqs")
    };
    let (i10, i400) = (at(&ties, 10), at(&ties, 400));
    assert_eq!(i10 + 1, i400, "dup_name entries are neighbours");
    let (a, b) = (seq(&ties, i10), seq(&ties, i400));
    set_seq(&mut ties, i10, b);
    set_seq(&mut ties, i400, a);
    assert_eq!(
        check_order(&ties),
        Err(TableError::NameOrder { index: i400 as u32 })
    );
}

#[test]
fn errors_name_the_field() {
    let cases = [
        (TableError::TooShort("kallsyms_markers"), "kallsyms_markers"),
        (TableError::BadNameRecord { pos: 3 }, "kallsyms_names"),
        (TableError::BadMarker { index: 1 }, "kallsyms_markers[1]"),
        (TableError::BadToken { token: 9 }, "kallsyms_token_index[9]"),
        (TableError::Unsorted { pos: 4 }, "kallsyms_offsets[4]"),
        (TableError::BadSeq { index: 2 }, "kallsyms_seqs_of_names[2]"),
        (
            TableError::NameOrder { index: 2 },
            "kallsyms_seqs_of_names[2]",
        ),
        (TableError::BadName { pos: 5 }, "kallsyms_names"),
        (TableError::TooMany, "kallsyms_num_syms"),
        (TableError::Empty, "kallsyms_num_syms"),
    ];
    for (e, field) in cases {
        assert!(e.to_string().contains(field), "{e}");
    }
}
