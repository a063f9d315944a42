//! ps's command line: a port of procps-ng 4.0.2's src/ps/parser.c
//! (`arg_parse()` and what it calls), with its option letters, its mixing
//! of UNIX (`-ef`), BSD (`aux`) and GNU (`--sort=-rss`) forms, its second,
//! BSD-only pass when the first fails, and its error texts.
//!
//! The result records what was asked, as ps's globals would; what nps does
//! not implement is refused later (`crate::support`), so that a command
//! line ps rejects gets ps's error, and one ps accepts gets either ps's
//! output or nps's "not supported".

use crate::select::{ss, SelKind, SelNode};
use std::ffi::CString;

/// The format flags (`FF_*`).
pub mod ff {
    /// `-f`.
    pub const UF: u32 = 0x0001;
    /// `-j` under a personality with a SysV `-j` format (never here).
    pub const UJ: u32 = 0x0002;
    /// `-l`.
    pub const UL: u32 = 0x0004;
    /// BSD `j`.
    pub const BJ: u32 = 0x0008;
    /// BSD `l`.
    pub const BL: u32 = 0x0010;
    /// BSD `s`.
    pub const BS: u32 = 0x0020;
    /// BSD `u`.
    pub const BU: u32 = 0x0040;
    /// BSD `v`.
    pub const BV: u32 = 0x0080;
    /// BSD `X`.
    pub const LX: u32 = 0x0100;
    /// BSD `m` under the old Linux personality (never here).
    pub const LM: u32 = 0x0200;
    /// `--context`.
    pub const FC: u32 = 0x0400;
}

/// The format modifiers (`FM_*`).
pub mod fm {
    /// `-c`.
    pub const C: u32 = 0x0001;
    /// `-j`.
    pub const J: u32 = 0x0002;
    /// `-y`.
    pub const Y: u32 = 0x0004;
    /// `-P`.
    pub const P: u32 = 0x0010;
    /// `-M`, `-Z`, BSD `Z`.
    pub const M: u32 = 0x0020;
    /// `-F`.
    pub const F: u32 = 0x0080;
}

/// The thread flags (`TF_*`).
pub mod tf {
    /// BSD `H`.
    pub const B_H: u32 = 0x0001;
    /// BSD `m` (and `M`).
    pub const B_M: u32 = 0x0002;
    /// `-m`.
    pub const U_M: u32 = 0x0004;
    /// `-T`.
    pub const U_T: u32 = 0x0008;
    /// `-L`.
    pub const U_L: u32 = 0x0010;
    /// Show the process lines.
    pub const SHOW_PROC: u32 = 0x0100;
    /// Show the thread lines.
    pub const SHOW_TASK: u32 = 0x0200;
    /// Distinct process and thread column lists (`-m`, `m`).
    pub const SHOW_BOTH: u32 = 0x0400;
    /// Threads sort among processes (`H`).
    pub const LOOSE_TASKS: u32 = 0x0800;
    /// `-L`/`-T` with `H`/`m`/`-m`: a thread column is required.
    pub const MUST_USE: u32 = 0x4000;
}

/// Where a deferred format or sort list came from (`SF_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SfCode {
    /// `-O`.
    UpperO,
    /// `-o`.
    LowerO,
    /// BSD `O`: a sort or a format.
    BsdO,
    /// BSD `o`.
    BsdLowerO,
    /// `--sort`, BSD `k`.
    Sort,
    /// `--format`.
    Format,
}

/// `--headers`, `--no-headers`, BSD `h` (`HEAD_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Headers {
    /// One header (ps's default).
    #[default]
    Single,
    /// None.
    None,
    /// One per screenful.
    Multi,
}

/// What the command line asked for: ps's globals after `arg_parse()`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-A`, `-e` (or `ax`, set by the selection setup).
    pub all_processes: bool,
    /// `SS_*` bits.
    pub simple_select: u32,
    /// The selection lists, newest first as ps keeps them.
    pub selection: Vec<SelNode>,
    /// `-N`, `--deselect`.
    pub negate: bool,
    /// BSD `r`.
    pub running_only: bool,
    /// `FF_*` bits.
    pub format_flags: u32,
    /// `FM_*` bits.
    pub format_modifiers: u32,
    /// `TF_*` bits.
    pub thread_flags: u32,
    /// `b'u'` (`-H`), `b'g'` (`--forest`), `b'b'` (BSD `f`), or 0.
    pub forest_type: u8,
    /// The header style.
    pub headers: Headers,
    /// Format and sort lists, in the order given.
    pub sf_list: Vec<(Vec<u8>, SfCode)>,
    /// `w` and `-w` count.
    pub w_count: u32,
    /// `--cols`/`--columns`/`--width`.
    pub screen_cols: Option<usize>,
    /// `--rows`/`--lines`.
    pub screen_rows: Option<usize>,
    /// BSD `c`: the command name instead of the command line.
    pub bsd_c: bool,
    /// BSD `e`: the environment after the command.
    pub bsd_e: bool,
    /// BSD `S`, `--cumulative`.
    pub include_dead_children: bool,
    /// BSD `n`.
    pub numeric: bool,
    /// The options nps refuses (`crate::support`), each as the parse read
    /// it (`-M`, `-Z`, `Z`, `S`, `--cumulative`, `n`, `s`, `v`, `X`, the
    /// second pass's `m`, `--context`), in command-line order. A dashed
    /// argument that only the second, BSD-only pass accepts (`-aZx`) is
    /// read as BSD letters, so its letters are named without the dash.
    pub refused: Vec<&'static str>,
    /// The first quick-pid list's option (`-q`, `q`, `--quick-pid`).
    pub quick_as: Option<&'static str>,
    /// The first option asking for threads after processes (`-m`, `m`,
    /// `M`).
    pub after_as: Option<&'static str>,
    /// Some option chose BSD defaults (`prefer_bsd_defaults`).
    pub prefer_bsd_defaults: bool,
    /// `-F` or `-f`.
    pub unix_f_option: bool,
    /// BSD `T` or a bare `t`: select processes on our terminal.
    pub our_tty: bool,
}

