//! `cargo xtask tcg-blocks`: QEMU TCG's work per function, from its logs.
//!
//! Under TCG what a guest run costs is, to a first order, how many blocks
//! of its code QEMU translates (once per block and address: a
//! position-independent binary at a new address is translated again) and
//! how many blocks it executes. QEMU logs both, with `KFAST_QEMU_EXTRA`
//! (xtask/src/qemu.rs) passing the options to a benchmark boot:
//!
//! - `-d in_asm -D LOG -dfilter LO..HI`: every block translated in the
//!   range, as an `IN:` header and its disassembly (the first address is
//!   the block's);
//! - `-d exec,nochain -D LOG -dfilter LO..HI`: a `Trace` line for every
//!   block executed (`nochain`, else chained blocks go unlogged). The log
//!   is best switched on only around the run of interest, through a
//!   monitor socket (`-monitor unix:PATH,server=on,wait=off`, then `log
//!   exec,nochain` and `log nochain` on it).
//!
//! This counts either log's blocks per function of a binary (`nm`'s text
//! symbols) or of a `System.map`. A position-independent binary's load
//! address is `--base`, or `auto`: the first logged block that is the
//! entry point `_start` of a page-aligned load (a freshly exec'd static
//! binary runs it first; with randomization off its address is the same at
//! every run). An exec log switched on around one run holds other
//! processes' blocks too: a block of theirs at `_start`'s page offset
//! would be taken, so check the base it prints.
//!
//! `--insns` weighs each executed block by its instructions, read from
//! `objdump -d` of the binary (a kernel's `vmlinux`, not its System.map):
//! from the block's first address up to and including the first
//! instruction that ends a TCG block (a jump, call or return, a syscall,
//! an interrupt, a `rep` string instruction, which repeats as a block of
//! its own). Code patched at run time (a kernel's alternatives and static
//! calls) is counted as the file has it.

use crate::Result;
use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

/// Command-line options of `tcg-blocks`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// The QEMU log (`-d in_asm` or `-d exec,nochain`).
    #[arg(long)]
    pub log: PathBuf,
    /// The binary whose symbols name the blocks, or a kernel's System.map.
    #[arg(long)]
    pub symbols: PathBuf,
    /// Load address to subtract (hex), or "auto" (see the module docs);
    /// default 0, as for a kernel.
    #[arg(long, default_value = "0")]
    pub base: String,
    /// Functions to list.
    #[arg(long, default_value_t = 40)]
    pub top: usize,
    /// Count instructions executed instead of blocks (an exec log and a
    /// binary; see the module docs).
    #[arg(long)]
    pub insns: bool,
}

/// Which log a line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Translated,
    Executed,
}

/// The blocks of `log`: their guest addresses, one entry per translation
/// or execution, in log order.
fn blocks(log: &str) -> (Kind, Vec<u64>) {
    let mut translated = Vec::new();
    let mut executed = Vec::new();
    let mut after_in = false;
    for line in log.lines() {
        if line.starts_with("IN:") {
            after_in = true;
            continue;
        }
        if after_in {
            // The first instruction after the header: "0x...:  insn".
            if let Some(a) = line.split(':').next().and_then(hex) {
                translated.push(a);
                after_in = false;
            }
            continue;
        }
        // "Trace 0: 0xHOST [CS_BASE/PC/FLAGS/CFLAGS] symbol"
        if line.starts_with("Trace ") {
            if let Some(pc) = line
                .split_once('[')
                .and_then(|(_, r)| r.split('/').nth(1))
                .and_then(hex)
            {
                executed.push(pc);
            }
        }
    }
    if executed.len() > translated.len() {
        (Kind::Executed, executed)
    } else {
        (Kind::Translated, translated)
    }
}

/// A hexadecimal number, with or without `0x`.
fn hex(s: &str) -> Option<u64> {
    let s = s.trim();
    u64::from_str_radix(s.strip_prefix("0x").unwrap_or(s), 16).ok()
}

/// Text symbols, sorted by address: from a System.map ("addr type name")
/// or from `nm -n -C --defined-only` of a binary.
fn symbols(path: &PathBuf) -> Result<Vec<(u64, String)>> {
    let is_map = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("System.map"));
    let text = if is_map {
        fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?
    } else {
        let out = Command::new("nm")
            .args(["-n", "-C", "--defined-only"])
            .arg(path)
            .output()
            .map_err(|e| format!("nm: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "nm {}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut syms: Vec<(u64, String)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ' ');
            let (a, t, n) = (f.next()?, f.next()?, f.next()?);
            if !matches!(t, "t" | "T" | "w" | "W") {
                return None;
            }
            Some((hex(a)?, n.to_string()))
        })
        .collect();
    syms.sort();
    if syms.is_empty() {
        return Err(format!("{}: no text symbols", path.display()));
    }
    Ok(syms)
}

