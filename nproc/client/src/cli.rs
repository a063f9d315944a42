//! The `nps` command line: the subset of procps's syntax `nps` supports,
//! with procps's meaning (src/ps/parser.c).

use crate::ps::Plan;
use crate::render::spec::{bsd_user_list, default_list, parse_list, pid_length, SysvFlags};
use crate::render::Layout;
use crate::select::{parse_pids, Me, Selection, Simple};
use crate::source::Scope;
use crate::task::Global;
use lexopt::ValueExt;
use std::ffi::OsString;

/// `nps --help`.
pub const HELP: &str = "\
nps: list processes exactly as procps-ng 4.0.2's `ps` prints them

Usage: nps [OPTIONS] [BSD]

Arguments:
  [BSD]  BSD options without a dash: `a` (all with a tty), `x` (all of
         yours), `u` (user format), `H` (threads), `w` (wider); `ax` lists
         everything in BSD format, `aux` adds user, %CPU, %MEM, sizes and
         start time

Options:
  -e                      Select every process
  -A                      Select every process (same as -e)
  -a                      Select all processes with a tty except session leaders
  -d                      Select all processes except session leaders
  -L                      Show threads, with an LWP column in the default format
  -f                      Full format: UID PID PPID C STIME TTY TIME CMD
  -l                      Long format: F S UID PID PPID C PRI NI ADDR SZ WCHAN TTY TIME CMD
  -o, --format <LIST>     Columns, e.g. `pid,stat,wchan,comm` (repeatable)
  -p, --pid <PIDLIST>     Select these process ids (comma or blank separated; repeatable)
      --no-headers        Print no header line [aliases: noheaders, noheader]
  -w                      Wide output: once for 132 columns, twice for unlimited
      --source <SOURCE>   Where task records come from [default: nproc]:
                          nproc: the nproc generic netlink family (CONFIG_NPROC);
                          proc:  /proc/PID/{stat,status,cmdline,wchan}, as procps reads them
      --fields            Print the fields the kernel's nproc family serves
                          (name, type, unit, flags), from its GET_FIELDS, and exit
  -h, --help              Print help
  -V, --version           Print version
";

/// `nps`'s options, as given (see [`HELP`]).
///
/// The parser is lexopt, not clap: `nps` runs once per refresh of
/// whatever calls it, and clap's derive built its whole command model on
/// every start (about a third of the instructions `nps --version` ran,
/// and more of its distinct code, which an emulated CPU translates anew
/// in every process). lexopt only splits the arguments; the meaning
/// stays here, in one match.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// The BSD letters (`ax`, `aux`, ...), the one positional argument.
    pub bsd: Option<String>,
    /// `-e`.
    pub every: bool,
    /// `-A`.
    pub all: bool,
    /// `-a`.
    pub unix_a: bool,
    /// `-d`.
    pub unix_d: bool,
    /// `-L`.
    pub threads: bool,
    /// `-f`.
    pub full: bool,
    /// `-l`.
    pub long: bool,
    /// `-o` / `--format` lists, in order.
    pub format: Vec<String>,
    /// `-p` / `--pid` lists, in order.
    pub pids: Vec<String>,
    /// `--no-headers` (or `--noheaders`, `--noheader`).
    pub no_headers: bool,
    /// Count of `-w`.
    pub wide: u8,
    /// `--source`.
    pub source: SourceKind,
    /// `--fields`.
    pub fields: bool,
}

/// What the command line asks `nps` to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// List processes (or fields) as `Args` say.
    Run(Args),
    /// `--help`: print [`HELP`].
    Help,
    /// `--version`: print the version.
    Version,
}

/// `--source`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourceKind {
    /// The nproc generic netlink family: two netlink dumps, no files.
    #[default]
    Nproc,
    /// /proc/PID/{stat,status,cmdline,wchan}, as procps reads them.
    Proc,
}

impl Command {
    /// Parses this process's arguments.
    pub fn from_env() -> Result<Command, lexopt::Error> {
        Self::parse(lexopt::Parser::from_env())
    }

    /// Parses `args`, the first of which is the program name.
    pub fn from_args<I>(args: I) -> Result<Command, lexopt::Error>
    where
        I: IntoIterator,
        I::Item: Into<OsString>,
    {
        Self::parse(lexopt::Parser::from_iter(args))
    }

    fn parse(mut p: lexopt::Parser) -> Result<Command, lexopt::Error> {
        use lexopt::Arg::{Long, Short, Value};
        let mut a = Args::default();
        while let Some(arg) = p.next()? {
            match arg {
                Short('e') => a.every = true,
                Short('A') => a.all = true,
                Short('a') => a.unix_a = true,
                Short('d') => a.unix_d = true,
                Short('L') => a.threads = true,
                Short('f') => a.full = true,
                Short('l') => a.long = true,
                Short('w') => a.wide = a.wide.saturating_add(1),
                Short('o') | Long("format") => a.format.push(p.value()?.string()?),
                Short('p') | Long("pid") => a.pids.push(p.value()?.string()?),
                Long("no-headers" | "noheaders" | "noheader") => a.no_headers = true,
                Long("source") => {
                    a.source = match p.value()?.string()?.as_str() {
                        "nproc" => SourceKind::Nproc,
                        "proc" => SourceKind::Proc,
                        other => {
                            return Err(format!(
                                "invalid value '{other}' for '--source': nproc or proc"
                            )
                            .into())
                        }
                    }
                }
                Long("fields") => a.fields = true,
                Short('h') | Long("help") => return Ok(Command::Help),
                Short('V') | Long("version") => return Ok(Command::Version),
                Value(v) if a.bsd.is_none() => a.bsd = Some(v.string()?),
                _ => return Err(arg.unexpected()),
            }
        }
        Ok(Command::Run(a))
    }
}

