//! The system-wide block from /proc.

use crate::source::SourceError;
use crate::task::Global;
use std::path::Path;

/// `AT_PAGESZ` and `AT_CLKTCK` from `<elf.h>`: glibc's `getpagesize()` and
/// `sysconf(_SC_CLK_TCK)` (procps `procps_hertz_get()`) return these auxv
/// entries.
const AT_PAGESZ: u64 = 6;
const AT_CLKTCK: u64 = 17;

/// Reads the global block under `root` (normally `/proc`).
pub fn read_global(root: &Path) -> Result<Global, SourceError> {
    let auxv = read(root, "self/auxv")?;
    let (hertz, page_size) = parse_auxv(&auxv).map_err(|what| SourceError::Parse {
        path: root.join("self/auxv"),
        what,
    })?;
    let stat = read(root, "stat")?;
    let boot_time = keyed(&stat, b"btime ").ok_or_else(|| SourceError::Parse {
        path: root.join("stat"),
        what: "no btime line".into(),
    })?;
    let meminfo = read(root, "meminfo")?;
    let mem_total_kib = keyed(&meminfo, b"MemTotal:").ok_or_else(|| SourceError::Parse {
        path: root.join("meminfo"),
        what: "no MemTotal line".into(),
    })?;
    let uptime = read(root, "uptime")?;
    let uptime_centis = parse_uptime(&uptime).ok_or_else(|| SourceError::Parse {
        path: root.join("uptime"),
        what: "first field is not seconds.hundredths".into(),
    })?;
    // procps_pid_length() falls back to 5 digits when pid_max is unreadable.
    let pid_max = std::fs::read(root.join("sys/kernel/pid_max"))
        .ok()
        .and_then(|t| std::str::from_utf8(&t).ok()?.trim().parse().ok());
    Ok(Global {
        hertz,
        page_size,
        boot_time,
        mem_total_kib,
        uptime_centis,
        pid_max,
    })
}

fn read(root: &Path, name: &str) -> Result<Vec<u8>, SourceError> {
    let path = root.join(name);
    std::fs::read(&path).map_err(|err| SourceError::Io { path, err })
}

/// Parses native-endian 64-bit (type, value) pairs.
fn parse_auxv(auxv: &[u8]) -> Result<(u64, u64), String> {
    let mut hertz = None;
    let mut page = None;
    for pair in auxv.chunks_exact(16) {
        let key = u64::from_ne_bytes(pair[..8].try_into().expect("8 bytes"));
        let val = u64::from_ne_bytes(pair[8..].try_into().expect("8 bytes"));
        match key {
            AT_CLKTCK => hertz = Some(val),
            AT_PAGESZ => page = Some(val),
            _ => {}
        }
    }
    match (hertz, page) {
        (Some(h), Some(p)) if h > 0 && p > 0 => Ok((h, p)),
        _ => Err("no AT_CLKTCK or AT_PAGESZ entry".into()),
    }
}

/// The number after `key` on the line that starts with it.
fn keyed(text: &[u8], key: &[u8]) -> Option<u64> {
    let line = text.split(|&b| b == b'\n').find(|l| l.starts_with(key))?;
    let rest = std::str::from_utf8(&line[key.len()..]).ok()?;
    rest.split_ascii_whitespace().next()?.parse().ok()
}

fn parse_uptime(text: &[u8]) -> Option<u64> {
    let first = std::str::from_utf8(text)
        .ok()?
        .split_ascii_whitespace()
        .next()?;
    let (secs, frac) = first.split_once('.')?;
    if frac.len() != 2 {
        return None;
    }
    secs.parse::<u64>()
        .ok()?
        .checked_mul(100)?
        .checked_add(frac.parse().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auxv_pairs() {
        let mut v = Vec::new();
        for (k, x) in [(33u64, 7u64), (AT_PAGESZ, 4096), (AT_CLKTCK, 100), (0, 0)] {
            v.extend_from_slice(&k.to_ne_bytes());
            v.extend_from_slice(&x.to_ne_bytes());
        }
        assert_eq!(parse_auxv(&v), Ok((100, 4096)));
        assert!(parse_auxv(&v[..16]).is_err());
    }

    #[test]
    fn keyed_lines_and_uptime() {
        assert_eq!(
            keyed(b"cpu 1 2\nbtime 1700000000\n", b"btime "),
            Some(1700000000)
        );
        assert_eq!(keyed(b"MemTotal:  16384 kB\n", b"MemTotal:"), Some(16384));
        assert_eq!(keyed(b"cpu 1\n", b"btime "), None);
        assert_eq!(parse_uptime(b"12345.67 999.00\n"), Some(1234567));
        assert_eq!(parse_uptime(b"12345 1\n"), None);
    }

    #[test]
    fn this_machine() {
        let g = read_global(Path::new("/proc")).unwrap();
        assert!(g.hertz > 0 && g.page_size >= 4096 && g.boot_time > 0 && g.mem_total_kib > 0);
    }
}