/// True when TCG ends a block after the instruction `text` (objdump's
/// mnemonic and operands, prefixes included).
fn ends_block(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let mut op = words.next().unwrap_or_default();
    // A `rep` string instruction loops as a block of its own; other
    // prefixes only qualify the instruction after them.
    while matches!(
        op,
        "bnd" | "notrack" | "lock" | "cs" | "ds" | "rex.W" | "data16" | "addr32"
    ) {
        op = words.next().unwrap_or_default();
    }
    if matches!(op, "rep" | "repz" | "repnz" | "repe" | "repne") {
        return true;
    }
    op.starts_with('j')
        || op.starts_with("call")
        || op.starts_with("ret")
        || op.starts_with("iret")
        || op.starts_with("sysret")
        || op.starts_with("loop")
        || op.starts_with("int")
        || matches!(
            op,
            "syscall" | "sysenter" | "sysexit" | "hlt" | "ud2" | "lret"
        )
}

/// The instructions of `objdump -d --no-show-raw-insn` text, sorted: each
/// one's address and whether it ends a block.
fn instructions(objdump: &str) -> Vec<(u64, bool)> {
    let mut v: Vec<(u64, bool)> = objdump
        .lines()
        .filter_map(|l| {
            // "  401000:\tmov    %rsp,%rbp"; labels end in ">:".
            let (addr, text) = l.split_once(":\t")?;
            Some((hex(addr)?, ends_block(text)))
        })
        .collect();
    v.sort_unstable();
    v
}

/// How many instructions the block at `pc` runs: up to its first
/// block-ending instruction, at most 512 (TCG's own limit); 1 when `pc`
/// is no instruction of `insns` (code the file does not have).
fn block_len(insns: &[(u64, bool)], pc: u64) -> u64 {
    let at = insns.partition_point(|i| i.0 < pc);
    if insns.get(at).is_none_or(|i| i.0 != pc) {
        return 1;
    }
    let mut n = 0;
    for &(_, ends) in insns.iter().skip(at).take(512) {
        n += 1;
        if ends {
            break;
        }
    }
    n
}

