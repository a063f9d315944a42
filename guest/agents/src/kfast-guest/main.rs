//! `kfast-guest`: the agent that runs inside the QEMU test guest.
//!
//! It captures `/proc/kallsyms`, `/proc/modules`, module sections and the
//! module layout into an output directory laid out like the capture the host
//! reconstructs, generates test addresses, resolves them with the kernel via
//! the `ksym_truth` module, and records `/proc/PID/wchan` of every task.
//! Built statically (`+crt-static`) and packed into the initramfs.
//!
//! Usage: `kfast-guest <out-dir>`, or `kfast-guest --exit <code>` to stop
//! QEMU through isa-debug-exit. Knobs from `/proc/cmdline`:
//! `kfast.seed=<n>`, `kfast.mod_budget=<n>` (module-address budget).

mod addrs;
mod capture;
mod exit;
mod truth;

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// Errors are reported as text on the console.
pub type Result<T> = std::result::Result<T, String>;

fn cmdline_knob(cmdline: &str, key: &str, default: u64) -> u64 {
    cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
        .unwrap_or(default)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: kfast-guest <out-dir> | --exit <code>");
        return ExitCode::from(2);
    };
    if out == "--exit" {
        let code = args.get(1).and_then(|c| c.parse().ok()).unwrap_or(1);
        eprintln!("kfast-guest: {}", exit::debug_exit(code));
        return ExitCode::FAILURE;
    }
    match run(Path::new(&out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kfast-guest: error: {e}");
            let _ = std::fs::write(Path::new(&out).join("kallsyms-fast/guest-error.txt"), &e);
            ExitCode::FAILURE
        }
    }
}

fn run(out: &Path) -> Result<()> {
    let t = Instant::now();
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let seed = cmdline_knob(&cmdline, "kfast.seed", 0x6b66_6173_7421);
    let mod_budget = cmdline_knob(&cmdline, "kfast.mod_budget", 30_000) as usize;
    let mut summary = String::new();

    let cap = capture::capture(out)?;
    summary.push_str(&cap.summary);
    eprintln!("kfast-guest: captured in {:.1?}", t.elapsed());

    let addrs = addrs::generate(
        &cap.kallsyms,
        &cap.module_layout,
        &cap.sections,
        &cap.stacks,
        seed,
        mod_budget,
    );
    summary.push_str(&addrs::summarize(&addrs));
    capture::write(
        &out.join("kallsyms-fast/addresses.txt"),
        addrs::categories_file(&addrs).as_bytes(),
    )?;
    eprintln!("kfast-guest: {} addresses generated", addrs.len());

    let tr = Instant::now();
    let n = truth::resolve(&addrs, out)?;
    let ms = tr.elapsed().as_millis();
    summary.push_str(&format!(
        "resolved {n} addresses in {ms} ms (emulated time)\n"
    ));
    eprintln!("kfast-guest: resolved {n} addresses in {ms} ms");

    let w = truth::wchan(out)?;
    summary.push_str(&format!("wchan of {w} tasks\n"));
    summary.push_str(&format!("agent total {} ms\n", t.elapsed().as_millis()));
    eprint!("{summary}");
    capture::write(
        &out.join("kallsyms-fast/guest-summary.txt"),
        summary.as_bytes(),
    )
}
