//! What nps does not do (yet): every command line ps accepts either runs
//! as ps would or is refused here with one message shape and one exit
//! status, [`NOT_SUPPORTED`], which ps itself never uses, so that a
//! wrapper can fall back to ps.

use crate::parser::{tf, Options};
use crate::select::SelKind;
use crate::sortformat::Formats;

/// The exit status of a refusal (ps exits 0 or 1).
pub const NOT_SUPPORTED: u8 = 2;

/// The refusal's text: `nps: WHAT is not supported`.
pub fn message(what: &str) -> String {
    format!("nps: {what} is not supported\n")
}

/// The personalities (`$PS_PERSONALITY`, else `$CMD_ENV`) that behave as
/// the default one: ps's `set_personality()` takes an unknown name, or one
/// longer than 15 bytes, as the default too.
fn default_personality(name: &[u8], xpg: Option<&[u8]>) -> bool {
    if name.len() > 15 {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    match lower.as_slice() {
        b"bsd" | b"old" | b"debian" | b"gnu" | b"linux" | b"aix" | b"tru64" | b"compaq"
        | b"digital" | b"sunos4" | b"hp" | b"hpux" | b"svr4" | b"sysv" | b"sco" | b"os390"
        | b"s390" | b"390" => false,
        // IRIX's personality applies unless $_XPG starts with 1..9.
        b"irix" | b"sgi" => xpg
            .and_then(|x| x.first())
            .is_some_and(|c| (b'1'..=b'9').contains(c)),
        _ => true,
    }
}

/// The environment's personality, when it is one nps does not implement:
/// the text to refuse with.
pub fn check_personality(get: impl Fn(&str) -> Option<Vec<u8>>) -> Result<(), String> {
    if get("I_WANT_A_BROKEN_PS").is_some() {
        return Err("environment variable 'I_WANT_A_BROKEN_PS'".into());
    }
    let (var, name) = match get("PS_PERSONALITY").filter(|v| !v.is_empty()) {
        Some(v) => ("PS_PERSONALITY", v),
        None => match get("CMD_ENV").filter(|v| !v.is_empty()) {
            Some(v) => ("CMD_ENV", v),
            None => return Ok(()),
        },
    };
    if default_personality(&name, get("_XPG").as_deref()) {
        return Ok(());
    }
    Err(format!(
        "personality '{var}={}'",
        String::from_utf8_lossy(&name)
    ))
}

/// The first thing in a parsed command line nps cannot do, as the text
/// to refuse with: an option is named as it was typed (`-Z`, `Z`,
/// `--cumulative`...), so that the message points at the user's own word.
pub fn check(o: &Options, f: &Formats) -> Result<(), String> {
    if let Some(typed) = o.refused.first() {
        return Err(format!("option '{typed}'"));
    }
    let quick = o.selection.iter().any(|n| n.kind == SelKind::PidQuick);
    if quick && o.thread_flags & tf::SHOW_BOTH != 0 {
        let q = o.quick_as.unwrap_or("-q");
        let m = o.after_as.unwrap_or("-m");
        return Err(format!("option '{q}' with '{m}'"));
    }
    match f.unsupported.first() {
        Some(what) if what.starts_with("AIX") || what.starts_with("sort key") => Err(what.clone()),
        Some(spec) => Err(format!("format specifier '{spec}'")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn personalities() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.as_bytes().to_vec())
            }
        };
        assert!(check_personality(env(&[])).is_ok());
        assert!(check_personality(env(&[("PS_PERSONALITY", "posix")])).is_ok());
        assert!(check_personality(env(&[("PS_PERSONALITY", "nonsense")])).is_ok());
        assert_eq!(
            check_personality(env(&[("PS_PERSONALITY", "BSD")])),
            Err("personality 'PS_PERSONALITY=BSD'".into())
        );
        assert!(check_personality(env(&[("CMD_ENV", "linux")])).is_err());
        assert!(check_personality(env(&[("PS_PERSONALITY", "irix")])).is_err());
        assert!(check_personality(env(&[("PS_PERSONALITY", "irix"), ("_XPG", "2")])).is_ok());
        assert!(check_personality(env(&[("I_WANT_A_BROKEN_PS", "")])).is_err());
        assert_eq!(message("option 'e'"), "nps: option 'e' is not supported\n");
    }

    /// What `check` says of `args` after ps's parse and format setup.
    fn refusal(args: &[&str]) -> Result<(), String> {
        use crate::parser::{arg_parse, Parsed};
        use crate::sortformat::{process_sf_options, SfState};
        let argv: Vec<Vec<u8>> = std::iter::once("ps")
            .chain(args.iter().copied())
            .map(|a| a.as_bytes().to_vec())
            .collect();
        let mut state = SfState::default();
        let mut got = None;
        let parsed = arg_parse(&argv, &mut |o: &mut Options| {
            let f = process_sf_options(o, &mut state)?;
            got = Some((o.clone(), f));
            Ok(())
        });
        assert!(matches!(parsed, Ok(Parsed::Run(_))), "{args:?}: {parsed:?}");
        let (o, f) = got.expect("a pass that ran");
        check(&o, &f)
    }

    #[test]
    fn refusals_name_the_option_typed() {
        let said = |args: &[&str]| refusal(args).unwrap_err();
        for (args, typed) in [
            (&["-M"][..], "-M"),
            (&["-Z"], "-Z"),
            (&["-eZ"], "-Z"),
            (&["Z"], "Z"),
            (&["axZ"], "Z"),
            (&["aux", "-Z"], "-Z"),
            // The second pass reads a dashed argument as BSD letters.
            (&["-aZx"], "Z"),
            (&["S"], "S"),
            (&["ax", "--cumulative"], "--cumulative"),
            (&["ax", "n"], "n"),
            (&["s"], "s"),
            (&["ax", "v"], "v"),
            (&["X"], "X"),
            (&["-e", "--context"], "--context"),
            // The first one typed is named.
            (&["Z", "-M"], "Z"),
            (&["--cumulative", "S", "-Z"], "--cumulative"),
        ] {
            assert_eq!(said(args), format!("option '{typed}'"), "{args:?}");
        }
        assert_eq!(said(&["-q", "1", "-m"]), "option '-q' with '-m'");
        assert_eq!(said(&["q", "1", "m"]), "option 'q' with 'm'");
        assert_eq!(
            said(&["--quick-pid", "1", "M"]),
            "option '--quick-pid' with 'M'"
        );
        assert!(refusal(&["aux"]).is_ok());
        assert!(refusal(&["-q", "1"]).is_ok());
    }
}
