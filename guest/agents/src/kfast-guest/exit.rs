//! Leave the guest through QEMU's `isa-debug-exit` device.
//!
//! QEMU is started with `-device isa-debug-exit,iobase=0xf4,iosize=0x04`;
//! writing `v` to port 0xf4 makes QEMU exit with status `(v << 1) | 1`.

/// I/O port of the isa-debug-exit device.
const PORT: u16 = 0xf4;

extern "C" {
    /// glibc's `ioperm(2)` wrapper.
    fn ioperm(
        from: std::ffi::c_ulong,
        num: std::ffi::c_ulong,
        turn_on: std::ffi::c_int,
    ) -> std::ffi::c_int;
}

/// Ask QEMU to exit with guest code `code`; returns only if that failed.
pub fn debug_exit(code: u8) -> String {
    // SAFETY: ioperm only changes this process's I/O permission bitmap; the
    // arguments are plain integers.
    let rc = unsafe { ioperm(std::ffi::c_ulong::from(PORT), 4, 1) };
    if rc != 0 {
        return format!("ioperm: {}", std::io::Error::last_os_error());
    }
    // SAFETY: ioperm above granted access to PORT; the write goes to QEMU's
    // isa-debug-exit device, which touches no guest memory.
    unsafe {
        std::arch::asm!("out dx, al", in("dx") PORT, in("al") code, options(nomem, nostack, preserves_flags));
    }
    "isa-debug-exit did not stop the machine (device missing?)".to_string()
}
