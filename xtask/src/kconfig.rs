//! Kconfig fragment parsing and verification of the merged `.config`.

use std::collections::HashMap;

/// One requested option: `None` means `# CONFIG_X is not set`.
pub type Request = (String, Option<String>);

/// Parse a Kconfig fragment into requested option values.
pub fn parse_fragment(text: &str) -> Vec<Request> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Request> {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("# ") {
        let name = rest.strip_suffix(" is not set")?;
        return name
            .starts_with("CONFIG_")
            .then(|| (name.to_string(), None));
    }
    if line.starts_with('#') {
        return None;
    }
    let (name, val) = line.split_once('=')?;
    name.starts_with("CONFIG_")
        .then(|| (name.to_string(), Some(val.to_string())))
}

/// Compare requests against a `.config`; return one message per option that did not stick.
pub fn verify(requests: &[Request], dot_config: &str) -> Vec<String> {
    let actual: HashMap<String, Option<String>> =
        dot_config.lines().filter_map(parse_line).collect();
    requests
        .iter()
        .filter_map(|(name, want)| {
            let got = actual.get(name).cloned().flatten();
            let want_set = want.as_deref().filter(|v| *v != "n");
            (got.as_deref() != want_set).then(|| {
                format!(
                    "{name}: requested {}, got {}",
                    want.as_deref().unwrap_or("not set"),
                    got.as_deref().unwrap_or("not set")
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_reports_what_did_not_stick() {
        let req = parse_fragment("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n# c\n");
        let cfg = "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n";
        let bad = verify(&req, cfg);
        assert_eq!(bad.len(), 2);
        assert!(bad[0].starts_with("CONFIG_B"));
        assert!(verify(&req[..1], cfg).is_empty());
    }
}
