//! `kallsyms-bench resolve`: print what the kernel's `sprint_symbol()`
//! (or, with `--no-offset`, `sprint_symbol_no_offset()`; with `--wchan`,
//! `/proc/PID/wchan`) prints for each address.
//!
//! Addresses the core table and the modules do not resolve go, as in
//! 6.12's `kallsyms_lookup_buildid()`, to the `[bpf]` and ftrace-init
//! symbols ([`PseudoSymbols`]). `/proc/kallsyms` lists their starts but not
//! their sizes, so for them only part of the kernel's text is known. The
//! decision: print the most likely answer (the address lies inside the
//! symbol, whose size is taken as the room up to the next listed symbol)
//! and explain it on stderr, rather than leave the line out or fail the
//! run: such symbols are common on real machines (systemd loads BPF
//! programs), and every other line of the run is still exact.

use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::Path;

use kallsyms_mirror::format::{sprint_symbol, Found, SymbolBuf};
use kallsyms_mirror::mirror::{Algo, Cores};
use kallsyms_mirror::name::NameBuf;
use kallsyms_mirror::pseudo::{PseudoHit, PseudoKind, PseudoSymbols};

use crate::load::{load, Loaded};

/// Longest stdin line accepted, without its newline. An address is at most
/// 18 characters (`0x` and 16 digits); the rest allows generous padding.
pub const MAX_LINE: usize = 4096;

/// How many estimated answers are explained one by one on stderr.
const MAX_NOTES: usize = 10;

/// How much of a rejected input is quoted in an error message.
const QUOTE: usize = 40;

/// Parses a hex address: optional blanks, an optional `0x`/`0X`, then 1 to
/// 16 hex digits and nothing else (no sign, no `_`).
pub fn parse_addr(s: &str) -> Option<u64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if t.is_empty() || t.len() > 16 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(t, 16).ok()
}

/// At most [`QUOTE`] bytes of `b`, lossily decoded, for an error message.
fn quote(b: &[u8]) -> String {
    let cut = b.get(..QUOTE).unwrap_or(b);
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if cut.len() < b.len() {
        s.push_str("...");
    }
    format!("{s:?}")
}

/// Which text the kernel would print.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `sprint_symbol()`, `%pS`.
    Symbol,
    /// `sprint_symbol_no_offset()`, `%ps`.
    NoOffset,
    /// `/proc/PID/wchan`: the bare name or `0`.
    Wchan,
}

/// One address's answer: the kernel's text in `buf`; `Err` carries a note
/// when part of that text is an estimate (see the module docs).
struct Resolver<'a> {
    loaded: &'a Loaded,
    /// The mirror's index views, built once for every address.
    cores: Cores<'a>,
    pseudo: PseudoSymbols,
    kallsyms: String,
    form: Form,
    name: NameBuf,
}

impl<'a> Resolver<'a> {
    fn new(loaded: &'a Loaded, form: Form) -> Self {
        let m = &loaded.machine;
        let others = m
            .core
            .iter()
            .chain(m.modules.iter().flat_map(|x| x.symbols.iter()))
            .map(|s| s.addr);
        let pseudo = PseudoSymbols::new(
            m.pseudo
                .iter()
                .map(|g| (g.name.as_str(), g.symbols.as_slice())),
            others,
        );
        Resolver {
            loaded,
            cores: loaded.mirror.cores(),
            pseudo,
            kallsyms: m.root.join("proc/kallsyms").display().to_string(),
            form,
            name: NameBuf::new(),
        }
    }

    fn resolve(&mut self, addr: u64, buf: &mut SymbolBuf) -> Result<(), String> {
        let mirror = &self.loaded.mirror;
        let add_offset = match self.form {
            Form::Wchan => {
                mirror.wchan_with(&self.cores, Algo::Fast, addr, &mut self.name, buf);
                return Ok(());
            }
            Form::Symbol => true,
            Form::NoOffset => false,
        };
        mirror.sprint_with(
            &self.cores,
            Algo::Fast,
            addr,
            add_offset,
            &mut self.name,
            buf,
        );
        if mirror
            .resolve_with(&self.cores, Algo::Fast, addr, &mut self.name)
            .is_some()
            || mirror.tables().sections.is_ksym_addr(addr)
        {
            return Ok(());
        }
        let PseudoHit::Within { sym, offset, room } = self.pseudo.lookup(addr) else {
            return Ok(());
        };
        // The real size (the JIT image length, or the function's size when
        // ftrace recorded it) is not listed; the room up to the next listed
        // symbol bounds it and is the best estimate.
        let found = Found {
            name: &sym.name,
            size: room.unwrap_or(offset.saturating_add(1)),
            offset,
            module: (sym.kind == PseudoKind::FtraceInit).then_some(sym.group.as_bytes()),
        };
        sprint_symbol(buf, addr, Some(&found), add_offset);
        // At its start the answer is certain for %ps (bpf's end is
        // inclusive, an ftrace function has a size); elsewhere the address
        // may lie past the symbol's unlisted end, where the kernel prints
        // it raw.
        if add_offset || offset != 0 {
            let lookup = match sym.kind {
                PseudoKind::Bpf => "bpf_address_lookup()",
                PseudoKind::FtraceInit => "ftrace_mod_address_lookup()",
            };
            return Err(format!(
                "{}: {addr:#x} is {offset:#x} bytes into {} [{}] (listed at {:#x}), found by \
                 {lookup}; /proc/kallsyms lists no size, so the size printed is the room up to \
                 the next listed symbol, and an address past the real end prints raw in the kernel",
                self.kallsyms,
                String::from_utf8_lossy(&sym.name),
                sym.group,
                sym.addr
            ));
        }
        Ok(())
    }
}

