//! `/proc/modules`.
//!
//! The kernel prints (`m_show()` in `kernel/module/procfs.c`):
//!
//! ```text
//! name size refcount deps state 0xbase[ taints]
//! ```
//!
//! where `refcount` is a number and `deps` a comma-terminated list
//! (`a,b,`, `[permanent],`) or `-` (both are `-` without
//! `CONFIG_MODULE_UNLOAD`), `state` is `Live`, `Loading` or `Unloading`,
//! `base` is `mod->mem[MOD_TEXT].base` (zero when hidden from the reader),
//! and `taints` is e.g. `(OE)`. Unformed modules are never listed.

use std::collections::HashSet;
use std::path::Path;
use std::string::{String, ToString};
use std::vec::Vec;

use super::error::{Field, ParseError, ParseErrorKind};
use super::lex::{self, Cursor};

/// `enum module_state`, as `/proc/modules` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModuleState {
    /// `MODULE_STATE_LIVE`, printed `Live`.
    Live,
    /// `MODULE_STATE_COMING` (init running), printed `Loading`.
    Coming,
    /// `MODULE_STATE_GOING` (being unloaded), printed `Unloading`.
    Going,
    /// `MODULE_STATE_UNFORMED`. The kernel never lists these; the parser
    /// accepts the word `Unformed` for hand-written inputs.
    Unformed,
}

impl ModuleState {
    /// Parses the state column.
    pub fn from_proc(word: &[u8]) -> Option<Self> {
        match word {
            b"Live" => Some(ModuleState::Live),
            b"Loading" => Some(ModuleState::Coming),
            b"Unloading" => Some(ModuleState::Going),
            b"Unformed" => Some(ModuleState::Unformed),
            _ => None,
        }
    }
}

/// One `/proc/modules` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcModule {
    /// Module name.
    pub name: String,
    /// Total size of all `mod->mem[]` regions.
    pub size: u64,
    /// Module state.
    pub state: ModuleState,
    /// `mod->mem[MOD_TEXT].base`.
    pub base: u64,
}

/// Reads and parses `/proc/modules`.
pub fn read_proc_modules(path: &Path) -> Result<Vec<ProcModule>, ParseError> {
    let data = super::read::read_capped(path, super::read::MODULES_CAP)?;
    parse_proc_modules(path, &data)
}

/// Parses `/proc/modules` text; `file` names the source in errors.
///
/// An empty file is valid (no modules loaded). A zero base address is
/// [`ParseErrorKind::ZeroedAddresses`]: the kernel hid the addresses.
pub fn parse_proc_modules(file: &Path, data: &[u8]) -> Result<Vec<ProcModule>, ParseError> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut c = Cursor::new(data);
    while c.next_line() {
        let line = c.line;
        let err = |kind| ParseError::at(file, line, kind);
        let m = module_line(&mut c).map_err(err)?;
        if m.base == 0 {
            return Err(err(ParseErrorKind::ZeroedAddresses));
        }
        if !seen.insert(m.name.clone()) {
            return Err(err(ParseErrorKind::Malformed {
                field: Field::Module,
                reason: "module listed twice",
            }));
        }
        out.push(m);
    }
    Ok(out)
}