/// What `arg_parse()` ends in.
#[derive(Debug)]
pub enum Parsed {
    /// A listing (boxed: the options are most of the enum's size).
    Run(Box<Options>),
    /// `--help [SECTION]`: ps's help text on stdout, exit 0.
    Help(Option<Vec<u8>>),
    /// `-V`, `V`, `--version`.
    Version,
    /// BSD `L`: the format specifiers.
    ListSpecifiers,
    /// `--info`: ps's debugging information.
    Info,
}

/// A failed parse: ps prints `error: TEXT`, then its usage on stderr, and
/// exits 1.
#[derive(Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

const ARG_GNU: u8 = 0;
const ARG_END: u8 = 1;
const ARG_PGRP: u8 = 2;
const ARG_SYSV: u8 = 3;
const ARG_PID: u8 = 4;
const ARG_BSD: u8 = 5;
const ARG_FAIL: u8 = 6;
const ARG_SESS: u8 = 7;

/// arg_type().
fn arg_type(s: &[u8]) -> u8 {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let c = at(0);
    if c.is_ascii_alphabetic() {
        return ARG_BSD;
    }
    if c.is_ascii_digit() {
        return ARG_PID;
    }
    if c == b'+' {
        return ARG_SESS;
    }
    if c != b'-' {
        return ARG_FAIL;
    }
    let c = at(1);
    if c.is_ascii_alphabetic() {
        return ARG_SYSV;
    }
    if c.is_ascii_digit() {
        return ARG_PGRP;
    }
    if c != b'-' {
        return ARG_FAIL;
    }
    let c = at(2);
    if c.is_ascii_alphabetic() {
        return ARG_GNU;
    }
    if c == 0 {
        return ARG_END;
    }
    ARG_FAIL
}

/// Why an option stopped the parse: an error, or an early exit.
enum Stop {
    Err(String),
    Done(Parsed),
}

impl From<&str> for Stop {
    fn from(s: &str) -> Self {
        Stop::Err(s.to_string())
    }
}

impl From<String> for Stop {
    fn from(s: String) -> Self {
        Stop::Err(s)
    }
}

struct Parser<'a> {
    argv: &'a [Vec<u8>],
    thisarg: usize,
    force_bsd: bool,
    o: Options,
}

/// One list item's parser (`parse_pid`, `parse_uid`...).
type ItemFn = fn(&[u8], bool) -> Result<u64, &'static str>;

