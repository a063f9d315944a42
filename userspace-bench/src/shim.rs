//! `kallsyms-bench shim`: the userspace side of `kmod-shim/`.
//!
//! - `shim load`: reads `/proc/kallsyms` (as root, so addresses are real),
//!   writes the addresses of the kallsyms tables, the section symbols and
//!   the two lookup functions to `kallsyms_fast/load` in debugfs, then
//!   (unless `--no-enable`) asks the module to enable its livepatch. The
//!   module verifies everything against the stock `sprint_symbol()` first
//!   and refuses anything that does not match.
//! - `shim check`: writes addresses around every symbol in
//!   `/proc/kallsyms` (core and modules) to `kallsyms_fast/check`, where the
//!   module compares its `%pS` text for each with the stock
//!   `sprint_symbol()`; prints the counts and fails on any mismatch.
//! - `shim truth`: resolves the same addresses through the ground-truth
//!   test module (`ksym_truth`'s `resolve` file: `sprint_symbol()` and
//!   `%ps` as the kernel prints them) and prints its lines; run once stock
//!   and once under the shim, the two outputs must be identical.
//! - `shim wchan`: prints `<tid> <wchan>` for every thread.
//! - `shim wchan-bench`: reads every thread's `/proc/PID/task/TID/wchan`
//!   repeatedly and reports the time per read.
//!
//! The guest suite's test helpers (sleeping threads, unprivileged dumps,
//! timed passes over thread groups) are `kfast-shim-guest`, in xtask.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};

/// Symbols the module needs; the list is shared with it (`kallsyms_mirror::loader`).
pub const SHIM_SYMBOLS: &[&str] = &kallsyms_mirror::loader::LOADER_SYMBOLS;

/// `kallsyms-bench shim ...`.
#[derive(Args)]
pub struct ShimArgs {
    #[command(subcommand)]
    cmd: ShimCmd,
}

#[derive(Subcommand)]
enum ShimCmd {
    /// Pass the table addresses from /proc/kallsyms to kallsyms_fast_shim and enable it.
    Load {
        /// Where to read symbols from.
        #[arg(long, default_value = "/proc/kallsyms")]
        kallsyms: PathBuf,
        /// The module's debugfs directory.
        #[arg(long, default_value = "/sys/kernel/debug/kallsyms_fast")]
        dir: PathBuf,
        /// Print the text instead of writing it.
        #[arg(long)]
        print: bool,
        /// Load and verify only; do not enable the livepatch.
        #[arg(long)]
        no_enable: bool,
    },
    /// Compare the module's %pS text with sprint_symbol() around every symbol.
    Check {
        /// Where to read symbols from.
        #[arg(long, default_value = "/proc/kallsyms")]
        kallsyms: PathBuf,
        /// The module's debugfs directory.
        #[arg(long, default_value = "/sys/kernel/debug/kallsyms_fast")]
        dir: PathBuf,
        /// Every Nth of those addresses only (a sample spread over core
        /// and every module; 1: all).
        #[arg(long, value_name = "N", default_value_t = 1)]
        every: usize,
    },
    /// Print ksym_truth's `<addr> <%pS>\t<%ps>` line for the `check` addresses.
    Truth {
        /// Where to read symbols from.
        #[arg(long, default_value = "/proc/kallsyms")]
        kallsyms: PathBuf,
        /// Take the addresses from an earlier run's output instead (the
        /// symbol list changes while a livepatch is enabled: ftrace adds
        /// trampolines).
        #[arg(long)]
        same_as: Option<PathBuf>,
        /// ksym_truth's resolve file.
        #[arg(long, default_value = "/sys/kernel/debug/ksym_truth/resolve")]
        resolve: PathBuf,
        /// Every Nth of those addresses only (a sample spread over core
        /// and every module; 1: all).
        #[arg(long, value_name = "N", default_value_t = 1)]
        every: usize,
    },
    /// Print `<tid> <wchan>` for every thread.
    Wchan,
    /// Time reads of every thread's /proc/PID/task/TID/wchan.
    WchanBench {
        /// Run whole passes over all threads for this long.
        #[arg(long, default_value_t = 5)]
        seconds: u32,
    },
}

