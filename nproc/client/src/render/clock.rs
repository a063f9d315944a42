//! Columns that depend on the time of day or on elapsed time: procps's
//! `pr_etime`, `pr_etimes`, `pr_pcpu`, `pr_c`, `pr_cp`, `pr_stime`,
//! `pr_start`, `pr_bsdstart` and `pr_lstart` (src/ps/output.c) over libproc2's
//! `TIME_ELAPSED` (library/pids.c).
//!
//! libproc2 computes elapsed time in `double`s: `boot_tics` is
//! `(unsigned long long)(uptime_seconds * hertz)`, `TIME_ELAPSED` is
//! `(double)(boot_tics - start_time) / hertz` with an unsigned subtraction.
//! The same floating-point steps are repeated here, since rounding decides
//! the last digit. Dates are formatted by glibc (`localtime_r`, `ctime_r`,
//! `strftime`) in the process's time zone, as ps does.

use crate::task::{Global, Task};
use std::ffi::CStr;

extern "C" {
    // glibc <time.h>; not exported by the libc crate for every target.
    fn tzset();
}

/// ps's time-zone set-up (src/ps/display.c `main()`):
/// `setenv("TZ", ":/etc/localtime", 0)`, then glibc's `tzset()`.
pub fn init_time_zone() {
    if std::env::var_os("TZ").is_none() {
        std::env::set_var("TZ", ":/etc/localtime");
    }
    // SAFETY: tzset() only reads TZ and the zone files; nps calls this from
    // main() before any other thread exists.
    unsafe { tzset() };
}

/// `seconds_since_1970`: ps takes it once, in `init_output()`.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `TIME_ELAPSED` in seconds, as a double; 0 when the task started at
/// `boot_tics` exactly (libproc2 leaves the value unset then).
pub fn elapsed(t: &Task, g: &Global) -> f64 {
    let hz = g.hertz as f64;
    let up = g.uptime_centis as f64 / 100.0; // strtod() of "S.CC"
    let boot_tics = (up * hz) as u64;
    let d = boot_tics.wrapping_sub(t.start_time) as f64;
    if d > 0.0 {
        d / hz
    } else {
        0.0
    }
}

/// pr_etime(): `[[dd-]hh:]mm:ss`.
pub fn etime(t: &Task, g: &Global) -> String {
    let s = elapsed(t, g) as u64;
    let (dd, hh, mm, ss) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (dd, hh) {
        (0, 0) => format!("{mm:02}:{ss:02}"),
        (0, _) => format!("{hh:02}:{mm:02}:{ss:02}"),
        _ => format!("{dd}-{hh:02}:{mm:02}:{ss:02}"),
    }
}

/// pr_etimes(): whole seconds, through an `unsigned`.
pub fn etimes(t: &Task, g: &Global) -> String {
    (elapsed(t, g) as u32).to_string()
}

/// The CPU share in `scale`ths (`pr_pcpu`: 1000, `pr_c`: 100, `pr_cp`:
/// 1000): ticks used over ticks lived, through an `unsigned`.
pub fn share(t: &Task, g: &Global, scale: u64) -> u32 {
    let jiffies = (elapsed(t, g) * g.hertz as f64) as u64;
    ((t.utime + t.stime) * scale)
        .checked_div(jiffies)
        .unwrap_or(0) as u32
}

/// pr_pcpu(): `##.#`, or whole percent from 100 on.
pub fn pcpu(t: &Task, g: &Global) -> String {
    let p = share(t, g, 1000);
    if p > 999 {
        format!("{}", p / 10)
    } else {
        format!("{}.{}", p / 10, p % 10)
    }
}

/// The start time in seconds since the epoch: `boot_time() +
/// start_time / Hertz`.
pub fn started(t: &Task, g: &Global) -> i64 {
    (g.boot_time + t.start_time / g.hertz.max(1)) as i64
}

fn local(t: i64) -> Option<libc::tm> {
    // SAFETY: an all-zero tm is a valid value that localtime_r overwrites.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let tt = t as libc::time_t;
    // SAFETY: both pointers refer to live values of the right types.
    let r = unsafe { libc::localtime_r(&tt, &mut tm) };
    (!r.is_null()).then_some(tm)
}

/// ctime(): "Www Mmm dd hh:mm:ss yyyy\n" (26 bytes with the NUL).
fn ctime(t: i64) -> Vec<u8> {
    let mut buf = [0 as libc::c_char; 64];
    let tt = t as libc::time_t;
    // SAFETY: ctime_r writes at most 26 bytes; the buffer has 64.
    let r = unsafe { libc::ctime_r(&tt, buf.as_mut_ptr()) };
    if r.is_null() {
        return Vec::new();
    }
    // SAFETY: on success the buffer holds a NUL-terminated string.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_bytes().to_vec()
}

