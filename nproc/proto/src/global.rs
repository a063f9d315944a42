//! The global items of `GET_GLOBAL`: what a `ps` needs besides the
//! tasks to print their values (units, elapsed times, %MEM).
//!
//! All of them are as the caller's namespaces show them (boot time and
//! uptime with the caller's time namespace offsets, as /proc does).

use crate::{FieldDesc, FieldType, Unit};

/// Global item ids (the attribute types inside an
/// [`crate::attr::GLOBAL`] nest).
pub mod global_id {
    /// `clk_tck`: USER_HZ: clock ticks per second, sysconf(_SC_CLK_TCK).
    pub const CLK_TCK: u16 = 1;
    /// `page_size`: PAGE_SIZE, the unit of the page-counted fields.
    pub const PAGE_SIZE: u16 = 2;
    /// `boot_time`: /proc/stat btime.
    pub const BOOT_TIME: u16 = 3;
    /// `uptime`: /proc/uptime, in ns: now on the boot-time clock.
    pub const UPTIME: u16 = 4;
    /// `mem_total`: /proc/meminfo MemTotal.
    pub const MEM_TOTAL: u16 = 5;
    /// `mem_free`: /proc/meminfo MemFree.
    pub const MEM_FREE: u16 = 6;
    /// `mem_available`: /proc/meminfo MemAvailable.
    pub const MEM_AVAILABLE: u16 = 7;
    /// `nr_cpus_online`: CPUs online, sysconf(_SC_NPROCESSORS_ONLN).
    pub const NR_CPUS_ONLINE: u16 = 8;
    /// `pid_max`: /proc/sys/kernel/pid_max (ps sizes its pid columns by it).
    pub const PID_MAX: u16 = 9;
    /// The largest global item id.
    pub const MAX: u16 = PID_MAX;
}

/// Every global item, in id order (index = id - 1).
pub static GLOBAL_ITEMS: [FieldDesc; global_id::MAX as usize] = [
    FieldDesc {
        id: global_id::CLK_TCK,
        name: "clk_tck",
        ty: FieldType::U32,
        unit: Unit::Count,
        flags: 0,
        proc_source: "USER_HZ: clock ticks per second, sysconf(_SC_CLK_TCK)",
    },
    FieldDesc {
        id: global_id::PAGE_SIZE,
        name: "page_size",
        ty: FieldType::U32,
        unit: Unit::Bytes,
        flags: 0,
        proc_source: "PAGE_SIZE, the unit of the page-counted fields",
    },
    FieldDesc {
        id: global_id::BOOT_TIME,
        name: "boot_time",
        ty: FieldType::U64,
        unit: Unit::SecondsSinceEpoch,
        flags: 0,
        proc_source: "/proc/stat btime",
    },
    FieldDesc {
        id: global_id::UPTIME,
        name: "uptime",
        ty: FieldType::U64,
        unit: Unit::NsSinceBoot,
        flags: 0,
        proc_source: "/proc/uptime, in ns: now on the boot-time clock",
    },
    FieldDesc {
        id: global_id::MEM_TOTAL,
        name: "mem_total",
        ty: FieldType::U64,
        unit: Unit::KiB,
        flags: 0,
        proc_source: "/proc/meminfo MemTotal",
    },
    FieldDesc {
        id: global_id::MEM_FREE,
        name: "mem_free",
        ty: FieldType::U64,
        unit: Unit::KiB,
        flags: 0,
        proc_source: "/proc/meminfo MemFree",
    },
    FieldDesc {
        id: global_id::MEM_AVAILABLE,
        name: "mem_available",
        ty: FieldType::U64,
        unit: Unit::KiB,
        flags: 0,
        proc_source: "/proc/meminfo MemAvailable",
    },
    FieldDesc {
        id: global_id::NR_CPUS_ONLINE,
        name: "nr_cpus_online",
        ty: FieldType::U32,
        unit: Unit::Count,
        flags: 0,
        proc_source: "CPUs online, sysconf(_SC_NPROCESSORS_ONLN)",
    },
    FieldDesc {
        id: global_id::PID_MAX,
        name: "pid_max",
        ty: FieldType::U32,
        unit: Unit::Count,
        flags: 0,
        proc_source: "/proc/sys/kernel/pid_max",
    },
];
