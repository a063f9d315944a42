//! `/proc/kallsyms`.
//!
//! The kernel prints (`s_show()` in `kernel/kallsyms.c`):
//!
//! ```text
//! %px %c %s\n             core symbols, in address order
//! %px %c %s\t[%s]\n       module symbols and pseudo-module symbols
//! ```
//!
//! The records come in four runs: the core symbols (from the kallsyms
//! tables, ascending), then every formed module's symtab in `modules` list
//! order (`module_get_kallsym()`), then the ftrace entries
//! (`ftrace_mod_get_kallsym()`: init functions of modules whose init text was
//! freed, under the *module's* name, and trampolines under
//! `__builtin__ftrace`), then BPF programs under `bpf`, then kprobe pages
//! under `__builtin__kprobes`.
//!
//! The parser is lenient about the layout (any run of spaces/tabs between
//! fields, leading/trailing blanks, CRLF line ends, blank lines, an `0x`
//! prefix on addresses, a missing final newline) and strict about the
//! content (see [`ParseErrorKind`]).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::string::{String, ToString};
use std::vec::Vec;

use super::error::{Field, ParseError, ParseErrorKind};
use super::lex::{self, Cursor};
use super::read::{read_capped, KALLSYMS_CAP};
use crate::owned::RawSymbol;

/// Most symbols [`ProcKallsyms::parse`] accepts from one file: 4 Mi.
///
/// A symbol costs about 64 bytes once parsed (a [`RawSymbol`] and its
/// name), so the file-size cap alone would let 256 MiB of minimal lines
/// (`0 t a`) become gigabytes. Real listings are far below the limit:
/// 122,132 symbols on the development machine (a 6.18 x86_64 kernel, no
/// modules); a ~20 MB `/proc/kallsyms` of a big distribution kernel with
/// many modules is about 450,000 lines at ~45 bytes each.
pub const MAX_SYMBOLS: usize = 4 << 20;

/// One module's symbols, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleSymbols {
    /// The module name (without brackets).
    pub name: String,
    /// Its symbols in file order, which is the module's symtab order (minus
    /// the unnamed entries `s_show()` skips). The order matters for
    /// tie-breaking between symbols at the same address.
    pub symbols: Vec<RawSymbol>,
}

/// A parsed `/proc/kallsyms`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcKallsyms {
    /// Core kernel symbols, ascending by address (verified).
    pub core: Vec<RawSymbol>,
    /// Real module symtabs, in order of first appearance (the kernel's
    /// `modules` list order).
    pub modules: Vec<ModuleSymbols>,
    /// Symbols that are not in any module symtab, grouped by the bracketed
    /// name in order of first appearance: `[bpf]` programs,
    /// `[__builtin__ftrace]` trampolines, `[__builtin__kprobes]` insn pages,
    /// and the freed init functions ftrace remembers for modules (listed
    /// under the module's own name, after all symtabs).
    ///
    /// They are kept out of [`ProcKallsyms::modules`] because the kernel's
    /// `module_address_lookup()` never sees them. Every line from the first
    /// pseudo-module line on is counted here, as is a module's name coming
    /// back after another module (ftrace's list). One case is ambiguous in
    /// the text alone: ftrace entries for the *last* module in the list that
    /// directly follow its own symtab are counted as symtab symbols.
    pub pseudo: Vec<ModuleSymbols>,
}

/// Is this bracketed name a pseudo-module (not a real `struct module`)?
///
/// True for `bpf` and for names starting with `__builtin__`
/// (`__builtin__ftrace`, `__builtin__kprobes`), the names `kernel/kallsyms.c`
/// and `kernel/trace/ftrace.c` use. No in-tree module has such a name.
pub fn is_pseudo_module(name: &str) -> bool {
    name == "bpf" || name.starts_with("__builtin__")
}

/// One parsed symbol line, borrowing from the input.
pub(crate) struct SymLine<'a> {
    pub(crate) addr: u64,
    pub(crate) kind: u8,
    pub(crate) name: &'a [u8],
    pub(crate) module: Option<&'a [u8]>,
}