impl<'a> Parser<'a> {
    fn arg(&self, i: usize) -> &'a [u8] {
        &self.argv[i]
    }

    /// get_opt_arg(): the rest of this argument, else the next argument
    /// (unless it is empty or missing).
    fn get_opt_arg(&mut self, pos: usize) -> Option<Vec<u8>> {
        let cur = self.arg(self.thisarg);
        if pos + 1 < cur.len() {
            return Some(cur[pos + 1..].to_vec());
        }
        if self.thisarg + 2 > self.argv.len() {
            return None;
        }
        if self.arg(self.thisarg + 1).is_empty() {
            return None;
        }
        self.thisarg += 1;
        Some(self.arg(self.thisarg).to_vec())
    }

    /// grab_gnu_arg(): after `=` or `:`, else the next argument.
    fn grab_gnu_arg(&mut self, rest: &[u8]) -> Option<Vec<u8>> {
        match rest.first() {
            Some(b'=' | b':') => {
                return (rest.len() > 1).then(|| rest[1..].to_vec());
            }
            Some(_) => return None,
            None => {}
        }
        if self.thisarg + 2 > self.argv.len() {
            return None;
        }
        if self.arg(self.thisarg + 1).is_empty() {
            return None;
        }
        self.thisarg += 1;
        Some(self.arg(self.thisarg).to_vec())
    }

    /// parse_list() for a selection list of `kind`.
    fn list(&mut self, arg: &[u8], kind: SelKind) -> Result<(), Stop> {
        let node = match kind {
            SelKind::Comm => SelNode {
                kind,
                ids: Vec::new(),
                names: split_list(arg)
                    .ok_or("improper list")?
                    .into_iter()
                    .map(|s| s[..s.len().min(63)].to_vec())
                    .collect(),
            },
            _ => {
                let f: ItemFn = match kind {
                    SelKind::Ruid | SelKind::Euid => parse_uid,
                    SelKind::Rgid | SelKind::Egid => parse_gid,
                    SelKind::Tty => parse_tty,
                    _ => parse_pid_item,
                };
                let items = split_list(arg).ok_or("improper list")?;
                let mut ids = Vec::with_capacity(items.len());
                for it in items {
                    ids.push(f(it, self.o.negate)?);
                }
                SelNode {
                    kind,
                    ids,
                    names: Vec::new(),
                }
            }
        };
        self.o.selection.insert(0, node);
        Ok(())
    }

    fn defer(&mut self, arg: Vec<u8>, code: SfCode) {
        self.o.sf_list.push((arg, code));
    }

    fn parse_sysv_option(&mut self) -> Result<(), Stop> {
        let cur = self.arg(self.thisarg);
        let mut pos = 0;
        while pos + 1 < cur.len() {
            pos += 1;
            let c = cur[pos];
            let o = &mut self.o;
            match c {
                b'A' | b'e' => o.all_processes = true,
                b'C' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("list of command names must follow -C")?;
                    return self.list(&arg, SelKind::Comm);
                }
                b'F' => {
                    o.format_modifiers |= fm::F;
                    o.format_flags |= ff::UF;
                    o.unix_f_option = true;
                }
                b'G' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("list of real groups must follow -G")?;
                    return self.list(&arg, SelKind::Rgid);
                }
                b'H' => o.forest_type = b'u',
                b'L' => o.thread_flags |= tf::U_L,
                b'M' | b'Z' => {
                    o.format_modifiers |= fm::M;
                    o.refused.push(if c == b'M' { "-M" } else { "-Z" });
                }
                b'N' => o.negate = true,
                b'O' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("format or sort specification must follow -O")?;
                    self.defer(arg, SfCode::UpperO);
                    return Ok(());
                }
                b'P' => o.format_modifiers |= fm::P,
                b'T' => o.thread_flags |= tf::U_T,
                b'U' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("list of real users must follow -U")?;
                    return self.list(&arg, SelKind::Ruid);
                }
                b'V' => {
                    self.exclusive(b"-V")?;
                    return Err(Stop::Done(Parsed::Version));
                }
                b'a' => o.simple_select |= ss::U_A,
                b'c' => o.format_modifiers |= fm::C,
                b'd' => o.simple_select |= ss::U_D,
                b'f' => {
                    o.format_flags |= ff::UF;
                    o.unix_f_option = true;
                }
                b'g' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("list of session leaders OR effective group names must follow -g")?;
                    if self.list(&arg, SelKind::Sess).is_ok() {
                        return Ok(());
                    }
                    if self.list(&arg, SelKind::Egid).is_ok() {
                        return Ok(());
                    }
                    return Err("list of session leaders OR effective group IDs was invalid".into());
                }
                // No personality nps takes has a SysV -j format.
                b'j' => o.format_modifiers |= fm::J,
                b'l' => o.format_flags |= ff::UL,
                b'm' => {
                    o.thread_flags |= tf::U_M;
                    o.after_as.get_or_insert("-m");
                }
                b'o' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("format specification must follow -o")?;
                    self.defer(arg, SfCode::LowerO);
                    return Ok(());
                }
                b'p' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("list of process IDs must follow -p")?;
                    return self.list(&arg, SelKind::Pid);
                }
                b'q' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("List of process IDs must follow -q.")?;
                    self.o.quick_as.get_or_insert("-q");
                    return self.list(&arg, SelKind::PidQuick);
                }
                b's' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("list of session IDs must follow -s")?;
                    return self.list(&arg, SelKind::Sess);
                }
                b't' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("list of terminals (pty, tty...) must follow -t")?;
                    return self.list(&arg, SelKind::Tty);
                }
                b'u' => {
                    let arg = self
                        .get_opt_arg(pos)
                        .ok_or("list of users must follow -u")?;
                    return self.list(&arg, SelKind::Euid);
                }
                b'w' => o.w_count += 1,
                // Only the SVR4 and HP-UX personalities take -x.
                b'x' => return Err("must set personality to get -x option".into()),
                b'y' => o.format_modifiers |= fm::Y,
                b'-' => return Err("embedded '-' among SysV options makes no sense".into()),
                _ => return Err("unsupported SysV option".into()),
            }
        }
        Ok(())
    }

    fn parse_bsd_option(&mut self) -> Result<(), Stop> {
        let cur = self.arg(self.thisarg);
        // A leading '-' is skipped by the loop's pre-increment (ps starts
        // at flagptr = the argument, or one before it).
        let mut pos: isize = if cur.first() == Some(&b'-') {
            if !self.force_bsd {
                return Err("cannot happen - problem #1".into());
            }
            0
        } else {
            if self.force_bsd {
                return Err("second chance parse failed, not BSD or SysV".into());
            }
            -1
        };
        while ((pos + 1) as usize) < cur.len() {
            pos += 1;
            let p = pos as usize;
            let c = cur[p];
            let o = &mut self.o;
            match c {
                b'0'..=b'9' => return self.list(&cur[p..], SelKind::Pid),
                b'H' => o.thread_flags |= tf::B_H,
                b'L' => {
                    self.exclusive(b"L")?;
                    return Err(Stop::Done(Parsed::ListSpecifiers));
                }
                b'M' => {
                    o.thread_flags |= tf::B_M;
                    o.after_as.get_or_insert("M");
                }
                b'O' => {
                    let arg = self
                        .get_opt_arg(p)
                        .ok_or("format or sort specification must follow O")?;
                    self.defer(arg, SfCode::BsdO);
                    return Ok(());
                }
                b'S' => {
                    o.include_dead_children = true;
                    o.refused.push("S");
                }
                b'T' => o.our_tty = true,
                b'U' => {
                    let arg = self.get_opt_arg(p).ok_or("list of users must follow U")?;
                    return self.list(&arg, SelKind::Euid);
                }
                b'V' => {
                    self.exclusive(b"V")?;
                    return Err(Stop::Done(Parsed::Version));
                }
                b'W' => {
                    return Err("obsolete W option not supported (you have a /dev/drum?)".into())
                }
                b'X' => {
                    o.format_flags |= ff::LX;
                    o.refused.push("X");
                }
                b'Z' => {
                    o.format_modifiers |= fm::M;
                    o.refused.push("Z");
                }
                b'a' => o.simple_select |= ss::B_A,
                b'c' => o.bsd_c = true,
                b'e' => o.bsd_e = true,
                b'f' => o.forest_type = b'b',
                b'g' => o.simple_select |= ss::B_G,
                b'h' => {
                    if o.headers != Headers::Single {
                        return Err("only one heading option may be specified".into());
                    }
                    // Not the BSD personality: no header.
                    o.headers = Headers::None;
                }
                b'j' => o.format_flags |= ff::BJ,
                b'k' => {
                    let arg = self
                        .get_opt_arg(p)
                        .ok_or("long sort specification must follow 'k'")?;
                    self.defer(arg, SfCode::Sort);
                    return Ok(());
                }
                b'l' => o.format_flags |= ff::BL,
                // The second pass sets PER_OLD_m: m is the old Linux
                // memory format then; otherwise threads.
                b'm' if self.force_bsd => {
                    o.format_flags |= ff::LM;
                    o.refused.push("m");
                }
                b'm' => {
                    o.thread_flags |= tf::B_M;
                    o.after_as.get_or_insert("m");
                }
                b'n' => {
                    o.numeric = true;
                    o.refused.push("n");
                }
                b'o' => {
                    let arg = self
                        .get_opt_arg(p)
                        .ok_or("format specification must follow o")?;
                    self.defer(arg, SfCode::BsdLowerO);
                    return Ok(());
                }
                b'p' => {
                    let arg = self
                        .get_opt_arg(p)
                        .ok_or("list of process IDs must follow p")?;
                    return self.list(&arg, SelKind::Pid);
                }
                b'q' => {
                    let arg = self
                        .get_opt_arg(p)
                        .ok_or("List of process IDs must follow q.")?;
                    self.o.quick_as.get_or_insert("q");
                    return self.list(&arg, SelKind::PidQuick);
                }
                b'r' => o.running_only = true,
                b's' => {
                    o.format_flags |= ff::BS;
                    o.refused.push("s");
                }
                b't' => {
                    let Some(arg) = self.get_opt_arg(p) else {
                        self.o.our_tty = true;
                        return Ok(());
                    };
                    return self.list(&arg, SelKind::Tty);
                }
                b'u' => o.format_flags |= ff::BU,
                b'v' => {
                    o.format_flags |= ff::BV;
                    o.refused.push("v");
                }
                b'w' => o.w_count += 1,
                b'x' => o.simple_select |= ss::B_X,
                b'-' => return Err("embedded '-' among BSD options makes no sense".into()),
                _ => return Err("unsupported option (BSD syntax)".into()),
            }
        }
        Ok(())
    }

    /// `exclusive(x)`: the option must be the only argument.
    fn exclusive(&self, x: &[u8]) -> Result<(), Stop> {
        if self.argv.len() != 2 || self.argv[1] != x {
            return Err(Stop::Err(format!(
                "the option is exclusive: {}",
                String::from_utf8_lossy(x)
            )));
        }
        Ok(())
    }

    fn parse_gnu_option(&mut self) -> Result<(), Stop> {
        let cur = self.arg(self.thisarg);
        let s = &cur[2..];
        let sl = s
            .iter()
            .position(|&b| b == b':' || b == b'=')
            .unwrap_or(s.len());
        if sl > 15 {
            return Err("unknown gnu long option".into());
        }
        let name = &s[..sl];
        let rest = &s[sl..];
        let no_arg = |msg: &str| -> Result<(), Stop> {
            if rest.is_empty() {
                Ok(())
            } else {
                Err(msg.into())
            }
        };
        let o_headers = self.o.headers;
        match name {
            b"Group" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("list of real groups must follow --Group")?;
                self.list(&a, SelKind::Rgid)
            }
            b"User" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("list of real users must follow --User")?;
                self.list(&a, SelKind::Ruid)
            }
            b"cols" | b"width" | b"columns" => {
                let a = self.grab_gnu_arg(rest);
                match a.as_deref().and_then(strtol0) {
                    Some(t) if t > 0 && t < 2_000_000_000 => {
                        self.o.screen_cols = Some(t as usize);
                        Ok(())
                    }
                    _ => Err("number of columns must follow --cols, --width, or --columns".into()),
                }
            }
            b"cumulative" => {
                no_arg("option --cumulative does not take an argument")?;
                self.o.include_dead_children = true;
                self.o.refused.push("--cumulative");
                Ok(())
            }
            b"deselect" => {
                no_arg("option --deselect does not take an argument")?;
                self.o.negate = true;
                Ok(())
            }
            b"no-header" | b"no-headers" | b"no-heading" | b"no-headings" | b"noheader"
            | b"noheaders" | b"noheading" | b"noheadings" => {
                no_arg("option --no-heading does not take an argument")?;
                if o_headers != Headers::Single {
                    return Err("only one heading option may be specified".into());
                }
                self.o.headers = Headers::None;
                Ok(())
            }
            b"header" | b"headers" | b"heading" | b"headings" => {
                no_arg("option --heading does not take an argument")?;
                if o_headers != Headers::Single {
                    return Err("only one heading option may be specified".into());
                }
                self.o.headers = Headers::Multi;
                Ok(())
            }
            b"forest" => {
                no_arg("option --forest does not take an argument")?;
                self.o.forest_type = b'g';
                Ok(())
            }
            b"format" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("format specification must follow --format")?;
                self.defer(a, SfCode::Format);
                Ok(())
            }
            b"group" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("list of effective groups must follow --group")?;
                self.list(&a, SelKind::Egid)
            }
            b"help" => {
                let a = self.grab_gnu_arg(rest);
                Err(Stop::Done(Parsed::Help(a)))
            }
            b"info" => {
                self.exclusive(b"--info")?;
                Err(Stop::Done(Parsed::Info))
            }
            b"pid" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("list of process IDs must follow --pid")?;
                self.list(&a, SelKind::Pid)
            }
            b"quick-pid" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("List of process IDs must follow --quick-pid.")?;
                self.o.quick_as.get_or_insert("--quick-pid");
                self.list(&a, SelKind::PidQuick)
            }
            b"ppid" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("list of process IDs must follow --ppid")?;
                self.list(&a, SelKind::Ppid)
            }
            b"rows" | b"lines" => {
                let a = self.grab_gnu_arg(rest);
                match a.as_deref().and_then(strtol0) {
                    Some(t) if t > 0 && t < 2_000_000_000 => {
                        self.o.screen_rows = Some(t as usize);
                        Ok(())
                    }
                    _ => Err("number of rows must follow --rows or --lines".into()),
                }
            }
            b"sid" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("some sid thing(s) must follow --sid")?;
                self.list(&a, SelKind::Sess)
            }
            b"sort" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("long sort specification must follow --sort")?;
                self.defer(a, SfCode::Sort);
                Ok(())
            }
            b"tty" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("list of ttys must follow --tty")?;
                self.list(&a, SelKind::Tty)
            }
            b"user" => {
                let a = self
                    .grab_gnu_arg(rest)
                    .ok_or("list of effective users must follow --user")?;
                self.list(&a, SelKind::Euid)
            }
            b"version" => {
                self.exclusive(b"--version")?;
                Err(Stop::Done(Parsed::Version))
            }
            b"context" => {
                self.o.format_flags |= ff::FC;
                self.o.refused.push("--context");
                Ok(())
            }
            _ => Err("unknown gnu long option".into()),
        }
    }

    /// parse_trailing_pids(): every argument from here on is a pid,
    /// `-PGRP` or `+SESSION`.
    fn parse_trailing_pids(&mut self) -> Result<(), Stop> {
        let (mut pids, mut grps, mut sids) = (Vec::new(), Vec::new(), Vec::new());
        for data in &self.argv[self.thisarg..] {
            match data.first() {
                Some(b'-') => grps.push(parse_pid_item(&data[1..], false)?),
                Some(b'+') => sids.push(parse_pid_item(&data[1..], false)?),
                _ => pids.push(parse_pid_item(data, false)?),
            }
        }
        self.thisarg = self.argv.len() - 1;
        for (ids, kind) in [
            (pids, SelKind::Pid),
            (grps, SelKind::Pgrp),
            (sids, SelKind::Sess),
        ] {
            if !ids.is_empty() {
                self.o.selection.insert(
                    0,
                    SelNode {
                        kind,
                        ids,
                        names: Vec::new(),
                    },
                );
            }
        }
        Ok(())
    }

    fn parse_all_options(&mut self) -> Result<(), Stop> {
        self.thisarg = 0;
        loop {
            self.thisarg += 1;
            if self.thisarg >= self.argv.len() {
                return Ok(());
            }
            match arg_type(self.arg(self.thisarg)) {
                ARG_GNU => self.parse_gnu_option()?,
                ARG_SYSV if !self.force_bsd => self.parse_sysv_option()?,
                ARG_SYSV | ARG_BSD => {
                    self.o.prefer_bsd_defaults = true;
                    self.parse_bsd_option()?
                }
                ARG_PGRP | ARG_SESS | ARG_PID => {
                    self.o.prefer_bsd_defaults = true;
                    self.parse_trailing_pids()?
                }
                _ => return Err("garbage option".into()),
            }
        }
    }

    /// thread_option_check().
    fn thread_option_check(&mut self) -> Result<(), Stop> {
        let o = &mut self.o;
        let t = &mut o.thread_flags;
        if *t == 0 {
            *t = tf::SHOW_PROC;
            return Ok(());
        }
        if o.forest_type != 0 {
            return Err("thread display conflicts with forest display".into());
        }
        if *t & tf::B_H != 0 && *t & (tf::B_M | tf::U_M) != 0 {
            return Err("thread flags conflict; can't use H with m or -m".into());
        }
        if *t & tf::B_M != 0 && *t & tf::U_M != 0 {
            return Err("thread flags conflict; can't use both m and -m".into());
        }
        if *t & tf::U_L != 0 && *t & tf::U_T != 0 {
            return Err("thread flags conflict; can't use both -L and -T".into());
        }
        if *t & tf::B_H != 0 {
            *t |= tf::SHOW_PROC | tf::LOOSE_TASKS;
        }
        if *t & (tf::B_M | tf::U_M) != 0 {
            *t |= tf::SHOW_PROC | tf::SHOW_TASK | tf::SHOW_BOTH;
        }
        if *t & (tf::U_T | tf::U_L) != 0 {
            if *t & (tf::B_M | tf::U_M | tf::B_H) != 0 {
                *t |= tf::MUST_USE;
            } else {
                *t |= tf::SHOW_TASK;
            }
        }
        Ok(())
    }
}

