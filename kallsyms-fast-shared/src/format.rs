//! The kernel's text forms of a resolved address, byte for byte:
//! `sprint_symbol()` (`%pS`), `sprint_symbol_no_offset()` (`%ps`),
//! `sprint_backtrace()` (a `symbol_offset` of -1) and the
//! `/proc/PID/wchan` form.
//!
//! There is one writer, over a borrowed byte slice: the kernel shim hands
//! it the caller's own `KSYM_SYMBOL_LEN` buffer (`%pS` may run on a 4 KiB
//! NMI stack, so the kernel path keeps no text buffer of its own), and the
//! userspace mirror, the resolver and the tests hand it a [`SymbolBuf`].
//! Like the kernel, the lookup writes the name at the start of the buffer
//! first ([`Hit::name_len`]); the writer appends `+0xoff/0xsize [module]`
//! after it and a NUL, as `sprintf()` does.

use core::fmt::Write;

use kallsyms_fast::cache::WchanCache;
use kallsyms_fast::tables::KSYM_NAME_LEN;

/// `MODULE_NAME_LEN` on 64-bit kernels (`MAX_PARAM_PREFIX_LEN`,
/// `64 - sizeof(unsigned long)`): module names are at most 55 bytes.
pub const MODULE_NAME_LEN: usize = 56;

/// `KSYM_SYMBOL_LEN` on 64-bit 6.12 kernels:
/// `sizeof("%s+%#lx/%#lx [%s %s]") + (KSYM_NAME_LEN - 1) +
/// 2 * (BITS_PER_LONG * 3 / 10) + (MODULE_NAME_LEN - 1) +
/// BUILD_ID_SIZE_MAX * 2 + 1`, the size of every `%pS` buffer.
pub const KSYM_SYMBOL_LEN: usize = 21 + (KSYM_NAME_LEN - 1) + 2 * (64 * 3 / 10) + 55 + 20 * 2 + 1;

/// `sprintf()` into a borrowed byte slice: text, then a NUL when
/// [`finish`](Self::finish)ed. Text past `buf.len() - 1` bytes is dropped
/// (a `KSYM_SYMBOL_LEN` buffer always fits the longest `%pS` text, so this
/// only guards against hostile input and short buffers): never an error or
/// a panic.
pub struct SliceWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SliceWriter<'a> {
    /// A writer at the start of `buf`.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// A writer after `len` bytes already at the start of `buf` (a name a
    /// lookup wrote in place), clamped to the room the NUL leaves.
    #[inline]
    pub fn after(buf: &'a mut [u8], len: usize) -> Self {
        let len = len.min(buf.len().saturating_sub(1));
        Self { buf, len }
    }

    /// Bytes of text so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no text was written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends raw bytes (names are bytes, not necessarily UTF-8).
    #[inline]
    pub fn push(&mut self, b: &[u8]) {
        let room = self.buf.len().saturating_sub(1).saturating_sub(self.len);
        let n = b.len().min(room);
        // len + n <= buf.len() - 1: both gets succeed.
        let end = self.len.saturating_add(n);
        if let (Some(dst), Some(src)) = (self.buf.get_mut(self.len..end), b.get(..n)) {
            dst.copy_from_slice(src);
            self.len = end;
        }
    }

    /// Writes the NUL after the text (if the buffer has a byte at all) and
    /// returns the text's length, as `sprintf()` returns it.
    #[inline]
    pub fn finish(self) -> usize {
        if let Some(b) = self.buf.get_mut(self.len) {
            *b = 0;
        }
        self.len
    }
}

impl Write for SliceWriter<'_> {
    #[inline]
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

/// What `kallsyms_lookup_buildid()` found for an address: its name is
/// already at the start of the output buffer (the kernel passes
/// `__sprint_symbol()`'s buffer as `namebuf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit<'m> {
    /// Length of the name at the start of the buffer (`strlen(namebuf)`).
    pub name_len: usize,
    /// Symbol size.
    pub size: u64,
    /// Offset of the looked-up address into the symbol.
    pub offset: u64,
    /// Module name, `None` for the core kernel.
    pub module: Option<&'m [u8]>,
}

/// `__sprint_symbol(buffer, address, symbol_offset, add_offset, 0)` after
/// its lookup of `address + symbol_offset` gave `hit`, whose name is at the
/// start of `buf`: `name+0xoff/0xsize [mod]`, or `0x<address>` when nothing
/// was found or the name is empty (the kernel tests `strlen`). Writes a NUL
/// after the text; returns the text's length.
pub fn sprint_into(
    buf: &mut [u8],
    address: u64,
    symbol_offset: i64,
    hit: Option<&Hit<'_>>,
    add_offset: bool,
) -> usize {
    let Some(h) = hit.filter(|h| h.name_len != 0) else {
        let mut w = SliceWriter::new(buf);
        let _ = write!(w, "{address:#x}");
        return w.finish();
    };
    let mut w = SliceWriter::after(buf, h.name_len);
    if add_offset {
        // `offset -= symbol_offset` in unsigned long arithmetic; the
        // kernel's "%#lx" prints 0x0 for zero, as Rust's {:#x} does.
        let offset = h.offset.wrapping_add_signed(symbol_offset.wrapping_neg());
        let _ = write!(w, "+{offset:#x}/{:#x}", h.size);
    }
    if let Some(m) = h.module {
        w.push(b" [");
        w.push(m);
        w.push(b"]");
    }
    w.finish()
}

