//! Table invariants, and the check that the kernel's C view of the format
//! (the series' `include/uapi/linux/nproc.h`) is derived from this crate.

use nproc_proto::*;
use std::collections::HashSet;

fn check_table(table: &[FieldDesc], max: u16) {
    assert_eq!(table.len(), usize::from(max));
    let mut names = HashSet::new();
    for (i, d) in table.iter().enumerate() {
        assert_eq!(usize::from(d.id), i + 1, "ids are dense from 1: {}", d.name);
        assert!(names.insert(d.name), "duplicate name {}", d.name);
        assert!(!d.name.is_empty() && d.name.len() <= NAME_MAX, "{}", d.name);
        assert!(
            d.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{}",
            d.name
        );
        assert_eq!(d.flags & !flags::ALL, 0, "{}: unknown flag", d.name);
        assert!(!d.proc_source.is_empty(), "{}", d.name);
        assert_eq!(FieldType::from_u32(d.ty as u32), Some(d.ty));
        assert_eq!(Unit::from_u32(d.unit as u32), Some(d.unit));
    }
}

#[test]
fn task_fields_dense_unique() {
    check_table(&TASK_FIELDS, field_id::MAX);
}

#[test]
fn global_items_dense_unique() {
    check_table(&GLOBAL_ITEMS, global_id::MAX);
}

#[test]
fn lookups_by_id_and_name() {
    for d in TASK_FIELDS.iter() {
        assert_eq!(task_field(d.id), Some(d));
        assert_eq!(task_field_by_name(d.name), Some(d));
    }
    for d in GLOBAL_ITEMS.iter() {
        assert_eq!(global_item(d.id), Some(d));
    }
    assert_eq!(task_field(0), None);
    assert_eq!(task_field(field_id::MAX + 1), None);
    assert_eq!(global_item(global_id::MAX + 1), None);
    assert_eq!(task_field_by_name("nosuchfield"), None);
}

#[test]
fn bitmap_covers_every_id() {
    let all = FieldBitmap::all();
    for d in TASK_FIELDS.iter() {
        assert!(all.contains(d.id), "{}", d.name);
    }
    assert!(!all.contains(0), "id 0 is no field");
    let mut b = FieldBitmap::default();
    assert!(!b.set(u16::try_from(BITMAP_WORDS * 32).unwrap()));
    assert_eq!(b, FieldBitmap::default());
    assert!(b.set(field_id::MAX));
    let bytes = b.to_ne_bytes();
    let w = usize::from(field_id::MAX / 32);
    let word = u32::from_ne_bytes(bytes[w * 4..w * 4 + 4].try_into().unwrap());
    assert_eq!(word, 1 << (field_id::MAX % 32));
}

#[test]
fn wire_enums_round_trip() {
    for s in [
        Scope::Processes,
        Scope::Threads,
        Scope::Pid,
        Scope::Children,
    ] {
        assert_eq!(Scope::from_u32(s as u32), Some(s));
    }
    assert_eq!(Scope::from_u32(0), None);
    assert_eq!(
        FieldSet::from_u32(FieldSet::Global as u32),
        Some(FieldSet::Global)
    );
    assert_eq!(FieldType::from_u32(0), None);
    assert_eq!(Unit::from_u32(12), None);
}

#[test]
fn wchan_is_guarded_like_proc() {
    let w = task_field(field_id::WCHAN).unwrap();
    assert_eq!(w.ty, FieldType::String);
    assert_ne!(w.flags & flags::NEEDS_PTRACE, 0);
    assert_ne!(w.flags & flags::EXPENSIVE, 0);
}

fn upper(name: &str) -> String {
    name.to_ascii_uppercase()
}

