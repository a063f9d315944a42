//! A benchmark run as data: one dated JSON file per full run in the
//! repository's `bench/results/` (README.md's headline table is generated
//! from the latest one: `cargo xtask readme`).
//!
//! The file is the `--json` report plus what says where and when it was
//! measured: the UTC date, the commit, the host's load before and after
//! (the numbers move with it on a shared machine) and its CPU count.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::Report;

/// Where a full run is recorded when no `--results DIR` is given: this
/// repository's `bench/results/`, when the binary runs from a checkout.
pub fn default_dir() -> Option<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bench/results")
        .canonicalize()
        .ok()
        .filter(|d| d.is_dir())
}

/// The host's load average (`/proc/loadavg`'s first three fields).
pub fn loadavg() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// `YYYY-MM-DDTHH:MM:SSZ` for `secs` after the epoch (UTC; proleptic
/// Gregorian, Howard Hinnant's `civil_from_days`).
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The checkout's commit (`-dirty` when tracked files differ from it).
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "--short=12", "HEAD"])?;
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])?;
    Some(if dirty.is_empty() {
        head
    } else {
        format!("{head}-dirty")
    })
}

/// The file's content: the report (its `source`, the table measured, as
/// `table`) and where and when it was measured.
pub fn document(report: &Report, date: &str, load_before: Option<String>) -> Value {
    let mut v = match serde_json::to_value(report) {
        Ok(Value::Object(r)) => r,
        _ => serde_json::Map::new(),
    };
    let table = v.remove("source");
    let header = json!({
        "kind": "userspace",
        "date": date,
        "command": "cargo run --release -p userspace-bench",
        "source": "written by kallsyms-bench at the end of the run",
        "table": table,
        "commit": git_commit(),
        "host": {
            "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
            "load_before": load_before,
            "load_after": loadavg(),
            "note": "load averages from /proc/loadavg: the machine may be shared, and the numbers move with its load",
        },
    });
    if let Value::Object(h) = header {
        v.extend(h);
    }
    Value::Object(v)
}

/// Writes the run into `dir` as `<UTC date and time>-userspace.json`;
/// returns the path.
pub fn write(dir: &Path, report: &Report, load_before: Option<String>) -> Result<PathBuf, String> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_secs();
    let date = utc(secs);
    let stamp: String = date.chars().filter(|c| *c != ':').collect();
    let path = dir.join(format!("{stamp}-userspace.json"));
    let text = serde_json::to_string_pretty(&document(report, &date, load_before))
        .map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_798_901_999), "2027-01-02T14:59:59Z");
        assert_eq!(utc(4_107_542_400), "2100-03-01T00:00:00Z");
    }
}
