//! The values `ps` needs about one task and about the whole system.
//!
//! A [`Task`] holds raw kernel values, in the kernel's own units, exactly as
//! `/proc/PID/stat`, `/proc/PID/status`, `/proc/PID/wchan` and
//! `/proc/PID/cmdline` expose them (fs/proc/array.c, fs/proc/base.c). Every
//! transformation procps applies (escaping, bracketing, tty names, unit
//! conversions) lives in [`crate::render`], so that each source (the nproc
//! netlink family, the /proc reader) only has to deliver kernel
//! values and both render identically.

/// What `/proc/PID/wchan` said for a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wchan {
    /// The file could not be opened or read (task gone, no /proc): procps
    /// prints `?` (library/wchan.c `lookup_wchan()`).
    Unreadable,
    /// The kernel printed `0`: the task is running, has no wchan, or the
    /// reader may not ptrace it (`proc_pid_wchan()`). procps prints `-`.
    Zero,
    /// A symbol name as `%ps` printed it (raw bytes, not yet cut or stripped).
    Symbol(Vec<u8>),
}

/// One task (a process, or a thread when threads are listed).
///
/// Field names follow `/proc/PID/stat` (see proc(5)); units are the
/// kernel's: clock ticks for times, bytes for `vsize`, pages for `rss`,
/// KiB for the `status` memory lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Thread group id: the process id `ps` shows as PID.
    pub tgid: i32,
    /// Thread id (equal to `tgid` for a process line).
    pub tid: i32,
    /// Parent process id.
    pub ppid: i32,
    /// Process group id.
    pub pgid: i32,
    /// Session id.
    pub sid: i32,
    /// Controlling terminal, encoded as `new_encode_dev()` does; 0 for none.
    pub tty_nr: i32,
    /// Foreground process group of the controlling terminal, or -1.
    pub tpgid: i32,
    /// Real, effective, saved and filesystem user ids (status `Uid:`).
    pub uid: [u32; 4],
    /// Real, effective, saved and filesystem group ids (status `Gid:`).
    pub gid: [u32; 4],
    /// One-letter state (`R`, `S`, `D`, `Z`, `T`, `t`, `X`, `I`, ...).
    pub state: u8,
    /// `task->flags` (PF_*).
    pub flags: u64,
    /// The name between the parentheses of `/proc/PID/stat`, raw bytes.
    pub comm: Vec<u8>,
    /// Nice value (-20..19).
    pub nice: i32,
    /// `p->prio - MAX_RT_PRIO` as stat prints it.
    pub priority: i32,
    /// Real-time priority (stat field 40).
    pub rt_priority: u32,
    /// Scheduling policy (SCHED_*; stat field 41).
    pub policy: u32,
    /// Number of threads in the thread group.
    pub nlwp: i32,
    /// Virtual memory size in bytes (stat `vsize`).
    pub vsize: u64,
    /// Resident set in pages (stat `rss`).
    pub rss: u64,
    /// status `VmSize:` in KiB (0 when the task has no mm). The kernel
    /// prints `total_vm << (PAGE_SHIFT - 10)`: a source without `status`
    /// derives it as `vsize / 1024`.
    pub vm_size_kib: u64,
    /// status `VmRSS:` in KiB (0 when the task has no mm): the exact
    /// resident pages (statm's, not stat's `rss`) times the page size in
    /// KiB.
    pub vm_rss_kib: u64,
    /// status `VmLck:` in KiB (0 when the task has no mm): `locked_vm`
    /// pages times the page size in KiB.
    pub vm_lck_kib: u64,
    /// Minor faults.
    pub min_flt: u64,
    /// Major faults.
    pub maj_flt: u64,
    /// User time in clock ticks.
    pub utime: u64,
    /// System time in clock ticks.
    pub stime: u64,
    /// Children's user time in clock ticks.
    pub cutime: u64,
    /// Children's system time in clock ticks.
    pub cstime: u64,
    /// Start time in clock ticks after boot.
    pub start_time: u64,
    /// CPU the task last ran on.
    pub processor: i32,
    /// The wait channel.
    pub wchan: Wchan,
    /// `/proc/PID/cmdline` as read (NUL separators kept); empty for kernel
    /// threads and zombies, `None` when it could not be read.
    pub cmdline: Option<Vec<u8>>,
    /// `/proc/PID/environ` as read, for BSD `e`; `None` when not asked
    /// for or unreadable (another user's process).
    pub environ: Option<Vec<u8>>,
}

impl Task {
    /// A task with every number 0, no name and an unreadable wchan: the
    /// starting point a source fills in.
    pub fn empty(tgid: i32, tid: i32) -> Self {
        Task {
            tgid,
            tid,
            ppid: 0,
            pgid: 0,
            sid: 0,
            tty_nr: 0,
            tpgid: 0,
            uid: [0; 4],
            gid: [0; 4],
            state: b'?',
            flags: 0,
            comm: Vec::new(),
            nice: 0,
            priority: 0,
            rt_priority: 0,
            policy: 0,
            nlwp: 1,
            vsize: 0,
            rss: 0,
            vm_size_kib: 0,
            vm_rss_kib: 0,
            vm_lck_kib: 0,
            min_flt: 0,
            maj_flt: 0,
            utime: 0,
            stime: 0,
            cutime: 0,
            cstime: 0,
            start_time: 0,
            processor: 0,
            wchan: Wchan::Unreadable,
            cmdline: None,
            environ: None,
        }
    }

    /// Effective user id.
    pub fn euid(&self) -> u32 {
        self.uid[1]
    }

    /// Effective group id.
    pub fn egid(&self) -> u32 {
        self.gid[1]
    }
}

/// System-wide values procps needs besides the tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Global {
    /// Clock ticks per second (USER_HZ, `AT_CLKTCK`).
    pub hertz: u64,
    /// Page size in bytes (`AT_PAGESZ`).
    pub page_size: u64,
    /// Boot time in seconds since the epoch (`/proc/stat` `btime`).
    pub boot_time: u64,
    /// `MemTotal:` in KiB.
    pub mem_total_kib: u64,
    /// Uptime in hundredths of a second (`/proc/uptime`, first field,
    /// which the kernel truncates to hundredths): %CPU and ELAPSED depend on
    /// exactly this precision, so a source with finer uptime must truncate.
    pub uptime_centis: u64,
    /// `/proc/sys/kernel/pid_max`, which sizes the PID-like columns.
    pub pid_max: Option<u64>,
}
