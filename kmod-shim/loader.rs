// SPDX-License-Identifier: GPL-2.0

//! The loader's input: `<symbol> <hex address>` lines, one per name the
//! module needs (the list is `kallsyms_fast_shared::loader`, shared with
//! `kallsyms-bench shim load`).

use core::fmt::{self, Write};

use crate::text::Text;
use kernel::prelude::*;

// The loader's symbols, shared with `kallsyms-bench shim load`.
pub(crate) use kallsyms_fast_shared::loader::{
    is_optional, FUNCTION_SYMBOLS as FUNC_SYMS, NUM_LOADER_SYMBOLS, RELATIVE_BASE,
    SECTION_SYMBOLS as SECTION_SYMS, TABLE_SYMBOLS as TABLE_SYMS,
};
pub(crate) const NUM_INPUTS: usize = NUM_LOADER_SYMBOLS;

/// Why a load was refused, and the errno the write fails with.
pub(crate) struct Refusal {
    /// `ENOMEM` for out-of-memory, `EOPNOTSUPP` for an unsupported kernel,
    /// `EINVAL` for input the kernel does not vouch for.
    pub(crate) errno: Error,
    /// The reason, for the log and the `status` file (a piece that would pass 256 bytes is left out).
    pub(crate) text: Text<256>,
}

/// `Err(Refusal)` with `errno` and the formatted reason: call sites read
/// `return refused(EINVAL, format_args!(...))`.
pub(crate) fn refused<T>(errno: Error, reason: fmt::Arguments<'_>) -> Result<T, Refusal> {
    let mut text = Text::new();
    let _ = text.write_fmt(reason);
    Err(Refusal { errno, text })
}

/// Name of input `i`: the tables, then the functions, then the sections.
pub(crate) fn input_name(i: usize) -> &'static str {
    let (t, f) = (TABLE_SYMS.len(), FUNC_SYMS.len());
    match i {
        _ if i < t => TABLE_SYMS[i].0,
        _ if i < t + f => FUNC_SYMS[i - t],
        _ => SECTION_SYMS.get(i - t - f).copied().unwrap_or("?"),
    }
}

/// The loader's lines: each input's address, and whether it was given
/// (every input but an optional one, `kallsyms_relative_base`, must be).
pub(crate) struct Inputs {
    pub(crate) vals: [u64; NUM_INPUTS],
    pub(crate) given: [bool; NUM_INPUTS],
}

pub(crate) fn parse_input(text: &[u8]) -> Result<Inputs, Refusal> {
    let Ok(text) = core::str::from_utf8(text) else {
        return refused(EINVAL, format_args!("input is not UTF-8 text"));
    };
    let mut vals = [0u64; NUM_INPUTS];
    let mut seen = [false; NUM_INPUTS];
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut it = line.split_ascii_whitespace();
        let (Some(name), Some(addr), None) = (it.next(), it.next(), it.next()) else {
            return refused(
                EINVAL,
                format_args!("malformed line \"{line}\" (want: <symbol> <hex address>)"),
            );
        };
        let digits = addr.strip_prefix("0x").unwrap_or(addr);
        let Ok(addr) = u64::from_str_radix(digits, 16) else {
            return refused(EINVAL, format_args!("{name}: bad address \"{addr}\""));
        };
        let Some(i) = (0..NUM_INPUTS).position(|i| input_name(i) == name) else {
            return refused(EINVAL, format_args!("unknown symbol \"{name}\""));
        };
        if seen[i] {
            return refused(EINVAL, format_args!("{name} given twice"));
        }
        seen[i] = true;
        vals[i] = addr;
    }
    if let Some(i) = (0..NUM_INPUTS).position(|i| !seen[i] && !is_optional(input_name(i))) {
        let name = input_name(i);
        return refused(EINVAL, format_args!("{name} missing (input truncated?)"));
    }
    Ok(Inputs { vals, given: seen })
}
