//! Measured numbers in the series' texts come from a results file.
//!
//! A message or the cover letter writes a measured number as a template,
//! `{{FMT:EXPR}}` or `{{FMT>WIDTH:EXPR}}`, filled from the newest
//! `bench/results/<stamp>-<kind>.json` of a kind that carries `values`
//! (`uml-native`, written by `cargo xtask fast-uml-test`; `nproc-uml`, by
//! `nproc-uml-test`; see `bench/results/README.md`). The
//! generated series carries the numbers, so `patches --check` fails when
//! the committed series was made from other results than the newest files
//! (or from hand-copied numbers).
//!
//! - EXPR is `KEY`, `KEY/KEY` or `KEY/NUMBER`: a key of a results file's
//!   `values`, divided by another key or a literal (a ratio, a unit). A
//!   key is read from the newest `uml-native` file, or written `KIND::KEY`
//!   (`nproc-uml::bench.wchan.median_ns`) from the newest file of KIND.
//! - FMT: `n` an integer (rounded), `c` an integer with thousands commas,
//!   `f1`/`f2` one or two decimals, `t2` two decimals cut as the
//!   kernel's `%zu.%02zu` of an integer division prints them (log lines
//!   quoted in a message), `x` a ratio as the series writes them
//!   (one decimal below 100, an integer from 100).
//! - `>WIDTH` right-aligns the number in WIDTH columns (tables).
//!
//! An unknown key, a malformed template, a division by zero or a
//! template without a results file is an error naming the file and line.

use crate::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The kind of a key without `KIND::`: `fast-uml-test`'s
/// `<stamp>-uml-native.json`.
pub const DEFAULT_KIND: &str = "uml-native";

/// The command that writes a kind's `values`.
fn command_of(kind: &str) -> String {
    match kind {
        "uml-native" => "cargo xtask fast-uml-test".into(),
        "nproc-uml" => "cargo xtask nproc-uml-test".into(),
        k => format!("the command of kind {k:?} (none writes values)"),
    }
}

/// The values of one results file, and where they came from.
#[derive(Debug, Clone)]
pub struct Results {
    /// The file (for messages).
    pub file: PathBuf,
    /// `values`: key -> number.
    pub values: BTreeMap<String, f64>,
}

impl Results {
    /// A results file's `values`: a member that maps keys to numbers.
    pub fn from_json(v: &serde_json::Value, file: &Path) -> Result<Results> {
        let obj = v.get("values").and_then(|v| v.as_object()).ok_or_else(|| {
            format!(
                "{}: no \"values\" object (a file `cargo xtask record` wrote has none): run `{}`",
                file.display(),
                command_of(v["kind"].as_str().unwrap_or(""))
            )
        })?;
        let mut values = BTreeMap::new();
        for (k, v) in obj {
            let n = v
                .as_f64()
                .ok_or_else(|| format!("{}: value {k:?} is not a number", file.display()))?;
            values.insert(k.clone(), n);
        }
        Ok(Results {
            file: file.to_path_buf(),
            values,
        })
    }

    /// The newest file of `kind` in `dir` ([`crate::results::latest`]),
    /// if any.
    pub fn latest(dir: &Path, kind: &str) -> Result<Option<Results>> {
        if !dir.is_dir() {
            return Ok(None);
        }
        match crate::results::latest(dir, kind)? {
            Some((name, v)) => Results::from_json(&v, &dir.join(name)).map(Some),
            None => Ok(None),
        }
    }

    /// The value of `key`.
    fn get(&self, key: &str) -> std::result::Result<f64, String> {
        self.values.get(key).copied().ok_or_else(|| {
            format!(
                "no value {key:?} in {} (keys: see bench/results/README.md)",
                self.file.display()
            )
        })
    }
}

/// Where a template's keys are read: kind -> that kind's newest results.
pub type Sources<'a> = BTreeMap<String, Option<&'a Results>>;

/// A key's kind and name: `KIND::KEY`, or [`DEFAULT_KIND`].
fn split_kind(key: &str) -> (&str, &str) {
    key.split_once("::").unwrap_or((DEFAULT_KIND, key))
}

/// A number or a key's value.
fn operand(src: &Sources<'_>, s: &str) -> std::result::Result<f64, String> {
    if let Ok(n) = s.parse::<f64>() {
        return Ok(n);
    }
    let (kind, key) = split_kind(s);
    match src.get(kind) {
        Some(Some(r)) => r.get(key),
        _ => Err(format!(
            "a {{{{...}}}} number needs a {kind} results file: run `{}` \
             (writes bench/results/<stamp>-{kind}.json)",
            command_of(kind)
        )),
    }
}

