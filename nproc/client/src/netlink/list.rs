//! `nps --fields`: the kernel's own description of what it serves.

use nproc_genl::FieldInfo;
use nproc_proto::{flags, FieldSet};
use std::io::{self, Write};

/// The flag names, in bit order.
fn flag_names(bits: u32) -> String {
    let mut names = Vec::new();
    for (bit, name) in [
        (flags::NEEDS_PTRACE, "needs-ptrace"),
        (flags::PER_THREAD, "per-thread"),
        (flags::EXPENSIVE, "expensive"),
    ] {
        if bits & bit != 0 {
            names.push(name.to_string());
        }
    }
    let unknown = bits & !flags::ALL;
    if unknown != 0 {
        names.push(format!("0x{unknown:x}"));
    }
    if names.is_empty() {
        "-".into()
    } else {
        names.join(",")
    }
}

/// One line per field, as `GET_FIELDS` sent them: id, set, name, type,
/// unit, flags. Values this client does not know (a newer kernel) print
/// as `?`.
pub fn print_fields(out: &mut dyn Write, fields: &[FieldInfo]) -> io::Result<()> {
    writeln!(
        out,
        "{:>3} {:<6} {:<15} {:<6} {:<22} FLAGS",
        "ID", "SET", "NAME", "TYPE", "UNIT"
    )?;
    for fi in fields {
        let set = match fi.set {
            Some(FieldSet::Task) => "task",
            Some(FieldSet::Global) => "global",
            None => "?",
        };
        writeln!(
            out,
            "{:>3} {:<6} {:<15} {:<6} {:<22} {}",
            fi.id,
            set,
            fi.name,
            fi.ty.map_or("?", |t| t.name()),
            fi.unit.map_or("?", |u| u.name()),
            flag_names(fi.flags)
        )?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nproc_proto::{FieldType, Unit};

    #[test]
    fn lines() {
        let f = FieldInfo {
            id: 42,
            name: "wchan".into(),
            ty: Some(FieldType::String),
            unit: Some(Unit::None),
            flags: flags::ALL | 0x10,
            set: Some(FieldSet::Task),
        };
        let g = FieldInfo {
            id: 9,
            name: "pid_max".into(),
            ty: None,
            unit: Some(Unit::Count),
            flags: 0,
            set: Some(FieldSet::Global),
        };
        let mut out = Vec::new();
        print_fields(&mut out, &[f, g]).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            " ID SET    NAME            TYPE   UNIT                   FLAGS\n\
             \x2042 task   wchan           string -                      needs-ptrace,per-thread,expensive,0x10\n\
             \x20 9 global pid_max         ?      count                  -\n"
        );
    }
}