/// Runs a `shim` subcommand.
pub fn run(args: &ShimArgs) -> Result<(), String> {
    match &args.cmd {
        ShimCmd::Load {
            kallsyms,
            dir,
            print,
            no_enable,
        } => {
            let text =
                fs::read_to_string(kallsyms).map_err(|e| format!("{}: {e}", kallsyms.display()))?;
            let load = load_text(&text)?;
            if *print {
                print!("{load}");
                return Ok(());
            }
            write_file(&dir.join("load"), load.as_bytes())?;
            if !no_enable {
                write_file(&dir.join("ctl"), b"enable")?;
            }
            eprintln!(
                "kallsyms-bench: shim loaded{}",
                if *no_enable { "" } else { " and enabled" }
            );
            Ok(())
        }
        ShimCmd::Check {
            kallsyms,
            dir,
            every,
        } => {
            let text =
                fs::read_to_string(kallsyms).map_err(|e| format!("{}: {e}", kallsyms.display()))?;
            let addrs = sample(check_addresses(&text)?, *every);
            let check = dir.join("check");
            let mut batch = String::new();
            for a in &addrs {
                batch.push_str(&format!("{a:x}\n"));
                if batch.len() > 7000 {
                    write_file(&check, batch.as_bytes())?;
                    batch.clear();
                }
            }
            if !batch.is_empty() {
                write_file(&check, batch.as_bytes())?;
            }
            let status = dir.join("status");
            let status =
                fs::read_to_string(&status).map_err(|e| format!("{}: {e}", status.display()))?;
            let line = status
                .lines()
                .find(|l| l.starts_with("check: "))
                .ok_or("status has no check line")?;
            println!("{line}");
            let counts = parse_check_line(line)?;
            if counts.total != addrs.len() as u64 || counts.unserved != 0 || counts.mismatches != 0
            {
                return Err(format!(
                    "check: {} addresses sent, {} compared, {} unserved, {} mismatches",
                    addrs.len(),
                    counts.total,
                    counts.unserved,
                    counts.mismatches
                ));
            }
            Ok(())
        }
        ShimCmd::Truth {
            kallsyms,
            same_as,
            resolve,
            every,
        } => {
            let addrs = match same_as {
                Some(p) => {
                    let text =
                        fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
                    first_field_addresses(&text)
                        .map_err(|n| format!("{}:{n}: no hex address", p.display()))?
                }
                None => {
                    let text = fs::read_to_string(kallsyms)
                        .map_err(|e| format!("{}: {e}", kallsyms.display()))?;
                    sample(check_addresses(&text)?, *every)
                }
            };
            let out = truth_resolve(resolve, &addrs)?;
            let lines = out.iter().filter(|&&b| b == b'\n').count();
            if lines != addrs.len() {
                return Err(format!(
                    "{}: {lines} lines for {} addresses",
                    resolve.display(),
                    addrs.len()
                ));
            }
            std::io::stdout()
                .lock()
                .write_all(&out)
                .map_err(|e| format!("stdout: {e}"))
        }
        ShimCmd::Wchan => {
            let mut out = std::io::stdout().lock();
            // Our own threads are running while they read: leave them out.
            let own = format!("/proc/{}/", std::process::id());
            for (tid, path) in threads()? {
                if path.starts_with(&own) {
                    continue;
                }
                let w = fs::read_to_string(&path).unwrap_or_else(|_| "?".into());
                let _ = writeln!(out, "{tid} {w}");
            }
            Ok(())
        }
        ShimCmd::WchanBench { seconds } => {
            let threads = threads()?;
            let mut buf = Vec::with_capacity(256);
            // Whole passes until the budget is spent: under QEMU TCG the
            // guest clock ticks in jiffies, so only long runs are precise.
            let budget = std::time::Duration::from_secs(u64::from(*seconds));
            let t = Instant::now();
            let mut rounds = 0u64;
            while rounds == 0 || t.elapsed() < budget {
                for (_, p) in &threads {
                    buf.clear();
                    if let Ok(mut f) = fs::File::open(p) {
                        let _ = std::io::Read::read_to_end(&mut f, &mut buf);
                    }
                }
                rounds += 1;
            }
            let reads = rounds * threads.len() as u64;
            let ns = t.elapsed().as_nanos() as u64 / reads.max(1);
            println!(
                "wchan-bench: {} threads x {rounds} rounds: {ns} ns per /proc/PID/task/TID/wchan read",
                threads.len()
            );
            Ok(())
        }
    }
}

fn write_file(path: &Path, data: &[u8]) -> Result<(), String> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| format!("{}: {e} (is kallsyms_fast_shim loaded?)", path.display()))?;
    f.write_all(data).map_err(|e| {
        format!(
            "{}: {e} (the module refused; see dmesg and {}/status)",
            path.display(),
            path.parent().unwrap_or(Path::new(".")).display()
        )
    })
}

/// Every `every`th address of `addrs` (all for 0 or 1).
fn sample(addrs: Vec<u64>, every: usize) -> Vec<u64> {
    addrs.into_iter().step_by(every.max(1)).collect()
}

