//! nproc-proto: the wire format of `nproc`, a generic netlink family that
//! dumps process information (what `/proc/PID/stat`, `status`, `statm` and
//! `wchan` show) in binary, with self-describing fields.
//!
//! This crate is the one source of truth for the format. The kernel
//! (`CONFIG_NPROC`, kernel/series/07-nproc) compiles it unchanged and
//! serves [`TASK_FIELDS`] and [`GLOBAL_ITEMS`] from it in
//! `NPROC_CMD_GET_FIELDS`; userspace (`nproc-genl`) decodes replies with
//! it. The C header `include/uapi/linux/nproc.h` of the series is derived
//! from the constants here, and a unit test fails when the two differ.
//!
//! # Messages
//!
//! All integers are in host byte order, as everywhere in netlink.
//!
//! - [`Cmd::GetFields`] (dump): one message per field, each with one
//!   [`attr::FIELD`] nest of [`field_attr`] attributes. Task fields come
//!   first, then the [`GLOBAL_ITEMS`] ([`field_attr::SET`] tells which).
//! - [`Cmd::GetGlobal`] (do): one message with an [`attr::GLOBAL`] nest
//!   whose attribute types are [`GLOBAL_ITEMS`] ids.
//! - [`Cmd::GetTasks`] (dump): request [`attr::FIELDS`] (a bitmap of field
//!   ids, required), [`attr::SCOPE`] (a [`Scope`], default processes) and
//!   [`attr::PID`] (for [`Scope::Pid`] and [`Scope::Children`]); reply a
//!   first message with no attribute (built in the sender's `sendmsg()`,
//!   before the kernel knows who reads), then one message per task with
//!   one [`attr::TASK`] nest whose attribute types are the requested field
//!   ids, in increasing id order. Only the socket's opener, with the
//!   credentials it opened it with, may send and read.
//!
//! The lookup rules of the kernel's no_std crates apply: no allocation, no
//! panics, no floats; everything here is `const` data and `const fn`.
#![no_std]
#![deny(missing_docs)]
// No panics. The list is a shorter copy of the one kept by hand in each
// crate root a kernel build compiles: kallsyms-fast/src/lib.rs and
// kallsyms-fast-shared/src/lib.rs carry it whole. Cargo's
// `[workspace.lints]` cannot hold it: it cannot say
// `cfg_attr(not(test), ...)`, and the kernel build (the nproc patch)
// compiles this crate's sources with rustc directly, never reading
// Cargo.toml. Change the copies together.
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::panic,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::cast_possible_truncation
    )
)]

mod fields;
mod global;

pub use fields::{field_id, TASK_FIELDS};
pub use global::{global_id, GLOBAL_ITEMS};

/// The generic netlink family name (`GENL_NAMSIZ` is 16 with the NUL).
pub const FAMILY_NAME: &str = "nproc";

/// The family version this crate describes (`genlmsghdr.version`).
pub const FAMILY_VERSION: u8 = 1;

/// Longest field or item name, in bytes, without the terminating NUL; the
/// kernel sends names as `NLA_NUL_STRING`.
pub const NAME_MAX: usize = 15;

/// The most bytes of a command line ([`field_id::CMDLINE`]) the kernel
/// sends: the first `CMDLINE_MAX` bytes of what `/proc/PID/cmdline`
/// reads. A value of exactly this length may be cut; a client that needs
/// more reads `/proc/PID/cmdline` for that task.
///
/// Why 2 KiB: one task is one netlink message, and a message that does
/// not fit an empty dump buffer ends the dump with an error. Netlink
/// guarantees only `NLMSG_GOODSIZE` (a page minus the skb overhead, about
/// 3.7 KiB with 4 KiB pages) per buffer, and every other field of a task
/// together (wchan up to `KSYM_NAME_LEN`, comm, 41 numbers) takes up to
/// about 1.1 KiB. 2 KiB also bounds the work per task: at most one page
/// of the task's memory is touched (faulted in, possibly) for it.
/// Command lines longer than that are rare (`ps` shows them cut to the
/// terminal anyway), and the fallback keeps them exact.
pub const CMDLINE_MAX: usize = 2048;

/// Commands (`genlmsghdr.cmd`).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// Describe every field and global item (dump).
    GetFields = 1,
    /// The global block: clock ticks per second, page size, boot time,
    /// memory totals (do).
    GetGlobal = 2,
    /// One message per task with the requested fields (dump).
    GetTasks = 3,
}

