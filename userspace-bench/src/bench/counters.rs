//! Per-operation hardware counts around each timed run: this thread's
//! instructions and last-level cache misses in user mode, from
//! `perf_event_open(2)`. Where the host has no counters (a VM such as the
//! development machine, where `perf stat -e instructions true` says
//! `<not supported>`), [`Counters::open`] says why and the report has no
//! counter columns; `profile.sh` counts under callgrind instead.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd};

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER0` (64 bytes), the
/// part every kernel since 2.6.31 reads; the fields past `flags` stay 0.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// Bit 0 `disabled`, bit 5 `exclude_kernel`, bit 6 `exclude_hv`.
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const ATTR_SIZE: u32 = 64;
const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == ATTR_SIZE as usize);

/// `PERF_TYPE_HARDWARE`.
const TYPE_HARDWARE: u32 = 0;
/// `PERF_TYPE_SOFTWARE`.
#[cfg(test)]
const TYPE_SOFTWARE: u32 = 1;
/// `PERF_COUNT_HW_INSTRUCTIONS`.
const HW_INSTRUCTIONS: u64 = 1;
/// `PERF_COUNT_HW_CACHE_MISSES`: misses of the last-level cache.
const HW_CACHE_MISSES: u64 = 3;
/// Starts disabled; user mode only (a profile of this process's own code,
/// and what `perf_event_paranoid` 2 still allows).
const FLAGS: u64 = 1 | 1 << 5 | 1 << 6;
/// `PERF_EVENT_IOC_ENABLE`, `_DISABLE`, `_RESET`: `_IO('$', 0, 1, 3)`.
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_RESET: libc::c_ulong = 0x2403;

/// One counter of this thread, on any CPU.
struct Counter(File);

impl Counter {
    fn open(kind: u32, config: u64) -> io::Result<Self> {
        let attr = PerfEventAttr {
            kind,
            size: ATTR_SIZE,
            config,
            flags: FLAGS,
            ..Default::default()
        };
        // SAFETY: `attr` is a live `perf_event_attr` of the size it
        // declares, which the kernel only reads during the call; pid 0 and
        // cpu -1 are this thread on any CPU, group -1 none, flags 0.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                0,
                -1,
                -1,
                0,
            )
        };
        let fd = i32::try_from(fd).map_err(|_| io::Error::other("fd out of range"))?;
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        Ok(Self(unsafe { File::from_raw_fd(fd) }))
    }

    fn ioctl(&self, request: libc::c_ulong) {
        // SAFETY: a perf event descriptor this value owns, and requests
        // that take no argument; a failure leaves the count as it was,
        // which the next read shows.
        unsafe { libc::ioctl(self.0.as_raw_fd(), request, 0) };
    }

    fn start(&self) {
        self.ioctl(IOC_RESET);
        self.ioctl(IOC_ENABLE);
    }

    fn stop(&mut self) -> io::Result<u64> {
        self.ioctl(IOC_DISABLE);
        let mut v = [0u8; 8];
        self.0.read_exact(&mut v)?;
        Ok(u64::from_ne_bytes(v))
    }
}

/// Instructions and last-level cache misses of this thread.
pub struct Counters {
    instructions: Counter,
    cache_misses: Counter,
}

impl Counters {
    /// Both counters, or why the host has none.
    pub fn open() -> Result<Self, String> {
        let open = |what, config| {
            Counter::open(TYPE_HARDWARE, config)
                .map_err(|e| format!("perf_event_open({what}): {e}"))
        };
        Ok(Self {
            instructions: open("instructions", HW_INSTRUCTIONS)?,
            cache_misses: open("cache-misses", HW_CACHE_MISSES)?,
        })
    }

    /// Resets and starts both.
    pub fn start(&self) {
        self.instructions.start();
        self.cache_misses.start();
    }

    /// Stops both: (instructions, cache misses) since [`start`](Self::start);
    /// `None` when a count cannot be read.
    pub fn stop(&mut self) -> Option<(u64, u64)> {
        let m = self.cache_misses.stop().ok()?;
        let i = self.instructions.stop().ok()?;
        Some((i, m))
    }
}

#[cfg(test)]
mod tests {
    use super::{Counter, TYPE_SOFTWARE};

    /// `PERF_COUNT_SW_PAGE_FAULTS`.
    const SW_PAGE_FAULTS: u64 = 2;
    const PAGES: usize = 64;

    /// Touches one byte in each page of a fresh anonymous mapping of
    /// `PAGES` pages: `PAGES` page faults (a heap block may reuse pages
    /// already touched).
    fn touch_fresh_pages() {
        let len = PAGES * 4096;
        // SAFETY: a new private anonymous mapping, no address hint; it is
        // written only within its length and unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED, "mmap");
        for i in 0..PAGES {
            // SAFETY: byte i * 4096 lies inside the mapping.
            unsafe { p.cast::<u8>().add(i * 4096).write_volatile(1) };
        }
        // SAFETY: the mapping made above, of that length, not used after.
        unsafe { libc::munmap(p, len) };
    }

    /// The open, reset, enable, disable and read path, with a software
    /// event every Linux host with perf events has: a fresh mapping's
    /// pages fault once each while counting, and a stopped counter counts
    /// nothing more.
    #[test]
    fn a_software_counter_counts_page_faults() {
        let mut c = Counter::open(TYPE_SOFTWARE, SW_PAGE_FAULTS).expect("perf_event_open");
        c.start();
        touch_fresh_pages();
        let n = c.stop().expect("read");
        assert!(
            (PAGES as u64..PAGES as u64 * 2).contains(&n),
            "{n} page faults for {PAGES} fresh pages"
        );
        touch_fresh_pages();
        let again = c.stop().expect("read");
        assert_eq!(again, n, "a stopped counter counted");
    }
}