/// The addresses `shim check` sends: for core symbols, each symbol's
/// address + 1; for module symbols (sorted per module), in turn the first
/// byte, the second byte and the last byte before the next symbol.
pub fn check_addresses(kallsyms: &str) -> Result<Vec<u64>, String> {
    let mut core = Vec::new();
    let mut modules: std::collections::BTreeMap<&str, Vec<u64>> = Default::default();
    let mut zeros = 0usize;
    for (n, line) in kallsyms.lines().enumerate() {
        let mut it = line.split_ascii_whitespace();
        let (Some(addr), Some(_ty), Some(_name)) = (it.next(), it.next(), it.next()) else {
            return Err(format!("/proc/kallsyms:{}: malformed line", n + 1));
        };
        let addr = u64::from_str_radix(addr, 16)
            .map_err(|_| format!("/proc/kallsyms:{}: bad address", n + 1))?;
        if addr == 0 {
            // Per-CPU symbols can be 0 legitimately; all zero means hidden.
            zeros += 1;
            continue;
        }
        match it.next() {
            Some(module) => modules.entry(module).or_default().push(addr),
            None => core.push(addr.wrapping_add(1)),
        }
    }
    if core.is_empty() && modules.is_empty() && zeros > 0 {
        return Err("zero addresses in /proc/kallsyms: run as root (kptr_restrict)".into());
    }
    let mut out = core;
    for (_, mut syms) in modules {
        syms.sort_unstable();
        syms.dedup();
        for (i, &a) in syms.iter().enumerate() {
            let next = syms.get(i + 1).copied();
            out.push(match (i % 3, next) {
                (1, _) => a + 1,
                (2, Some(b)) if b > a + 1 => b - 1,
                _ => a,
            });
        }
    }
    Ok(out)
}

/// Writes `addrs` to ksym_truth's `resolve` file and returns what it
/// answers. The module buffers 1 MiB per open file and refuses writes
/// (short count or ENOSPC) until it has been read.
fn truth_resolve(path: &Path, addrs: &[u64]) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::with_capacity(addrs.len() * 64);
    let mut buf = vec![0u8; 1 << 20];
    let mut drain = |f: &mut fs::File, out: &mut Vec<u8>| -> Result<(), String> {
        loop {
            match f.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => return Err(format!("read {}: {e}", path.display())),
            }
        }
    };
    for chunk in addrs.chunks(4096) {
        let input: String = chunk.iter().map(|a| format!("{a:x}\n")).collect();
        let mut rest = input.as_bytes();
        while !rest.is_empty() {
            match f.write(rest) {
                Ok(n) => rest = &rest[n..],
                Err(e) if e.raw_os_error() == Some(28) => {}
                Err(e) => return Err(format!("write {}: {e}", path.display())),
            }
            drain(&mut f, &mut out)?;
        }
    }
    drain(&mut f, &mut out)?;
    Ok(out)
}

/// The hex addresses that start each line; the failing line number.
fn first_field_addresses(text: &str) -> Result<Vec<u64>, usize> {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let a = l.split(' ').next().unwrap_or("");
            u64::from_str_radix(a, 16).map_err(|_| i + 1)
        })
        .collect()
}

/// The counts of the status file's `check:` line.
#[derive(Debug, PartialEq, Eq)]
pub struct CheckCounts {
    /// Addresses compared.
    pub total: u64,
    /// Of which in modules.
    pub module: u64,
    /// Addresses the indexes could not serve.
    pub unserved: u64,
    /// Texts that differed from `sprint_symbol()`.
    pub mismatches: u64,
}

/// Parses `check: T addresses, M in modules, U unserved, X mismatches, ...`
/// (the first four counts).
pub fn parse_check_line(line: &str) -> Result<CheckCounts, String> {
    let nums: Vec<u64> = line
        .trim_start_matches("check: ")
        .split(';')
        .next()
        .unwrap_or("")
        .split(", ")
        .filter_map(|f| f.split(' ').next()?.parse().ok())
        .collect();
    match nums[..] {
        [total, module, unserved, mismatches, ..] => Ok(CheckCounts {
            total,
            module,
            unserved,
            mismatches,
        }),
        _ => Err(format!("unexpected check line: {line}")),
    }
}

/// The `load` text: `<name> <hex address>` per needed symbol, taking each
/// name's first core-kernel line.
pub fn load_text(kallsyms: &str) -> Result<String, String> {
    let mut found: Vec<Option<u64>> = vec![None; SHIM_SYMBOLS.len()];
    for line in kallsyms.lines() {
        let mut it = line.split_ascii_whitespace();
        let (Some(addr), Some(_ty), Some(name), None) =
            (it.next(), it.next(), it.next(), it.next())
        else {
            continue; // module symbols have a fourth field
        };
        if let Some(i) = SHIM_SYMBOLS.iter().position(|s| *s == name) {
            if found[i].is_none() {
                found[i] = u64::from_str_radix(addr, 16).ok();
            }
        }
    }
    let mut out = String::new();
    for (name, addr) in SHIM_SYMBOLS.iter().zip(&found) {
        match addr {
            Some(0) => {
                return Err(format!(
                    "{name} has address 0 in /proc/kallsyms: run as root (kptr_restrict)"
                ))
            }
            Some(a) => out.push_str(&format!("{name} {a:x}\n")),
            // kallsyms_relative_base: 6.12 has it, 7.3 does not; the module
            // reads 7.3's PC-relative offsets when it is not sent.
            None if kallsyms_mirror::loader::is_optional(name) => {}
            None => return Err(format!("{name} not in /proc/kallsyms (needs KALLSYMS_ALL)")),
        }
    }
    Ok(out)
}