fn strftime(fmt: &CStr, tm: &libc::tm) -> Vec<u8> {
    let mut buf = [0 as libc::c_char; 240];
    // SAFETY: strftime writes at most buf.len() bytes and returns how many
    // (0 when they did not fit).
    let n = unsafe { libc::strftime(buf.as_mut_ptr(), buf.len(), fmt.as_ptr(), tm) };
    buf[..n].iter().map(|&c| c as u8).collect()
}

/// pr_stime(): `HH:MM` today, `MmmDD` this year, else `YYYY`.
pub fn stime(t: &Task, g: &Global, now: i64) -> Vec<u8> {
    let (Some(ours), Some(theirs)) = (local(now), local(started(t, g))) else {
        return Vec::new();
    };
    let mut fmt = c"%H:%M";
    if ours.tm_yday != theirs.tm_yday {
        fmt = c"%b%d";
    }
    if ours.tm_year != theirs.tm_year {
        fmt = c"%Y";
    }
    strftime(fmt, &theirs)
}

/// pr_start(): `HH:MM:SS` within a day, else `  Mmm dd` (blanks of the day
/// and hour made zeros).
pub fn start(t: &Task, g: &Global, now: i64) -> Vec<u8> {
    let st = started(t, g);
    let mut s = ctime(st);
    if s.len() < 24 {
        return Vec::new();
    }
    if s[8] == b' ' {
        s[8] = b'0';
    }
    if s[11] == b' ' {
        s[11] = b'0';
    }
    if (st as u64).wrapping_add(86400) > now as u64 {
        s[11..19].to_vec()
    } else {
        let mut out = b"  ".to_vec();
        out.extend_from_slice(&s[4..10]);
        out
    }
}

/// pr_bsdstart(): `Mmm dd` after a day, else ` HH:MM`, six bytes.
pub fn bsdstart(t: &Task, g: &Global, now: i64) -> Vec<u8> {
    let st = started(t, g);
    let s = ctime(st);
    if s.len() < 24 {
        return Vec::new();
    }
    let ago = (now - st).max(0);
    if ago > 3600 * 24 {
        s[4..10].to_vec()
    } else {
        s[10..16].to_vec()
    }
}

/// pr_lstart(): ctime() without its newline.
pub fn lstart(t: &Task, g: &Global) -> Vec<u8> {
    let s = ctime(started(t, g));
    s[..s.len().min(24)].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(uptime_centis: u64) -> Global {
        Global {
            hertz: 100,
            page_size: 4096,
            boot_time: 1_700_000_000,
            mem_total_kib: 1,
            uptime_centis,
            pid_max: None,
        }
    }

    #[test]
    fn elapsed_and_share() {
        let mut t = Task::empty(1, 1);
        t.start_time = 100;
        // up 3725.00 s: 372500 ticks since boot, 372400 since the start.
        assert_eq!(etime(&t, &g(372_500)), "01:02:04");
        assert_eq!(etimes(&t, &g(372_500)), "3724");
        assert_eq!(etime(&t, &g(100 + 100 * 90_061)), "1-01:01:01");
        assert_eq!(etime(&t, &g(100 + 100 * 59)), "00:59");
        t.utime = 3724 * 25;
        assert_eq!(pcpu(&t, &g(372_500)), "25.0");
        t.utime = 3724 * 250;
        assert_eq!(pcpu(&t, &g(372_500)), "250");
        // Started after the uptime was read: the unsigned difference wraps.
        t.start_time = 372_600;
        assert!(elapsed(&t, &g(372_500)) > 1e15);
    }

    #[test]
    fn dates_in_utc() {
        std::env::set_var("TZ", "UTC");
        init_time_zone();
        let mut t = Task::empty(1, 1);
        t.start_time = 100 * 3600; // 2023-11-14 23:13:20 UTC
        let gl = g(0);
        assert_eq!(lstart(&t, &gl), b"Tue Nov 14 23:13:20 2023");
        let same_day = 1_700_000_000 + 3600 + 60;
        assert_eq!(start(&t, &gl, same_day), b"23:13:20");
        assert_eq!(bsdstart(&t, &gl, same_day), b" 23:13");
        assert_eq!(stime(&t, &gl, same_day), b"23:13");
        let later = same_day + 40 * 86400;
        assert_eq!(start(&t, &gl, later), b"  Nov 14");
        assert_eq!(bsdstart(&t, &gl, later), b"Nov 14");
        assert_eq!(stime(&t, &gl, later), b"Nov14");
        assert_eq!(stime(&t, &gl, later + 365 * 86400), b"2023");
    }
}
