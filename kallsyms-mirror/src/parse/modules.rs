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
//! `base` is `mod->mem[MOD_TEXT].base` (zero when hidden from the reader,
//! and zero for a module without text: see [`parse_proc_modules`]), and
//! `taints` is e.g. `(OE)`. Unformed modules are never listed.

use std::collections::HashSet;
use std::path::Path;
use std::string::{String, ToString};
use std::vec::Vec;

use super::error::{Field, ParseError, ParseErrorKind};
use super::kallsyms::ProcKallsyms;
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
    /// `mod->mem[MOD_TEXT].base`: 0 for a module without text (see
    /// [`parse_proc_modules`]).
    pub base: u64,
}

/// Reads and parses `/proc/modules` on its own ([`parse_proc_modules`]'s
/// rule for zero bases).
pub fn read_proc_modules(path: &Path) -> Result<Vec<ProcModule>, ParseError> {
    let data = super::read::read_capped(path, super::read::MODULES_CAP)?;
    parse_proc_modules(path, &data)
}

/// Parses `/proc/modules` text on its own; `file` names the source in
/// errors. An empty file is valid (no modules loaded).
///
/// # Zero bases
///
/// `m_show()` (kernel/module/procfs.c) prints `mem[MOD_TEXT].base`, which
/// is 0 in two cases:
///
/// - the reader may not see kernel addresses: `modules_open()` asks
///   `kallsyms_show_value(file->f_cred)` once, at open, and then *every*
///   line shows 0. `/proc/kallsyms` asks the same question of the same
///   opener (`kallsyms_open()`), so a reader sees the addresses of both
///   files or of neither;
/// - the module has no text: `move_module()` (kernel/module/main.c, 6.12
///   and 7.3 alike) allocates no memory for an empty `mod->mem[type]` and
///   leaves its base NULL. Debian's 7.3 kernel has such modules, e.g.
///   `nls_ucs2_utils` (tables only, pulled in by `cifs`).
///
/// From this file alone the rule is: a file in which every listed module
/// has base 0 is hidden, [`ParseErrorKind::ZeroedAddresses`] for the file
/// as a whole; otherwise a base of 0 means "no text" (one non-zero base
/// shows the kernel let this reader see addresses, and it shows all or
/// none). That includes the ambiguous file of a single module at base 0,
/// refused as hidden: a module without text exists to be used by another
/// one (`cifs` loads `nls_ucs2_utils`), so finding it loaded alone is rare,
/// while a one-module machine read without privilege (a test guest, a
/// small VM) is common, and an error naming the privilege needed is a
/// better failure than a module whose text silently goes missing.
///
/// [`parse_proc_modules_with`] decides with the machine's `/proc/kallsyms`
/// instead, which settles every case; [`Machine`](super::Machine) uses it.
pub fn parse_proc_modules(file: &Path, data: &[u8]) -> Result<Vec<ProcModule>, ParseError> {
    let out = parse_lines(file, data)?;
    if every_base_zero(&out) {
        return Err(ParseError::whole(file, ParseErrorKind::ZeroedAddresses));
    }
    Ok(out)
}

/// Parses `/proc/modules` text read beside `kallsyms`, the same machine's
/// parsed `/proc/kallsyms`; `file` names the source in errors.
///
/// `/proc/kallsyms` is the authority on whether addresses are hidden: the
/// kernel decides both files with the same `kallsyms_show_value()` check
/// of the opener (see [`parse_proc_modules`]), and a parsed
/// [`ProcKallsyms`] has visible addresses ([`ProcKallsyms::parse`] refuses
/// a file of zeros with [`ParseErrorKind::ZeroedAddresses`]). So here a
/// base of 0 means "this module has no text", even on a single line.
///
/// One contradiction is still refused: when every listed base is 0 and a
/// `Live` module among them lists a text symbol (type `t` or `T`, a symbol
/// in an `SHF_EXECINSTR` section: `elf_type()` in
/// kernel/module/kallsyms.c) in `/proc/kallsyms`. That module has text, so
/// its base cannot be NULL: this `/proc/modules` was read by an opener the
/// kernel hid addresses from (a root assembled from reads with different
/// privileges, or `kptr_restrict` changed between the two reads), and it
/// is [`ParseErrorKind::ZeroedAddresses`] for the file as a whole. Only
/// `Live` modules count: a module still loading (or failing its init)
/// lists its full symtab, whose init text symbols a module without core
/// text may have. A file with some non-zero base is never refused for its
/// zero ones (the kernel shows one reader all addresses or none); and
/// when every base is 0 but no module contradicts it, every module is
/// taken as text-less, which is what both files say.
pub fn parse_proc_modules_with(
    file: &Path,
    data: &[u8],
    kallsyms: &ProcKallsyms,
) -> Result<Vec<ProcModule>, ParseError> {
    let out = parse_lines(file, data)?;
    if every_base_zero(&out) {
        let with_text: HashSet<&str> = kallsyms
            .modules
            .iter()
            .filter(|m| m.symbols.iter().any(|s| matches!(s.kind, b't' | b'T')))
            .map(|m| m.name.as_str())
            .collect();
        if out
            .iter()
            .any(|m| m.state == ModuleState::Live && with_text.contains(m.name.as_str()))
        {
            return Err(ParseError::whole(file, ParseErrorKind::ZeroedAddresses));
        }
    }
    Ok(out)
}