/// Parses `addr type name [\[module\]]` starting at a non-blank byte, and
/// moves past the line end.
#[inline(always)]
pub(crate) fn sym_line<'a>(
    c: &mut Cursor<'a>,
    allow_module: bool,
) -> Result<SymLine<'a>, ParseErrorKind> {
    let addr = c.hex(Field::Address)?;
    c.separator(Field::Address, Field::Type)?;
    let kind = c.type_char()?;
    c.separator(Field::Type, Field::Name)?;
    let name = c.name()?;
    if name.first() == Some(&b'[') {
        // `s_show()` prints `%s\t[%s]`: with an empty name the module
        // column would be taken for the name. No symbol name starts with
        // '[' (C identifiers, assembler labels, mangled Rust).
        return Err(ParseErrorKind::Malformed {
            field: Field::Name,
            reason: "starts with '[': the name is missing before the [module] column",
        });
    }
    c.skip_blanks();
    let mut module = None;
    if allow_module && c.eat(b'[') {
        let m = c.until(b']').ok_or(ParseErrorKind::Malformed {
            field: Field::Module,
            reason: "missing closing ']'",
        })?;
        module = Some(m);
    }
    c.end_line()?;
    Ok(SymLine {
        addr,
        kind,
        name,
        module,
    })
}

/// The line shape the kernel actually prints, `%016lx %c %s\n` optionally
/// with `\t[%s]` before the newline, decoded word at a time. Returns `None`
/// (cursor unchanged) for anything else, including every invalid line: the
/// caller then runs [`sym_line`], which has the exact errors and leniency.
/// Every line accepted here parses to the same result through `sym_line`.
#[inline(always)]
fn fast_sym_line<'a>(c: &mut Cursor<'a>) -> Option<SymLine<'a>> {
    let rest = c.rest();
    // 16 hex digits, a blank, a printable type character, a blank.
    let (head, tail) = rest.split_first_chunk::<20>()?;
    let (addr, head) = head.split_first_chunk::<16>()?;
    let &[sep1, kind, sep2, first] = head else {
        return None;
    };
    if !lex::is_blank(sep1)
        || !kind.is_ascii_graphic()
        || !lex::is_blank(sep2)
        || first <= b' '
        || first == b'['
    {
        return None;
    }
    let addr = lex::hex16(addr)?;
    // The name starts at `first` (offset 19).
    let (n, ascii) = lex::find_delim_ascii(tail);
    let name_len = n + 1;
    let name = rest.get(19..19 + name_len)?;
    if name_len > lex::MAX_NAME
        || (!(ascii && first.is_ascii()) && core::str::from_utf8(name).is_err())
    {
        return None;
    }
    let after = rest.get(19 + name_len..).unwrap_or_default();
    match after {
        [] => {
            c.advance(19 + name_len, false);
            Some(SymLine {
                addr,
                kind,
                name,
                module: None,
            })
        }
        [b'\n', ..] => {
            c.advance(19 + name_len + 1, true);
            Some(SymLine {
                addr,
                kind,
                name,
                module: None,
            })
        }
        [b'\t', b'[', m @ ..] => {
            let close = m.iter().position(|&b| b == b']' || b == b'\n')?;
            let (module, end) = m.split_at(close);
            let used = 19 + name_len + 2 + close + 1;
            match end {
                [b']'] => c.advance(used, false),
                [b']', b'\n', ..] => c.advance(used + 1, true),
                _ => return None,
            }
            Some(SymLine {
                addr,
                kind,
                name,
                module: Some(module),
            })
        }
        _ => None,
    }
}

#[derive(PartialEq, Eq)]
enum Phase {
    Core,
    Modules,
    Pseudo,
}

impl ProcKallsyms {
    /// Reads and parses a `/proc/kallsyms` file.
    ///
    /// Only a regular file of at most [`KALLSYMS_CAP`] bytes is read (see
    /// [`read_capped`]).
    pub fn read(path: &Path) -> Result<Self, ParseError> {
        let data = read_capped(path, KALLSYMS_CAP)?;
        Self::parse(path, &data)
    }

