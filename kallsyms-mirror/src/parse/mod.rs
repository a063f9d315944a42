//! Parsers for the kernel's textual symbol sources (`std` only):
//!
//! - [`ProcKallsyms`] parses `/proc/kallsyms`, core and module symbols;
//! - [`parse_nm`] parses `nm -n` output and `System.map`;
//! - [`parse_proc_modules`] parses `/proc/modules`;
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
pub use modules::{parse_proc_modules, read_proc_modules, ModuleState, ProcModule};
pub use nm::{parse_nm, read_nm};
pub use read::{read_capped, KALLSYMS_CAP, MODULES_CAP, SECTION_CAP};
pub use sections::{parse_section_address, read_sections};

#[cfg(test)]
mod robustness {
    //! Every prefix and many single-byte mutations of realistic inputs go
    //! through every parser without panicking (a stable-toolchain stand-in
    //! for the cargo-fuzz target in `fuzz/`).

    use std::path::Path;
    use std::string::ToString;
    use std::vec::Vec;

    use super::*;

    const INPUTS: [&str; 3] = [
        "ffffffff81000000 T _stext\r\nffffffff81000010 t helper\n\
         ffffffffc0001000 t a_fn\t[a]\nffffffffc0002000 T b\t[b]\n\
         ffffffffc0001000 T a_init\t[a]\nffffffffc0300000 t bpf_prog_x\t[bpf]\n",
        "nf 28672 1 crc, Live 0xffffffffc0a01000 (OE)\ncrc 12288 - - Loading 0xffffffffc0900000\n",
        "m 0 ffffffffc0001000 1000\n# c\nm 4 0x0 0x0\n0xffffffffc0a01000\n",
    ];

    fn all(data: &[u8]) {
        let f = Path::new("x");
        if let Err(e) = ProcKallsyms::parse(f, data) {
            let _ = e.to_string();
        }
        if let Err(e) = parse_nm(f, data) {
            let _ = e.to_string();
        }
        if let Err(e) = parse_proc_modules(f, data) {
            let _ = e.to_string();
        }
        if let Err(e) = parse_section_address(f, data) {
            let _ = e.to_string();
        }
        if let Err(e) = parse_module_layout(f, data) {
            let _ = e.to_string();
        }
    }

    #[test]
    fn prefixes_and_mutations() {
        const BYTES: [u8; 14] = [
            0, b'\n', b'\r', b' ', b'\t', b'[', b']', b'(', b'#', 0xff, 0xc3, b'x', b'0', b'-',
        ];
        for input in INPUTS {
            let input = input.as_bytes();
            for n in 0..=input.len() {
                all(&input[..n]);
            }
            let mut buf: Vec<u8> = input.to_vec();
            for i in 0..buf.len() {
                let orig = buf[i];
                for b in BYTES {
                    buf[i] = b;
                    all(&buf);
                }
                buf[i] = orig;
            }
        }
    }
}