/// What the caller does around each pass of [`arg_parse`].
pub trait Passes {
    /// A pass begins (ps's reset_global(), which prints its screen-size
    /// warning each time).
    fn begin(&mut self) {}

    /// The options parsed: ps's process_sf_options() and
    /// select_bits_setup(), whose errors also fail the pass.
    fn finish(&mut self, o: &mut Options) -> Result<(), String>;
}

impl<F: FnMut(&mut Options) -> Result<(), String>> Passes for F {
    fn finish(&mut self, o: &mut Options) -> Result<(), String> {
        self(o)
    }
}

/// One pass of `arg_parse()`: options, thread check, then the caller's
/// `finish`.
fn one_pass(argv: &[Vec<u8>], force_bsd: bool, after: &mut dyn Passes) -> Result<Options, Stop> {
    after.begin();
    let mut p = Parser {
        argv,
        thisarg: 0,
        force_bsd,
        o: Options {
            prefer_bsd_defaults: force_bsd,
            ..Options::default()
        },
    };
    p.parse_all_options()?;
    p.thread_option_check()?;
    after.finish(&mut p.o)?;
    Ok(p.o)
}

/// arg_parse(): the first pass takes UNIX, BSD and GNU forms; when it
/// fails, a second pass takes every dashed option as BSD (`ps -aux`), and
/// when that fails too, the first pass's error is ps's message.
///
/// `after` runs ps's format, sort and selection setup at the end of each
/// pass, as their errors also send ps to the second pass.
pub fn arg_parse(argv: &[Vec<u8>], after: &mut dyn Passes) -> Result<Parsed, ParseError> {
    let first = match one_pass(argv, false, after) {
        Ok(o) => return Ok(Parsed::Run(Box::new(o))),
        Err(Stop::Done(p)) => return Ok(p),
        Err(Stop::Err(e)) => e,
    };
    match one_pass(argv, true, after) {
        Ok(o) => Ok(Parsed::Run(Box::new(o))),
        Err(Stop::Done(p)) => Ok(p),
        Err(Stop::Err(_)) => Err(ParseError(first)),
    }
}

