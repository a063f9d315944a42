//! Parsers for the kernel's textual symbol sources (`std` only):
//!
//! - [`ProcKallsyms`] parses `/proc/kallsyms`, core and module symbols;
//! - [`parse_nm`] parses `nm -n` output and `System.map`;
//! - [`parse_proc_modules`] parses `/proc/modules` (and
//!   [`parse_proc_modules_with`] beside the same machine's `/proc/kallsyms`,
//!   which tells hidden addresses from modules without text);
//! - [`read_sections`] reads `/sys/module/<name>/sections/*`;
//! - [`parse_module_layout`] parses the test module's exact `mod->mem[]` dump;
//! - [`regions::machine_layouts`] gives every module's `mod->mem[]` regions:
//!   the exact dump where there is one, else derived as 6.12 lays modules out;
//! - [`Machine`] loads all of the above from one root directory, and
//!   [`Machine::capture`] to snapshot them.
//!
//! All parsers work on a byte slice with a hand-written scanner (no regex,
//! no per-line allocation beyond the symbol name), never panic on input,
//! and report problems as a [`ParseError`] naming the file and line. Files
//! are read with [`read_capped`]: regular files only (a FIFO or a device is
//! refused without blocking), up to a cap per kind of file.

pub mod error;
pub mod kallsyms;
pub mod layout;
mod lex;
pub mod machine;
pub mod modules;
pub mod nm;
pub mod read;
pub mod regions;
pub mod sections;

pub use error::{Field, ParseError, ParseErrorKind};
pub use kallsyms::{is_pseudo_module, ModuleSymbols, ProcKallsyms};
pub use layout::{parse_module_layout, ModuleLayout, MOD_MEM_NUM_TYPES, MOD_MEM_TYPE_NAMES};
pub use machine::{CaptureStats, Machine, MachineModule};
pub use modules::{
    parse_proc_modules, parse_proc_modules_with, read_proc_modules, ModuleState, ProcModule,
};
pub use nm::{parse_nm, read_nm};
pub use read::{read_capped, KALLSYMS_CAP, MODULES_CAP, SECTION_CAP};
pub use sections::{parse_section_address, read_sections};

#[cfg(test)]
mod robustness {
    //! Every prefix and many single-byte mutations of realistic inputs go
    //! through every parser (a stable-toolchain stand-in for the cargo-fuzz
    //! target in `fuzz/`). Whatever the input, each parser's answer must be
    //! well-formed: an error names the file and, when it names a line, one
    //! that exists in the input; a result holds no more records than the
    //! input has lines, and every symbol name it returns is one the input
    //! spells. The unmutated inputs parse to exactly what they list.

    use std::format;
    use std::path::Path;
    use std::string::ToString;
    use std::vec;
    use std::vec::Vec;

    use super::*;

    const INPUTS: [&str; 3] = [
        "ffffffff81000000 T _stext\r\nffffffff81000010 t helper\n\
         ffffffffc0001000 t a_fn\t[a]\nffffffffc0002000 T b\t[b]\n\
         ffffffffc0001000 T a_init\t[a]\nffffffffc0300000 t bpf_prog_x\t[bpf]\n",
        "nf 28672 1 crc, Live 0xffffffffc0a01000 (OE)\ncrc 12288 - - Loading 0xffffffffc0900000\n",
        "m 0 ffffffffc0001000 1000\n# c\nm 4 0x0 0x0\n0xffffffffc0a01000\n",
    ];

    /// How the five parsers answered one input: `true` where they accepted it.
    #[derive(Debug, Default, PartialEq, Eq)]
    struct Verdicts {
        kallsyms: bool,
        nm: bool,
        modules: bool,
        section: bool,
        layout: bool,
    }

    /// Lines in `data` as the parsers count them: one per `\n`, plus an
    /// unterminated last one.
    fn lines(data: &[u8]) -> usize {
        let n = data.iter().filter(|&&b| b == b'\n').count();
        n + usize::from(!data.is_empty() && !data.ends_with(b"\n"))
    }

    /// A returned name must be a non-empty run of the input's bytes.
    fn spelled_in(data: &[u8], name: &[u8]) -> bool {
        !name.is_empty() && data.windows(name.len()).any(|w| w == name)
    }