/// The kinds `text`'s templates read (empty without templates).
fn kinds(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(end) = rest[start..].find("}}") else {
            break;
        };
        let t = &rest[start + 2..start + end];
        let expr = t.split_once(':').map_or("", |(_, e)| e);
        for op in expr.split('/') {
            let op = op.trim();
            if op.parse::<f64>().is_err() {
                let k = split_kind(op).0.to_string();
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        }
        rest = &rest[start + end + 2..];
    }
    out
}

impl Results {
    /// One template's text, without the braces: `FMT[>W]:EXPR`.
    fn eval(src: &Sources<'_>, t: &str) -> std::result::Result<String, String> {
        let (spec, expr) = t
            .split_once(':')
            .ok_or_else(|| format!("template {{{{{t}}}}} has no ':'"))?;
        let (fmt, width) = match spec.split_once('>') {
            Some((f, w)) => (
                f,
                w.parse::<usize>()
                    .map_err(|_| format!("template {{{{{t}}}}}: bad width {w:?}"))?,
            ),
            None => (spec, 0),
        };
        let value = match expr.split_once('/') {
            Some((a, b)) => {
                let d = operand(src, b.trim())?;
                if d == 0.0 {
                    return Err(format!("template {{{{{t}}}}} divides by zero"));
                }
                operand(src, a.trim())? / d
            }
            None => operand(src, expr.trim())?,
        };
        let s = match fmt {
            "n" => format!("{:.0}", value),
            "c" => commas(value.round() as i64),
            "f1" => format!("{value:.1}"),
            "f2" => format!("{value:.2}"),
            // The epsilon keeps 2.38 (from 238 / 100) from flooring to 2.37.
            "t2" => format!("{:.2}", (value * 100.0 + 1e-9).floor() / 100.0),
            "x" if value >= 99.95 => format!("{value:.0}"),
            "x" => format!("{value:.1}"),
            _ => return Err(format!("template {{{{{t}}}}}: unknown format {fmt:?}")),
        };
        Ok(format!("{s:>width$}"))
    }
}

/// `n` with a comma every three digits.
fn commas(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Whether `text` holds a template.
pub fn has_templates(text: &str) -> bool {
    text.contains("{{")
}

/// Fills every template of `text` (read from `file`) from `src`.
pub fn fill(text: &str, file: &Path, src: &Sources<'_>) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let at = |e: String| format!("{}:{}: {e}", file.display(), n + 1);
        let mut rest = line;
        while let Some(start) = rest.find("{{") {
            let end = rest[start..]
                .find("}}")
                .ok_or_else(|| at("unclosed {{".to_string()))?;
            out.push_str(&rest[..start]);
            out.push_str(&Results::eval(src, &rest[start + 2..start + end]).map_err(at)?);
            rest = &rest[start + end + 2..];
        }
        if rest.contains("}}") {
            return Err(at("}} without {{".to_string()));
        }
        out.push_str(rest);
    }
    Ok(out)
}

/// The results for a series' texts: each kind read once, on the first
/// template that needs it.
pub struct Lazy {
    dir: PathBuf,
    loaded: BTreeMap<String, Option<Results>>,
}

impl Lazy {
    /// Results from the newest file of each kind in `dir`.
    pub fn new(dir: PathBuf) -> Lazy {
        Lazy {
            dir,
            loaded: BTreeMap::new(),
        }
    }

    /// `text` with its templates filled (unchanged without templates, and
    /// then no results file is needed).
    pub fn fill(&mut self, text: &str, file: &Path) -> Result<String> {
        if !has_templates(text) && !text.contains("}}") {
            return Ok(text.to_string());
        }
        for kind in kinds(text) {
            if !self.loaded.contains_key(&kind) {
                let r = Results::latest(&self.dir, &kind)?;
                self.loaded.insert(kind, r);
            }
        }
        let src: Sources<'_> = self
            .loaded
            .iter()
            .map(|(k, r)| (k.clone(), r.as_ref()))
            .collect();
        fill(text, file, &src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn results() -> Results {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"kind": "uml-native", "values": {"a.stock_ns": 485, "a.fast_ns": 118,
                "m.stock_ns": 173156, "m.fast_ns": 88, "i.bytes": 82402, "i.symbols": 34433,
                "z": 0}}"#,
        )
        .unwrap();
        Results::from_json(&v, Path::new("r.json")).unwrap()
    }

