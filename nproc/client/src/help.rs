//! ps's help (src/ps/help.c `do_help()`): the same sections and text,
//! naming the program as it was invoked, as ps does; `--help` adds nps's
//! own options after it ([`nps_help_text`]).

const SIMPLE: &str = "\nBasic options:\n -A, -e               all processes\n -a                   all with tty, except session leaders\n  a                   all with tty, including other users\n -d                   all except session leaders\n -N, --deselect       negate selection\n  r                   only running processes\n  T                   all processes on this terminal\n  x                   processes without controlling ttys\n";

const LIST: &str = "\nSelection by list:\n -C <command>         command name\n -G, --Group <GID>    real group id or name\n -g, --group <group>  session or effective group name\n -p, p, --pid <PID>   process id\n        --ppid <PID>  parent process id\n -q, q, --quick-pid <PID>\n                      process id (quick mode)\n -s, --sid <session>  session id\n -t, t, --tty <tty>   terminal\n -u, U, --user <UID>  effective user id or name\n -U, --User <UID>     real user id or name\n\n  The selection options take as their argument either:\n    a comma-separated list e.g. '-u root,nobody' or\n    a blank-separated list e.g. '-p 123 4567'\n";

const OUTPUT: &str = "\nOutput formats:\n -F                   extra full\n -f                   full-format, including command lines\n  f, --forest         ascii art process tree\n -H                   show process hierarchy\n -j                   jobs format\n  j                   BSD job control format\n -l                   long format\n  l                   BSD long format\n -M, Z                add security data (for SELinux)\n -O <format>          preloaded with default columns\n  O <format>          as -O, with BSD personality\n -o, o, --format <format>\n                      user-defined format\n  -P                  add psr column\n  s                   signal format\n  u                   user-oriented format\n  v                   virtual memory format\n  X                   register format\n -y                   do not show flags, show rss vs. addr (used with -l)\n     --context        display security context (for SELinux)\n     --headers        repeat header lines, one per page\n     --no-headers     do not print header at all\n     --cols, --columns, --width <num>\n                      set screen width\n     --rows, --lines <num>\n                      set screen height\n";

const THREADS: &str = "\nShow threads:\n  H                   as if they were processes\n -L                   possibly with LWP and NLWP columns\n -m, m                after processes\n -T                   possibly with SPID column\n";

const MISC: &str = "\nMiscellaneous options:\n -c                   show scheduling class with -l option\n  c                   show true command name\n  e                   show the environment after command\n  k,    --sort        specify sort order as: [+|-]key[,[+|-]key[,...]]\n  L                   show format specifiers\n  n                   display numeric uid and wchan\n  S,    --cumulative  include some dead child process data\n -y                   do not show flags, show rss (only with -l)\n -V, V, --version     display version information and exit\n -w, w                unlimited output width\n\n        --help <simple|list|output|threads|misc|all>\n                      display help and exit\n";

/// The help text for `--help [SECTION]` (`s|simple`, `l|list`,
/// `o|output`, `t|threads`, `m|misc`, `a|all`; anything else gives the
/// summary), with `myname` where ps prints its name.
pub fn help_text(section: Option<&[u8]>, myname: &str) -> String {
    let pick = |word: &[u8], abbr: &[u8]| section.is_some_and(|s| s == word || s == abbr);
    let all = pick(b"all", b"a");
    let parts = [
        (pick(b"simple", b"s"), SIMPLE),
        (pick(b"list", b"l"), LIST),
        (pick(b"output", b"o"), OUTPUT),
        (pick(b"threads", b"t"), THREADS),
        (pick(b"misc", b"m"), MISC),
    ];
    let mut s = format!("\nUsage:\n {myname} [options]\n");
    let mut any = all;
    for (on, text) in parts {
        if on || all {
            s.push_str(text);
        }
        any |= on;
    }
    if !any {
        s.push_str(&format!(
            "\n Try '{myname} --help <simple|list|output|threads|misc|all>'\n  or '{myname} --help <s|l|o|t|m|a>'\n for additional help text.\n"
        ));
    }
    s.push_str("\nFor more details see ps(1).\n");
    s
}

/// nps's own options (`crate::run::take_nps_options`), printed after
/// ps's text.
pub const NPS_OPTIONS: &str = "\nnps options:\n     --source <auto|nproc|proc>\n                      where to read processes from: auto (the default)\n                      reads the kernel's nproc family when it has one,\n                      else /proc; nproc reads the family or fails;\n                      proc reads /proc\n     --fields         list the fields the nproc family serves and exit\n                      (whatever --source says)\n\n Both may appear anywhere on the command line (also --source=<value>);\n nps takes them out before it parses the ps options. See nps(1).\n";

/// What `--help [SECTION]` prints: ps's text for that section, byte for
/// byte, then [`NPS_OPTIONS`].
///
/// The nps options follow every section, not only the summary: they
/// belong to none of ps's sections, and ps's summary cannot name a new
/// one without changing ps's text, so a reader who asked for any one
/// section would otherwise never learn them; and one rule for every form
/// ("ps's text, then this block") lets a wrapper or a test cut nps's part
/// off and compare the rest with ps. ps's usage after an error
/// ([`help_text`] on stderr) stays ps's alone: stderr must be ps's bytes.
pub fn nps_help_text(section: Option<&[u8]>, myname: &str) -> String {
    let mut s = help_text(section, myname);
    s.push_str(NPS_OPTIONS);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections() {
        let short = help_text(None, "ps");
        assert!(short.starts_with("\nUsage:\n ps [options]\n\n Try 'ps --help <simple"));
        assert!(short.ends_with("For more details see ps(1).\n"));
        let all = help_text(Some(b"a"), "nps");
        for part in [SIMPLE, LIST, OUTPUT, THREADS, MISC] {
            assert!(all.contains(part));
        }
        assert!(!all.contains("Try"));
        assert!(help_text(Some(b"threads"), "ps").contains("Show threads:"));
        assert!(help_text(Some(b"bogus"), "ps").contains("Try"));
    }

    #[test]
    fn nps_options_follow_every_section() {
        for section in [None, Some(&b"all"[..]), Some(b"t"), Some(b"bogus")] {
            let ps = help_text(section, "ps");
            let ours = nps_help_text(section, "ps");
            assert_eq!(ours.strip_prefix(&ps), Some(NPS_OPTIONS));
        }
        assert!(!help_text(Some(b"a"), "ps").contains("--source"));
        for word in ["--source <auto|nproc|proc>", "--fields", "nps(1)"] {
            assert!(NPS_OPTIONS.contains(word), "{word}");
        }
        assert!(NPS_OPTIONS.lines().all(|l| l.len() <= 80));
    }
}