/// The `/proc/PID/wchan` text (`proc_pid_wchan()`): the name
/// `lookup_symbol_name()` wrote at the start of `buf` (`name_len`) when it
/// succeeded, `0` otherwise and for a zero wchan. Writes a NUL after the
/// text; returns the text's length.
pub fn wchan_into(buf: &mut [u8], addr: u64, name_len: Option<usize>) -> usize {
    match name_len {
        Some(n) if addr != 0 => SliceWriter::after(buf, n).finish(),
        _ => {
            let mut w = SliceWriter::new(buf);
            w.push(b"0");
            w.finish()
        }
    }
}

/// What a lookup found, the name borrowed from elsewhere (userspace
/// callers keep it in a `NameBuf`).
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

/// An owned `KSYM_SYMBOL_LEN` buffer for userspace callers of the writer.
pub struct SymbolBuf {
    buf: [u8; KSYM_SYMBOL_LEN],
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
            buf: [0; KSYM_SYMBOL_LEN],
            len: 0,
        }
    }

    /// The text written so far, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Puts `name` at the start of the buffer, as a lookup would have
    /// written it, cut at `KSYM_NAME_LEN - 1` bytes as `namebuf` cuts it;
    /// returns its length.
    fn put_name(&mut self, name: &[u8]) -> usize {
        let name = name.get(..KSYM_NAME_LEN - 1).unwrap_or(name);
        let mut w = SliceWriter::new(&mut self.buf);
        w.push(name);
        w.len()
    }
}

/// [`sprint_into`] for a name held elsewhere: `sprint_symbol()`
/// (`add_offset`) or `sprint_symbol_no_offset()`.
pub fn sprint_symbol(out: &mut SymbolBuf, addr: u64, found: Option<&Found<'_>>, add_offset: bool) {
    let hit = found.map(|f| Hit {
        name_len: out.put_name(f.name),
        size: f.size,
        offset: f.offset,
        module: f.module,
    });
    out.len = sprint_into(&mut out.buf, addr, 0, hit.as_ref(), add_offset);
}

/// The wchan text of a wchan cache hit for `addr` in `out`, written by
/// [`WchanCache::get_into`] straight into its buffer; `false` on a miss.
#[inline]
pub fn wchan_cached<const SETS: usize, const WAYS: usize>(
    out: &mut SymbolBuf,
    cache: &WchanCache<SETS, WAYS>,
    addr: u64,
) -> bool {
    match cache.get_into(addr, &mut out.buf) {
        Some(len) => {
            out.len = len;
            true
        }
        None => false,
    }
}

/// [`wchan_into`] after a lookup that writes the name straight into
/// `out`, as the kernel's `lookup_symbol_name()` writes it into the
/// buffer `proc_pid_wchan()` prints: `lookup` gets `out`'s first
/// `KSYM_NAME_LEN` bytes (the kernel's `namebuf`) and returns the name's
/// length, `None` when it found nothing. No copy of the name.
pub fn wchan_from(
    out: &mut SymbolBuf,
    addr: u64,
    lookup: impl FnOnce(&mut [u8; KSYM_NAME_LEN]) -> Option<usize>,
) {
    let name_len = out.buf.first_chunk_mut::<KSYM_NAME_LEN>().and_then(lookup);
    out.len = wchan_into(&mut out.buf, addr, name_len);
}

/// [`wchan_into`] for a name held elsewhere.
pub fn wchan(out: &mut SymbolBuf, addr: u64, name: Option<&[u8]>) {
    let name_len = name.map(|n| out.put_name(n));
    out.len = wchan_into(&mut out.buf, addr, name_len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_len_is_the_kernels() {
        // 21 + 511 + 38 + 55 + 40 + 1 on 64-bit 6.12.
        assert_eq!(KSYM_SYMBOL_LEN, 666);
    }

    #[test]
    fn backtrace_offset_prints_the_callers_offset() {
        // sprint_backtrace(): lookup at addr - 1, offset printed + 1.
        let mut buf = [0u8; KSYM_SYMBOL_LEN];
        buf[..3].copy_from_slice(b"foo");
        let h = Hit {
            name_len: 3,
            size: 0x20,
            offset: 0x1f,
            module: Some(b"m"),
        };
        let n = sprint_into(&mut buf, 0x1020, -1, Some(&h), true);
        assert_eq!(&buf[..n], b"foo+0x20/0x20 [m]");
        assert_eq!(buf[n], 0);
        // Nothing found: the original address, not the looked-up one.
        let n = sprint_into(&mut buf, 0x1020, -1, None, true);
        assert_eq!(&buf[..n], b"0x1020");
    }

    #[test]
    fn short_buffers_cut_and_terminate() {
        let mut buf = [0xffu8; 6];
        buf[..3].copy_from_slice(b"foo");
        let h = Hit {
            name_len: 3,
            size: 1,
            offset: 0,
            module: None,
        };
        let n = sprint_into(&mut buf, 1, 0, Some(&h), true);
        assert_eq!(&buf, b"foo+0\0");
        assert_eq!(n, 5);
        assert_eq!(sprint_into(&mut [], 1, 0, Some(&h), true), 0);
        let mut one = [0xffu8; 1];
        assert_eq!(sprint_into(&mut one, 1, 0, None, true), 0);
        assert_eq!(one, [0]);
    }

    #[test]
    fn wchan_forms() {
        let mut buf = [0u8; 8];
        buf[..2].copy_from_slice(b"ab");
        let n = wchan_into(&mut buf, 5, Some(2));
        assert_eq!(&buf[..=n], b"ab\0");
        let n = wchan_into(&mut buf, 0, Some(2));
        assert_eq!(&buf[..=n], b"0\0");
    }
}
