//! A precise clock for timing guests: the TSC, with its rate given.
//!
//! Under QEMU TCG (7.2, without `-icount`) a guest's `rdtsc` reads the
//! host's TSC (`cpu_get_ticks()` -> `cpu_get_host_ticks()`), so the guest
//! TSC runs at the host's rate. The guest kernel still calibrates it
//! against the emulated PIT, which fails on a loaded host ("Unable to
//! calibrate against PIT", then "No reference (HPET/PMTIMER) available":
//! the bench kernel has no ACPI), and it falls back to the jiffies
//! clocksource: 10 ms steps (HZ=100) on dumps of 50-100 ms. Telling it
//! the rate (`tsc_early_khz=`) and that the counter is reliable
//! (`tsc=reliable`: no watchdog, whose only reference would be jiffies)
//! gives `CLOCK_MONOTONIC` the TSC's resolution on every boot.
//!
//! The rate is measured here, against `CLOCK_MONOTONIC`, and only when
//! the host's TSC runs at a constant rate through idle states
//! (`constant_tsc` and `nonstop_tsc`); otherwise the guest calibrates as
//! before.

use std::time::{Duration, Instant};

/// How long one measurement of the rate lasts.
const SPAN: Duration = Duration::from_millis(100);

/// Kernel command-line words giving the guest the host's TSC rate, or ""
/// when the host's TSC cannot serve (see the module docs).
pub fn boot_args() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if !cfg!(target_arch = "x86_64") || !constant_rate(&cpuinfo) {
        eprintln!("guest-clock: the host's TSC has no constant rate; the guest calibrates its own");
        return String::new();
    }
    // Two measurements that agree to 0.1%: a preempted one does not.
    for _ in 0..5 {
        let (a, b) = (tsc_khz(), tsc_khz());
        if a > 0 && a.abs_diff(b) * 1000 <= a {
            return format!("tsc_early_khz={} tsc=reliable", (a + b) / 2);
        }
    }
    eprintln!("guest-clock: the host's TSC rate did not settle; the guest calibrates its own");
    String::new()
}

/// QEMU's arguments for the instruction clock: `-icount shift=0`, under
/// which the guest's virtual clock advances by 2^0 = 1 ns for every guest
/// instruction executed, on whichever vCPU, and by nothing else while a
/// vCPU runs (QEMU then runs the vCPUs in turn on one host thread: icount
/// and multi-threaded TCG exclude each other, and QEMU picks the single
/// thread itself).
pub const ICOUNT_QEMU_ARGS: [&str; 2] = ["-icount", "shift=0"];

/// Kernel command-line words for a guest booted with
/// [`ICOUNT_QEMU_ARGS`]: its TSC is then that virtual clock in ns
/// (`cpu_get_ticks()` -> `icount_get()`), so its rate is exactly 1 GHz and
/// `CLOCK_MONOTONIC` nanoseconds count instructions. The host's rate
/// ([`boot_args`]) would scale every reading by the host's GHz.
pub fn icount_boot_args() -> &'static str {
    "tsc_early_khz=1000000 tsc=reliable"
}

/// True when the first CPU's flags in `cpuinfo` promise a TSC that ticks
/// at one rate, idle or not.
fn constant_rate(cpuinfo: &str) -> bool {
    let Some(flags) = cpuinfo.lines().find(|l| l.starts_with("flags")) else {
        return false;
    };
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

/// The TSC's ticks per millisecond over [`SPAN`] of `CLOCK_MONOTONIC`.
fn tsc_khz() -> u64 {
    let (t0, c0) = (Instant::now(), tsc());
    std::thread::sleep(SPAN);
    let (c1, t1) = (tsc(), Instant::now());
    let us = t1.duration_since(t0).as_micros().max(1) as u64;
    c1.wrapping_sub(c0) * 1000 / us
}

/// The time stamp counter.
fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions; every x86_64 CPU has it.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_flags_are_needed() {
        let line = |f: &str| format!("processor\t: 0\nflags\t\t: fpu tsc {f} rdtscp\n");
        assert!(constant_rate(&line("constant_tsc nonstop_tsc")));
        assert!(!constant_rate(&line("constant_tsc")));
        assert!(!constant_rate(&line("nonstop_tsc")));
        assert!(!constant_rate("processor\t: 0\n"));
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_rate_is_plausible_where_it_is_given() {
        let args = boot_args();
        if let Some(khz) = args
            .strip_prefix("tsc_early_khz=")
            .and_then(|r| r.split(' ').next())
        {
            let khz: u64 = khz.parse().expect("a number");
            assert!((100_000..10_000_000).contains(&khz), "{args}");
            assert!(args.ends_with(" tsc=reliable"), "{args}");
        }
    }
}