fn module_line(c: &mut Cursor<'_>) -> Result<ProcModule, ParseErrorKind> {
    let name = lex::module_name(c.token())?.to_string();
    c.separator(Field::Module, Field::Size)?;
    let size = lex::parse_dec(c.token(), Field::Size)?;
    c.separator(Field::Size, Field::Refcount)?;
    let refcount = c.token();
    let digits = refcount.strip_prefix(b"-").unwrap_or(refcount);
    if refcount != b"-" {
        lex::parse_dec(digits, Field::Refcount)?;
    }
    c.separator(Field::Refcount, Field::Dependencies)?;
    let deps = c.token();
    if deps != b"-" && !deps.ends_with(b",") {
        return Err(ParseErrorKind::Malformed {
            field: Field::Dependencies,
            reason: "expected `-` or a comma-terminated list",
        });
    }
    c.separator(Field::Dependencies, Field::State)?;
    let state = ModuleState::from_proc(c.token()).ok_or(ParseErrorKind::Malformed {
        field: Field::State,
        reason: "expected Live, Loading or Unloading",
    })?;
    c.separator(Field::State, Field::Address)?;
    let base = c.hex(Field::Address)?;
    c.skip_blanks();
    if c.eat(b'(') {
        c.until(b')').ok_or(ParseErrorKind::Malformed {
            field: Field::Trailing,
            reason: "unterminated taint flags",
        })?;
    }
    c.end_line()?;
    Ok(ProcModule {
        name,
        size,
        state,
        base,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Vec<ProcModule>, ParseError> {
        parse_proc_modules(Path::new("modules"), s.as_bytes())
    }

    fn kind(s: &str) -> ParseErrorKind {
        p(s).unwrap_err().kind
    }

    #[test]
    fn happy_path() {
        let v = p(
            "nf_tables 376832 2 nft_ct,nft_chain_nat, Live 0xffffffffc0a00000\n\
                   kvm_amd 208896 0 - Loading 0xffffffffc0900000 (OE)\n\
                   crc32 12288 -1 [permanent], Unloading 0xffffffffc0800000 (+)\n\
                   foo 4096 - - Live 0xffffffffc0700000\n",
        )
        .unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(
            v[0],
            ProcModule {
                name: "nf_tables".into(),
                size: 376832,
                state: ModuleState::Live,
                base: 0xffffffffc0a00000
            }
        );
        assert_eq!(v[1].state, ModuleState::Coming);
        assert_eq!(v[2].state, ModuleState::Going);
        assert_eq!(v[3].name, "foo");
        assert!(p("").unwrap().is_empty());
        assert_eq!(
            p("m 1 0 - Unformed ffffffffc0000000\r\n").unwrap()[0].state,
            ModuleState::Unformed
        );
    }

    #[test]
    fn errors() {
        assert!(matches!(
            kind("m 4096 0 - Live 0x0000000000000000\n"),
            ParseErrorKind::ZeroedAddresses
        ));
        assert!(matches!(
            kind("m 4096 0 - Live\n"),
            ParseErrorKind::Truncated {
                missing: Field::Address
            }
        ));
        assert!(matches!(
            kind("m\n"),
            ParseErrorKind::Truncated {
                missing: Field::Size
            }
        ));
        assert!(matches!(
            kind("m 40x6 0 - Live 0xffffffffc0000000\n"),
            ParseErrorKind::Malformed {
                field: Field::Size,
                ..
            }
        ));
        assert!(matches!(
            kind("m 99999999999999999999999 0 - Live 0xffffffffc0000000\n"),
            ParseErrorKind::Malformed {
                field: Field::Size,
                ..
            }
        ));
        assert!(matches!(
            kind("m 4096 x - Live 0xffffffffc0000000\n"),
            ParseErrorKind::Malformed {
                field: Field::Refcount,
                ..
            }
        ));
        assert!(matches!(
            kind("m 4096 0 a Live 0xffffffffc0000000\n"),
            ParseErrorKind::Malformed {
                field: Field::Dependencies,
                ..
            }
        ));
        assert!(matches!(
            kind("m 4096 0 - Dead 0xffffffffc0000000\n"),
            ParseErrorKind::Malformed {
                field: Field::State,
                ..
            }
        ));
        assert!(matches!(
            kind("m 4096 0 - Live 0xzz\n"),
            ParseErrorKind::BadAddress { .. }
        ));
        assert!(matches!(
            kind("m 4096 0 - Live 0xffffffffc0000000 (OE\n"),
            ParseErrorKind::Malformed {
                field: Field::Trailing,
                ..
            }
        ));
        assert!(matches!(
            kind("m 4096 0 - Live 0xffffffffc0000000 junk\n"),
            ParseErrorKind::Malformed {
                field: Field::Trailing,
                ..
            }
        ));
        let e = p("m 4096 0 - Live 0xffffffffc0000000\nm 4096 0 - Live 0xffffffffc0001000\n")
            .unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(matches!(
            e.kind,
            ParseErrorKind::Malformed {
                field: Field::Module,
                ..
            }
        ));
        assert!(matches!(
            parse_proc_modules(Path::new("m"), b"m\xff 1 0 - Live 0x1\n")
                .unwrap_err()
                .kind,
            ParseErrorKind::Malformed {
                field: Field::Module,
                ..
            }
        ));
    }
}