/// The largest command id.
pub const CMD_MAX: u8 = Cmd::GetTasks as u8;

/// Top-level attribute ids (requests and replies share one space).
pub mod attr {
    /// `NLA_NESTED`, reply to `GET_FIELDS`: one field's description, made
    /// of [`crate::field_attr`] attributes.
    pub const FIELD: u16 = 1;
    /// `NLA_BINARY`, `GET_TASKS` request: the field bitmap, an array of
    /// host-order `u32` words; bit `id % 32` of word `id / 32` asks for
    /// field `id`. From 1 to [`crate::BITMAP_WORDS_MAX`] words; a set bit
    /// that names no field is an error, so a client learns at once that
    /// the kernel is older than its table.
    pub const FIELDS: u16 = 2;
    /// `NLA_U32`, `GET_TASKS` request: a [`crate::Scope`]; absent means
    /// [`crate::Scope::Processes`].
    pub const SCOPE: u16 = 3;
    /// `NLA_U32`, `GET_TASKS` request: the pid for [`crate::Scope::Pid`]
    /// and [`crate::Scope::Children`], in the caller's pid namespace.
    pub const PID: u16 = 4;
    /// `NLA_NESTED`, reply to `GET_TASKS`: one task; attribute type =
    /// field id.
    pub const TASK: u16 = 5;
    /// `NLA_NESTED`, reply to `GET_GLOBAL`: attribute type = global item
    /// id.
    pub const GLOBAL: u16 = 6;
    /// `NLA_S32`, `GET_TASKS` and `GET_GLOBAL` request, required: a file
    /// descriptor, in the sender, of the root directory of a procfs mount,
    /// opened for reading (not `O_PATH`). The request sees what that
    /// mount shows the reader: its pid namespace numbers the pids, its
    /// `hidepid=` and `gid=` decide which tasks are listed and which only
    /// by pid, and `subset=pid` refuses `GET_GLOBAL`. No procfs, no
    /// process information.
    pub const PROCFS_FD: u16 = 7;
    /// The largest top-level attribute id.
    pub const MAX: u16 = PROCFS_FD;
}

/// Attributes inside an [`attr::FIELD`] nest.
pub mod field_attr {
    /// `NLA_U32`: the field's id (the attribute type of its values).
    pub const ID: u16 = 1;
    /// `NLA_NUL_STRING`: the field's name, at most [`crate::NAME_MAX`]
    /// bytes.
    pub const NAME: u16 = 2;
    /// `NLA_U32`: a [`crate::FieldType`].
    pub const TYPE: u16 = 3;
    /// `NLA_U32`: a [`crate::Unit`].
    pub const UNIT: u16 = 4;
    /// `NLA_U32`: [`crate::flags`] bits.
    pub const FLAGS: u16 = 5;
    /// `NLA_U32`: a [`crate::FieldSet`]: a task field or a global item.
    pub const SET: u16 = 6;
    /// The largest id in this space.
    pub const MAX: u16 = SET;
}

/// How a value is encoded in its attribute.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// 4 bytes, unsigned.
    U32 = 1,
    /// 8 bytes, unsigned (sent with `nla_put_u64_64bit()`, so a pad
    /// attribute of type 0 may precede it; decoders skip type 0).
    U64 = 2,
    /// 4 bytes, two's complement: what /proc prints signed (nice,
    /// priority, pgid and tpgid when there is none, tty_nr).
    S32 = 3,
    /// NUL-terminated string (comm, wchan).
    String = 4,
    /// Raw bytes, the attribute's whole payload, NULs included and none
    /// added (a command line: `NUL`-separated arguments).
    Bytes = 5,
}

impl FieldType {
    /// The type for a wire value, if known.
    pub const fn from_u32(v: u32) -> Option<Self> {
        match v {
            1 => Some(Self::U32),
            2 => Some(Self::U64),
            3 => Some(Self::S32),
            4 => Some(Self::String),
            5 => Some(Self::Bytes),
            _ => None,
        }
    }

    /// The name clients show (`--fields`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::U32 => "u32",
            Self::U64 => "u64",
            Self::S32 => "s32",
            Self::String => "string",
            Self::Bytes => "bytes",
        }
    }
}

