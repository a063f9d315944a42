//! One invocation of `nps`: ps's `main()` (src/ps/display.c) in order —
//! the command line, its checks, the source, the plan, the listing — with
//! nps's own options (`--source`, `--fields`) taken out first.

use crate::netlink::NprocSource;
use crate::parser::{arg_parse, Options, ParseError, Parsed, Passes};
use crate::procfs::{parse_stat, ProcSource};
use crate::ps::{Plan, RunError};
use crate::render::known::KNOWN;
use crate::render::spec::pid_length;
use crate::render::{Charset, Ctx, Kind, Layout, Names, TtyNamer};
use crate::screen::{choose_dimensions, set_screen_size};
use crate::select::{select_bits, Me, SelKind, Selection};
use crate::sortformat::{process_sf_options, Formats, SfState};
use crate::stdio::{eprint, print, Stdout};
use crate::support::{self, NOT_SUPPORTED};
use crate::{Source, SourceError, Task};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

/// Exit status: done.
const SUCCESS: u8 = 0;
/// Exit status: an error, or (as ps) no task selected.
const FAILURE: u8 = 1;

/// `--source`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourceKind {
    /// The nproc family when the kernel has it, else /proc.
    #[default]
    Auto,
    /// The nproc generic netlink family, or an error.
    Nproc,
    /// /proc/PID/{stat,status,cmdline,wchan}, as procps reads them.
    Proc,
}

/// nps's own options, taken out of the arguments before ps's parser sees
/// them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct NpsOptions {
    /// `--source nproc|proc|auto`.
    pub source: SourceKind,
    /// `--fields`.
    pub fields: bool,
}

/// Takes `--source X`, `--source=X` and `--fields` out of `argv` (after
/// the program name). A bad `--source` value is an error.
pub fn take_nps_options(argv: &mut Vec<Vec<u8>>) -> Result<NpsOptions, String> {
    let mut o = NpsOptions::default();
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].clone();
        let value = if a == b"--source" {
            if i + 1 >= argv.len() {
                return Err("option '--source' needs a value: nproc, proc or auto".into());
            }
            let v = argv.remove(i + 1);
            Some(v)
        } else {
            a.strip_prefix(b"--source=").map(<[u8]>::to_vec)
        };
        if let Some(v) = value {
            o.source = match v.as_slice() {
                b"nproc" => SourceKind::Nproc,
                b"proc" => SourceKind::Proc,
                b"auto" => SourceKind::Auto,
                _ => {
                    return Err(format!(
                        "invalid value '{}' for '--source': nproc, proc or auto",
                        String::from_utf8_lossy(&v)
                    ))
                }
            };
            argv.remove(i);
            continue;
        }
        if a == b"--fields" {
            o.fields = true;
            argv.remove(i);
            continue;
        }
        i += 1;
    }
    Ok(o)
}

/// Our euid and controlling terminal, as ps caches them at start-up.
fn me() -> Me {
    // SAFETY: geteuid() has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    let mut t = Task::empty(0, 0);
    let tty = match std::fs::read("/proc/self/stat") {
        Ok(s) if parse_stat(&s, &mut t).is_ok() => t.tty_nr,
        _ => 0,
    };
    Me { euid, tty }
}

fn env_bytes(name: &str) -> Option<Vec<u8>> {
    std::env::var_os(name).map(OsString::into_vec)
}

/// The source `kind` asks for: with `Auto`, the nproc family when the
/// kernel has one, else /proc, silently.
pub fn open_source(kind: SourceKind) -> Result<Box<dyn Source>, SourceError> {
    match kind {
        SourceKind::Proc => Ok(Box::new(ProcSource::new())),
        SourceKind::Nproc => Ok(Box::new(NprocSource::connect()?)),
        SourceKind::Auto => match NprocSource::connect() {
            Ok(s) => Ok(Box::new(s)),
            Err(e) if unreachable_family(&e) => Ok(Box::new(ProcSource::new())),
            Err(e) => Err(e),
        },
    }
}

/// Whether a failed connection means nps cannot reach an nproc family
/// at all: the kernel has none, or the socket to ask cannot be made
/// (no generic netlink, or a sandbox that forbids netlink sockets, where
/// ps still reads /proc). A family that answers, even with an error, is
/// not this.
fn unreachable_family(e: &SourceError) -> bool {
    matches!(
        e,
        SourceError::Nproc(nproc_genl::Error::NoFamily | nproc_genl::Error::Io { .. })
    )
}

