//! `nm -n` output and `System.map` files: `<hex addr> <type> <name>`.
//!
//! Both list symbols in ascending address order; anything else is rejected
//! with [`ParseErrorKind::Unsorted`]. `nm` prints undefined symbols (types
//! `U`, `w`, `v`) with a blank address column; they have no address and are
//! skipped (`scripts/mksysmap` drops them from `System.map` as well).

use std::path::Path;
use std::vec::Vec;

use super::error::{ParseError, ParseErrorKind};
use super::kallsyms::sym_line;
use super::lex::Cursor;
use crate::owned::RawSymbol;

/// Reads and parses an `nm -n` listing or `System.map`.
pub fn read_nm(path: &Path) -> Result<Vec<RawSymbol>, ParseError> {
    let data = super::read::read_capped(path, super::read::KALLSYMS_CAP)?;
    parse_nm(path, &data)
}

/// Parses an `nm -n` listing or `System.map`; `file` names the source in
/// errors.
///
/// Errors as for [`ProcKallsyms::parse`](super::ProcKallsyms::parse): empty
/// input, all-zero addresses, unsorted addresses, and line-level errors.
pub fn parse_nm(file: &Path, data: &[u8]) -> Result<Vec<RawSymbol>, ParseError> {
    let mut out = Vec::with_capacity(data.len() / 40);
    let mut c = Cursor::new(data);
    let mut prev = 0u64;
    let mut any_nonzero = false;
    while c.next_line() {
        let line = c.line;
        let err = |kind| ParseError::at(file, line, kind);
        if c.at_undefined() {
            // `                 U name`: no address.
            c.skip_line();
            continue;
        }
        let s = sym_line(&mut c, false).map_err(err)?;
        if s.addr < prev {
            return Err(err(ParseErrorKind::Unsorted { prev, addr: s.addr }));
        }
        prev = s.addr;
        any_nonzero |= s.addr != 0;
        out.push(RawSymbol {
            addr: s.addr,
            kind: s.kind,
            name: s.name.to_vec(),
        });
    }
    if out.is_empty() {
        return Err(ParseError::whole(file, ParseErrorKind::Empty));
    }
    if !any_nonzero {
        return Err(ParseError::whole(file, ParseErrorKind::ZeroedAddresses));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::error::Field;

    fn p(s: &str) -> Result<Vec<RawSymbol>, ParseError> {
        parse_nm(Path::new("System.map"), s.as_bytes())
    }

    #[test]
    fn happy_path() {
        let v = p(
            "                 w __weak_undef\n                 U undef\n\
                   0000000000000000 D __per_cpu_start\n\
                   ffffffff81000000 T _stext\nffffffff81000000 T _text\n\
                   ffffffff81000010 t helper\n",
        )
        .unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(v[0].addr, 0);
        assert_eq!(v[3].name, b"helper");
        assert_eq!(v[3].kind, b't');
    }

    #[test]
    fn errors() {
        let e = p("").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::Empty));
        let e = p("                 U undef\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::Empty));
        let e = p("0000000000000000 T a\n0000000000000000 T b\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::ZeroedAddresses));
        let e = p("0000000000000010 T a\n0000000000000000 T b\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(matches!(e.kind, ParseErrorKind::Unsorted { .. }));
        let e = p("0000000000000010 T a\t[m]\n").unwrap_err();
        assert!(matches!(
            e.kind,
            ParseErrorKind::Malformed {
                field: Field::Trailing,
                ..
            }
        ));
        let e = p("0000000000000010 T\n").unwrap_err();
        assert!(matches!(
            e.kind,
            ParseErrorKind::Truncated {
                missing: Field::Name
            }
        ));
        let e = p("0000000000000010\n").unwrap_err();
        assert!(matches!(
            e.kind,
            ParseErrorKind::Truncated {
                missing: Field::Type
            }
        ));
        let e = p("000000000000001x T a\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::BadAddress { .. }));
        let e = parse_nm(Path::new("m"), b"0000000000000010 T \xc3\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::NonUtf8Name));
        let long = "x".repeat(600);
        let e = p(&std::format!("0000000000000010 T {long}\n")).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::NameTooLong { len: 600 }));
        // A blank-address line that is not an undefined symbol.
        let e = p("                 T x\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::BadAddress { .. }));
    }
}
