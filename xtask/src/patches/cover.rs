//! Filling `git format-patch --cover-letter`'s template.
//!
//! git writes `*** SUBJECT HERE ***` and `*** BLURB HERE ***` above the
//! shortlog and diffstat it computes; we put the series' subject and body
//! there. The body's `@VENDORED@` line becomes the list of vendored crates
//! (so that list cannot go stale), and a `Base:` line closes the blurb.

use super::vendor::Copied;
use crate::Result;

/// The placeholder line in `cover-letter` for the vendored-files list.
pub const VENDORED: &str = "@VENDORED@";

/// One vendoring step of the series: patch number, total, what was copied.
pub type Step = (usize, usize, Copied);

/// The generated list of vendored crates, one entry per vendor line.
pub fn vendored_list(steps: &[Step]) -> String {
    let mut s = String::from(
        "Vendored by the generator (cargo xtask patches), never edited by hand:\n\
         each crate's src/*.rs at the version Cargo.lock pins, plus its license\n\
         files; each .rs file without an SPDX line got\n\
         `// SPDX-License-Identifier: <the crate's license field, / as OR>`.\n\n",
    );
    for (n, total, c) in steps {
        let mut files = format!(
            "{} .rs files ({} got an SPDX line)",
            c.rs_files, c.spdx_added
        );
        for l in &c.licenses {
            files.push_str(", ");
            files.push_str(l);
        }
        s.push_str(&format!(
            "  {}/ [{n}/{total}]\n    {} {} ({}): {files}\n",
            c.tree_dir, c.package, c.version, c.spdx
        ));
    }
    s
}

/// The blurb: the body with `@VENDORED@` expanded, then the base line.
pub fn blurb(body: &str, steps: &[Step], base: &str) -> Result<String> {
    let has_placeholder = body.lines().any(|l| l.trim() == VENDORED);
    if !steps.is_empty() && !has_placeholder {
        return Err(format!(
            "cover-letter: the series vendors crates: put a line {VENDORED} in its body where \
             the generated list of vendored files goes"
        ));
    }
    if steps.is_empty() && has_placeholder {
        return Err(format!(
            "cover-letter: {VENDORED} given, but no patch vendors a crate"
        ));
    }
    let mut out = String::new();
    for line in body.lines() {
        if line.trim() == VENDORED {
            out.push_str(&vendored_list(steps));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!("Base: {base}\n"));
    Ok(out)
}

/// Put `subject` and `blurb` into git's cover letter template.
pub fn fill(template: &str, subject: &str, blurb: &str) -> Result<String> {
    const SUBJ: &str = "*** SUBJECT HERE ***";
    const BLURB: &str = "*** BLURB HERE ***\n";
    if template.matches(SUBJ).count() != 1 || template.matches(BLURB).count() != 1 {
        return Err(format!(
            "git's cover letter does not have exactly one `{SUBJ}` and one `{}` \
             (a git version with another template?)",
            BLURB.trim_end()
        ));
    }
    Ok(template
        .replacen(SUBJ, subject, 1)
        .replacen(BLURB, blurb, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step() -> Step {
        (
            1,
            2,
            Copied {
                package: "arrayvec".into(),
                version: "0.7.8".into(),
                spdx: "MIT OR Apache-2.0".into(),
                tree_dir: "kernel/kallsyms_fast/arrayvec".into(),
                rs_files: 7,
                spdx_added: 7,
                licenses: vec!["LICENSE-APACHE".into(), "LICENSE-MIT".into()],
            },
        )
    }

    const TEMPLATE: &str =
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n\
From: A <a@b>\nDate: x\nSubject: [PATCH 0/2] *** SUBJECT HERE ***\n\n*** BLURB HERE ***\n\n\
A (2):\n  a: one\n  a: two\n";

    #[test]
    fn fills_subject_blurb_and_list() {
        let b = blurb("Intro.\n\n@VENDORED@\nEnd.\n", &[step()], "Linux 6.12.117").unwrap();
        let got = fill(TEMPLATE, "kallsyms: fast", &b).unwrap();
        let want = concat!(
            "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n",
            "From: A <a@b>\nDate: x\nSubject: [PATCH 0/2] kallsyms: fast\n\nIntro.\n\n",
            "Vendored by the generator (cargo xtask patches), never edited by hand:\n",
            "each crate's src/*.rs at the version Cargo.lock pins, plus its license\n",
            "files; each .rs file without an SPDX line got\n",
            "`// SPDX-License-Identifier: <the crate's license field, / as OR>`.\n\n",
            "  kernel/kallsyms_fast/arrayvec/ [1/2]\n",
            "    arrayvec 0.7.8 (MIT OR Apache-2.0): 7 .rs files (7 got an SPDX line), ",
            "LICENSE-APACHE, LICENSE-MIT\n",
            "End.\n\nBase: Linux 6.12.117\n\nA (2):\n  a: one\n  a: two\n",
        );
        assert_eq!(got, want);
    }

    #[test]
    fn placeholder_rules() {
        assert!(blurb("no list\n", &[step()], "b")
            .unwrap_err()
            .contains("put a line @VENDORED@"));
        assert!(blurb("@VENDORED@\n", &[], "b")
            .unwrap_err()
            .contains("no patch vendors a crate"));
        assert_eq!(blurb("", &[], "B").unwrap(), "Base: B\n");
        assert!(fill("Subject: x\n", "s", "b")
            .unwrap_err()
            .contains("exactly one"));
    }
}