    /// Parses `/proc/kallsyms` text; `file` names the source in errors.
    ///
    /// Errors: [`ParseErrorKind::Empty`] if there is no symbol,
    /// [`ParseErrorKind::ZeroedAddresses`] if every address is zero,
    /// [`ParseErrorKind::Unsorted`] if the core symbols are not ascending,
    /// and a line-level error for the first bad line (including a core line
    /// after module lines).
    pub fn parse(file: &Path, data: &[u8]) -> Result<Self, ParseError> {
        Self::parse_limited(file, data, MAX_SYMBOLS)
    }

    /// [`ProcKallsyms::parse`] with at most `limit` symbols.
    fn parse_limited(file: &Path, data: &[u8], limit: usize) -> Result<Self, ParseError> {
        let mut out = ProcKallsyms {
            // ~45 bytes per line on x86_64.
            core: Vec::with_capacity((data.len() / 44).min(limit)),
            ..Default::default()
        };
        let mut c = Cursor::new(data);
        let mut phase = Phase::Core;
        let mut prev = 0u64;
        let mut any_nonzero = false;
        // Index of the current group in `modules` or `pseudo`.
        let mut cur: Option<usize> = None;
        let mut seen: HashSet<String> = HashSet::new();
        let mut pseudo_idx: HashMap<String, usize> = HashMap::new();

        let mut count = 0usize;
        let mut marks = Marks::default();
        while c.next_line() {
            let line = c.line;
            let err = |kind| ParseError::at(file, line, kind);
            count += 1;
            if count > limit {
                return Err(err(ParseErrorKind::TooManySymbols { limit }));
            }
            let s = match fast_sym_line(&mut c) {
                Some(s) => s,
                None => sym_line(&mut c, true).map_err(err)?,
            };
            any_nonzero |= s.addr != 0;
            let sym = RawSymbol {
                addr: s.addr,
                kind: s.kind,
                name: s.name.to_vec(),
            };
            let Some(m) = s.module else {
                if phase != Phase::Core {
                    return Err(err(ParseErrorKind::Malformed {
                        field: Field::Module,
                        reason: "core symbol (no [module]) after module symbols",
                    }));
                }
                if s.addr < prev {
                    return Err(err(ParseErrorKind::Unsorted { prev, addr: s.addr }));
                }
                prev = s.addr;
                if let Some(slot) = marks.slot(&sym.name) {
                    slot.get_or_insert(out.core.len());
                }
                out.core.push(sym);
                continue;
            };
            // Fast path: same module as the previous line.
            let groups = if phase == Phase::Pseudo {
                &mut out.pseudo
            } else {
                &mut out.modules
            };
            if let Some(g) = cur.and_then(|i| groups.get_mut(i)) {
                if g.name.as_bytes() == m {
                    g.symbols.push(sym);
                    continue;
                }
            }
            let name = lex::module_name(m).map_err(err)?;
            if phase != Phase::Pseudo && (is_pseudo_module(name) || seen.contains(name)) {
                phase = Phase::Pseudo;
            }
            if phase == Phase::Pseudo {
                let i = match pseudo_idx.get(name) {
                    Some(&i) => i,
                    None => {
                        out.pseudo.push(ModuleSymbols {
                            name: name.to_string(),
                            symbols: Vec::new(),
                        });
                        let i = out.pseudo.len() - 1;
                        pseudo_idx.insert(name.to_string(), i);
                        i
                    }
                };
                if let Some(g) = out.pseudo.get_mut(i) {
                    g.symbols.push(sym);
                }
                cur = Some(i);
            } else {
                phase = Phase::Modules;
                seen.insert(name.to_string());
                out.modules.push(ModuleSymbols {
                    name: name.to_string(),
                    symbols: std::vec![sym],
                });
                cur = Some(out.modules.len() - 1);
            }
        }
        if out.core.is_empty() && out.modules.is_empty() && out.pseudo.is_empty() {
            return Err(ParseError::whole(file, ParseErrorKind::Empty));
        }
        if !any_nonzero {
            return Err(ParseError::whole(file, ParseErrorKind::ZeroedAddresses));
        }
        if let Some((bad, anchor)) = core_out_of_range(&out.core, &marks) {
            let (Some(b), Some(a)) = (out.core.get(bad), out.core.get(anchor)) else {
                return Err(ParseError::whole(file, ParseErrorKind::Empty));
            };
            return Err(ParseError::at(
                file,
                core_line(data, bad),
                ParseErrorKind::OutOfRange {
                    name: lex::lossy_prefix(&b.name),
                    addr: b.addr,
                    anchor: lex::lossy_prefix(&a.name),
                    anchor_line: core_line(data, anchor),
                    anchor_addr: a.addr,
                },
            ));
        }
        Ok(out)
    }
}

