//! The `kallsyms-fast/module_layout` file the project's test module writes:
//! one line per `mod->mem[type]` region,
//!
//! ```text
//! <modname> <type 0..6> <base hex> <size hex>
//! ```
//!
//! with `type` an `enum mod_mem_type` index (6.12 order, see
//! [`MOD_MEM_TYPE_NAMES`]). Blank lines and `#` comment lines are ignored.

use std::collections::HashMap;
use std::path::Path;
use std::string::{String, ToString};
use std::vec::Vec;

use super::error::{Field, ParseError, ParseErrorKind};
use super::lex::{self, Cursor};

/// `MOD_MEM_NUM_TYPES` in 6.12.
pub const MOD_MEM_NUM_TYPES: usize = 7;

/// `enum mod_mem_type` of `include/linux/module.h` (6.12), by index.
pub const MOD_MEM_TYPE_NAMES: [&str; MOD_MEM_NUM_TYPES] = [
    "MOD_TEXT",
    "MOD_DATA",
    "MOD_RODATA",
    "MOD_RO_AFTER_INIT",
    "MOD_INIT_TEXT",
    "MOD_INIT_DATA",
    "MOD_INIT_RODATA",
];

/// One module's `mod->mem[]` regions as `(base, size)`, indexed by
/// `enum mod_mem_type`; `None` where the file has no line for that type.
pub type ModuleLayout = [Option<(u64, u64)>; MOD_MEM_NUM_TYPES];

/// Parses a module layout file; `file` names the source in errors. Modules
/// come in order of first appearance.
///
/// A region with a zero base but a non-zero size is
/// [`ParseErrorKind::ZeroedAddresses`]; a `(module, type)` pair listed twice
/// is an error.
pub fn parse_module_layout(
    file: &Path,
    data: &[u8],
) -> Result<Vec<(String, ModuleLayout)>, ParseError> {
    let mut out: Vec<(String, ModuleLayout)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut c = Cursor::new(data);
    while c.next_line() {
        let line = c.line;
        let err = |kind| ParseError::at(file, line, kind);
        if c.eat(b'#') {
            c.skip_line();
            continue;
        }
        let (name, ty, region) = layout_line(&mut c).map_err(err)?;
        let i = match index.get(name) {
            Some(&i) => i,
            None => {
                out.push((name.to_string(), [None; MOD_MEM_NUM_TYPES]));
                index.insert(name.to_string(), out.len() - 1);
                out.len() - 1
            }
        };
        let Some(slot) = out.get_mut(i).and_then(|(_, l)| l.get_mut(ty)) else {
            continue;
        };
        if slot.is_some() {
            return Err(err(ParseErrorKind::Malformed {
                field: Field::MemType,
                reason: "region listed twice for this module",
            }));
        }
        *slot = Some(region);
    }
    Ok(out)
}

fn layout_line<'a>(c: &mut Cursor<'a>) -> Result<(&'a str, usize, (u64, u64)), ParseErrorKind> {
    let name = lex::module_name(c.token())?;
    c.separator(Field::Module, Field::MemType)?;
    let ty = lex::parse_dec(c.token(), Field::MemType)?;
    let ty = match usize::try_from(ty) {
        Ok(t) if t < MOD_MEM_NUM_TYPES => t,
        _ => {
            return Err(ParseErrorKind::Malformed {
                field: Field::MemType,
                reason: "not an enum mod_mem_type index (0..=6)",
            })
        }
    };
    c.separator(Field::MemType, Field::Address)?;
    let base = c.hex(Field::Address)?;
    c.separator(Field::Address, Field::Size)?;
    let size = c.hex(Field::Size)?;
    c.end_line()?;
    if base == 0 && size != 0 {
        return Err(ParseErrorKind::ZeroedAddresses);
    }
    Ok((name, ty, (base, size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Vec<(String, ModuleLayout)>, ParseError> {
        parse_module_layout(Path::new("module_layout"), s.as_bytes())
    }

    #[test]
    fn happy_path() {
        let v = p(
            "# comment\nm 0 ffffffffc0001000 2000\nm 2 0xffffffffc0004000 0x1000\n\n\
                   n 0 ffffffffc0010000 1000\nm 4 0 0\n",
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].0, "m");
        assert_eq!(v[0].1[0], Some((0xffffffffc0001000, 0x2000)));
        assert_eq!(v[0].1[1], None);
        assert_eq!(v[0].1[2], Some((0xffffffffc0004000, 0x1000)));
        assert_eq!(v[0].1[4], Some((0, 0)));
        assert_eq!(v[1].0, "n");
        assert!(p("").unwrap().is_empty());
    }

    #[test]
    fn errors() {
        let k = |s| p(s).unwrap_err().kind;
        assert!(matches!(
            k("m 7 ffffffffc0001000 1000\n"),
            ParseErrorKind::Malformed {
                field: Field::MemType,
                ..
            }
        ));
        assert!(matches!(
            k("m x ffffffffc0001000 1000\n"),
            ParseErrorKind::Malformed {
                field: Field::MemType,
                ..
            }
        ));
        assert!(matches!(
            k("m 0 ffffffffc0001000\n"),
            ParseErrorKind::Truncated {
                missing: Field::Size
            }
        ));
        assert!(matches!(
            k("m 0 ffffffffc0001000 1g\n"),
            ParseErrorKind::BadAddress {
                field: Field::Size,
                ..
            }
        ));
        assert!(matches!(k("m 0 0 1000\n"), ParseErrorKind::ZeroedAddresses));
        let e = p("m 0 ffffffffc0001000 1000\nm 0 ffffffffc0001000 1000\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(matches!(
            e.kind,
            ParseErrorKind::Malformed {
                field: Field::MemType,
                ..
            }
        ));
    }
}
