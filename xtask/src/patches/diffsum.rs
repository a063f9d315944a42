//! `--check`'s report: how the committed series differs from a fresh one.

use crate::Result;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The `*.patch` files of a directory: name -> contents (missing dir = none).
pub fn read_patches(dir: &Path) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    for ent in rd {
        let ent = ent.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let name = ent.file_name().to_string_lossy().into_owned();
        if name.ends_with(".patch") {
            let text = fs::read_to_string(ent.path())
                .map_err(|e| format!("cannot read {}: {e}", ent.path().display()))?;
            out.insert(name, text);
        }
    }
    Ok(out)
}

/// Where two texts first differ: 1-based line number and both lines.
pub fn first_difference(a: &str, b: &str) -> Option<(usize, String, String)> {
    let mut la = a.split_inclusive('\n');
    let mut lb = b.split_inclusive('\n');
    let mut n = 0;
    loop {
        n += 1;
        match (la.next(), lb.next()) {
            (None, None) => return None,
            (x, y) if x == y => continue,
            (x, y) => {
                let show = |l: Option<&str>| {
                    l.map_or_else(|| "<end of file>".to_string(), |l| format!("{l:?}"))
                };
                return Some((n, show(x), show(y)));
            }
        }
    }
}

/// One line per difference between the committed and generated series;
/// empty when they are identical.
pub fn summary(
    committed: &BTreeMap<String, String>,
    generated: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, want) in generated {
        match committed.get(name) {
            None => out.push(format!("{name}: missing from the committed series")),
            Some(have) => {
                if let Some((n, h, w)) = first_difference(have, want) {
                    out.push(format!(
                        "{name}:{n}: differs\n    committed: {h}\n    generated: {w}"
                    ));
                }
            }
        }
    }
    for name in committed.keys() {
        if !generated.contains_key(name) {
            out.push(format!(
                "{name}: committed, but the sources no longer generate it"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(items: &[(&str, &str)]) -> BTreeMap<String, String> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn first_line_that_differs() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(
            first_difference("a\nb\nc\n", "a\nB\nc\n"),
            Some((2, "\"b\\n\"".into(), "\"B\\n\"".into()))
        );
        assert_eq!(
            first_difference("a\n", "a\nmore\n"),
            Some((2, "<end of file>".into(), "\"more\\n\"".into()))
        );
        // A missing final newline is a difference too.
        assert!(first_difference("a", "a\n").is_some());
    }

    #[test]
    fn summary_names_every_file() {
        let committed = map(&[("0001-a.patch", "x\n"), ("0002-old.patch", "y\n")]);
        let generated = map(&[("0001-a.patch", "x\nz\n"), ("0002-new.patch", "y\n")]);
        let s = summary(&committed, &generated);
        assert_eq!(s.len(), 3, "{s:?}");
        assert!(s[0].starts_with("0001-a.patch:2: differs"), "{}", s[0]);
        assert_eq!(s[1], "0002-new.patch: missing from the committed series");
        assert_eq!(
            s[2],
            "0002-old.patch: committed, but the sources no longer generate it"
        );
        assert!(summary(&generated, &generated).is_empty());
    }
}