    /// Runs every parser on `data` and checks the shape of each answer.
    fn all(data: &[u8]) -> Verdicts {
        let f = Path::new("x");
        let n = lines(data);
        let err = |e: ParseError| {
            assert_eq!(e.file, f, "{e}");
            if let Some(line) = e.line {
                assert!((1..=n).contains(&line), "line {line} of {n}: {e}");
                assert!(e.to_string().starts_with(&format!("x:{line}: ")), "{e}");
            } else {
                assert!(e.to_string().starts_with("x: "), "{e}");
            }
            false
        };
        let kallsyms = match ProcKallsyms::parse(f, data) {
            Ok(k) => {
                let syms = k.core.iter().chain(
                    k.modules
                        .iter()
                        .chain(k.pseudo.iter())
                        .flat_map(|m| m.symbols.iter()),
                );
                let mut count = 0;
                for s in syms {
                    assert!(spelled_in(data, &s.name), "{:?}", s.name);
                    count += 1;
                }
                assert!(count <= n, "{count} symbols from {n} lines");
                for m in k.modules.iter().chain(k.pseudo.iter()) {
                    assert!(spelled_in(data, m.name.as_bytes()), "{}", m.name);
                }
                true
            }
            Err(e) => err(e),
        };
        let nm = match parse_nm(f, data) {
            Ok(syms) => {
                assert!(syms.len() <= n);
                assert!(syms.iter().all(|s| spelled_in(data, &s.name)));
                assert!(syms.windows(2).all(|w| w[0].addr <= w[1].addr), "sorted");
                true
            }
            Err(e) => err(e),
        };
        let modules = match parse_proc_modules(f, data) {
            Ok(mods) => {
                assert!(mods.len() <= n);
                assert!(mods.iter().all(|m| spelled_in(data, m.name.as_bytes())));
                true
            }
            Err(e) => err(e),
        };
        let section = parse_section_address(f, data).map_or_else(err, |_| true);
        let layout = match parse_module_layout(f, data) {
            Ok(l) => {
                assert!(l.len() <= n);
                assert!(l.iter().all(|(m, _)| spelled_in(data, m.as_bytes())));
                true
            }
            Err(e) => err(e),
        };
        Verdicts {
            kallsyms,
            nm,
            modules,
            section,
            layout,
        }
    }

    #[test]
    fn the_unmutated_inputs_parse_to_what_they_list() {
        let f = Path::new("x");
        let k = ProcKallsyms::parse(f, INPUTS[0].as_bytes()).expect("a /proc/kallsyms");
        let names = |s: &[crate::owned::RawSymbol]| -> Vec<Vec<u8>> {
            s.iter().map(|s| s.name.clone()).collect()
        };
        assert_eq!(names(&k.core), [b"_stext".to_vec(), b"helper".to_vec()]);
        let mods: Vec<(&str, Vec<Vec<u8>>)> = k
            .modules
            .iter()
            .map(|m| (m.name.as_str(), names(&m.symbols)))
            .collect();
        assert_eq!(
            mods,
            [("a", vec![b"a_fn".to_vec()]), ("b", vec![b"b".to_vec()])]
        );
        // `a_init` comes after `[b]`'s symtab: an init function ftrace
        // kept, not part of `a`'s symtab; `[bpf]` is no module at all.
        let pseudo: Vec<(&str, Vec<Vec<u8>>)> = k
            .pseudo
            .iter()
            .map(|m| (m.name.as_str(), names(&m.symbols)))
            .collect();
        assert_eq!(
            pseudo,
            [
                ("a", vec![b"a_init".to_vec()]),
                ("bpf", vec![b"bpf_prog_x".to_vec()])
            ]
        );
        let m = parse_proc_modules(f, INPUTS[1].as_bytes()).expect("a /proc/modules");
        let m: Vec<(&str, u64)> = m.iter().map(|m| (m.name.as_str(), m.base)).collect();
        assert_eq!(
            m,
            [
                ("nf", 0xffff_ffff_c0a0_1000),
                ("crc", 0xffff_ffff_c090_0000)
            ]
        );
        // The layout dump's last line is a sysfs section file's content,
        // which the layout parser refuses at its line.
        let e = parse_module_layout(f, INPUTS[2].as_bytes()).expect_err("line 4");
        assert_eq!(e.line, Some(4), "{e}");
        let l = parse_module_layout(f, &INPUTS[2].as_bytes()[..INPUTS[2].len() - 19])
            .expect("the first three lines");
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].0, "m");
        assert_eq!(
            parse_section_address(f, b"0xffffffffc0a01000\n").expect("a section file"),
            0xffff_ffff_c0a0_1000
        );
    }

    #[test]
    fn prefixes_and_mutations() {
        const BYTES: [u8; 14] = [
            0, b'\n', b'\r', b' ', b'\t', b'[', b']', b'(', b'#', 0xff, 0xc3, b'x', b'0', b'-',
        ];
        let mut accepted = Verdicts::default();
        let mut refused = Verdicts::default();
        let mut tally = |v: Verdicts| {
            for (got, acc, rej) in [
                (v.kallsyms, &mut accepted.kallsyms, &mut refused.kallsyms),
                (v.nm, &mut accepted.nm, &mut refused.nm),
                (v.modules, &mut accepted.modules, &mut refused.modules),
                (v.section, &mut accepted.section, &mut refused.section),
                (v.layout, &mut accepted.layout, &mut refused.layout),
            ] {
                *if got { acc } else { rej } = true;
            }
        };
        for input in INPUTS {
            let input = input.as_bytes();
            for n in 0..=input.len() {
                tally(all(&input[..n]));
            }
            let mut buf: Vec<u8> = input.to_vec();
            for i in 0..buf.len() {
                let orig = buf[i];
                for b in BYTES {
                    buf[i] = b;
                    tally(all(&buf));
                }
                buf[i] = orig;
            }
        }
        // Every parser both accepted and refused some of these inputs, so
        // both kinds of answer were checked above.
        let every = Verdicts {
            kallsyms: true,
            nm: true,
            modules: true,
            section: true,
            layout: true,
        };
        assert_eq!(accepted, every);
        assert_eq!(refused, every);
        // An empty /proc/modules or layout dump lists no modules; an empty
        // symbol listing or section file is refused.
        assert_eq!(
            all(b""),
            Verdicts {
                modules: true,
                layout: true,
                ..Verdicts::default()
            }
        );
    }
}
