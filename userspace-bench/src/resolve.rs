//! `kallsyms-bench resolve`: print what the kernel's `sprint_symbol()`
//! (or, with `--no-offset`, `sprint_symbol_no_offset()`; with `--wchan`,
//! `/proc/PID/wchan`) prints for each address.

use std::io::{self, BufRead, BufWriter, Write};
use std::path::Path;

use kallsyms_fast::format::SymbolBuf;
use kallsyms_fast::mirror::Algo;
use kallsyms_fast::name::NameBuf;

use crate::load::load;

/// Parses a hex address with or without `0x`.
pub fn parse_addr(s: &str) -> Option<u64> {
    let t = s.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if t.is_empty() || t.len() > 16 {
        return None;
    }
    u64::from_str_radix(t, 16).ok()
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

/// Runs the subcommand; addresses from `args`, or stdin when empty.
pub fn run(root: &Path, args: &[String], form: Form) -> Result<(), String> {
    let loaded = load(root)?;
    let mirror = &loaded.mirror;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut name = NameBuf::new();
    let mut buf = SymbolBuf::new();
    let mut emit = |addr: u64, out: &mut BufWriter<io::StdoutLock<'_>>| -> io::Result<()> {
        match form {
            Form::Symbol => mirror.sprint(Algo::Fast, addr, true, &mut name, &mut buf),
            Form::NoOffset => mirror.sprint(Algo::Fast, addr, false, &mut name, &mut buf),
            Form::Wchan => mirror.wchan(Algo::Fast, addr, &mut name, &mut buf),
        }
        write!(out, "{addr:x} ")?;
        out.write_all(buf.as_bytes())?;
        out.write_all(b"\n")
    };
    let io_err = |e: io::Error| format!("writing output: {e}");
    if args.is_empty() {
        for (i, line) in io::stdin().lock().lines().enumerate() {
            let line = line.map_err(|e| format!("<stdin>:{}: {e}", i + 1))?;
            if line.trim().is_empty() {
                continue;
            }
            let addr = parse_addr(&line)
                .ok_or_else(|| format!("<stdin>:{}: not a hex address: {line:?}", i + 1))?;
            emit(addr, &mut out).map_err(io_err)?;
        }
    } else {
        for (i, a) in args.iter().enumerate() {
            let addr = parse_addr(a)
                .ok_or_else(|| format!("argument {}: not a hex address: {a:?}", i + 1))?;
            emit(addr, &mut out).map_err(io_err)?;
        }
    }
    out.flush().map_err(io_err)
}