/// Which source `kind` would read, for `--version`.
fn source_name(kind: SourceKind) -> &'static str {
    match kind {
        SourceKind::Proc => "proc",
        SourceKind::Nproc => "nproc",
        SourceKind::Auto => match NprocSource::connect() {
            Ok(_) => "nproc",
            Err(e) if unreachable_family(&e) => "proc",
            Err(_) => "nproc (unusable)",
        },
    }
}

/// A source error, with the way out when the kernel has no nproc.
fn source_failed(e: &SourceError) -> u8 {
    match e {
        SourceError::Nproc(nproc_genl::Error::NoFamily) => {
            eprint(&format!("nps: {e}, or nps --source proc\n"))
        }
        _ => eprint(&format!("nps: error: {e}\n")),
    }
    FAILURE
}

/// The program name ps prints in its usage (`myname`: argv[0]'s last
/// component).
fn myname(argv0: &[u8]) -> String {
    let base = argv0.rsplit(|&b| b == b'/').next().unwrap_or(argv0);
    String::from_utf8_lossy(base).into_owned()
}

/// A parsed command line with ps's setup done.
struct Setup {
    options: Options,
    formats: Formats,
    /// The table's bits, `None` when everything is selected.
    bits: Option<u16>,
}

/// ps's parse with its setup: the pass hooks of [`arg_parse`].
struct Pass<'w> {
    /// set_screen_size()'s warning, printed as each pass begins.
    warning: &'w Option<String>,
    state: SfState,
    setup: Option<Setup>,
}

impl Passes for Pass<'_> {
    fn begin(&mut self) {
        if let Some(w) = self.warning {
            eprint(w);
        }
    }

    fn finish(&mut self, o: &mut Options) -> Result<(), String> {
        let formats = process_sf_options(o, &mut self.state);
        for w in self.state.warnings.drain(..) {
            eprint(&format!("{w}\n"));
        }
        if let Some((line, msg)) = self.state.fatal {
            // catastrophic_failure(): glibc's error_at_line(), then exit.
            let argv0 = std::env::args_os()
                .next()
                .map(|a| a.to_string_lossy().into_owned())
                .unwrap_or_default();
            eprint(&format!("{argv0}:src/ps/sortformat.c:{line}: {msg}\n"));
            crate::stdio::exit(FAILURE);
        }
        let formats = formats?;
        let bits = select_bits(o.simple_select, o.prefer_bsd_defaults)?;
        self.setup = Some(Setup {
            options: o.clone(),
            formats,
            bits,
        });
        Ok(())
    }
}

/// Runs `nps` with `args` (the program name first): returns the exit
/// status once everything is written.
pub fn nps(args: Vec<OsString>) -> u8 {
    let mut argv: Vec<Vec<u8>> = args.into_iter().map(OsString::into_vec).collect();
    if argv.is_empty() {
        argv.push(b"nps".to_vec());
    }
    let name = myname(&argv[0]);
    let nps_opts = match take_nps_options(&mut argv) {
        Ok(o) => o,
        Err(e) => {
            eprint(&format!("nps: {e}\n"));
            return FAILURE;
        }
    };
    if nps_opts.fields {
        return list_fields();
    }
    if let Err(what) = support::check_personality(env_bytes) {
        eprint(&support::message(&what));
        return NOT_SUPPORTED;
    }
    let (screen, warning) = set_screen_size(
        env_bytes("COLUMNS").as_deref(),
        env_bytes("LINES").as_deref(),
    );
    let mut pass = Pass {
        warning: &warning,
        state: SfState::default(),
        setup: None,
    };
    let result = arg_parse(&argv, &mut pass);
    match result {
        Ok(Parsed::Run(_)) => {}
        Ok(Parsed::Help(section)) => {
            print(&crate::help::nps_help_text(section.as_deref(), &name));
            return SUCCESS;
        }
        Ok(Parsed::Version) => {
            print(&format!(
                "nps {} (ps from procps-ng 4.0.2), source: {}\n",
                env!("CARGO_PKG_VERSION"),
                source_name(nps_opts.source)
            ));
            return SUCCESS;
        }
        Ok(Parsed::ListSpecifiers) => {
            let mut s = String::new();
            for k in KNOWN.iter().filter(|k| k.printed()) {
                let cut = |t: &str, n: usize| t.chars().take(n).collect::<String>();
                s.push_str(&format!("{:<12} {:<8}\n", cut(k.spec, 12), cut(k.head, 8)));
            }
            print(&s);
            return SUCCESS;
        }
        Ok(Parsed::Info) => {
            eprint(&support::message("option '--info'"));
            return NOT_SUPPORTED;
        }
        Err(ParseError(e)) => {
            eprint(&format!("error: {e}\n"));
            eprint(&crate::help::help_text(None, &name));
            return FAILURE;
        }
    }
    let Some(Setup {
        options: o,
        formats,
        bits,
    }) = pass.setup
    else {
        unreachable!("a parse that ran ends with its setup");
    };
    if let Some(msg) = quick_pid_conflicts(&o, &formats) {
        eprint(msg);
        return FAILURE;
    }
    if let Err(what) = support::check(&o, &formats) {
        eprint(&support::message(&what));
        return NOT_SUPPORTED;
    }
    list(nps_opts.source, o, formats, bits, screen)
}