/// parse_list()'s checks and split: items separated by one blank, comma or
/// tab; an empty item anywhere (including the end) is "improper".
pub fn split_list(arg: &[u8]) -> Option<Vec<&[u8]>> {
    let is_sep = |b: &u8| matches!(b, b' ' | b',' | b'\t');
    if arg.is_empty() {
        return None;
    }
    let items: Vec<&[u8]> = arg.split(is_sep).collect();
    if items.iter().any(|s| s.is_empty()) {
        return None;
    }
    Some(items)
}

/// strtoul(s, &end, 0) that must consume all of `s` (leading blanks and a
/// sign allowed, as C's); `None` when it does not. Out of range saturates
/// as strtoul does.
pub fn strtoul0(s: &[u8]) -> Option<u64> {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let t = &s[i..];
    let (digits, radix) = if (t.starts_with(b"0x") || t.starts_with(b"0X"))
        && t.get(2).is_some_and(|b| b.is_ascii_hexdigit())
    {
        (&t[2..], 16)
    } else if t.len() > 1 && t[0] == b'0' {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() {
        // No digits: strtoul() leaves its end at the start, which is the
        // end only for an empty string (then the value is 0).
        return s.is_empty().then_some(0);
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    for &b in digits {
        let d = (b as char).to_digit(radix)? as u64;
        match v.checked_mul(radix as u64).and_then(|v| v.checked_add(d)) {
            Some(n) => v = n,
            None => overflow = true,
        }
    }
    if overflow {
        return Some(u64::MAX);
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// strtol(s, &end, 0) that must consume all of a non-empty `s`; values
/// beyond `i64` saturate as strtol does.
pub fn strtol0(s: &[u8]) -> Option<i64> {
    let trimmed = s.iter().position(|b| !b" \t\n\r\x0b\x0c".contains(b))?;
    let t = &s[trimmed..];
    let (neg, body) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if body.is_empty() || body.first() == Some(&b'-') || body.first() == Some(&b'+') {
        return None;
    }
    let mag = strtoul0(body)?;
    Some(if neg {
        if mag > i64::MAX as u64 {
            i64::MIN
        } else {
            -(mag as i64)
        }
    } else if mag > i64::MAX as u64 {
        i64::MAX
    } else {
        mag as i64
    })
}

/// parse_pid(): `strtoul(..., 0)` of the whole item, in 1..=0x7fffffff.
fn parse_pid_item(s: &[u8], _negate: bool) -> Result<u64, &'static str> {
    let n = strtoul0(s).ok_or("process ID list syntax error")?;
    if !(1..=0x7fff_ffff).contains(&n) {
        return Err("process ID out of range");
    }
    Ok(n)
}

/// parse_uid(): a number, else a login name.
fn parse_uid(s: &[u8], negate: bool) -> Result<u64, &'static str> {
    let num = match strtoul0(s) {
        Some(n) => n,
        None => match name_to_id(s, false) {
            Some(id) => id.into(),
            None if negate => u64::MAX,
            None => return Err("user name does not exist"),
        },
    };
    if !negate && num > 0xffff_fffe {
        return Err("user ID out of range");
    }
    Ok(num)
}

/// parse_gid(): a number, else a group name.
fn parse_gid(s: &[u8], negate: bool) -> Result<u64, &'static str> {
    let num = match strtoul0(s) {
        Some(n) => n,
        None => match name_to_id(s, true) {
            Some(id) => id.into(),
            None if negate => u64::MAX,
            None => return Err("group name does not exist"),
        },
    };
    if !negate && num > 0xffff_fffe {
        return Err("group ID out of range");
    }
    Ok(num)
}

/// getpwnam() or getgrnam().
fn name_to_id(name: &[u8], group: bool) -> Option<u32> {
    let c = CString::new(name).ok()?;
    // SAFETY: c is NUL-terminated; the returned records are read at once,
    // before any other NSS call (nps has one thread).
    unsafe {
        if group {
            let g = libc::getgrnam(c.as_ptr());
            (!g.is_null()).then(|| (*g).gr_gid)
        } else {
            let p = libc::getpwnam(c.as_ptr());
            (!p.is_null()).then(|| (*p).pw_uid)
        }
    }
}

/// stat(path): the device of a character device, or why not.
fn stat_rdev(path: &[u8]) -> Option<Result<u64, &'static str>> {
    let c = CString::new(path).ok()?;
    // SAFETY: an all-zero stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: c is NUL-terminated and st is a live stat.
    if unsafe { libc::stat(c.as_ptr(), &mut st) } < 0 {
        return None;
    }
    Some(if st.st_mode & libc::S_IFMT == libc::S_IFCHR {
        Ok(st.st_rdev)
    } else {
        Err("list member was not a TTY")
    })
}

