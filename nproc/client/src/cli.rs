//! The `nps` command line: the subset of procps's syntax `nps` supports,
//! with procps's meaning (src/ps/parser.c).

use crate::ps::Plan;
use crate::render::spec::{bsd_user_list, default_list, parse_list, pid_length, SysvFlags};
use crate::render::Layout;
use crate::select::{parse_pids, Me, Selection, Simple};
use crate::source::Scope;
use crate::task::Global;
use clap::{ArgAction, Parser};

/// `nps`: list processes exactly as procps-ng 4.0.2's `ps` prints them.
#[derive(Parser, Debug, Default)]
#[command(name = "nps", version)]
pub struct Args {
    /// BSD options without a dash: `a` (all with a tty), `x` (all of yours),
    /// `u` (user format), `H` (threads), `w` (wider); `ax` lists everything
    /// in BSD format, `aux` adds user, %CPU, %MEM, sizes and start time.
    #[arg(value_name = "BSD")]
    pub bsd: Option<String>,
    /// Select every process.
    #[arg(short = 'e')]
    pub every: bool,
    /// Select every process (same as -e).
    #[arg(short = 'A')]
    pub all: bool,
    /// Select all processes with a tty except session leaders.
    #[arg(short = 'a')]
    pub unix_a: bool,
    /// Select all processes except session leaders.
    #[arg(short = 'd')]
    pub unix_d: bool,
    /// Show threads, with an LWP column in the default format.
    #[arg(short = 'L')]
    pub threads: bool,
    /// Full format: UID PID PPID C STIME TTY TIME CMD.
    #[arg(short = 'f')]
    pub full: bool,
    /// Long format: F S UID PID PPID C PRI NI ADDR SZ WCHAN TTY TIME CMD.
    #[arg(short = 'l')]
    pub long: bool,
    /// Columns, e.g. `pid,stat,wchan,comm` (repeatable).
    #[arg(short = 'o', long = "format", value_name = "LIST", action = ArgAction::Append)]
    pub format: Vec<String>,
    /// Select these process ids (comma or blank separated; repeatable).
    #[arg(short = 'p', long = "pid", value_name = "PIDLIST", action = ArgAction::Append)]
    pub pids: Vec<String>,
    /// Print no header line.
    #[arg(long = "no-headers", visible_aliases = ["noheaders", "noheader"])]
    pub no_headers: bool,
    /// Wide output: once for 132 columns, twice for unlimited.
    #[arg(short = 'w', action = ArgAction::Count)]
    pub wide: u8,
    /// Where task records come from: the kernel's nproc netlink family
    /// (CONFIG_NPROC), or the /proc files procps reads.
    #[arg(long = "source", value_enum, default_value_t = SourceKind::Nproc)]
    pub source: SourceKind,
    /// Print the fields the kernel's nproc family serves (name, type,
    /// unit, flags), from its GET_FIELDS, and exit.
    #[arg(long = "fields")]
    pub fields: bool,
}

/// `--source`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourceKind {
    /// The nproc generic netlink family: two netlink dumps, no files.
    #[default]
    Nproc,
    /// /proc/PID/{stat,status,cmdline,wchan}, as procps reads them.
    Proc,
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
        me: Me,
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
        Args::try_parse_from(v)
            .map_err(|e| e.to_string())?
            .request()
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
        let me = Me { euid: 0, tty: 0 };
        let env = Env {
            ps_format: Some("pid,comm".into()),
            hide_kernel: false,
        };
        let (plan, w) = req(&["-e"]).unwrap().plan(&g, me, 80, &env).unwrap();
        assert!(w.is_empty());
        assert_eq!(plan.layout.columns.len(), 2);
        let (plan, _) = req(&["-eo", "pid"])
            .unwrap()
            .plan(&g, me, 80, &env)
            .unwrap();
        assert_eq!(plan.layout.columns.len(), 1);
        let bad = Env {
            ps_format: Some("pid,nope".into()),
            hide_kernel: false,
        };
        let (plan, w) = req(&["-e"]).unwrap().plan(&g, me, 80, &bad).unwrap();
        assert_eq!(
            w,
            vec!["warning: $PS_FORMAT ignored. (unknown user-defined format specifier \"nope\")"]
        );
        assert_eq!(plan.layout.columns.len(), 4);
    }
}