/// What a value counts.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// An identifier, an enumeration or text: no unit.
    None = 0,
    /// A plain count (threads, page faults).
    Count = 1,
    /// Pages of the global item `page_size` bytes.
    Pages = 2,
    /// Bytes.
    Bytes = 3,
    /// KiB (1024 bytes).
    KiB = 4,
    /// Clock ticks, the global item `clk_tck` per second (`USER_HZ`, what
    /// `sysconf(_SC_CLK_TCK)` returns).
    ClockTicks = 5,
    /// Clock ticks since boot, in the boot-time clock of the caller's time
    /// namespace (as `/proc/PID/stat` field 22).
    ClockTicksSinceBoot = 6,
    /// Nanoseconds since boot, boot-time clock of the caller's time
    /// namespace.
    NsSinceBoot = 7,
    /// Seconds since the epoch.
    SecondsSinceEpoch = 8,
    /// A device number in the kernel's `new_encode_dev()` encoding.
    Dev = 9,
    /// One ASCII character (the task state letter).
    Char = 10,
    /// A bit mask (`PF_*` task flags).
    Bitmask = 11,
}

impl Unit {
    /// The unit for a wire value, if known.
    pub const fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::None),
            1 => Some(Self::Count),
            2 => Some(Self::Pages),
            3 => Some(Self::Bytes),
            4 => Some(Self::KiB),
            5 => Some(Self::ClockTicks),
            6 => Some(Self::ClockTicksSinceBoot),
            7 => Some(Self::NsSinceBoot),
            8 => Some(Self::SecondsSinceEpoch),
            9 => Some(Self::Dev),
            10 => Some(Self::Char),
            11 => Some(Self::Bitmask),
            _ => None,
        }
    }

    /// The name clients show (`--fields`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "-",
            Self::Count => "count",
            Self::Pages => "pages",
            Self::Bytes => "bytes",
            Self::KiB => "KiB",
            Self::ClockTicks => "clock-ticks",
            Self::ClockTicksSinceBoot => "clock-ticks-since-boot",
            Self::NsSinceBoot => "ns-since-boot",
            Self::SecondsSinceEpoch => "seconds-since-epoch",
            Self::Dev => "dev",
            Self::Char => "char",
            Self::Bitmask => "bitmask",
        }
    }
}

/// Field flags ([`field_attr::FLAGS`]).
pub mod flags {
    /// Guarded like `/proc/PID/wchan`: the value is what that file shows
    /// a reader who may not `ptrace_may_access(PTRACE_MODE_READ_FSCREDS)`
    /// the task (`0`, or the string `"0"`), with the credentials of the
    /// one who sent the request.
    pub const NEEDS_PTRACE: u32 = 1 << 0;
    /// Differs between the threads of a process. In
    /// [`crate::Scope::Threads`] each thread reports its own value; in the
    /// other scopes the value is the one `/proc/PID/stat` shows: the
    /// thread-group leader's own, or the sum over the threads for the
    /// fault counts and CPU times.
    pub const PER_THREAD: u32 = 1 << 1;
    /// Costs far more than the others per task (an unwind, a symbol
    /// lookup): ask for it only when shown.
    pub const EXPENSIVE: u32 = 1 << 2;
    /// Every flag this version defines.
    pub const ALL: u32 = NEEDS_PTRACE | PER_THREAD | EXPENSIVE;
}

/// Which table a [`FieldDesc`] belongs to ([`field_attr::SET`]).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldSet {
    /// A per-task field of `GET_TASKS`.
    Task = 1,
    /// An item of the `GET_GLOBAL` block.
    Global = 2,
}

impl FieldSet {
    /// The set for a wire value, if known.
    pub const fn from_u32(v: u32) -> Option<Self> {
        match v {
            1 => Some(Self::Task),
            2 => Some(Self::Global),
            _ => None,
        }
    }
}

/// `GET_TASKS` scopes ([`attr::SCOPE`]).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every process (thread group) of the caller's pid namespace, as
    /// `/proc/PID` lists them: one record per thread-group leader.
    Processes = 1,
    /// Every thread of every process, as `/proc/PID/task/TID`.
    Threads = 2,
    /// The one task with pid [`attr::PID`], as `/proc/PID` (which also
    /// answers for a thread id that it does not list).
    Pid = 3,
    /// The processes whose parent process is [`attr::PID`] (their `ppid`
    /// field), as `ps --ppid PID` selects them.
    Children = 4,
}