/// What the command line asks for, before the system is consulted.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    /// BSD syntax was used (`prefer_bsd_defaults`).
    pub bsd_syntax: bool,
    /// `-e`, `-A` or BSD `ax`.
    pub all: bool,
    /// Selection letters.
    pub simple: Simple,
    /// Listed pids.
    pub pids: Vec<i32>,
    /// Thread scope, and whether `-L` asked for an LWP column.
    pub scope: Scope,
    /// `-L`.
    pub lwp: bool,
    /// `-o` lists, in order.
    pub formats: Vec<String>,
    /// BSD `u`.
    pub user_format: bool,
    /// `-f` and `-l`.
    pub sysv: SysvFlags,
    /// `--no-headers`.
    pub no_headers: bool,
    /// Count of `w`.
    pub wide: u32,
}

impl Args {
    /// Checks the options and resolves the BSD letters.
    pub fn request(&self) -> Result<Request, String> {
        let mut simple = Simple {
            unix_a: self.unix_a,
            unix_d: self.unix_d,
            ..Simple::default()
        };
        let mut wide = u32::from(self.wide);
        let mut loose_threads = false;
        let mut user_format = false;
        if let Some(letters) = &self.bsd {
            for c in letters.chars() {
                match c {
                    'a' => simple.bsd_a = true,
                    'x' => simple.bsd_x = true,
                    'H' => loose_threads = true,
                    'w' => wide += 1,
                    'u' => user_format = true,
                    _ => return Err(format!("unsupported option (BSD syntax): {c:?}")),
                }
            }
        }
        // process_sf_options(): -o with any format flag, or two format
        // flags of different families, conflict.
        let sysv = SysvFlags {
            full: self.full,
            long: self.long,
        };
        let sysv_any = sysv.full || sysv.long;
        if ((user_format || sysv_any) && !self.format.is_empty()) || (user_format && sysv_any) {
            return Err("conflicting format options".into());
        }
        if loose_threads && self.threads {
            return Err("thread flags conflict; can't use H with -L".into());
        }
        let mut pids = Vec::new();
        for list in &self.pids {
            pids.extend(parse_pids(list)?);
        }
        Ok(Request {
            bsd_syntax: self.bsd.is_some(),
            all: self.every || self.all,
            simple,
            pids,
            scope: if self.threads || loose_threads {
                Scope::Threads
            } else {
                Scope::Processes
            },
            lwp: self.threads,
            formats: self.format.clone(),
            user_format,
            sysv,
            no_headers: self.no_headers,
            wide,
        })
    }
}

/// The environment variables ps consults.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `$PS_FORMAT`: the format when none is given on the command line.
    pub ps_format: Option<String>,
    /// `$LIBPROC_HIDE_KERNEL` is set: kernel threads are not listed.
    pub hide_kernel: bool,
}

impl Env {
    /// Reads them from this process's environment. nps, like ps under the
    /// default personality, ignores `$PS_PERSONALITY` and `$CMD_ENV` only
    /// in that it does not implement the other personalities.
    pub fn from_process() -> Env {
        Env {
            ps_format: std::env::var("PS_FORMAT").ok(),
            hide_kernel: std::env::var_os("LIBPROC_HIDE_KERNEL").is_some(),
        }
    }
}