fn threads() -> Result<Vec<(u32, PathBuf)>, String> {
    let mut v = Vec::new();
    for p in fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))? {
        let Ok(p) = p else { continue };
        if p.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        let Ok(tasks) = fs::read_dir(p.path().join("task")) else {
            continue;
        };
        for t in tasks.flatten() {
            if let Ok(tid) = t.file_name().to_string_lossy().parse::<u32>() {
                v.push((tid, t.path().join("wchan")));
            }
        }
    }
    v.sort();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_addresses_cover_core_and_module_symbols() {
        let text = "ffffffff81000000 T _stext\n\
                    ffffffff81000010 T start_kernel\n\
                    ffffffffc0000030 t b\t[m]\n\
                    ffffffffc0000000 t a\t[m]\n\
                    ffffffffc0000040 t c\t[m]\n\
                    ffffffffc0000050 t d\t[m]\n";
        let got = check_addresses(text).unwrap();
        assert_eq!(
            got,
            [
                0xffffffff81000001,
                0xffffffff81000011,
                0xffffffffc0000000, // a: first byte
                0xffffffffc0000031, // b: second byte
                0xffffffffc000004f, // c: last byte before d
                0xffffffffc0000050, // d: first byte again
            ]
        );
        let zero = "0000000000000000 A fixed_percpu_data\n";
        let with_zero = format!("{zero}{text}");
        assert_eq!(check_addresses(&with_zero).unwrap(), got);
        let err = check_addresses(zero).unwrap_err();
        assert!(err.contains("run as root"), "{err}");
        let err = check_addresses("ffffffff81000000 T\n").unwrap_err();
        assert!(err.contains("/proc/kallsyms:1"), "{err}");
    }

    #[test]
    fn truth_lines_give_back_their_addresses() {
        let text = "ffffffff81000001 _stext+0x1/0x10\t_stext\n\
                    ffffffffc0000000 a+0x0/0x30 [m]\ta\n";
        assert_eq!(
            first_field_addresses(text),
            Ok(vec![0xffffffff81000001, 0xffffffffc0000000])
        );
        assert_eq!(first_field_addresses("ok\nzz x\n"), Err(1));
    }

    #[test]
    fn check_line_parses_and_rejects() {
        let c = parse_check_line(
            "check: 102473 addresses, 61000 in modules, 0 unserved, 2 mismatches, 5 outside core and modules; first: 0x1: shim \"a\"",
        )
        .unwrap();
        assert_eq!(
            c,
            CheckCounts {
                total: 102473,
                module: 61000,
                unserved: 0,
                mismatches: 2
            }
        );
        assert!(parse_check_line("check: garbage").is_err());
    }

    #[test]
    fn load_text_takes_core_symbols_only() {
        let mut k = String::new();
        for (i, s) in SHIM_SYMBOLS.iter().enumerate() {
            k.push_str(&format!("{:016x} T {s}\tmodx]\n", 0x1000 + i));
            k.push_str(&format!(
                "{:016x} T {s}\n",
                0xffff_0000_0000_0000u64 + i as u64
            ));
        }
        let t = load_text(&k).unwrap();
        assert_eq!(t.lines().count(), SHIM_SYMBOLS.len());
        assert!(t.starts_with("kallsyms_num_syms ffff000000000000\n"));
        k = k.replace("_end\n", "_endx\n");
        assert!(load_text(&k).unwrap_err().contains("_end"));
    }

    /// A 7.3 kernel has no kallsyms_relative_base: its line is left out,
    /// and only that one may be.
    #[test]
    fn load_text_leaves_out_a_missing_relative_base() {
        let mut k = String::new();
        for (i, s) in SHIM_SYMBOLS.iter().enumerate() {
            if *s != "kallsyms_relative_base" {
                k.push_str(&format!(
                    "{:016x} T {s}\n",
                    0xffff_0000_0000_0000u64 + i as u64
                ));
            }
        }
        let t = load_text(&k).unwrap();
        assert_eq!(t.lines().count(), SHIM_SYMBOLS.len() - 1);
        assert!(!t.contains("kallsyms_relative_base"));
        let k = k.replace(" kallsyms_offsets\n", " kallsyms_offsetsx\n");
        assert!(load_text(&k).unwrap_err().contains("kallsyms_offsets"));
    }
}
