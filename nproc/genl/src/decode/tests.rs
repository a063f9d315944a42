//! Decoding of hand-built replies, laid out as the kernel's nla_put*()
//! lays them out.

use super::*;
use nproc_proto::{field_id, TASK_FIELDS};

/// One attribute: header, value, padding to 4 bytes.
fn nla(kind: u16, value: &[u8]) -> Vec<u8> {
    let len = 4 + value.len();
    let mut v = Vec::new();
    v.extend_from_slice(&(len as u16).to_ne_bytes());
    v.extend_from_slice(&kind.to_ne_bytes());
    v.extend_from_slice(value);
    v.resize(len.next_multiple_of(4), 0);
    v
}

fn nested(kind: u16, attrs: &[Vec<u8>]) -> Vec<u8> {
    nla(kind, &attrs.concat())
}

#[test]
fn task_record_with_padding_and_string() {
    let body = [
        nla(field_id::TGID, &42u32.to_ne_bytes()),
        nla(field_id::COMM, b"kworker/0:1\0"),
        nla(field_id::NICE, &(-5i32).to_ne_bytes()),
        nla(0, &[]), // the pad nla_put_u64_64bit() may add
        nla(field_id::VSIZE, &(1u64 << 40).to_ne_bytes()),
        nla(field_id::WCHAN, b"0\0"),
    ];
    let msg = nested(attr::TASK, &body);
    let r = task(&msg).unwrap();
    assert_eq!(r.get(field_id::TGID), Some(&Value::U32(42)));
    assert_eq!(
        r.get(field_id::COMM),
        Some(&Value::Str(b"kworker/0:1".to_vec()))
    );
    assert_eq!(r.get(field_id::NICE), Some(&Value::S32(-5)));
    assert_eq!(r.get(field_id::VSIZE), Some(&Value::U64(1 << 40)));
    assert_eq!(r.get(field_id::WCHAN).unwrap().to_string(), "0");
    assert_eq!(r.get(field_id::PPID), None);
    assert_eq!(r.values.len(), 5);
}

#[test]
fn wrong_length_names_the_field() {
    let msg = nested(attr::TASK, &[nla(field_id::VSIZE, &7u32.to_ne_bytes())]);
    let e = task(&msg).unwrap_err().to_string();
    assert!(e.contains("field vsize"), "{e}");
    assert!(e.contains("4 bytes for a u64"), "{e}");
}

#[test]
fn string_without_nul_is_an_error() {
    let msg = nested(attr::TASK, &[nla(field_id::COMM, b"abc")]);
    assert!(task(&msg).unwrap_err().to_string().contains("without NUL"));
}

#[test]
fn truncated_attribute_is_an_error() {
    let mut msg = nested(attr::TASK, &[nla(field_id::TGID, &1u32.to_ne_bytes())]);
    msg.truncate(msg.len() - 2);
    assert!(task(&msg).is_err());
}

#[test]
fn unknown_field_is_kept_raw() {
    let msg = nested(attr::TASK, &[nla(1000, &[1, 2, 3, 4])]);
    let r = task(&msg).unwrap();
    assert_eq!(r.get(1000), Some(&Value::Raw(vec![1, 2, 3, 4])));
}

#[test]
fn field_description() {
    let msg = nested(
        attr::FIELD,
        &[
            nla(field_attr::ID, &u32::from(field_id::RSS).to_ne_bytes()),
            nla(field_attr::NAME, b"rss\0"),
            nla(field_attr::TYPE, &2u32.to_ne_bytes()),
            nla(field_attr::UNIT, &2u32.to_ne_bytes()),
            nla(field_attr::FLAGS, &0u32.to_ne_bytes()),
            nla(field_attr::SET, &1u32.to_ne_bytes()),
        ],
    );
    let f = field_info(&msg).unwrap();
    assert_eq!(f.id, field_id::RSS);
    assert_eq!(f.name, "rss");
    assert_eq!(f.ty, Some(FieldType::U64));
    assert_eq!(f.unit, Some(Unit::Pages));
    assert_eq!(f.set, Some(FieldSet::Task));
}

#[test]
fn field_description_needs_id_and_name() {
    let msg = nested(attr::FIELD, &[nla(field_attr::NAME, b"rss\0")]);
    assert!(field_info(&msg)
        .unwrap_err()
        .to_string()
        .contains("without id"));
}

#[test]
fn missing_nest_is_an_error() {
    let msg = nla(attr::GLOBAL, &[]);
    assert!(task(&msg).unwrap_err().to_string().contains("no attribute"));
}

#[test]
fn extack_text() {
    let tlvs = [
        nla(2, &8u32.to_ne_bytes()),
        nla(1, b"unknown field id 63\0"),
    ]
    .concat();
    assert_eq!(
        extack_message(&tlvs).as_deref(),
        Some("unknown field id 63")
    );
    assert_eq!(extack_message(&[]), None);
}

#[test]
fn extack_missing_attribute() {
    let tlvs = nla(5, &u32::from(attr::FIELDS).to_ne_bytes());
    assert_eq!(
        extack_message(&tlvs).as_deref(),
        Some("missing attribute 2 (the field bitmap)")
    );
}

#[test]
fn bytes_keep_their_nuls_and_length() {
    // A command line: NUL-separated, no terminator added; padding after
    // an odd length is not part of the value; an empty one is empty.
    let msg = nested(
        attr::TASK,
        &[
            nla(field_id::TGID, &7u32.to_ne_bytes()),
            nla(field_id::CMDLINE, b"sleep\x001000\x00x"),
        ],
    );
    let r = task(&msg).unwrap();
    assert_eq!(
        r.get(field_id::CMDLINE),
        Some(&Value::Bytes(b"sleep\x001000\x00x".to_vec()))
    );
    assert_eq!(
        r.get(field_id::CMDLINE).unwrap().to_string(),
        "sleep\\x001000\\x00x"
    );
    let msg = nested(attr::TASK, &[nla(field_id::CMDLINE, b"")]);
    assert_eq!(
        task(&msg).unwrap().get(field_id::CMDLINE),
        Some(&Value::Bytes(Vec::new()))
    );
}

