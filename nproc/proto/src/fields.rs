//! The task fields of `GET_TASKS`.
//!
//! Each value is computed as the file named in [`FieldDesc::proc_source`]
//! computes it, for the same reader: `/proc/PID/stat` for the processes
//! and pid scopes, `/proc/PID/task/TID/stat` for the threads scope. Ids are
//! part of the ABI: append, never renumber.

use crate::{flags, FieldDesc, FieldType, Unit};

/// Task field ids (the attribute types inside an [`crate::attr::TASK`]
/// nest).
pub mod field_id {
    /// `tgid`: status Tgid; stat field 1 of /proc/TGID/stat.
    pub const TGID: u16 = 1;
    /// `tid`: stat field 1 of /proc/PID/task/TID/stat.
    pub const TID: u16 = 2;
    /// `ppid`: stat field 4.
    pub const PPID: u16 = 3;
    /// `pgid`: stat field 5 (-1 when the task is exiting).
    pub const PGID: u16 = 4;
    /// `sid`: stat field 6 (-1 when the task is exiting).
    pub const SID: u16 = 5;
    /// `tty_nr`: stat field 7. Signed as stat prints it: the
    /// `new_encode_dev()` of a minor of 2^19 or more sets bit 31.
    pub const TTY_NR: u16 = 6;
    /// `tpgid`: stat field 8.
    pub const TPGID: u16 = 7;
    /// `uid`: status Uid (real).
    pub const UID: u16 = 8;
    /// `euid`: status Uid (effective).
    pub const EUID: u16 = 9;
    /// `suid`: status Uid (saved).
    pub const SUID: u16 = 10;
    /// `fsuid`: status Uid (filesystem).
    pub const FSUID: u16 = 11;
    /// `gid`: status Gid (real).
    pub const GID: u16 = 12;
    /// `egid`: status Gid (effective).
    pub const EGID: u16 = 13;
    /// `sgid`: status Gid (saved).
    pub const SGID: u16 = 14;
    /// `fsgid`: status Gid (filesystem).
    pub const FSGID: u16 = 15;
    /// `state`: stat field 3.
    pub const STATE: u16 = 16;
    /// `flags`: stat field 9 (PF_*).
    pub const FLAGS: u16 = 17;
    /// `comm`: stat field 2, without the parentheses.
    pub const COMM: u16 = 18;
    /// `priority`: stat field 18.
    pub const PRIORITY: u16 = 19;
    /// `nice`: stat field 19.
    pub const NICE: u16 = 20;
    /// `policy`: stat field 41.
    pub const POLICY: u16 = 21;
    /// `rt_priority`: stat field 40.
    pub const RT_PRIORITY: u16 = 22;
    /// `nr_threads`: stat field 20.
    pub const NR_THREADS: u16 = 23;
    /// `vsize`: stat field 23.
    pub const VSIZE: u16 = 24;
    /// `rss`: stat field 24.
    pub const RSS: u16 = 25;
    /// `rsslim`: stat field 25.
    pub const RSSLIM: u16 = 26;
    /// `shared`: statm field 3.
    pub const SHARED: u16 = 27;
    /// `text`: statm field 4.
    pub const TEXT: u16 = 28;
    /// `data`: statm field 6.
    pub const DATA: u16 = 29;
    /// `locked`: status VmLck, in pages.
    pub const LOCKED: u16 = 30;
    /// `min_flt`: stat field 10.
    pub const MIN_FLT: u16 = 31;
    /// `cmin_flt`: stat field 11.
    pub const CMIN_FLT: u16 = 32;
    /// `maj_flt`: stat field 12.
    pub const MAJ_FLT: u16 = 33;
    /// `cmaj_flt`: stat field 13.
    pub const CMAJ_FLT: u16 = 34;
    /// `utime`: stat field 14.
    pub const UTIME: u16 = 35;
    /// `stime`: stat field 15.
    pub const STIME: u16 = 36;
    /// `cutime`: stat field 16.
    pub const CUTIME: u16 = 37;
    /// `cstime`: stat field 17.
    pub const CSTIME: u16 = 38;
    /// `start_time`: stat field 22.
    pub const START_TIME: u16 = 39;
    /// `processor`: stat field 39.
    pub const PROCESSOR: u16 = 40;
    /// `exit_signal`: stat field 38.
    pub const EXIT_SIGNAL: u16 = 41;
    /// `wchan`: /proc/PID/wchan: the name of the function the task sleeps
    /// in, or `"0"` (running, not permitted, or no symbol).
    pub const WCHAN: u16 = 42;
    /// `resident`: statm field 2, the exact resident set (status `VmRSS`
    /// in pages); stat's `rss` is the same counters read without summing
    /// the per-CPU parts, and `ps` shows `VmRSS`.
    pub const RESIDENT: u16 = 43;
    /// `cmdline`: /proc/PID/cmdline, its first [`crate::CMDLINE_MAX`] bytes.
    /// The last id: the kernel reads it after the others, with no lock held.
    pub const CMDLINE: u16 = 44;
    /// The largest task field id.
    pub const MAX: u16 = CMDLINE;
}

