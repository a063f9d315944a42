//! `checkpatch.pl --strict` over the generated patches, with exceptions.
//!
//! It runs from the pristine tree so checkpatch finds its spelling and const
//! structs files. A finding fails `--check` unless
//! `kernel/series/checkpatch-exceptions` lists it as
//! `<patch file> <TYPE> <reason>` (the TYPE that `--show-types` prints).

use crate::Result;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// One finding: level, type, and the full text checkpatch printed for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `ERROR`, `WARNING` or `CHECK`.
    pub level: String,
    /// The `--show-types` type, e.g. `LONG_LINE`.
    pub kind: String,
    /// The whole block (message, location, quoted line).
    pub text: String,
}

/// One exception: a patch file and a finding type, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exception {
    /// The patch file name (`0002-kallsyms-....patch`).
    pub patch: String,
    /// The finding type.
    pub kind: String,
    /// Why the finding stays.
    pub reason: String,
    /// Line in the exceptions file.
    pub line: usize,
}

/// Parse the exceptions file; `known` are the generated patch names.
pub fn parse_exceptions(
    text: &str,
    file: &Path,
    known: &BTreeSet<String>,
) -> Result<Vec<Exception>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{}:{}", file.display(), i + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut it = line.splitn(3, char::is_whitespace);
        let (Some(patch), Some(kind), Some(reason)) = (it.next(), it.next(), it.next()) else {
            return Err(format!("{at}: expected `<patch file> <TYPE> <reason>`"));
        };
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(format!("{at}: the exception needs a reason"));
        }
        if kind.is_empty()
            || !kind
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(format!(
                "{at}: {kind:?} is not a checkpatch type (see --show-types)"
            ));
        }
        if !known.contains(patch) {
            return Err(format!(
                "{at}: {patch:?} is not a generated patch file (renamed by a new subject?)"
            ));
        }
        out.push(Exception {
            patch: patch.to_string(),
            kind: kind.to_string(),
            reason: reason.to_string(),
            line: i + 1,
        });
    }
    Ok(out)
}

/// Parse checkpatch's normal output (with `--show-types`) into findings.
///
/// Returns an error when the output lacks checkpatch's `total:` line, which
/// means it did not run to the end.
pub fn parse_output(out: &str) -> Result<Vec<Finding>> {
    let mut findings: Vec<Finding> = Vec::new();
    let mut current: Option<Finding> = None;
    let mut saw_total = false;
    for line in out.lines() {
        if line.starts_with("total: ") {
            saw_total = true;
        }
        let head = ["ERROR", "WARNING", "CHECK"].iter().find_map(|lvl| {
            let rest = line.strip_prefix(lvl)?.strip_prefix(':')?;
            let (kind, _) = rest.split_once(':')?;
            (!kind.is_empty() && !kind.contains(' ')).then(|| (lvl.to_string(), kind.to_string()))
        });
        if let Some((level, kind)) = head {
            findings.extend(current.take());
            current = Some(Finding {
                level,
                kind,
                text: line.to_string(),
            });
        } else if line.trim().is_empty() {
            findings.extend(current.take());
        } else if let Some(f) = current.as_mut() {
            f.text.push('\n');
            f.text.push_str(line);
        }
    }
    findings.extend(current);
    if !saw_total {
        return Err(format!("checkpatch printed no `total:` line:\n{out}"));
    }
    Ok(findings)
}

/// Run checkpatch on one patch file from the pristine tree `src`.
pub fn run_one(src: &Path, patch: &Path) -> Result<Vec<Finding>> {
    let script = src.join("scripts/checkpatch.pl");
    let out = Command::new(&script)
        .current_dir(src)
        .args(["--strict", "--show-types", "--color=never"])
        .arg(patch)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_output(&text).map_err(|e| {
        format!(
            "{} on {}: {e}\n{}",
            script.display(),
            patch.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Findings not covered by an exception for that patch.
pub fn unexcused<'a>(patch: &str, findings: &'a [Finding], exc: &[Exception]) -> Vec<&'a Finding> {
    findings
        .iter()
        .filter(|f| !exc.iter().any(|e| e.patch == patch && e.kind == f.kind))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "\
WARNING:FILE_PATH_CHANGES: added, moved or deleted file(s), does MAINTAINERS need updating?
#20: 
new file mode 100644

CHECK:LINE_SPACING: Please don't use multiple blank lines
#40: FILE: init/Kconfig:12:
+

total: 0 errors, 1 warnings, 1 checks, 30 lines checked

0001-x.patch has style problems, please review.
";

    #[test]
    fn findings_parsed() {
        let f = parse_output(OUT).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].level.as_str(), f[0].kind.as_str()),
            ("WARNING", "FILE_PATH_CHANGES")
        );
        assert_eq!(f[1].kind, "LINE_SPACING");
        assert!(
            f[1].text.ends_with("#40: FILE: init/Kconfig:12:\n+"),
            "{}",
            f[1].text
        );
        assert!(
            parse_output("total: 0 errors, 0 warnings, 0 checks, 3 lines checked\n")
                .unwrap()
                .is_empty()
        );
        assert!(parse_output("Can't locate Foo.pm\n")
            .unwrap_err()
            .contains("no `total:` line"));
    }

    #[test]
    fn exceptions() {
        let known: BTreeSet<String> = ["0001-x.patch".to_string()].into();
        let f = Path::new("exc");
        let e = parse_exceptions(
            "# why\n0001-x.patch FILE_PATH_CHANGES MAINTAINERS comes in a later patch\n",
            f,
            &known,
        )
        .unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].reason.as_str(), e[0].line),
            ("MAINTAINERS comes in a later patch", 2)
        );
        let findings = parse_output(OUT).unwrap();
        let left = unexcused("0001-x.patch", &findings, &e);
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].kind, "LINE_SPACING");
        assert_eq!(unexcused("0002-y.patch", &findings, &e).len(), 2);
        for (text, want) in [
            ("0001-x.patch LONG_LINE\n", "exc:1: expected"),
            ("0001-x.patch LONG_LINE   \n", "exc:1: expected"),
            (
                "0001-x.patch long_line why\n",
                "exc:1: \"long_line\" is not a checkpatch type",
            ),
            (
                "\n0009-y.patch LONG_LINE why\n",
                "exc:2: \"0009-y.patch\" is not a generated",
            ),
        ] {
            let err = parse_exceptions(text, f, &known).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