/// `objdump -d` of `path` between `lo` and `hi`.
fn disassemble(path: &PathBuf, lo: u64, hi: u64) -> Result<Vec<(u64, bool)>> {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(format!("--start-address={lo:#x}"))
        .arg(format!("--stop-address={hi:#x}"))
        .arg(path)
        .output()
        .map_err(|e| format!("objdump: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "objdump {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(instructions(&String::from_utf8_lossy(&out.stdout)))
}

/// Blocks per function, most first, and the blocks no symbol covers.
fn per_function(pcs: &[u64], base: u64, syms: &[(u64, String)]) -> (Vec<(String, u64)>, u64) {
    per_function_weighted(pcs, base, syms, |_| 1)
}

/// [`per_function`], each block counted `weight(offset)` times.
fn per_function_weighted(
    pcs: &[u64],
    base: u64,
    syms: &[(u64, String)],
    mut weight: impl FnMut(u64) -> u64,
) -> (Vec<(String, u64)>, u64) {
    // Past the last symbol by more than this is outside the binary.
    const SLACK: u64 = 1 << 20;
    let last = syms.last().map_or(0, |s| s.0);
    let mut counts: HashMap<&str, u64> = HashMap::new();
    let mut outside = 0;
    for &pc in pcs {
        let Some(off) = pc.checked_sub(base).filter(|&o| o <= last + SLACK) else {
            outside += 1;
            continue;
        };
        match syms.partition_point(|s| s.0 <= off).checked_sub(1) {
            Some(i) => *counts.entry(&syms[i].1).or_default() += weight(off),
            None => outside += 1,
        }
    }
    let mut v: Vec<(String, u64)> = counts
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    (v, outside)
}

/// Runs `tcg-blocks`.
pub fn run(o: &Options) -> Result<u8> {
    let log = fs::read(&o.log).map_err(|e| format!("{}: {e}", o.log.display()))?;
    let (kind, pcs) = blocks(&String::from_utf8_lossy(&log));
    if pcs.is_empty() {
        return Err(format!(
            "{}: no `IN:` blocks and no `Trace` lines (was it logged with -d in_asm or -d exec,nochain?)",
            o.log.display()
        ));
    }
    let syms = symbols(&o.symbols)?;
    let base = if o.base == "auto" {
        let start = syms
            .iter()
            .find(|s| s.1 == "_start")
            .ok_or_else(|| format!("{}: no _start for --base auto", o.symbols.display()))?;
        pcs.iter()
            .map(|pc| pc.wrapping_sub(start.0))
            .find(|base| base % 4096 == 0 && *base < u64::MAX / 2)
            .ok_or_else(|| {
                format!(
                    "--base auto: no logged block is _start ({:#x}) of a page-aligned load",
                    start.0
                )
            })?
    } else {
        hex(&o.base).ok_or_else(|| format!("--base: not hexadecimal: {}", o.base))?
    };
    let (funcs, outside) = if o.insns {
        if kind != Kind::Executed {
            return Err("--insns counts an exec log's blocks (-d exec,nochain)".into());
        }
        let offsets = pcs.iter().filter_map(|pc| pc.checked_sub(base));
        let lo = offsets.clone().min().unwrap_or(0);
        let hi = offsets.max().unwrap_or(0).saturating_add(4096);
        let insns = disassemble(&o.symbols, lo, hi)?;
        // Each block's length once, not once per execution.
        let mut lens: HashMap<u64, u64> = HashMap::new();
        per_function_weighted(&pcs, base, &syms, |off| {
            *lens.entry(off).or_insert_with(|| block_len(&insns, off))
        })
    } else {
        per_function(&pcs, base, &syms)
    };
    let what = match (kind, o.insns) {
        (Kind::Translated, _) => "blocks translated",
        (Kind::Executed, false) => "blocks executed",
        (Kind::Executed, true) => "instructions executed (blocks outside: uncounted)",
    };
    let inside: u64 = funcs.iter().map(|f| f.1).sum();
    println!(
        "{what}: {inside} in {}, base {base:#x}; {outside} blocks outside",
        o.symbols.display()
    );
    for (name, n) in funcs.iter().take(o.top) {
        println!(
            "{n:>10} {:>5.1}%  {name}",
            100.0 * *n as f64 / inside.max(1) as f64
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IN_ASM: &str = "----------------\nIN: \n0x7ffff7e6a380:  f3 0f 1e fa  endbr64\n0x7ffff7e6a384:  31 ed  xorl %ebp, %ebp\n\n----------------\nIN: \n0x7ffff7e6b000:  c3  retq\n";

    const EXEC: &str = "Trace 0: 0x7f9614a14480 [0000000000000000/ffffffff81400bf0/0040c2b0/ff080200] \nTrace 0: 0x7f9614794a40 [0000000000000000/ffffffff81400df0/0040c2b0/ff080200] \nTrace 0: 0x7f9614794a40 [0000000000000000/ffffffff81400bf4/0040c2b0/ff080200] \n";

    #[test]
    fn both_logs_parse() {
        assert_eq!(
            blocks(IN_ASM),
            (Kind::Translated, vec![0x7fff_f7e6_a380, 0x7fff_f7e6_b000])
        );
        assert_eq!(
            blocks(EXEC),
            (
                Kind::Executed,
                vec![
                    0xffff_ffff_8140_0bf0,
                    0xffff_ffff_8140_0df0,
                    0xffff_ffff_8140_0bf4
                ]
            )
        );
    }

    #[test]
    fn blocks_end_where_tcg_ends_them() {
        let dis = "\nvmlinux:     file format elf64-x86-64\n\n\
            0000000000001000 <a>:\n\
            \x20   1000:\tmov    %rsp,%rbp\n\
            \x20   1003:\tadd    $0x1,%eax\n\
            \x20   1006:\tjne    1000 <a>\n\
            \x20   1008:\tnotrack jmp *%rax\n\
            \x20   100b:\trep stos %al,%es:(%rdi)\n\
            \x20   100d:\tcall   2000 <c>\n\
            \x20   1012:\tret\n";
        let insns = instructions(dis);
        assert_eq!(insns.len(), 7, "{insns:?}");
        assert_eq!(block_len(&insns, 0x1000), 3);
        assert_eq!(block_len(&insns, 0x1003), 2);
        assert_eq!(block_len(&insns, 0x1008), 1, "a prefixed jump");
        assert_eq!(block_len(&insns, 0x100b), 1, "a rep string op");
        assert_eq!(block_len(&insns, 0x100d), 1);
        assert_eq!(block_len(&insns, 0x1001), 1, "not an instruction start");
        let syms = vec![(0x1000, "a".to_string())];
        let (f, _) = per_function_weighted(&[0x1000, 0x1000, 0x1003], 0, &syms, |o| {
            block_len(&insns, o)
        });
        assert_eq!(f, vec![("a".to_string(), 8)]);
    }

    #[test]
    fn blocks_land_in_the_function_below_them() {
        let syms = vec![
            (0x1000, "a".to_string()),
            (0x1100, "b".to_string()),
            (0x2000, "c".to_string()),
        ];
        let pcs = [
            0x1000 + 0x1050,
            0x1000 + 0x1100,
            0x1000 + 0x1180,
            0x10,
            0x1000 + 0x3000,
        ];
        let (f, outside) = per_function(&pcs, 0x1000, &syms);
        assert_eq!(
            f,
            vec![
                ("b".to_string(), 2),
                ("a".to_string(), 1),
                ("c".to_string(), 1)
            ]
        );
        assert_eq!(outside, 1, "below the base");
        let (_, outside) = per_function(&[0x1000 + 0x2000 + (2 << 20)], 0x1000, &syms);
        assert_eq!(outside, 1, "far past the last symbol");
    }
}