/// Every task field, in id order (index = id - 1).
pub static TASK_FIELDS: [FieldDesc; field_id::MAX as usize] = [
    FieldDesc {
        id: field_id::TGID,
        name: "tgid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: 0,
        proc_source: "status Tgid; stat field 1 of /proc/TGID/stat",
    },
    FieldDesc {
        id: field_id::TID,
        name: "tid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: flags::PER_THREAD,
        proc_source: "stat field 1 of /proc/PID/task/TID/stat",
    },
    FieldDesc {
        id: field_id::PPID,
        name: "ppid",
        ty: FieldType::S32,
        unit: Unit::None,
        flags: 0,
        proc_source: "stat field 4",
    },
    FieldDesc {
        id: field_id::PGID,
        name: "pgid",
        ty: FieldType::S32,
        unit: Unit::None,
        flags: 0,
        proc_source: "stat field 5 (-1 when the task is exiting)",
    },
    FieldDesc {
        id: field_id::SID,
        name: "sid",
        ty: FieldType::S32,
        unit: Unit::None,
        flags: 0,
        proc_source: "stat field 6 (-1 when the task is exiting)",
    },
    FieldDesc {
        id: field_id::TTY_NR,
        name: "tty_nr",
        ty: FieldType::S32,
        unit: Unit::Dev,
        flags: 0,
        proc_source: "stat field 7",
    },
    FieldDesc {
        id: field_id::TPGID,
        name: "tpgid",
        ty: FieldType::S32,
        unit: Unit::None,
        flags: 0,
        proc_source: "stat field 8",
    },
    FieldDesc {
        id: field_id::UID,
        name: "uid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: 0,
        proc_source: "status Uid (real)",
    },
    FieldDesc {
        id: field_id::EUID,
        name: "euid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: 0,
        proc_source: "status Uid (effective)",
    },
    FieldDesc {
        id: field_id::SUID,
        name: "suid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: 0,
        proc_source: "status Uid (saved)",
    },
    FieldDesc {
        id: field_id::FSUID,
        name: "fsuid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: 0,
        proc_source: "status Uid (filesystem)",
    },
    FieldDesc {
        id: field_id::GID,
        name: "gid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: 0,
        proc_source: "status Gid (real)",
    },
    FieldDesc {
        id: field_id::EGID,
        name: "egid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: 0,
        proc_source: "status Gid (effective)",
    },
    FieldDesc {
        id: field_id::SGID,
        name: "sgid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: 0,
        proc_source: "status Gid (saved)",
    },
    FieldDesc {
        id: field_id::FSGID,
        name: "fsgid",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: 0,
        proc_source: "status Gid (filesystem)",
    },
    FieldDesc {
        id: field_id::STATE,
        name: "state",
        ty: FieldType::U32,
        unit: Unit::Char,
        flags: flags::PER_THREAD,
        proc_source: "stat field 3",
    },
    FieldDesc {
        id: field_id::FLAGS,
        name: "flags",
        ty: FieldType::U32,
        unit: Unit::Bitmask,
        flags: flags::PER_THREAD,
        proc_source: "stat field 9 (PF_*)",
    },
    FieldDesc {
        id: field_id::COMM,
        name: "comm",
        ty: FieldType::String,
        unit: Unit::None,
        flags: flags::PER_THREAD,
        proc_source: "stat field 2, without the parentheses",
    },
    FieldDesc {
        id: field_id::PRIORITY,
        name: "priority",
        ty: FieldType::S32,
        unit: Unit::None,
        flags: flags::PER_THREAD,
        proc_source: "stat field 18",
    },
    FieldDesc {
        id: field_id::NICE,
        name: "nice",
        ty: FieldType::S32,
        unit: Unit::None,
        flags: flags::PER_THREAD,
        proc_source: "stat field 19",
    },
    FieldDesc {
        id: field_id::POLICY,
        name: "policy",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: flags::PER_THREAD,
        proc_source: "stat field 41",
    },
    FieldDesc {
        id: field_id::RT_PRIORITY,
        name: "rt_priority",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: flags::PER_THREAD,
        proc_source: "stat field 40",
    },
    FieldDesc {
        id: field_id::NR_THREADS,
        name: "nr_threads",
        ty: FieldType::U32,
        unit: Unit::Count,
        flags: 0,
        proc_source: "stat field 20",
    },
    FieldDesc {
        id: field_id::VSIZE,
        name: "vsize",
        ty: FieldType::U64,
        unit: Unit::Bytes,
        flags: 0,
        proc_source: "stat field 23",
    },
    FieldDesc {
        id: field_id::RSS,
        name: "rss",
        ty: FieldType::U64,
        unit: Unit::Pages,
        flags: 0,
        proc_source: "stat field 24",
    },
    FieldDesc {
        id: field_id::RSSLIM,
        name: "rsslim",
        ty: FieldType::U64,
        unit: Unit::Bytes,
        flags: 0,
        proc_source: "stat field 25",
    },
    FieldDesc {
        id: field_id::SHARED,
        name: "shared",
        ty: FieldType::U64,
        unit: Unit::Pages,
        flags: 0,
        proc_source: "statm field 3",
    },
    FieldDesc {
        id: field_id::TEXT,
        name: "text",
        ty: FieldType::U64,
        unit: Unit::Pages,
        flags: 0,
        proc_source: "statm field 4",
    },
    FieldDesc {
        id: field_id::DATA,
        name: "data",
        ty: FieldType::U64,
        unit: Unit::Pages,
        flags: 0,
        proc_source: "statm field 6",
    },
    FieldDesc {
        id: field_id::LOCKED,
        name: "locked",
        ty: FieldType::U64,
        unit: Unit::Pages,
        flags: 0,
        proc_source: "status VmLck, in pages",
    },
    FieldDesc {
        id: field_id::MIN_FLT,
        name: "min_flt",
        ty: FieldType::U64,
        unit: Unit::Count,
        flags: flags::PER_THREAD,
        proc_source: "stat field 10",
    },
    FieldDesc {
        id: field_id::CMIN_FLT,
        name: "cmin_flt",
        ty: FieldType::U64,
        unit: Unit::Count,
        flags: 0,
        proc_source: "stat field 11",
    },
    FieldDesc {
        id: field_id::MAJ_FLT,
        name: "maj_flt",
        ty: FieldType::U64,
        unit: Unit::Count,
        flags: flags::PER_THREAD,
        proc_source: "stat field 12",
    },
    FieldDesc {
        id: field_id::CMAJ_FLT,
        name: "cmaj_flt",
        ty: FieldType::U64,
        unit: Unit::Count,
        flags: 0,
        proc_source: "stat field 13",
    },
    FieldDesc {
        id: field_id::UTIME,
        name: "utime",
        ty: FieldType::U64,
        unit: Unit::ClockTicks,
        flags: flags::PER_THREAD,
        proc_source: "stat field 14",
    },
    FieldDesc {
        id: field_id::STIME,
        name: "stime",
        ty: FieldType::U64,
        unit: Unit::ClockTicks,
        flags: flags::PER_THREAD,
        proc_source: "stat field 15",
    },
    FieldDesc {
        id: field_id::CUTIME,
        name: "cutime",
        ty: FieldType::U64,
        unit: Unit::ClockTicks,
        flags: 0,
        proc_source: "stat field 16",
    },
    FieldDesc {
        id: field_id::CSTIME,
        name: "cstime",
        ty: FieldType::U64,
        unit: Unit::ClockTicks,
        flags: 0,
        proc_source: "stat field 17",
    },
    FieldDesc {
        id: field_id::START_TIME,
        name: "start_time",
        ty: FieldType::U64,
        unit: Unit::ClockTicksSinceBoot,
        flags: flags::PER_THREAD,
        proc_source: "stat field 22",
    },
    FieldDesc {
        id: field_id::PROCESSOR,
        name: "processor",
        ty: FieldType::U32,
        unit: Unit::None,
        flags: flags::PER_THREAD,
        proc_source: "stat field 39",
    },
    FieldDesc {
        id: field_id::EXIT_SIGNAL,
        name: "exit_signal",
        ty: FieldType::S32,
        unit: Unit::None,
        flags: flags::PER_THREAD,
        proc_source: "stat field 38",
    },
    FieldDesc {
        id: field_id::WCHAN,
        name: "wchan",
        ty: FieldType::String,
        unit: Unit::None,
        flags: flags::PER_THREAD | flags::NEEDS_PTRACE | flags::EXPENSIVE,
        proc_source: "/proc/PID/wchan",
    },
    FieldDesc {
        id: field_id::RESIDENT,
        name: "resident",
        ty: FieldType::U64,
        unit: Unit::Pages,
        flags: 0,
        proc_source: "statm field 2 (status VmRSS, in pages)",
    },
    FieldDesc {
        id: field_id::CMDLINE,
        name: "cmdline",
        ty: FieldType::Bytes,
        unit: Unit::None,
        // Not per thread: every thread reads the same mm. Not guarded:
        // /proc/PID/cmdline is 0444 with no ptrace check. Expensive: it
        // reads the task's memory, which may fault pages in.
        flags: flags::EXPENSIVE,
        proc_source: "/proc/PID/cmdline, its first CMDLINE_MAX bytes",
    },
];
