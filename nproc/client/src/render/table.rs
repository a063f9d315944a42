//! The columns `nps` knows: the rows of procps-ng 4.0.2's `format_array`
//! (src/ps/output.c) for the specifiers nps supports, with their headers,
//! widths and justification.

use super::columns::{Just, Kind};

/// One `format_array` row.
#[derive(Clone, Copy, Debug)]
pub struct ColumnDef {
    /// The `-o` specifier.
    pub spec: &'static str,
    /// The default header.
    pub head: &'static str,
    /// The default width.
    pub width: usize,
    /// Justification.
    pub just: Just,
    /// `CF_PIDMAX`: widen to the digits of pid_max.
    pub pidmax: bool,
    /// The printer.
    pub kind: Kind,
}

const fn c(
    spec: &'static str,
    head: &'static str,
    width: usize,
    just: Just,
    pidmax: bool,
    kind: Kind,
) -> ColumnDef {
    ColumnDef {
        spec,
        head,
        width,
        just,
        pidmax,
        kind,
    }
}

use Just::{Left as L, Right as R, Unlimited as U, User as N};

/// The supported rows of `format_array`, copied with their headers, widths
/// and flags.
pub const COLUMNS: &[ColumnDef] = &[
    c("%cpu", "%CPU", 4, R, false, Kind::Pcpu),
    c("%mem", "%MEM", 4, R, false, Kind::Pmem),
    c("addr", "ADDR", 4, R, false, Kind::Nop),
    c("addr_1", "ADDR", 1, L, false, Kind::Nop),
    c("args", "COMMAND", 27, U, false, Kind::Args),
    c("bsdstart", "START", 6, R, false, Kind::BsdStart),
    c("bsdtime", "TIME", 6, R, false, Kind::BsdTime),
    c("c", "C", 2, R, false, Kind::C),
    c("class", "CLS", 3, L, false, Kind::Class),
    c("cls", "CLS", 3, R, false, Kind::Class),
    c("cmd", "CMD", 27, U, false, Kind::Args),
    c("comm", "COMMAND", 15, U, false, Kind::Comm),
    c("command", "COMMAND", 27, U, false, Kind::Args),
    c("cp", "CP", 3, R, false, Kind::Cp),
    c("cputime", "TIME", 8, R, false, Kind::Time),
    c("cputimes", "TIME", 8, R, false, Kind::Times),
    c("egid", "EGID", 5, R, false, Kind::Egid),
    c("egroup", "EGROUP", 8, N, false, Kind::Egroup),
    c("etime", "ELAPSED", 11, R, false, Kind::Etime),
    c("etimes", "ELAPSED", 7, R, false, Kind::Etimes),
    c("euid", "EUID", 5, R, false, Kind::Euid),
    c("euser", "EUSER", 8, N, false, Kind::Euser),
    c("f", "F", 1, R, false, Kind::Flag),
    c("fgroup", "FGROUP", 8, N, false, Kind::Fgroup),
    c("flag", "F", 1, R, false, Kind::Flag),
    c("flags", "F", 1, R, false, Kind::Flag),
    c("fsgroup", "FSGROUP", 8, N, false, Kind::Fgroup),
    c("fsuid", "FSUID", 5, R, false, Kind::Fuid),
    c("fsuser", "FSUSER", 8, N, false, Kind::Fuser),
    c("fuid", "FUID", 5, R, false, Kind::Fuid),
    c("fuser", "FUSER", 8, N, false, Kind::Fuser),
    c("gid", "GID", 5, R, false, Kind::Egid),
    c("group", "GROUP", 8, N, false, Kind::Egroup),
    c("lstart", "STARTED", 24, R, false, Kind::Lstart),
    c("lwp", "LWP", 5, R, true, Kind::Tid),
    c("maj_flt", "MAJFL", 6, R, false, Kind::MajFlt),
    c("majflt", "MAJFLT", 6, R, false, Kind::MajFlt),
    c("min_flt", "MINFL", 6, R, false, Kind::MinFlt),
    c("minflt", "MINFLT", 6, R, false, Kind::MinFlt),
    c("ni", "NI", 3, R, false, Kind::Nice),
    c("nice", "NI", 3, R, false, Kind::Nice),
    c("nlwp", "NLWP", 4, R, false, Kind::Nlwp),
    c("opri", "PRI", 3, R, false, Kind::Opri),
    c("pcpu", "%CPU", 4, R, false, Kind::Pcpu),
    c("pgid", "PGID", 5, R, true, Kind::Pgid),
    c("pgrp", "PGRP", 5, R, true, Kind::Pgid),
    c("pid", "PID", 5, R, true, Kind::Tgid),
    c("pmem", "%MEM", 4, R, false, Kind::Pmem),
    c("policy", "POL", 3, L, false, Kind::Class),
    c("ppid", "PPID", 5, R, true, Kind::Ppid),
    c("pri", "PRI", 3, R, false, Kind::Pri),
    c("priority", "PRI", 3, R, false, Kind::Priority),
    c("psr", "PSR", 3, R, false, Kind::Psr),
    c("rgid", "RGID", 5, R, false, Kind::Rgid),
    c("rgroup", "RGROUP", 8, N, false, Kind::Rgroup),
    c("rss", "RSS", 5, R, false, Kind::Rss),
    c("rssize", "RSS", 5, R, false, Kind::Rss),
    c("rsz", "RSZ", 5, R, false, Kind::Rss),
    c("rtprio", "RTPRIO", 6, R, false, Kind::Rtprio),
    c("ruid", "RUID", 5, R, false, Kind::Ruid),
    c("ruser", "RUSER", 8, N, false, Kind::Ruser),
    c("s", "S", 1, L, false, Kind::State),
    c("sched", "SCH", 3, R, false, Kind::Sched),
    c("sess", "SESS", 5, R, true, Kind::Sid),
    c("session", "SESS", 5, R, true, Kind::Sid),
    c("sgroup", "SGROUP", 8, N, false, Kind::Sgroup),
    c("sid", "SID", 5, R, true, Kind::Sid),
    c("spid", "SPID", 5, R, true, Kind::Tid),
    c("start", "STARTED", 8, R, false, Kind::Start),
    c("start_time", "START", 5, R, false, Kind::Stime),
    c("stat", "STAT", 4, L, false, Kind::Stat),
    c("state", "S", 1, L, false, Kind::State),
    c("stime", "STIME", 5, R, false, Kind::Stime),
    c("suid", "SUID", 5, R, false, Kind::Suid),
    c("suser", "SUSER", 8, N, false, Kind::Suser),
    c("svuid", "SVUID", 5, R, false, Kind::Suid),
    c("sz", "SZ", 5, R, false, Kind::Sz),
    c("tgid", "TGID", 5, R, true, Kind::Tgid),
    c("thcount", "THCNT", 5, R, false, Kind::Nlwp),
    c("tid", "TID", 5, R, true, Kind::Tid),
    c("time", "TIME", 8, R, false, Kind::Time),
    c("tname", "TTY", 8, L, false, Kind::Tty),
    c("tpgid", "TPGID", 5, R, true, Kind::Tpgid),
    c("tt", "TT", 8, L, false, Kind::Tty),
    c("tty", "TT", 8, L, false, Kind::Tty),
    c("ucmd", "CMD", 15, U, false, Kind::Comm),
    c("ucomm", "COMMAND", 15, U, false, Kind::Comm),
    c("uid", "UID", 5, R, false, Kind::Euid),
    c("uid_hack", "UID", 8, N, false, Kind::Euser),
    c("uname", "USER", 8, N, false, Kind::Euser),
    c("user", "USER", 8, N, false, Kind::Euser),
    c("vsize", "VSZ", 6, R, false, Kind::Vsz),
    c("vsz", "VSZ", 6, R, false, Kind::Vsz),
    c("wchan", "WCHAN", 6, Just::Wchan, false, Kind::Wchan),
];

/// The row for a specifier.
pub fn lookup(spec: &str) -> Option<&'static ColumnDef> {
    COLUMNS.iter().find(|c| c.spec == spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        for w in COLUMNS.windows(2) {
            assert!(w[0].spec < w[1].spec, "{} !< {}", w[0].spec, w[1].spec);
        }
    }
}