/// The C header the kernel patch must carry, rendered from this crate.
fn render_uapi_header() -> String {
    let mut h = String::new();
    h += "/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */\n";
    h += "/*\n * nproc: process information over generic netlink.\n *\n";
    h += " * Derived from the nproc-proto crate (kernel/nproc/proto/), the one\n";
    h += " * source of truth for this format; its tests fail when this header\n";
    h += " * differs. Field names, types, units and flags: NPROC_CMD_GET_FIELDS.\n */\n";
    h += "#ifndef _UAPI_LINUX_NPROC_H\n#define _UAPI_LINUX_NPROC_H\n\n";
    h += &format!("#define NPROC_FAMILY_NAME\t\"{FAMILY_NAME}\"\n");
    h += &format!("#define NPROC_FAMILY_VERSION\t{FAMILY_VERSION}\n");
    h += &format!("#define NPROC_NAME_MAX\t\t{NAME_MAX}\n");
    h += &format!("#define NPROC_BITMAP_WORDS_MAX\t{BITMAP_WORDS_MAX}\n");
    h += &format!("#define NPROC_CMDLINE_MAX\t{CMDLINE_MAX}\n\n");
    let cmds = [
        ("GET_FIELDS", Cmd::GetFields),
        ("GET_GLOBAL", Cmd::GetGlobal),
        ("GET_TASKS", Cmd::GetTasks),
    ];
    let mut cmd_lines = Vec::new();
    for (n, c) in cmds {
        cmd_lines.push((format!("NPROC_CMD_{n}"), c as u32));
    }
    h += &render_enum("nproc_cmd", "NPROC_CMD_UNSPEC", &cmd_lines, "NPROC_CMD_MAX");
    let attrs = [
        ("FIELD", attr::FIELD),
        ("FIELDS", attr::FIELDS),
        ("SCOPE", attr::SCOPE),
        ("PID", attr::PID),
        ("TASK", attr::TASK),
        ("GLOBAL", attr::GLOBAL),
        ("PROCFS_FD", attr::PROCFS_FD),
    ];
    let lines: Vec<_> = attrs
        .iter()
        .map(|(n, v)| (format!("NPROC_A_{n}"), u32::from(*v)))
        .collect();
    assert_eq!(lines.len(), usize::from(attr::MAX));
    h += &render_enum("nproc_attr", "NPROC_A_UNSPEC", &lines, "NPROC_A_MAX");
    let fattrs = [
        ("ID", field_attr::ID),
        ("NAME", field_attr::NAME),
        ("TYPE", field_attr::TYPE),
        ("UNIT", field_attr::UNIT),
        ("FLAGS", field_attr::FLAGS),
        ("SET", field_attr::SET),
    ];
    let lines: Vec<_> = fattrs
        .iter()
        .map(|(n, v)| (format!("NPROC_FA_{n}"), u32::from(*v)))
        .collect();
    assert_eq!(lines.len(), usize::from(field_attr::MAX));
    h += &render_enum(
        "nproc_field_attr",
        "NPROC_FA_UNSPEC",
        &lines,
        "NPROC_FA_MAX",
    );
    let types = [
        FieldType::U32,
        FieldType::U64,
        FieldType::S32,
        FieldType::String,
        FieldType::Bytes,
    ];
    let lines: Vec<_> = types
        .iter()
        .map(|t| (format!("NPROC_TYPE_{}", upper(t.name())), *t as u32))
        .collect();
    h += &render_plain_enum("nproc_type", &lines);
    let lines: Vec<_> = (0..32)
        .filter_map(Unit::from_u32)
        .map(|u| {
            let n = match u {
                Unit::None => String::from("NONE"),
                _ => upper(&u.name().replace('-', "_")),
            };
            (format!("NPROC_UNIT_{n}"), u as u32)
        })
        .collect();
    h += &render_plain_enum("nproc_unit", &lines);
    h += &format!(
        "#define NPROC_FLAG_NEEDS_PTRACE\t0x{:x}\n",
        flags::NEEDS_PTRACE
    );
    h += &format!("#define NPROC_FLAG_PER_THREAD\t0x{:x}\n", flags::PER_THREAD);
    h += &format!("#define NPROC_FLAG_EXPENSIVE\t0x{:x}\n\n", flags::EXPENSIVE);
    let lines = [
        (String::from("NPROC_SET_TASK"), FieldSet::Task as u32),
        (String::from("NPROC_SET_GLOBAL"), FieldSet::Global as u32),
    ];
    h += &render_plain_enum("nproc_set", &lines);
    let scopes = [
        ("PROCESSES", Scope::Processes),
        ("THREADS", Scope::Threads),
        ("PID", Scope::Pid),
        ("CHILDREN", Scope::Children),
    ];
    let lines: Vec<_> = scopes
        .iter()
        .map(|(n, s)| (format!("NPROC_SCOPE_{n}"), *s as u32))
        .collect();
    h += &render_plain_enum("nproc_scope", &lines);
    let lines: Vec<_> = TASK_FIELDS
        .iter()
        .map(|d| (format!("NPROC_F_{}", upper(d.name)), u32::from(d.id)))
        .collect();
    h += &render_enum("nproc_field", "NPROC_F_UNSPEC", &lines, "NPROC_F_MAX");
    let lines: Vec<_> = GLOBAL_ITEMS
        .iter()
        .map(|d| (format!("NPROC_G_{}", upper(d.name)), u32::from(d.id)))
        .collect();
    h += &render_enum("nproc_global", "NPROC_G_UNSPEC", &lines, "NPROC_G_MAX");
    h += "#endif /* _UAPI_LINUX_NPROC_H */\n";
    h
}

/// An enum whose first line is an UNSPEC 0 and whose values are dense,
/// with the kernel's `__X_MAX` / `X_MAX` pair at the end.
fn render_enum(tag: &str, unspec: &str, lines: &[(String, u32)], max: &str) -> String {
    for (i, (n, v)) in lines.iter().enumerate() {
        assert_eq!(*v as usize, i + 1, "{n} is not dense");
    }
    let mut s = format!("enum {tag} {{\n\t{unspec},\n");
    for (n, _) in lines {
        s += &format!("\t{n},\n");
    }
    s += &format!("\n\t__{max},\n\t{max} = __{max} - 1\n}};\n\n");
    s
}

fn render_plain_enum(tag: &str, lines: &[(String, u32)]) -> String {
    let mut s = format!("enum {tag} {{\n");
    for (n, v) in lines {
        s += &format!("\t{n} = {v},\n");
    }
    s += "};\n\n";
    s
}

#[test]
fn uapi_header_is_derived_from_this_crate() {
    // The series' overlay: the header as the nproc patch adds it.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../kernel/series/tree/include/uapi/linux/nproc.h"
    );
    let header = std::fs::read_to_string(path).unwrap();
    let want = render_uapi_header();
    assert!(
        header == want,
        "{path} is not what nproc-proto says; it must be:\n{want}"
    );
}