/// parse_tty(): a path, or a name under /dev in ps's order; `-` and `?`
/// mean no terminal. The result is the kernel's dev_t, which
/// [`crate::select`] compares as the stat's tty_nr.
fn parse_tty(s: &[u8], _negate: bool) -> Result<u64, &'static str> {
    if s.first() == Some(&b'/') {
        return match stat_rdev(s) {
            Some(r) => r,
            None => Err("TTY could not be found"),
        };
    }
    for (pre, post) in [
        (&b"/dev/pts/"[..], &b""[..]),
        (b"/dev/", b""),
        (b"/dev/tty", b""),
        (b"/dev/pty", b""),
        (b"/dev/", b"nsole"),
    ] {
        let path = [pre, s, post].concat();
        if path.len() >= 4096 {
            continue;
        }
        if let Some(r) = stat_rdev(&path) {
            return r;
        }
    }
    if s == b"-" || s == b"?" {
        return Ok(0);
    }
    if s.len() == 1 && stat_rdev(s).is_some() {
        return Ok(0);
    }
    Err("TTY could not be found")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Parsed, ParseError> {
        let mut v = vec![b"ps".to_vec()];
        v.extend(args.iter().map(|a| a.as_bytes().to_vec()));
        arg_parse(&v, &mut |_: &mut Options| Ok(()))
    }

    fn run(args: &[&str]) -> Options {
        match parse(args) {
            Ok(Parsed::Run(o)) => *o,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn forms_mix_as_ps_allows() {
        let o = run(&["aux"]);
        assert_eq!(o.simple_select, ss::B_A | ss::B_X);
        assert_eq!(o.format_flags, ff::BU);
        assert!(o.prefer_bsd_defaults);
        // "-aux": -a, then -u takes "x" as a user: no such user, so the
        // second pass reads it as BSD "aux".
        let o = run(&["-aux"]);
        assert_eq!(o.format_flags, ff::BU);
        let o = run(&["-eo", "pid,comm", "--sort=-rss"]);
        assert!(o.all_processes);
        assert_eq!(
            o.sf_list,
            vec![
                (b"pid,comm".to_vec(), SfCode::LowerO),
                (b"-rss".to_vec(), SfCode::Sort)
            ]
        );
        let o = run(&["-u", "root", "-C", "bash,sh"]);
        assert_eq!(o.selection.len(), 2);
        assert_eq!(o.selection[0].kind, SelKind::Comm);
        assert_eq!(o.selection[1].ids, vec![0]);
        let o = run(&["p", "1", "--ppid", "2", "12", "-3", "+4"]);
        let kinds: Vec<_> = o.selection.iter().map(|n| n.kind).collect();
        assert_eq!(
            kinds,
            vec![
                SelKind::Sess,
                SelKind::Pgrp,
                SelKind::Pid,
                SelKind::Ppid,
                SelKind::Pid
            ]
        );
        let o = run(&["-eLf"]);
        assert_eq!(o.thread_flags, tf::U_L | tf::SHOW_TASK);
        let o = run(&["--cols", "0x20", "--width=100"]);
        assert_eq!(o.screen_cols, Some(100));
    }

    #[test]
    fn errors_are_the_first_pass_texts() {
        let err = |a: &[&str]| parse(a).unwrap_err().0;
        assert_eq!(err(&["-Q"]), "unsupported SysV option");
        // Tolerated as BSD "x" by the second pass, as ps tolerates it.
        assert!(matches!(parse(&["-x"]), Ok(Parsed::Run(o)) if o.simple_select == ss::B_X));
        assert_eq!(err(&["-x", "-Q"]), "must set personality to get -x option");
        assert_eq!(err(&["--bogus"]), "unknown gnu long option");
        assert_eq!(
            err(&["--no-headers", "--no-headers"]),
            "only one heading option may be specified"
        );
        assert_eq!(err(&["--"]), "garbage option");
        assert_eq!(
            err(&["--cols", "2147483648"]),
            "number of columns must follow --cols, --width, or --columns"
        );
        assert_eq!(err(&["-p", "0"]), "process ID out of range");
        assert_eq!(err(&["-p", "1,,2"]), "improper list");
        // A trailing "-" is process group "": strtoul's 0.
        assert_eq!(err(&["80", "-"]), "process ID out of range");
        assert_eq!(err(&["-V", "x"]), "the option is exclusive: -V");
        assert_eq!(
            err(&["-LT"]),
            "thread flags conflict; can't use both -L and -T"
        );
        assert_eq!(
            err(&["-H", "-L"]),
            "thread display conflicts with forest display"
        );
    }

    #[test]
    fn early_exits() {
        assert!(matches!(parse(&["--help"]), Ok(Parsed::Help(None))));
        assert!(matches!(parse(&["--help=s"]), Ok(Parsed::Help(Some(s))) if s == b"s"));
        assert!(matches!(parse(&["-V"]), Ok(Parsed::Version)));
        assert!(matches!(parse(&["L"]), Ok(Parsed::ListSpecifiers)));
    }

    #[test]
    fn numbers_as_c_reads_them() {
        assert_eq!(strtoul0(b"0x10"), Some(16));
        assert_eq!(strtoul0(b"010"), Some(8));
        assert_eq!(strtoul0(b" 7"), Some(7));
        assert_eq!(strtoul0(b"7 "), None);
        assert_eq!(strtoul0(b""), Some(0));
        assert_eq!(strtoul0(b"+"), None);
        assert_eq!(strtoul0(b" "), None);
        assert_eq!(strtoul0(b"99999999999999999999999"), Some(u64::MAX));
        assert_eq!(strtol0(b"-5"), Some(-5));
        assert_eq!(strtol0(b""), None);
        assert_eq!(strtol0(b"-"), None);
        assert_eq!(split_list(b"1,2 3"), Some(vec![&b"1"[..], b"2", b"3"]));
        assert_eq!(split_list(b"1,"), None);
    }

    #[test]
    fn pid_items() {
        assert_eq!(parse_pid_item(b"0x10", false), Ok(16));
        assert_eq!(parse_pid_item(b"0", false), Err("process ID out of range"));
        assert_eq!(
            parse_pid_item(b"abc", false),
            Err("process ID list syntax error")
        );
    }
}
