//! Decoding of hand-built replies, laid out as the kernel's nla_put*()
//! lays them out.

use super::*;
use nproc_proto::field_id;

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

/// A task's attributes of each type, with the pad attribute
/// nla_put_u64_64bit() may add.
fn sample_task() -> [Vec<u8>; 6] {
    [
        nla(field_id::TGID, &42u32.to_ne_bytes()),
        nla(field_id::COMM, b"kworker/0:1\0"),
        nla(field_id::NICE, &(-5i32).to_ne_bytes()),
        nla(0, &[]),
        nla(field_id::VSIZE, &(1u64 << 40).to_ne_bytes()),
        nla(field_id::WCHAN, b"0\0"),
    ]
}

#[test]
fn task_record_with_padding_and_string() {
    let msg = nested(attr::TASK, &sample_task());
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

/// The raw walk with the table-typed readers gives what the typed walk
/// gives, and the same errors.
#[test]
fn raw_walk_and_typed_readers_agree_with_the_typed_walk() {
    let nest = sample_task().concat();
    let view = TaskView::from_nest(&nest);
    let mut typed = Vec::new();
    view.for_each(|id, v| typed.push((id, v))).unwrap();
    let mut raw = Vec::new();
    view.for_each_raw(|id, v| {
        raw.push(match id {
            field_id::TGID => (
                id,
                ValueRef::U32(task_number::<{ field_id::TGID }>(v)? as u32),
            ),
            field_id::NICE => (
                id,
                ValueRef::S32(task_number::<{ field_id::NICE }>(v)? as u32 as i32),
            ),
            field_id::VSIZE => (id, ValueRef::U64(task_number::<{ field_id::VSIZE }>(v)?)),
            field_id::COMM => (id, ValueRef::Str(task_string::<{ field_id::COMM }>(v)?)),
            field_id::WCHAN => (id, ValueRef::Str(task_string::<{ field_id::WCHAN }>(v)?)),
            _ => unreachable!("{id}"),
        });
        Ok(())
    })
    .unwrap();
    assert_eq!(raw, typed);

    let short = nla(field_id::VSIZE, &7u32.to_ne_bytes());
    let e = TaskView::from_nest(&short)
        .for_each_raw(|_, v| task_number::<{ field_id::VSIZE }>(v).map(drop))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("field vsize (") && e.contains("4 bytes for a u64"),
        "{e}"
    );
    let long = nla(field_id::TGID, &7u64.to_ne_bytes());
    let e = TaskView::from_nest(&long)
        .for_each_raw(|_, v| task_number::<{ field_id::TGID }>(v).map(drop))
        .unwrap_err()
        .to_string();
    assert!(e.contains("8 bytes for a u32"), "{e}");
    let no_nul = nla(field_id::COMM, b"abc");
    let e = TaskView::from_nest(&no_nul)
        .for_each_raw(|_, v| task_string::<{ field_id::COMM }>(v).map(drop))
        .unwrap_err()
        .to_string();
    assert!(e.contains("without NUL"), "{e}");
    // A malformed attribute ends the walk with its error.
    let mut bad = nla(field_id::TGID, &1u32.to_ne_bytes());
    bad.extend([2, 0, 5, 0]);
    assert!(TaskView::from_nest(&bad)
        .for_each_raw(|_, _| Ok(()))
        .is_err());
}
