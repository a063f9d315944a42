//! No template placeholder survives generation.
//!
//! A message or cover letter may hold a line such as `@NUMBERS@` while it
//! is written; the generator expands `@VENDORED@` only, so any other
//! `@NAME@` (upper case, digits, `_`, at least three) left in a generated
//! patch's text is an error naming the file and line.

use crate::Result;
use std::collections::BTreeMap;

/// The first `@NAME@` in `line`, if any.
pub fn find(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(off) = line[i..].find('@') {
        let start = i + off;
        let body = b[start + 1..]
            .iter()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == b'_')
            .count();
        let end = start + 1 + body;
        if body >= 3 && b.get(end) == Some(&b'@') {
            return Some(&line[start..=end]);
        }
        i = start + 1;
    }
    None
}

/// Fail on the first placeholder in any generated patch.
pub fn refuse(patches: &BTreeMap<String, String>) -> Result<()> {
    for (name, text) in patches {
        for (n, line) in text.lines().enumerate() {
            if let Some(p) = find(line) {
                return Err(format!(
                    "{name}:{}: placeholder {p} left in the generated series \
                     (fill it in the series sources)",
                    n + 1
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_placeholders_only() {
        assert_eq!(find("@NUMBERS@"), Some("@NUMBERS@"));
        assert_eq!(find("x @A_1B@ y"), Some("@A_1B@"));
        assert_eq!(find("a@b.org @AB@ @lower@ @@"), None);
        assert_eq!(find("mail@EXAMPLE@"), Some("@EXAMPLE@"));
        let mut p = BTreeMap::new();
        p.insert("0001-x.patch".to_string(), "a\n\n@NUMBERS@\n".to_string());
        let err = refuse(&p).unwrap_err();
        assert!(
            err.starts_with("0001-x.patch:3: placeholder @NUMBERS@"),
            "{err}"
        );
    }
}
