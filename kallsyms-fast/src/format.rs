//! The kernel's text forms of a resolved address, byte for byte:
//! `sprint_symbol()` (`%pS`), `sprint_symbol_no_offset()` (`%ps`) and the
//! `/proc/PID/wchan` form.

use core::fmt::Write;

/// `KSYM_SYMBOL_LEN` for 64-bit 6.12 kernels, rounded up: room for a full
/// `name+0xoff/0xsize [module]` line.
pub const SYMBOL_BUF_LEN: usize = 1024;

/// What a lookup found for an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found<'n> {
    /// Symbol name (may be empty only for a malformed table).
    pub name: &'n [u8],
    /// Symbol size.
    pub size: u64,
    /// Offset of the address into the symbol.
    pub offset: u64,
    /// Module name, `None` for the core kernel.
    pub module: Option<&'n [u8]>,
}

/// A fixed buffer the formatters write into; output that does not fit is
/// truncated, never an error or a panic.
pub struct SymbolBuf {
    buf: [u8; SYMBOL_BUF_LEN],
    len: usize,
}

impl Default for SymbolBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl SymbolBuf {
    /// An empty buffer.
    pub const fn new() -> Self {
        Self {
            buf: [0; SYMBOL_BUF_LEN],
            len: 0,
        }
    }

    /// The text written so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Empties the buffer.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends raw bytes (names are bytes, not necessarily UTF-8).
    pub fn push_bytes(&mut self, b: &[u8]) {
        let n = b.len().min(SYMBOL_BUF_LEN - self.len);
        if let (Some(dst), Some(src)) = (self.buf.get_mut(self.len..self.len + n), b.get(..n)) {
            dst.copy_from_slice(src);
            self.len += n;
        }
    }
}

impl Write for SymbolBuf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.push_bytes(s.as_bytes());
        Ok(())
    }
}

/// `__sprint_symbol()` with `add_offset` as given and no build ID:
/// `name+0xoff/0xsize [mod]`, or `0x<addr>` when nothing was found (or the
/// name is empty, as the kernel tests `strlen`).
pub fn sprint_symbol(out: &mut SymbolBuf, addr: u64, found: Option<&Found<'_>>, add_offset: bool) {
    out.clear();
    match found {
        Some(f) if !f.name.is_empty() => {
            out.push_bytes(f.name);
            if add_offset {
                // The kernel's "%#lx" prints 0x0 for zero, unlike C's.
                let _ = write!(out, "+{:#x}/{:#x}", f.offset, f.size);
            }
            if let Some(m) = f.module {
                out.push_bytes(b" [");
                out.push_bytes(m);
                out.push_bytes(b"]");
            }
        }
        _ => {
            let _ = write!(out, "{addr:#x}");
        }
    }
}

/// The wchan text for a name held zero-padded in a fixed array (a cache
/// hit): one fixed-size copy, then the length.
#[inline]
pub fn wchan_padded<const N: usize>(out: &mut SymbolBuf, name: &[u8; N], len: usize) {
    if let Some(dst) = out.buf.get_mut(..N) {
        dst.copy_from_slice(name);
        out.len = len.min(N);
    }
}

/// The `/proc/PID/wchan` text: the bare name when `lookup_symbol_name()`
/// succeeded, `0` otherwise (and for a zero wchan).
pub fn wchan(out: &mut SymbolBuf, addr: u64, name: Option<&[u8]>) {
    out.clear();
    match name {
        Some(n) if addr != 0 => out.push_bytes(n),
        _ => out.push_bytes(b"0"),
    }
}
