//! Small helpers to run external commands with readable errors.

use crate::Result;
use std::process::{Command, Output};
use std::time::Instant;

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Run `cmd`, inheriting stdio; fail if it exits non-zero.
pub fn status(cmd: &mut Command) -> Result<()> {
    let what = describe(cmd);
    eprintln!("+ {what}");
    let t = Instant::now();
    let st = cmd
        .status()
        .map_err(|e| format!("cannot run `{what}`: {e}"))?;
    if !st.success() {
        return Err(format!("`{what}` failed ({st}) after {:.0?}", t.elapsed()));
    }
    Ok(())
}

/// Run `cmd` and capture its output; fail if it exits non-zero.
pub fn output(cmd: &mut Command) -> Result<Output> {
    let what = describe(cmd);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run `{what}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{what}` failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out)
}

/// Run `cmd` and return its stdout as a string, or `None` if it cannot run or fails.
pub fn stdout_opt(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// FNV-1a 64-bit hash, used for stamps (no dependencies needed).
pub fn fnv1a(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
