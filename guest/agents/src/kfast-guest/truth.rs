//! Ask the kernel (via `ksym_truth`) what `sprint_symbol()` prints, and
//! record `/proc/PID/wchan` of every task.

use crate::addrs::Addr;
use crate::capture::write;
use crate::Result;
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::Path;

const RESOLVE: &str = "/sys/kernel/debug/ksym_truth/resolve";
const BATCH: usize = 4096;

fn drain(f: &mut fs::File, into: &mut Vec<u8>) -> Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| format!("read {RESOLVE}: {e}"))?;
        if n == 0 {
            return Ok(());
        }
        into.extend_from_slice(&buf[..n]);
    }
}

/// Resolve all addresses; writes `truth/sprint_symbol.txt` and `truth/ps.txt`.
pub fn resolve(addrs: &[Addr], out: &Path) -> Result<usize> {
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(RESOLVE)
        .map_err(|e| format!("open {RESOLVE}: {e}"))?;
    let mut raw = Vec::with_capacity(addrs.len() * 100);
    for chunk in addrs.chunks(BATCH) {
        let mut input = String::with_capacity(chunk.len() * 17);
        for (a, _) in chunk {
            input.push_str(&format!("{a:x}\n"));
        }
        let mut rest = input.as_bytes();
        while !rest.is_empty() {
            match f.write(rest) {
                Ok(n) => rest = &rest[n..],
                Err(e) if e.raw_os_error() == Some(28) || e.kind() == ErrorKind::StorageFull => {}
                Err(e) => return Err(format!("write {RESOLVE}: {e}")),
            }
            drain(&mut f, &mut raw)?;
        }
    }
    drain(&mut f, &mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let mut sprint = String::with_capacity(raw.len());
    let mut ps = String::with_capacity(raw.len() / 2);
    let mut n = 0;
    for line in text.lines() {
        let (addr_sym, p) = line
            .split_once('\t')
            .ok_or_else(|| format!("bad ksym_truth line: {line:?}"))?;
        let addr = addr_sym.split(' ').next().unwrap_or("");
        sprint.push_str(addr_sym);
        sprint.push('\n');
        ps.push_str(addr);
        ps.push(' ');
        ps.push_str(p);
        ps.push('\n');
        n += 1;
    }
    if n != addrs.len() {
        return Err(format!(
            "ksym_truth returned {n} lines for {} addresses",
            addrs.len()
        ));
    }
    write(&out.join("truth/sprint_symbol.txt"), sprint.as_bytes())?;
    write(&out.join("truth/ps.txt"), ps.as_bytes())?;
    Ok(n)
}

fn numeric_entries(dir: &Path) -> Vec<u64> {
    let mut v: Vec<u64> = fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// Record `<pid> <tid> <wchan> <comm>` for every task into `truth/wchan.txt`.
pub fn wchan(out: &Path) -> Result<usize> {
    let mut s = String::new();
    let mut n = 0;
    for pid in numeric_entries(Path::new("/proc")) {
        let tdir = Path::new("/proc").join(pid.to_string()).join("task");
        for tid in numeric_entries(&tdir) {
            let t = tdir.join(tid.to_string());
            let (Ok(w), Ok(comm)) = (
                fs::read_to_string(t.join("wchan")),
                fs::read_to_string(t.join("comm")),
            ) else {
                continue;
            };
            s.push_str(&format!(
                "{pid} {tid} {} {}\n",
                w.trim(),
                comm.trim_end_matches('\n')
            ));
            n += 1;
        }
    }
    write(&out.join("truth/wchan.txt"), s.as_bytes())?;
    Ok(n)
}
