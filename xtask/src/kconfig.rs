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

/// Requests with later ones for the same option dropping earlier ones, as
/// `merge_config.sh` overrides them.
pub fn last_wins(reqs: Vec<Request>) -> Vec<Request> {
    let mut out: Vec<Request> = Vec::with_capacity(reqs.len());
    for r in reqs {
        out.retain(|o| o.0 != r.0);
        out.push(r);
    }
    out
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
    fn later_fragments_override() {
        let reqs = parse_fragment("CONFIG_A=y\nCONFIG_B=y\n# CONFIG_A is not set\n");
        assert_eq!(
            last_wins(reqs),
            [
                ("CONFIG_B".to_string(), Some("y".to_string())),
                ("CONFIG_A".to_string(), None)
            ]
        );
    }

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