/// arg_check_conflicts(): what `-q` cannot be combined with.
fn quick_pid_conflicts(o: &Options, f: &Formats) -> Option<&'static str> {
    let quick = o
        .selection
        .iter()
        .filter(|n| n.kind == SelKind::PidQuick)
        .count();
    if quick > 1 {
        return Some("q/-q/--quick-pid can only be used once.\n");
    }
    if quick == 0 {
        return None;
    }
    if o.selection.len() > quick {
        return Some("q/-q/--quick-pid cannot be combined with other selection options.\n");
    }
    if o.forest_type != 0 {
        return Some("q/-q/--quick-pid cannot be used together with forest type listings.\n");
    }
    if !f.sort.is_empty() {
        return Some("q/-q,--quick-pid cannot be used together with sort options.\n");
    }
    if o.negate {
        return Some("q/-q/--quick-pid cannot be used together with negation switches.\n");
    }
    None
}

/// The listing: source, plan, run.
fn list(
    kind: SourceKind,
    o: Options,
    formats: Formats,
    bits: Option<u16>,
    screen: crate::screen::Screen,
) -> u8 {
    let charset = Charset::from_environment();
    let mut source = match open_source(kind) {
        Ok(s) => s,
        Err(e) => return source_failed(&e),
    };
    let global = match source.global() {
        Ok(g) => g,
        Err(e) => return source_failed(&e),
    };
    let plan = make_plan(&o, &formats, bits, &global, screen, me);
    if plan.wants_local_time() {
        crate::render::clock::init_time_zone();
    }
    let mut tty = TtyNamer::new("/proc");
    let mut names = Names::new();
    let mut ctx = Ctx {
        global: &global,
        charset,
        tty: &mut tty,
        names: &mut names,
        now: crate::render::clock::now(),
        forest: Default::default(),
        environ: plan.environ,
    };
    match plan.run(source.as_mut(), &mut ctx, &mut Stdout) {
        Ok(true) => SUCCESS,
        Ok(false) => FAILURE,
        Err(RunError::Source(e)) => source_failed(&e),
        // The write error is reported at exit (stdio::final_status).
        Err(RunError::Io(_)) => FAILURE,
    }
}

/// The plan for a parsed command line on a system described by `global`
/// and `screen`; `me` is asked only when the selection compares our euid
/// or terminal.
pub fn make_plan(
    o: &Options,
    formats: &Formats,
    bits: Option<u16>,
    global: &crate::Global,
    screen: crate::screen::Screen,
    me: impl FnOnce() -> Me,
) -> Plan {
    let pid_len = pid_length(global.pid_max);
    let cols = choose_dimensions(o.screen_cols.unwrap_or(screen.cols), o.w_count);
    let rows = o.screen_rows.unwrap_or(screen.rows);
    // BSD `c` prints the command name where the command line would be;
    // -f's unix_f_option does the reverse for comm.
    let adjust = |mut cols: Vec<crate::render::Column>| {
        for c in &mut cols {
            if o.bsd_c && c.kind == Kind::Args {
                c.kind = Kind::Comm;
            } else if o.unix_f_option && c.kind == Kind::Comm {
                c.kind = Kind::Args;
            }
        }
        cols
    };
    let both = o.thread_flags & crate::parser::tf::SHOW_BOTH != 0;
    let (layout, task_layout) = if both {
        (
            Layout::new(adjust(formats.columns_for(pid_len, false)), cols),
            Some(Layout::new(
                adjust(formats.columns_for(pid_len, true)),
                cols,
            )),
        )
    } else {
        (Layout::new(adjust(formats.columns(pid_len)), cols), None)
    };
    let all = o.all_processes || bits.is_none();
    let me = if (!all && bits.is_some()) || o.our_tty {
        me()
    } else {
        Me { euid: 0, tty: 0 }
    };
    let mut lists = o.selection.clone();
    if o.our_tty {
        lists.insert(
            0,
            crate::select::SelNode {
                kind: SelKind::Tty,
                ids: vec![me.tty as u32 as u64],
                names: Vec::new(),
            },
        );
    }
    let selection = Selection::new(all, bits, o.simple_select, lists, me)
        .running_only(o.running_only)
        .negate(o.negate)
        .hide_kernel_threads(std::env::var_os("LIBPROC_HIDE_KERNEL").is_some());
    Plan {
        layout,
        task_layout,
        thread_flags: o.thread_flags,
        forest: o.forest_type,
        sort: formats.sort.clone(),
        selection,
        headers: o.headers,
        screen_rows: rows,
        environ: o.bsd_e,
    }
}