impl Request {
    /// Builds the run plan for this system.
    ///
    /// Returns the plan and the warnings ps would print on stderr.
    pub fn plan(
        &self,
        global: &Global,
        me: impl FnOnce() -> Me,
        screen_cols: usize,
        env: &Env,
    ) -> Result<(Plan, Vec<String>), String> {
        let pid_len = pid_length(global.pid_max);
        let mut warnings = Vec::new();
        // process_sf_options(): $PS_FORMAT replaces the default format.
        let from_env = match env.ps_format.as_deref() {
            Some(f)
                if !f.is_empty()
                    && !self.user_format
                    && !self.sysv.full
                    && !self.sysv.long
                    && self.formats.is_empty() =>
            {
                match parse_list(f, pid_len) {
                    Ok(cols) => Some(cols),
                    Err(e) => {
                        warnings.push(format!("warning: $PS_FORMAT ignored. ({e})"));
                        None
                    }
                }
            }
            _ => None,
        };
        let columns = if let Some(cols) = from_env {
            cols
        } else if self.user_format {
            bsd_user_list(pid_len)
        } else if self.formats.is_empty() {
            default_list(self.bsd_syntax, self.sysv, self.lwp, pid_len)
        } else {
            let mut cols = Vec::new();
            for f in &self.formats {
                cols.extend(parse_list(f, pid_len)?);
            }
            cols
        };
        let selection = Selection::new(
            self.all,
            self.simple,
            self.bsd_syntax,
            self.pids.clone(),
            me,
        )?
        .hide_kernel_threads(env.hide_kernel);
        let plan = Plan {
            layout: Layout::new(columns, screen_cols),
            scope: self.scope,
            selection,
            header: !self.no_headers,
        };
        Ok((plan, warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(argv: &[&str]) -> Result<Request, String> {
        let mut v = vec!["nps"];
        v.extend_from_slice(argv);
        match Command::from_args(v).map_err(|e| e.to_string())? {
            Command::Run(args) => args.request(),
            other => Err(format!("{other:?}")),
        }
    }

    #[test]
    fn ps_spellings() {
        let r = req(&["ax"]).unwrap();
        assert!(r.bsd_syntax && r.simple.bsd_a && r.simple.bsd_x);
        let r = req(&["-eo", "pid,stat,wchan,comm"]).unwrap();
        assert!(r.all && !r.bsd_syntax);
        assert_eq!(r.formats, vec!["pid,stat,wchan,comm"]);
        let r = req(&["-eLo", "pid,tid", "-o", "comm"]).unwrap();
        assert_eq!(r.scope, Scope::Threads);
        assert_eq!(r.formats, vec!["pid,tid", "comm"]);
        let r = req(&["-p", "1,2", "--pid", "3"]).unwrap();
        assert_eq!(r.pids, vec![1, 2, 3]);
        assert!(req(&["aq"]).unwrap_err().contains("'q'"));
        assert!(req(&["aux"]).unwrap().user_format);
        assert_eq!(
            req(&["aux", "-o", "pid"]).unwrap_err(),
            "conflicting format options"
        );
        assert!(req(&["-p", "x"]).unwrap_err().contains("syntax error"));
        let r = req(&["-efL"]).unwrap();
        assert!(r.sysv.full && r.all && r.lwp);
        assert_eq!(
            req(&["-f", "-o", "pid"]).unwrap_err(),
            "conflicting format options"
        );
        assert_eq!(req(&["u", "-l"]).unwrap_err(), "conflicting format options");
    }

    fn args(argv: &[&str]) -> Result<Command, String> {
        let mut v = vec!["nps"];
        v.extend_from_slice(argv);
        Command::from_args(v).map_err(|e| e.to_string())
    }

    #[test]
    fn option_syntax() {
        let Command::Run(a) = args(&["-ww", "--format=pid", "-opid,comm", "--noheader"]).unwrap()
        else {
            panic!("not a run")
        };
        assert_eq!(a.wide, 2);
        assert_eq!(a.format, vec!["pid", "pid,comm"]);
        assert!(a.no_headers);
        let Command::Run(a) = args(&["--source", "proc", "--pid=7", "-p8", "ax"]).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(a.source, SourceKind::Proc);
        assert_eq!(a.pids, vec!["7", "8"]);
        assert_eq!(a.bsd.as_deref(), Some("ax"));
        assert_eq!(args(&["-e", "--help"]).unwrap(), Command::Help);
        assert_eq!(args(&["-V"]).unwrap(), Command::Version);
        let err = |argv| args(argv).unwrap_err();
        assert_eq!(err(&["ax", "u"]), "unexpected argument \"u\"");
        assert_eq!(err(&["-q"]), "invalid option '-q'");
        assert_eq!(err(&["-o"]), "missing argument for option '-o'");
        assert_eq!(
            err(&["--source", "sys"]),
            "invalid value 'sys' for '--source': nproc or proc"
        );
        assert_eq!(
            err(&["--fields=1"]),
            "unexpected argument for option '--fields': \"1\""
        );
    }

    #[test]
    fn ps_format_variable() {
        let g = Global {
            hertz: 100,
            page_size: 4096,
            boot_time: 0,
            mem_total_kib: 1,
            uptime_centis: 0,
            pid_max: None,
        };
        let me = || Me { euid: 0, tty: 0 };
        let env = Env {
            ps_format: Some("pid,comm".into()),
            hide_kernel: false,
        };
        let (plan, w) = req(&["-e"]).unwrap().plan(&g, me, 80, &env).unwrap();
        assert!(w.is_empty());
        assert_eq!(plan.layout.columns().len(), 2);
        let (plan, _) = req(&["-eo", "pid"])
            .unwrap()
            .plan(&g, me, 80, &env)
            .unwrap();
        assert_eq!(plan.layout.columns().len(), 1);
        let bad = Env {
            ps_format: Some("pid,nope".into()),
            hide_kernel: false,
        };
        let (plan, w) = req(&["-e"]).unwrap().plan(&g, me, 80, &bad).unwrap();
        assert_eq!(
            w,
            vec!["warning: $PS_FORMAT ignored. (unknown user-defined format specifier \"nope\")"]
        );
        assert_eq!(plan.layout.columns().len(), 4);
    }
}