impl Scope {
    /// The scope for a wire value, if known.
    pub const fn from_u32(v: u32) -> Option<Self> {
        match v {
            1 => Some(Self::Processes),
            2 => Some(Self::Threads),
            3 => Some(Self::Pid),
            4 => Some(Self::Children),
            _ => None,
        }
    }
}

/// One field or global item: what `GET_FIELDS` sends for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldDesc {
    /// Attribute type of its values; ids of one set are dense from 1.
    pub id: u16,
    /// Name, `[a-z0-9_]`, at most [`NAME_MAX`] bytes, unique in its set.
    pub name: &'static str,
    /// Encoding.
    pub ty: FieldType,
    /// Unit.
    pub unit: Unit,
    /// [`flags`] bits.
    pub flags: u32,
    /// Where the value comes from in procfs, for people (not sent).
    pub proc_source: &'static str,
}

/// The largest task field id.
pub const FIELD_ID_MAX: u16 = field_id::MAX;

/// Words of the [`attr::FIELDS`] bitmap needed for every field id of this
/// version (`FIELD_ID_MAX / 32 + 1`).
pub const BITMAP_WORDS: usize = (FIELD_ID_MAX as usize / 32) + 1;

/// The longest [`attr::FIELDS`] bitmap the kernel accepts, in words: room
/// for later versions' ids (their bits must still be clear).
pub const BITMAP_WORDS_MAX: usize = 8;

// The kernel accepts every bitmap this crate builds.
const _: () = assert!(BITMAP_WORDS <= BITMAP_WORDS_MAX);

/// The task field with this id. A `const fn`, so that a decoder can fix a
/// field's entry when compiling.
#[inline]
pub const fn task_field(id: u16) -> Option<&'static FieldDesc> {
    find(&TASK_FIELDS, id)
}

/// The global item with this id.
pub const fn global_item(id: u16) -> Option<&'static FieldDesc> {
    find(&GLOBAL_ITEMS, id)
}

/// Ids are dense from 1, so the table index is `id - 1`; the checks keep a
/// corrupt or future id from indexing out of bounds, and a table out of
/// id order from answering for the wrong id.
#[inline]
const fn find(table: &'static [FieldDesc], id: u16) -> Option<&'static FieldDesc> {
    let Some(i) = id.checked_sub(1) else {
        return None;
    };
    // `split_at_checked` is rustc 1.80 (the kernel's minimum is 1.78):
    // `split_at` behind the same check, so its panic is unreachable.
    let i = i as usize;
    if i > table.len() {
        return None;
    }
    let (_, rest) = table.split_at(i);
    match rest.first() {
        Some(d) if d.id == id => Some(d),
        _ => None,
    }
}

/// The task field named `name`.
pub fn task_field_by_name(name: &str) -> Option<&'static FieldDesc> {
    TASK_FIELDS.iter().find(|d| d.name == name)
}

/// A field bitmap of [`BITMAP_WORDS`] words ([`attr::FIELDS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FieldBitmap(pub [u32; BITMAP_WORDS]);

impl FieldBitmap {
    /// Every field of [`TASK_FIELDS`].
    pub fn all() -> Self {
        let mut b = Self::default();
        for d in TASK_FIELDS.iter() {
            b.set(d.id);
        }
        b
    }

    /// Asks for field `id`; false (and no change) when `id` is outside the
    /// bitmap.
    pub fn set(&mut self, id: u16) -> bool {
        let word = usize::from(id / 32);
        match self.0.get_mut(word) {
            Some(w) => {
                *w |= 1 << (id % 32);
                true
            }
            None => false,
        }
    }

    /// Whether field `id` is asked for.
    pub fn contains(&self, id: u16) -> bool {
        self.0
            .get(usize::from(id / 32))
            .is_some_and(|w| w & (1 << (id % 32)) != 0)
    }

    /// The attribute payload: the words in host byte order.
    pub fn to_ne_bytes(&self) -> [u8; BITMAP_WORDS * 4] {
        let mut out = [0u8; BITMAP_WORDS * 4];
        for (chunk, w) in out.chunks_exact_mut(4).zip(self.0.iter()) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        out
    }
}