/// The 1-based line of core symbol `i`: core symbols are the first
/// non-blank lines, one symbol each (only called once `data` parsed).
fn core_line(data: &[u8], i: usize) -> usize {
    let mut c = Cursor::new(data);
    let mut seen = 0;
    while c.next_line() {
        if seen == i {
            return c.line;
        }
        seen += 1;
        c.skip_line();
    }
    c.line
}

/// Indexes of the first core symbols with the names
/// [`core_out_of_range`] needs, noted while parsing.
#[derive(Default)]
struct Marks {
    stext: Option<usize>,
    percpu_start: Option<usize>,
    percpu_end: Option<usize>,
}

impl Marks {
    /// Where to note a symbol called `name`, if it is one of them.
    #[inline(always)]
    fn slot(&mut self, name: &[u8]) -> Option<&mut Option<usize>> {
        match name {
            b"_stext" => Some(&mut self.stext),
            b"__per_cpu_start" => Some(&mut self.percpu_start),
            b"__per_cpu_end" => Some(&mut self.percpu_end),
            _ => None,
        }
    }
}

/// Finds a core symbol the kernel could not have stored: `(its index, the
/// index of the symbol it is measured against)`.
///
/// `scripts/kallsyms` stores each core address as a 32-bit
/// `kallsyms_offsets` entry relative to `kallsyms_relative_base`, the
/// lowest address: up to 4 GiB above it; with
/// `CONFIG_KALLSYMS_ABSOLUTE_PERCPU` (x86_64 SMP; visible as a
/// `__per_cpu_start` below `_stext`) per-CPU symbols (`__per_cpu_start` to
/// `__per_cpu_end`) are stored as absolute values below 2 GiB and every
/// other symbol within 2 GiB above the base. A listing outside these
/// bounds did not come from a kernel. The anchor is `_stext` (else the
/// last symbol), as the text is what every kernel has; the first symbol too
/// far from it is blamed, so a stray line far below the rest is named with
/// its own line, not the next symbol's.
///
/// `core` is sorted (checked while parsing), so the per-CPU symbols are one
/// run and the symbols too far below or above the anchor a prefix and a
/// suffix: a few binary searches, no pass over the table.
fn core_out_of_range(core: &[RawSymbol], marks: &Marks) -> Option<(usize, usize)> {
    let n = core.len();
    let anchor = marks.stext.or(n.checked_sub(1))?;
    let anchor_addr = core.get(anchor)?.addr;
    let addr_of = |i: Option<usize>| i.and_then(|i| core.get(i)).map(|s| s.addr);
    let start = addr_of(marks.percpu_start);
    let absolute = start.is_some_and(|s| s < anchor_addr);
    let limit = if absolute {
        i32::MAX as u64
    } else {
        u32::MAX as u64
    };
    // The run of per-CPU symbols stored as absolute values: [ex_lo, ex_hi).
    let (ex_lo, ex_hi) = match (start, addr_of(marks.percpu_end)) {
        (Some(s), Some(e)) if absolute => (
            core.partition_point(|x| x.addr < s),
            core.partition_point(|x| x.addr <= e),
        ),
        _ => (0, 0),
    };
    if ex_lo < ex_hi {
        let over = core.partition_point(|x| x.addr <= i32::MAX as u64);
        if over < ex_hi {
            return Some((over.max(ex_lo), anchor));
        }
    }
    let non_exempt = |i: usize| if i >= ex_lo && i < ex_hi { ex_hi } else { i };
    let lowest = non_exempt(0);
    let low = core.get(lowest)?;
    if anchor_addr - low.addr.min(anchor_addr) > limit {
        return Some((lowest, anchor));
    }
    let above = non_exempt(core.partition_point(|x| x.addr <= anchor_addr.saturating_add(limit)));
    if above < n {
        return Some((above, anchor));
    }
    // Each is within reach of the anchor; the whole span must fit too.
    let highest = if ex_hi == n && ex_lo < ex_hi {
        ex_lo.checked_sub(1)?
    } else {
        n - 1
    };
    (core.get(highest)?.addr - low.addr > limit).then_some((lowest, highest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    fn p(s: &str) -> Result<ProcKallsyms, ParseError> {
        ProcKallsyms::parse(Path::new("kallsyms"), s.as_bytes())
    }

    fn kind_at(s: &str) -> (Option<usize>, ParseErrorKind) {
        match p(s) {
            Ok(_) => panic!("expected an error for {s:?}"),
            Err(e) => (e.line, e.kind),
        }
    }

    const SAMPLE: &str = "\
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000010 t helper
ffffffffc0001000 t mod_a_init\t[mod_a]
ffffffffc0001000 T mod_a_alias\t[mod_a]
ffffffffc0000000 d mod_a_data\t[mod_a]
ffffffffc0100000 t mod_b_fn\t[mod_b]
ffffffffc0002000 T mod_a_freed_init\t[mod_a]
ffffffffc0200000 t ftrace_trampoline\t[__builtin__ftrace]
ffffffffc0300000 t bpf_prog_1234_x\t[bpf]
ffffffffc0300100 t bpf_prog_5678_y\t[bpf]
ffffffffc0400000 t kprobe_insn_page\t[__builtin__kprobes]
";

    #[test]
    fn happy_path() {
        let k = p(SAMPLE).unwrap();
        assert_eq!(k.core.len(), 3);
        assert_eq!(k.core[2].name, b"helper");
        assert_eq!(k.core[2].kind, b't');
        assert_eq!(k.core[2].addr, 0xffffffff81000010);
        assert_eq!(k.modules.len(), 2);
        assert_eq!(k.modules[0].name, "mod_a");
        let names: Vec<&[u8]> = k.modules[0].symbols.iter().map(|s| &s.name[..]).collect();
        // File order, not address order.
        assert_eq!(names, [&b"mod_a_init"[..], b"mod_a_alias", b"mod_a_data"]);
        assert_eq!(k.modules[1].name, "mod_b");
        let pseudo: Vec<(&str, usize)> = k
            .pseudo
            .iter()
            .map(|g| (g.name.as_str(), g.symbols.len()))
            .collect();
        assert_eq!(
            pseudo,
            [
                ("mod_a", 1),
                ("__builtin__ftrace", 1),
                ("bpf", 2),
                ("__builtin__kprobes", 1)
            ]
        );
    }

    #[test]
    fn lenient_layout() {
        let k = p("\n  0xffffffff81000000   T\t_stext  \r\n\r\nffffffff81000001 t x \t [m] \r\n\nffffffff81000002 t y\t[m]")
            .unwrap();
        assert_eq!(k.core.len(), 1);
        assert_eq!(k.core[0].name, b"_stext");
        assert_eq!(k.modules.len(), 1);
        assert_eq!(k.modules[0].symbols.len(), 2);
        // Short (32-bit) addresses.
        let k = p("c1000000 T _stext\n").unwrap();
        assert_eq!(k.core[0].addr, 0xc1000000);
    }

    #[test]
    fn empty_and_zeroed() {
        assert!(matches!(kind_at(""), (None, ParseErrorKind::Empty)));
        assert!(matches!(
            kind_at("\n \r\n\n"),
            (None, ParseErrorKind::Empty)
        ));
        let zeroed = "0000000000000000 T _stext\n0000000000000000 t x\t[m]\n";
        let e = p(zeroed).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::ZeroedAddresses));
        assert!(e.to_string().contains("kptr_restrict"));
    }

    #[test]
    fn truncated_lines() {
        for (s, f) in [
            ("ffffffff81000000\n", Field::Type),
            ("ffffffff81000000 \n", Field::Type),
            ("ffffffff81000000 T\n", Field::Name),
            ("ffffffff81000000 T   \r\n", Field::Name),
            ("ffffffff81000000 T", Field::Name),
        ] {
            match kind_at(s) {
                (Some(1), ParseErrorKind::Truncated { missing }) => assert_eq!(missing, f, "{s:?}"),
                other => panic!("{s:?}: {other:?}"),
            }
        }
        let (line, k) = kind_at("ffffffff81000000 T a\nffffffff81000001 t\n");
        assert_eq!(line, Some(2));
        assert!(matches!(
            k,
            ParseErrorKind::Truncated {
                missing: Field::Name
            }
        ));
    }

    #[test]
    fn bad_fields() {
        assert!(matches!(
            kind_at("ffffffffg1000000 T a\n").1,
            ParseErrorKind::BadAddress {
                field: Field::Address,
                ..
            }
        ));
        assert!(matches!(
            kind_at("0x T a\n").1,
            ParseErrorKind::BadAddress { .. }
        ));
        assert!(matches!(
            kind_at("1ffffffff81000000 T a\n").1,
            ParseErrorKind::BadAddress {
                reason: "more than 16 hex digits",
                ..
            }
        ));
        assert!(matches!(
            kind_at("ffffffff81000000 TT a\n").1,
            ParseErrorKind::Malformed {
                field: Field::Type,
                ..
            }
        ));
        assert!(matches!(
            kind_at("ffffffff81000000 \x01 a\n").1,
            ParseErrorKind::Malformed {
                field: Field::Type,
                ..
            }
        ));
        assert!(matches!(
            kind_at("ffffffff81000000 T a b\n").1,
            ParseErrorKind::Malformed {
                field: Field::Trailing,
                ..
            }
        ));
        assert!(matches!(
            kind_at("ffffffff81000000 T a\rb\n").1,
            ParseErrorKind::Malformed {
                field: Field::Trailing,
                ..
            }
        ));
        assert!(matches!(
            kind_at("ffffffff81000000 T a\t[mod\n").1,
            ParseErrorKind::Malformed {
                field: Field::Module,
                ..
            }
        ));
        assert!(matches!(
            kind_at("ffffffff81000000 T a\t[]\n").1,
            ParseErrorKind::Malformed {
                field: Field::Module,
                ..
            }
        ));
        assert!(matches!(
            kind_at("ffffffff81000000 T a\t[m o]\n").1,
            ParseErrorKind::Malformed {
                field: Field::Module,
                ..
            }
        ));
        assert!(matches!(
            kind_at("ffffffff81000000 T a\t[m] x\n").1,
            ParseErrorKind::Malformed {
                field: Field::Trailing,
                ..
            }
        ));
        let long = "m".repeat(56);
        assert!(matches!(
            kind_at(&std::format!("ffffffff81000000 T a\t[{long}]\n")).1,
            ParseErrorKind::Malformed {
                field: Field::Module,
                ..
            }
        ));
    }

    #[test]
    fn names() {
        let ok = "n".repeat(511);
        assert!(p(&std::format!("ffffffff81000000 T {ok}\n")).is_ok());
        let long = "n".repeat(512);
        assert!(matches!(
            kind_at(&std::format!("ffffffff81000000 T {long}\n")).1,
            ParseErrorKind::NameTooLong { len: 512 }
        ));
        let e = ProcKallsyms::parse(Path::new("k"), b"ffffffff81000000 T a\xffb\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::NonUtf8Name));
        let e =
            ProcKallsyms::parse(Path::new("k"), b"ffffffff81000000 T a\t[m\xff]\n").unwrap_err();
        assert!(matches!(
            e.kind,
            ParseErrorKind::Malformed {
                field: Field::Module,
                ..
            }
        ));
        // UTF-8 is accepted.
        assert!(p("ffffffff81000000 T caf\u{e9}\n").is_ok());
    }

    #[test]
    fn unsorted_and_order() {
        let (line, k) = kind_at("ffffffff81000010 T a\nffffffff81000000 T b\n");
        assert_eq!(line, Some(2));
        assert!(matches!(
            k,
            ParseErrorKind::Unsorted {
                prev: 0xffffffff81000010,
                addr: 0xffffffff81000000
            }
        ));
        let (line, k) =
            kind_at("ffffffff81000000 T a\nffffffffc0000000 t b\t[m]\nffffffff81000010 T c\n");
        assert_eq!(line, Some(3));
        assert!(matches!(
            k,
            ParseErrorKind::Malformed {
                field: Field::Module,
                ..
            }
        ));
        // Equal addresses are fine.
        assert!(p("ffffffff81000000 T a\nffffffff81000000 T b\n").is_ok());
    }

    #[test]
    fn hex16_matches_parse_hex() {
        for base in [
            b"ffffffff81000000",
            b"0123456789abcdef",
            b"ABCDEF0123456789",
        ] {
            let mut b = *base;
            for i in 0..16 {
                for v in 0..=255u8 {
                    b[i] = v;
                    // `0x` + 14 digits is valid, but not for `hex16`.
                    let prefixed = b[0] == b'0' && (b[1] | 0x20) == b'x';
                    let want = lex::parse_hex(&b, Field::Address)
                        .ok()
                        .filter(|_| !prefixed);
                    assert_eq!(lex::hex16(&b), want, "{b:?}");
                }
                b[i] = base[i];
            }
        }
    }

    #[test]
    fn find_delim_ascii_matches_a_plain_scan() {
        let base = b"abcdefghijklmnopqrstuvwxyz0123456789_.\t[m]\n".to_vec();
        for n in 0..=base.len() {
            for i in 0..n {
                for v in [0u8, b' ', b'\t', b'\n', b'!', 0x7f, 0x80, 0xc3, 0xff] {
                    let mut b = base[..n].to_vec();
                    b[i] = v;
                    let k = b.iter().position(|&x| x <= b' ').unwrap_or(b.len());
                    assert_eq!(lex::find_delim(&b), k, "{b:?}");
                    assert_eq!(lex::find_delim_ascii(&b), (k, b[..k].is_ascii()), "{b:?}");
                }
            }
        }
    }

    /// Every line the fast path takes parses the same through `sym_line`.
    #[test]
    fn fast_path_agrees_with_sym_line() {
        let inputs: [&[u8]; 6] = [
            b"ffffffff81000000 T _stext\nffffffffc0001000 t a_fn\t[a]\n",
            b"ffffffffc0001000 t a_fn\t[a]",
            b"ffffffff81000000 T caf\xc3\xa9\n",
            b"ffffffff81000000 T x\n",
            b"ffffffff81000000 T 0123456789abcdef_a_much_longer_name\t[m]\r\n",
            b"0xffffffff810000 T n\n",
        ];
        const BYTES: [u8; 16] = [
            0, b'\n', b'\r', b' ', b'\t', b'[', b']', b'g', b'F', 0x7f, 0xff, 0xc3, 0xa9, b'x',
            b'0', b'/',
        ];
        let mut taken = 0;
        let mut check = |data: &[u8]| {
            let mut fast = Cursor::new(data);
            if !fast.next_line() {
                return;
            }
            let mut slow = Cursor::new(data);
            slow.next_line();
            let Some(f) = fast_sym_line(&mut fast) else {
                return;
            };
            taken += 1;
            let s = sym_line(&mut slow, true).unwrap_or_else(|e| panic!("{data:?}: {e:?}"));
            assert_eq!(
                (f.addr, f.kind, f.name, f.module),
                (s.addr, s.kind, s.name, s.module),
                "{data:?}"
            );
            assert_eq!(
                (fast.rest().len(), fast.line),
                (slow.rest().len(), slow.line),
                "{data:?}"
            );
        };
        for input in inputs {
            for n in 0..=input.len() {
                check(&input[..n]);
            }
            let mut buf = input.to_vec();
            for i in 0..buf.len() {
                for b in BYTES {
                    buf[i] = b;
                    check(&buf);
                }
                buf[i] = input[i];
            }
        }
        assert!(taken > 500, "{taken}");
    }

    #[test]
    fn empty_name_before_module_column() {
        for s in [
            "ffffffff81000000 T _stext\nffffffff81000010 T \t[mod]\n",
            "ffffffff81000000 T _stext\nffffffff81000010 T [mod]\n",
        ] {
            let e = p(s).unwrap_err();
            assert_eq!(e.line, Some(2), "{s:?}");
            assert!(
                matches!(
                    e.kind,
                    ParseErrorKind::Malformed {
                        field: Field::Name,
                        ..
                    }
                ),
                "{s:?}: {e}"
            );
        }
    }

    #[test]
    fn core_symbol_far_from_the_rest() {
        // Below: blamed on its own line and name.
        let e = p("0000000000001000 T far\nffffffff81000000 T _stext\nffffffff81000010 t x\n")
            .unwrap_err();
        assert_eq!(e.line, Some(1));
        let msg = e.to_string();
        assert!(
            msg.contains("\"far\" at 0x1000") && msg.contains("(line 2)"),
            "{msg}"
        );
        // Above, after blank lines.
        let e = p("00000000c1000000 T _stext\n\n00000000c1000010 t x\n\n0000000200000000 t y\n")
            .unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
        // Within 4 GiB of _stext, but spanning more than 4 GiB in all.
        let e = p("ffffffff01000000 t lo\nffffffff81000000 T _stext\n0000000000000000 t z\n");
        assert!(e.is_err());
        let ok = "ffffffff01000000 t lo\nffffffff81000000 T _stext\nffffffffff000000 t hi\n";
        assert!(p(ok).is_ok());
        let e = p("fffffffe81000001 t lo\nffffffff81000000 T _stext\nffffffffff000000 t hi\n")
            .unwrap_err();
        assert!(e.line == Some(1) || e.line == Some(3), "{e}");
        // x86_64 SMP: absolute per-CPU symbols near 0 are fine...
        let smp = "0000000000000000 A __per_cpu_start\n0000000000001000 A irq_stack\n\
                   0000000000030000 A __per_cpu_end\nffffffff81000000 T _stext\n";
        assert!(p(smp).is_ok());
        // ...but not other symbols there.
        let bad = "0000000000000000 A __per_cpu_start\n0000000000030000 A __per_cpu_end\n\
                   0000000000040000 t stray\nffffffff81000000 T _stext\n";
        assert_eq!(p(bad).unwrap_err().line, Some(3));
        // Absolute per-CPU values must fit an int.
        let big = "0000000000000000 A __per_cpu_start\n0000000080000000 A big\n\
                   0000000090000000 A __per_cpu_end\nffffffff81000000 T _stext\n";
        assert_eq!(p(big).unwrap_err().line, Some(2));
        // With absolute per-CPU symbols, 2 GiB above the base at most.
        let far = "0000000000000000 A __per_cpu_start\n0000000000030000 A __per_cpu_end\n\
                   ffffffff01000000 t low\nffffffff81000000 T _stext\n";
        assert_eq!(p(far).unwrap_err().line, Some(3));
        let near = "0000000000000000 A __per_cpu_start\n0000000000030000 A __per_cpu_end\n\
                    ffffffff01000001 t low\nffffffff81000000 T _stext\n";
        assert!(p(near).is_ok());
        // Every symbol but the anchor too far: the first is blamed.
        let e = p("0000000000001000 t a\n0000000000002000 t b\nffffffff81000000 T _stext\n")
            .unwrap_err();
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn symbol_count_is_capped() {
        let text = "ffffffff81000000 T _stext\n\nffffffff81000001 t a\nffffffff81000002 t b\n";
        let ok = ProcKallsyms::parse_limited(Path::new("k"), text.as_bytes(), 3).unwrap();
        assert_eq!(ok.core.len(), 3);
        let e = ProcKallsyms::parse_limited(Path::new("k"), text.as_bytes(), 2).unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(matches!(
            e.kind,
            ParseErrorKind::TooManySymbols { limit: 2 }
        ));
        assert!(e.to_string().starts_with("k:4: more than 2 symbols"), "{e}");
    }

    #[test]
    fn error_names_file_and_line() {
        let e = p("ffffffff81000000 T a\nzz T b\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "kallsyms:2: bad address \"zz\": not a hexadecimal number"
        );
    }
}
