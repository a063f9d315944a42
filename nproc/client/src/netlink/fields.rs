//! Which nproc task fields each column needs: the field bitmap `nps`
//! sends, so that the kernel computes and sends only those.

use crate::render::Kind;
use nproc_proto::field_id as f;
use nproc_proto::FieldBitmap;

/// The field every record needs whatever the columns: its identity.
/// What the selection reads is its own to say (`Selection::fields`).
pub const IDENTITY: &[u16] = &[f::TGID];

/// The fields column `kind` reads. The match is exhaustive on purpose: a
/// new column does not compile until it says what it needs.
pub fn for_kind(kind: Kind) -> &'static [u16] {
    match kind {
        Kind::Tgid | Kind::Nop => &[],
        Kind::Tid => &[f::TID],
        Kind::Ppid => &[f::PPID],
        Kind::Pgid => &[f::PGID],
        Kind::Sid => &[f::SID],
        Kind::Tpgid => &[f::TPGID],
        Kind::Euid | Kind::Euser => &[f::EUID],
        Kind::Ruid | Kind::Ruser => &[f::UID],
        Kind::Suid | Kind::Suser => &[f::SUID],
        Kind::Fuid | Kind::Fuser => &[f::FSUID],
        Kind::Egid | Kind::Egroup => &[f::EGID],
        Kind::Rgid | Kind::Rgroup => &[f::GID],
        Kind::Sgroup => &[f::SGID],
        Kind::Fgroup => &[f::FSGID],
        // stat_letters(): state, nice, locked pages, session and process
        // group leadership, the terminal's process group, threads.
        Kind::Stat => &[
            f::STATE,
            f::NICE,
            f::LOCKED,
            f::SID,
            f::PGID,
            f::TPGID,
            f::NR_THREADS,
        ],
        Kind::State => &[f::STATE],
        Kind::Vsz | Kind::Sz => &[f::VSIZE],
        // pr_rss(), pr_pmem(): status VmRSS, the exact sum (`resident`),
        // not stat's rss.
        Kind::Rss | Kind::Pmem => &[f::RESIDENT],
        Kind::Time | Kind::Times | Kind::BsdTime => &[f::UTIME, f::STIME],
        Kind::Nlwp => &[f::NR_THREADS],
        Kind::Tty => &[f::TTY_NR, f::TID],
        Kind::Nice => &[f::POLICY, f::NICE],
        Kind::Pri | Kind::Opri | Kind::Priority => &[f::PRIORITY],
        Kind::Psr => &[f::PROCESSOR],
        Kind::Flag => &[f::FLAGS],
        Kind::Class | Kind::Sched => &[f::POLICY],
        Kind::Rtprio => &[f::POLICY, f::RT_PRIORITY],
        Kind::MinFlt => &[f::MIN_FLT],
        Kind::MajFlt => &[f::MAJ_FLT],
        Kind::Comm => &[f::COMM],
        // fill_cmdline_cvt(): the command line, else [comm] (<defunct>
        // for a zombie).
        // START_TIME: a long command line is re-read from /proc, and the
        // start time tells whether the pid still names the same task.
        Kind::Args => &[f::CMDLINE, f::COMM, f::STATE, f::START_TIME],
        Kind::Etime | Kind::Etimes | Kind::Stime | Kind::Start | Kind::BsdStart | Kind::Lstart => {
            &[f::START_TIME]
        }
        Kind::Pcpu | Kind::C | Kind::Cp => &[f::START_TIME, f::UTIME, f::STIME],
        Kind::Wchan => &[f::WCHAN],
    }
}

/// The bitmap for a run showing `kinds`, before the selection's fields.
pub fn bitmap(kinds: impl IntoIterator<Item = Kind>) -> FieldBitmap {
    let mut b = FieldBitmap::default();
    for id in IDENTITY {
        b.set(*id);
    }
    for k in kinds {
        for id in for_kind(k) {
            b.set(*id);
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_holds_only_what_the_columns_read() {
        let b = bitmap([Kind::Tgid, Kind::Wchan, Kind::Comm]);
        for id in [f::TGID, f::WCHAN, f::COMM] {
            assert!(b.contains(id), "{id}");
        }
        for id in [
            f::CMDLINE,
            f::UTIME,
            f::VSIZE,
            f::STATE,
            f::TID,
            f::PPID,
            f::SID,
            f::TTY_NR,
            f::EUID,
        ] {
            assert!(!b.contains(id), "{id}");
        }
        let b = bitmap([Kind::Args]);
        assert!(b.contains(f::CMDLINE) && b.contains(f::COMM) && !b.contains(f::WCHAN));
    }
}