/// Reads one line of at most [`MAX_LINE`] bytes (plus its newline) into
/// `line`; `Ok(false)` at the end of the input.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<bool> {
    line.clear();
    let n = input
        .by_ref()
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', line)?;
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() > MAX_LINE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("line longer than {MAX_LINE} bytes"),
        ));
    }
    Ok(n > 0)
}

/// Runs the subcommand; addresses from `args`, or stdin when empty.
pub fn run(root: &Path, args: &[String], form: Form) -> Result<(), String> {
    let loaded = load(root)?;
    let mut resolver = Resolver::new(&loaded, form);
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut buf = SymbolBuf::new();
    let mut estimated = 0usize;
    let mut emit = |addr: u64, out: &mut BufWriter<io::StdoutLock<'_>>| -> Result<(), String> {
        if let Err(note) = resolver.resolve(addr, &mut buf) {
            estimated += 1;
            if estimated <= MAX_NOTES {
                eprintln!("kallsyms-bench: note: {note}");
            }
        }
        let w = |out: &mut BufWriter<_>| -> io::Result<()> {
            write!(out, "{addr:x} ")?;
            out.write_all(buf.as_bytes())?;
            out.write_all(b"\n")
        };
        w(out).map_err(|e| format!("writing output: {e}"))
    };
    if args.is_empty() {
        let stdin = io::stdin();
        let mut input = stdin.lock();
        let mut line = Vec::new();
        for n in 1.. {
            match read_line(&mut input, &mut line) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => return Err(format!("<stdin>:{n}: {e}")),
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let addr = std::str::from_utf8(&line)
                .ok()
                .and_then(parse_addr)
                .ok_or_else(|| format!("<stdin>:{n}: not a hex address: {}", quote(&line)))?;
            emit(addr, &mut out)?;
        }
    } else {
        for (i, a) in args.iter().enumerate() {
            let addr = parse_addr(a).ok_or_else(|| {
                format!(
                    "argument {}: not a hex address: {}",
                    i + 1,
                    quote(a.as_bytes())
                )
            })?;
            emit(addr, &mut out)?;
        }
    }
    out.flush().map_err(|e| format!("writing output: {e}"))?;
    if estimated > 0 {
        eprintln!(
            "kallsyms-bench: {estimated} address(es) printed with an estimated size or \
             membership: /proc/kallsyms lists no size for [bpf] and ftrace-kept init symbols"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("ff"), Some(0xff));
        assert_eq!(parse_addr(" 0xFF\r"), Some(0xff));
        assert_eq!(parse_addr("ffffffffffffffff"), Some(u64::MAX));
        for bad in [
            "",
            "0x",
            "+ff",
            "0x+ff",
            "-1",
            "f_f",
            "0x0x1",
            "1ffffffffffffffff",
            "ff ff",
        ] {
            assert_eq!(parse_addr(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn lines_are_capped() {
        let mut line = Vec::new();
        let mut input = io::Cursor::new(b"ab\ncd".to_vec());
        assert!(read_line(&mut input, &mut line).unwrap());
        assert_eq!(line, b"ab");
        assert!(read_line(&mut input, &mut line).unwrap());
        assert_eq!(line, b"cd");
        assert!(!read_line(&mut input, &mut line).unwrap());
        let exact = [vec![b'1'; MAX_LINE], b"\n".to_vec()].concat();
        let mut input = io::Cursor::new(exact);
        assert!(read_line(&mut input, &mut line).unwrap());
        assert_eq!(line.len(), MAX_LINE);
        let mut input = io::Cursor::new(vec![b'1'; MAX_LINE + 1]);
        assert!(read_line(&mut input, &mut line).is_err());
    }

    #[test]
    fn quotes_are_short() {
        let q = quote(&[b'x'; 10_000]);
        assert!(q.len() < QUOTE + 10, "{q}");
        assert_eq!(quote(b"zz"), "\"zz\"");
    }
}