    fn src(r: &Results) -> Sources<'_> {
        let mut s = Sources::new();
        s.insert(DEFAULT_KIND.to_string(), Some(r));
        s
    }

    #[test]
    fn fills_numbers_ratios_and_widths() {
        let r = results();
        let src = src(&r);
        let t = "core {{n>6:a.stock_ns}} -> {{n>4:a.fast_ns}} {{x>5:a.stock_ns/a.fast_ns}}x\n\
                 module {{c:m.stock_ns}} {{x:m.stock_ns/m.fast_ns}}x\n\
                 {{f2:i.bytes/i.symbols}} per symbol, {{n:i.bytes/1000}} KB, {{c:i.symbols}}\n\
                 ({{t2:m.stock_ns/m.fast_ns}} as the kernel prints it)\n";
        assert_eq!(
            fill(t, Path::new("msg"), &src).unwrap(),
            "core    485 ->  118   4.1x\nmodule 173,156 1968x\n2.39 per symbol, 82 KB, 34,433\n\
             (1967.68 as the kernel prints it)\n"
        );
        assert_eq!(
            fill("no numbers\n", Path::new("m"), &Sources::new()).unwrap(),
            "no numbers\n"
        );
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let r = results();
        let src = src(&r);
        let e = fill("x\n{{n:nope}}\n", Path::new("msg"), &src).unwrap_err();
        assert!(e.starts_with("msg:2: no value \"nope\""), "{e}");
        let e = fill("{{n:a.stock_ns/z}}\n", Path::new("m"), &src).unwrap_err();
        assert!(e.contains("divides by zero"), "{e}");
        let e = fill("{{q:a.stock_ns}}\n", Path::new("m"), &src).unwrap_err();
        assert!(e.contains("unknown format"), "{e}");
        let e = fill("{{n:a.stock_ns\n", Path::new("m"), &src).unwrap_err();
        assert!(e.contains("unclosed"), "{e}");
        let e = fill("{{n:a.stock_ns}}\n", Path::new("m"), &Sources::new()).unwrap_err();
        assert!(
            e.starts_with("m:1: a {{...}} number needs a uml-native results file: run `cargo xtask fast-uml-test`"),
            "{e}"
        );
        let e = fill("{{n:nproc-uml::w}}\n", Path::new("m"), &src).unwrap_err();
        assert!(e.contains("needs a nproc-uml results file"), "{e}");
    }

    #[test]
    fn newest_file_of_the_kind_wins() {
        let d = tempfile::tempdir().unwrap();
        let w = |n: &str, kind: &str, v: u32| {
            let text = format!(r#"{{"kind": "{kind}", "values": {{"k": {v}}}}}"#);
            fs::write(d.path().join(n), text).unwrap()
        };
        assert!(Results::latest(d.path(), "uml-native").unwrap().is_none());
        w("2026-12-01T100000Z-uml-native.json", "uml-native", 1);
        w("2026-12-03T090000Z-uml-native.json", "uml-native", 3);
        w("2026-12-09T000000Z-other.json", "other", 9);
        w("2026-12-10T000000Z-nproc-uml.json", "nproc-uml", 10);
        let r = Results::latest(d.path(), "uml-native").unwrap().unwrap();
        assert_eq!(r.values["k"], 3.0);
        assert!(r.file.ends_with("2026-12-03T090000Z-uml-native.json"));
        let r = Results::latest(d.path(), "nproc-uml").unwrap().unwrap();
        assert_eq!(r.values["k"], 10.0);
        // Kinds are whole: "native" is not the kind of "uml-native" files.
        assert!(Results::latest(d.path(), "native").unwrap().is_none());
        // A newest file without values (`cargo xtask record`) is an error
        // that says which command writes them, never an older file's.
        fs::write(
            d.path().join("2026-12-04T000000Z-uml-native.json"),
            r#"{"kind": "uml-native", "rows": []}"#,
        )
        .unwrap();
        let e = Results::latest(d.path(), "uml-native").unwrap_err();
        assert!(
            e.contains("no \"values\"") && e.contains("fast-uml-test"),
            "{e}"
        );
        fs::remove_file(d.path().join("2026-12-04T000000Z-uml-native.json")).unwrap();
        let mut lazy = Lazy::new(d.path().to_path_buf());
        assert_eq!(
            lazy.fill("{{n:k}} {{n:nproc-uml::k}}\n", Path::new("m"))
                .unwrap(),
            "3 10\n"
        );
    }
}
