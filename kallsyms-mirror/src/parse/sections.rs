//! `/sys/module/<name>/sections/*`.
//!
//! One file per loaded `SHF_ALLOC` section of the module, named after the
//! section (`.text`, `.init.text`, `.data`, `.rodata`, `.bss`,
//! `__mcount_loc`, ...: mostly dotfiles), each holding `0x%px\n`
//! (`module_sect_read()` in `kernel/module/sysfs.c`), zero when the reader
//! may not see kernel addresses.

use std::path::Path;
use std::string::String;
use std::vec::Vec;

use super::error::{Field, ParseError, ParseErrorKind};
use super::lex::Cursor;

/// Parses one section file's contents (`0x<hex>\n`); `file` names the
/// source in errors.
pub fn parse_section_address(file: &Path, data: &[u8]) -> Result<u64, ParseError> {
    let mut c = Cursor::new(data);
    if !c.next_line() {
        return Err(ParseError::whole(file, ParseErrorKind::Empty));
    }
    let line = c.line;
    let err = |kind| ParseError::at(file, line, kind);
    let addr = c.hex(Field::Address).map_err(err)?;
    c.end_line().map_err(err)?;
    if c.next_line() {
        return Err(ParseError::at(
            file,
            c.line,
            ParseErrorKind::Malformed {
                field: Field::Trailing,
                reason: "more than one line",
            },
        ));
    }
    Ok(addr)
}

/// Reads every section file in `dir` (a module's `sections` directory),
/// returning `(section name, address)` sorted by address, then name.
///
/// An empty directory gives an empty list. If every address is zero the
/// kernel hid them: [`ParseErrorKind::ZeroedAddresses`].
pub fn read_sections(dir: &Path) -> Result<Vec<(String, u64)>, ParseError> {
    let mut out = Vec::new();
    let rd = std::fs::read_dir(dir).map_err(|e| ParseError::io(dir, e))?;
    for ent in rd {
        let ent = ent.map_err(|e| ParseError::io(dir, e))?;
        let path = ent.path();
        let ft = ent.file_type().map_err(|e| ParseError::io(&path, e))?;
        if ft.is_dir() {
            continue;
        }
        let Ok(name) = ent.file_name().into_string() else {
            return Err(ParseError::whole(
                &path,
                ParseErrorKind::Malformed {
                    field: Field::Name,
                    reason: "section file name is not UTF-8",
                },
            ));
        };
        let data = super::read::read_capped(&path, super::read::SECTION_CAP)?;
        let addr = parse_section_address(&path, &data)?;
        out.push((name, addr));
    }
    if !out.is_empty() && out.iter().all(|&(_, a)| a == 0) {
        return Err(ParseError::whole(dir, ParseErrorKind::ZeroedAddresses));
    }
    out.sort_unstable_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[u8]) -> Result<u64, ParseError> {
        parse_section_address(Path::new(".text"), s)
    }

    #[test]
    fn values() {
        assert_eq!(p(b"0xffffffffc0a01000\n").unwrap(), 0xffffffffc0a01000);
        assert_eq!(p(b"0xffffffffc0a01000").unwrap(), 0xffffffffc0a01000);
        assert_eq!(p(b"ffffffffc0a01000\r\n").unwrap(), 0xffffffffc0a01000);
        assert_eq!(p(b"0x0000000000000000\n").unwrap(), 0);
        assert!(matches!(p(b"").unwrap_err().kind, ParseErrorKind::Empty));
        assert!(matches!(p(b"\n").unwrap_err().kind, ParseErrorKind::Empty));
        assert!(matches!(
            p(b"0x\n").unwrap_err().kind,
            ParseErrorKind::BadAddress { .. }
        ));
        assert!(matches!(
            p(b"0xfoo\n").unwrap_err().kind,
            ParseErrorKind::BadAddress { .. }
        ));
        assert!(matches!(
            p(b"0x1 0x2\n").unwrap_err().kind,
            ParseErrorKind::Malformed {
                field: Field::Trailing,
                ..
            }
        ));
        let e = p(b"0x1\n0x2\n").unwrap_err();
        assert_eq!(e.line, Some(2));
    }

    #[test]
    fn directory() {
        let dir = std::env::temp_dir().join(std::format!(
            "kallsyms-fast-sections-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".text"), "0xffffffffc0001000\n").unwrap();
        std::fs::write(dir.join(".data"), "0xffffffffc0003000\n").unwrap();
        std::fs::write(dir.join("__mcount_loc"), "0xffffffffc0002000\n").unwrap();
        std::fs::write(dir.join(".init.text"), "0xffffffffc0005000\n").unwrap();
        let v = read_sections(&dir).unwrap();
        let names: Vec<&str> = v.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, [".text", "__mcount_loc", ".data", ".init.text"]);
        assert_eq!(v[0].1, 0xffffffffc0001000);

        std::fs::write(dir.join(".bss"), "0xnope\n").unwrap();
        let e = read_sections(&dir).unwrap_err();
        assert!(e.file.ends_with(".bss"), "{e}");
        for f in [".text", ".data", "__mcount_loc", ".init.text", ".bss"] {
            std::fs::write(dir.join(f), "0x0000000000000000\n").unwrap();
        }
        assert!(matches!(
            read_sections(&dir).unwrap_err().kind,
            ParseErrorKind::ZeroedAddresses
        ));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(
            read_sections(&dir).unwrap_err().kind,
            ParseErrorKind::Io(_)
        ));
    }
}