/// The plan `ps ARGS` would follow on `global` with `cols` columns (no
/// messages printed): for benchmarks and tests.
pub fn plan_for(args: &[&str], global: &crate::Global, cols: usize) -> Result<Plan, String> {
    let argv: Vec<Vec<u8>> = std::iter::once("ps")
        .chain(args.iter().copied())
        .map(|a| a.as_bytes().to_vec())
        .collect();
    let mut state = SfState::default();
    let mut setup = None;
    let parsed = arg_parse(&argv, &mut |o: &mut Options| {
        let formats = process_sf_options(o, &mut state)?;
        let bits = select_bits(o.simple_select, o.prefer_bsd_defaults)?;
        setup = Some((o.clone(), formats, bits));
        Ok(())
    })
    .map_err(|e| e.0)?;
    let (Parsed::Run(_), Some((o, formats, bits))) = (parsed, setup) else {
        return Err("not a listing".into());
    };
    support::check(&o, &formats)?;
    let screen = crate::screen::Screen { cols, rows: 24 };
    Ok(make_plan(&o, &formats, bits, global, screen, || Me {
        euid: 0,
        tty: 0,
    }))
}

/// `nps --fields`.
fn list_fields() -> u8 {
    let fields = match NprocSource::connect().and_then(|mut s| s.fields()) {
        Ok(f) => f,
        Err(e) => return source_failed(&e),
    };
    // A write error is reported at exit (stdio::final_status).
    let _ = crate::netlink::list::print_fields(&mut Stdout, &fields);
    SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn nps_options_come_out() {
        let mut a = argv(&["nps", "--source", "proc", "ax", "--fields"]);
        let o = take_nps_options(&mut a).unwrap();
        assert_eq!(o.source, SourceKind::Proc);
        assert!(o.fields);
        assert_eq!(a, argv(&["nps", "ax"]));
        let mut a = argv(&["nps", "--source=nproc"]);
        assert_eq!(take_nps_options(&mut a).unwrap().source, SourceKind::Nproc);
        let mut a = argv(&["nps", "--source=sys"]);
        assert!(take_nps_options(&mut a).is_err());
        let mut a = argv(&["nps", "--source"]);
        assert!(take_nps_options(&mut a).is_err());
        assert_eq!(myname(b"/usr/bin/nps"), "nps");
    }

    #[test]
    fn only_an_unreachable_family_falls_back() {
        use nproc_genl::Error as G;
        let io = G::Io {
            what: "socket",
            err: std::io::Error::from_raw_os_error(libc::EPERM),
        };
        assert!(unreachable_family(&SourceError::Nproc(G::NoFamily)));
        assert!(unreachable_family(&SourceError::Nproc(io)));
        let denied = G::PermissionDenied {
            cmd: "GET_TASKS",
            msg: None,
        };
        assert!(!unreachable_family(&SourceError::Nproc(denied)));
    }

    #[test]
    fn quick_pids_conflict_as_ps_says() {
        let mut state = SfState::default();
        let mut got = None;
        let v = argv(&["ps", "-q", "1", "--sort", "pid"]);
        let r = arg_parse(&v, &mut |o: &mut Options| {
            got = Some((o.clone(), process_sf_options(o, &mut state)?));
            Ok(())
        });
        assert!(r.is_ok());
        let (o, f) = got.unwrap();
        assert_eq!(
            quick_pid_conflicts(&o, &f),
            Some("q/-q,--quick-pid cannot be used together with sort options.\n")
        );
    }
}