#[test]
fn ids_out_of_order_are_sorted() {
    let body = [
        nla(field_id::WCHAN, b"do_nanosleep\0"),
        nla(field_id::TGID, &7u32.to_ne_bytes()),
        nla(field_id::COMM, b"sleep\0"),
    ];
    let r = task(&nested(attr::TASK, &body)).unwrap();
    let ids: Vec<u16> = r.values.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [field_id::TGID, field_id::COMM, field_id::WCHAN]);
    assert_eq!(r.get(field_id::TGID), Some(&Value::U32(7)));
}

#[test]
fn a_view_borrows_what_a_record_copies() {
    let body = [
        nla(field_id::TGID, &7u32.to_ne_bytes()),
        nla(0, &[]), // padding
        nla(field_id::COMM, b"sleep\0"),
        nla(1000, &[1, 2, 3, 4]),
    ];
    let msg = nested(attr::TASK, &body);
    let mut seen = Vec::new();
    task_view(&msg)
        .unwrap()
        .for_each(|id, v| seen.push((id, v.to_owned())))
        .unwrap();
    assert_eq!(seen, task(&msg).unwrap().values);
    let bad = nested(attr::TASK, &[nla(field_id::COMM, b"abc")]);
    let e = task_view(&bad).unwrap().for_each(|_, _| {}).unwrap_err();
    assert!(e.to_string().contains("without NUL"), "{e}");
}

/// A task nest with every field of the table, each value distinct, in id
/// order as the kernel sends them.
fn every_field() -> Vec<u8> {
    let body: Vec<Vec<u8>> = TASK_FIELDS
        .iter()
        .map(|d| {
            let n = 1_000 + u64::from(d.id);
            match d.ty {
                FieldType::U32 => nla(d.id, &(n as u32).to_ne_bytes()),
                FieldType::S32 => nla(d.id, &(-(n as i32)).to_ne_bytes()),
                FieldType::U64 => nla(d.id, &(n << 33).to_ne_bytes()),
                FieldType::String => nla(d.id, format!("{}\0", d.name).as_bytes()),
                FieldType::Bytes => nla(d.id, b"a\0b\0"),
            }
        })
        .collect();
    nested(attr::TASK, &body)
}

#[test]
fn every_text_field_has_a_slot() {
    for d in TASK_FIELDS.iter() {
        let text = matches!(d.ty, FieldType::String | FieldType::Bytes);
        assert_eq!(text_slot(d.id).is_some(), text, "{}", d.name);
    }
    // Slots are distinct.
    let mut slots: Vec<usize> = TASK_FIELDS.iter().filter_map(|d| text_slot(d.id)).collect();
    slots.sort();
    slots.dedup();
    assert_eq!(slots.len(), 3);
}

#[test]
fn decode_gives_what_for_each_gives() {
    for msg in [
        every_field(),
        nested(
            attr::TASK,
            &[
                nla(field_id::TGID, &7u32.to_ne_bytes()),
                nla(0, &[]),
                nla(field_id::COMM, b"sleep\0junk"),
                nla(1000, &[1, 2, 3, 4]),
                // A repeated id: the last value counts, in both.
                nla(field_id::TGID, &9u32.to_ne_bytes()),
            ],
        ),
    ] {
        let view = task_view(&msg).unwrap();
        let vals = view.decode().unwrap();
        let mut seen = std::collections::BTreeMap::new();
        view.for_each(|id, v| {
            seen.insert(id, v);
        })
        .unwrap();
        for d in TASK_FIELDS.iter() {
            let want = seen.get(&d.id);
            assert_eq!(vals.has(d.id), want.is_some(), "{}", d.name);
            match want {
                None => {
                    assert_eq!(vals.num(d.id), 0, "{}", d.name);
                    assert_eq!(vals.text(d.id), None, "{}", d.name);
                }
                Some(ValueRef::Str(b) | ValueRef::Bytes(b)) => {
                    assert_eq!(vals.text(d.id), Some(*b), "{}", d.name)
                }
                Some(v) => assert_eq!(Some(vals.num(d.id)), v.as_u64(), "{}", d.name),
            }
        }
        assert!(!vals.has(0) && !vals.has(1000) && vals.num(1000) == 0);
    }
    let msg = every_field();
    let vals = task_view(&msg).unwrap().decode().unwrap();
    assert_eq!(vals.num(field_id::NICE), (-1020i32) as u64);
    assert_eq!(vals.text(field_id::COMM), Some(&b"comm"[..]));
    assert_eq!(vals.text(field_id::CMDLINE), Some(&b"a\0b\0"[..]));
}

#[test]
fn decode_refuses_what_for_each_refuses() {
    for (body, what) in [
        (
            nla(field_id::VSIZE, &7u32.to_ne_bytes()),
            "4 bytes for a u64",
        ),
        (
            nla(field_id::TGID, &7u64.to_ne_bytes()),
            "8 bytes for a u32",
        ),
        (nla(field_id::NICE, &[1, 2]), "2 bytes for a s32"),
        (nla(field_id::COMM, b"abc"), "without NUL"),
        (vec![12, 0, 1, 0, 0, 0, 0, 0], "length 12"),
    ] {
        let msg = nested(attr::TASK, &[body]);
        let view = task_view(&msg).unwrap();
        let e = view.decode().unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
        assert_eq!(e, view.for_each(|_, _| {}).unwrap_err().to_string());
    }
}
