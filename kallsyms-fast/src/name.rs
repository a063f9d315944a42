//! Symbol names: a fixed buffer and the kernel's token expansion.

use crate::tables::{KallsymsTables, KSYM_NAME_LEN, MARKER_STRIDE};

/// A symbol name in a fixed `KSYM_NAME_LEN` buffer, like the kernel's
/// `char namebuf[KSYM_NAME_LEN]` (at most 511 bytes plus room for the NUL).
#[derive(Clone)]
pub struct NameBuf {
    buf: [u8; KSYM_NAME_LEN],
    len: usize,
}

impl Default for NameBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for NameBuf {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{:?}",
            core::str::from_utf8(self.as_bytes()).unwrap_or("<non-utf8>")
        )
    }
}

impl PartialEq for NameBuf {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl Eq for NameBuf {}

impl NameBuf {
    /// An empty name.
    pub const fn new() -> Self {
        Self {
            buf: [0; KSYM_NAME_LEN],
            len: 0,
        }
    }

    /// The name bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the name is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Empties the buffer.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Replaces the content with `bytes`, truncated as `strscpy(.., KSYM_NAME_LEN)`
    /// truncates (to 511 bytes).
    pub fn set(&mut self, bytes: &[u8]) {
        let src = bytes.get(..KSYM_NAME_LEN - 1).unwrap_or(bytes);
        if let Some(dst) = self.buf.get_mut(..src.len()) {
            dst.copy_from_slice(src);
            self.len = src.len();
        }
    }

    /// The whole buffer and the length, for expanders that write in place.
    /// Bytes past the length are scratch.
    #[inline]
    pub(crate) fn raw_mut(&mut self) -> (&mut [u8; KSYM_NAME_LEN], &mut usize) {
        (&mut self.buf, &mut self.len)
    }
}

/// `kallsyms_expand_symbol()`: expands the record at byte offset `off` of
/// `kallsyms_names` into `out`, dropping the leading type character and
/// truncating at `KSYM_NAME_LEN - 1` bytes exactly as the kernel does.
///
/// Returns the offset of the next record, or `None` when the record or a
/// token lies outside the tables (which a validated table never does).
#[inline]
pub fn expand_symbol(t: &KallsymsTables<'_>, off: usize, out: &mut NameBuf) -> Option<usize> {
    let (buf, len) = out.raw_mut();
    *len = 0;
    let (next, n) = expand_symbol_into(t, off, buf)?;
    *len = n;
    Some(next)
}

/// [`expand_symbol`] into a caller's `KSYM_NAME_LEN` buffer (the kernel's
/// `char namebuf[KSYM_NAME_LEN]`): returns the offset of the next record
/// and the name's length; the bytes past it are left as they were.
#[inline]
pub fn expand_symbol_into(
    t: &KallsymsTables<'_>,
    off: usize,
    buf: &mut [u8; KSYM_NAME_LEN],
) -> Option<(usize, usize)> {
    let (bytes, end) = t.record(off)?;
    // pos <= KSYM_NAME_LEN - 1 throughout: the sums below cannot saturate.
    let mut pos = 0usize;
    for tok in name_tokens(*t, bytes) {
        let tok = tok?;
        // Truncate at KSYM_NAME_LEN - 1 bytes, as the kernel does.
        let n = tok.len().min((KSYM_NAME_LEN - 1).saturating_sub(pos));
        let to = pos.saturating_add(n);
        if let (Some(dst), Some(src)) = (buf.get_mut(pos..to), tok.get(..n)) {
            dst.copy_from_slice(src);
            pos = to;
        }
    }
    Some((end, pos))
}

/// The tokens of a record's bytes as `kallsyms_expand_symbol()` copies
/// them: the first character of the first non-empty token (the type) is
/// dropped (its `skipped_first`). `None` items for tokens out of bounds.
#[inline]
fn name_tokens<'a>(
    t: KallsymsTables<'a>,
    bytes: &'a [u8],
) -> impl Iterator<Item = Option<&'a [u8]>> + 'a {
    let mut skipped_first = false;
    bytes.iter().map(move |&b| {
        let mut tok = t.token(b)?;
        if !skipped_first {
            if let Some((_, rest)) = tok.split_first() {
                tok = rest;
                skipped_first = true;
            }
        }
        Some(tok)
    })
}

/// `get_symbol_offset()`: the byte offset of record `pos` in
/// `kallsyms_names`, found as the kernel finds it: from the marker of its
/// block of 256, skip up to 255 records one by one. The one copy of this
/// walk: the mainline port, the index builders and the fast path's
/// fallback all call it.
#[inline]
pub fn record_offset(t: &KallsymsTables<'_>, pos: usize) -> Option<usize> {
    let mut off = usize::try_from(*t.markers.get(pos / MARKER_STRIDE)?).ok()?;
    for _ in 0..pos % MARKER_STRIDE {
        off = skip_record(t, off)?;
    }
    Some(off)
}

/// Skips one record starting at `off`; returns the offset of the next one.
#[inline]
pub fn skip_record(t: &KallsymsTables<'_>, off: usize) -> Option<usize> {
    let (data, len) = t.record_at(off)?;
    data.checked_add(len)
}