/// Whether the file lists at least one module and every base is 0.
fn every_base_zero(modules: &[ProcModule]) -> bool {
    !modules.is_empty() && modules.iter().all(|m| m.base == 0)
}

/// The lines, checked one by one (syntax, a module listed twice); no rule
/// about zero bases.
fn parse_lines(file: &Path, data: &[u8]) -> Result<Vec<ProcModule>, ParseError> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut c = Cursor::new(data);
    while c.next_line() {
        let line = c.line;
        let err = |kind| ParseError::at(file, line, kind);
        let m = module_line(&mut c).map_err(err)?;
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

    /// A zero base is a module without text when the addresses are
    /// visible; a file of zero bases alone is hidden, refused with the
    /// reason (see `parse_proc_modules`).
    #[test]
    fn zero_base_is_a_module_without_text() {
        const A: &str = "cifs 2883584 2 - Live 0xffffffffc1200000\n";
        const NLS: &str = "nls_ucs2_utils 8192 1 cifs, Live 0x0000000000000000\n";
        let v = p(&std::format!("{A}{NLS}")).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!((v[1].name.as_str(), v[1].base), ("nls_ucs2_utils", 0));
        assert_eq!(p(&std::format!("{NLS}{A}")).unwrap()[0].base, 0);

        // Alone: every base zero, one line or many, is hidden.
        let hidden = std::format!(
            "{}{NLS}",
            A.replace("0xffffffffc1200000", "0x0000000000000000")
        );
        for text in [NLS, hidden.as_str()] {
            let e = p(text).unwrap_err();
            assert!(matches!(e.kind, ParseErrorKind::ZeroedAddresses), "{e}");
            assert_eq!(e.line, None);
            let msg = e.to_string();
            assert!(msg.starts_with("modules: all addresses are zero"), "{msg}");
            assert!(msg.contains("kptr_restrict"), "{msg}");
        }

        // Beside a visible /proc/kallsyms: it decides.
        let ks = |text: &str| ProcKallsyms::parse(Path::new("kallsyms"), text.as_bytes()).unwrap();
        let with = |modules: &str, k: &ProcKallsyms| {
            parse_proc_modules_with(Path::new("modules"), modules.as_bytes(), k)
        };
        let visible = ks("ffffffff81000000 T _stext\n\
                          ffffffffc1200000 t cifs_fn\t[cifs]\n\
                          ffffffffc1400000 r nls_table\t[nls_ucs2_utils]\n");
        // A lone text-less module: accepted.
        assert_eq!(with(NLS, &visible).unwrap()[0].base, 0);
        assert_eq!(with(&std::format!("{A}{NLS}"), &visible).unwrap().len(), 2);
        // Every base zero, but cifs (Live) lists text: read hidden.
        let e = with(&hidden, &visible).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::ZeroedAddresses), "{e}");
        // cifs still loading lists its init text too: no contradiction.
        assert!(with(&hidden.replacen("Live", "Loading", 1), &visible).is_ok());
        // Nothing lists text: every module is taken as text-less.
        let no_text = ks("ffffffff81000000 T _stext\n\
                          ffffffffc1400000 r nls_table\t[nls_ucs2_utils]\n");
        assert_eq!(with(&hidden, &no_text).unwrap().len(), 2);
        assert!(with("", &visible).unwrap().is_empty());
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
