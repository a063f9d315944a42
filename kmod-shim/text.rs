// SPDX-License-Identifier: GPL-2.0

//! Fixed-capacity text for the `status` file and refusals: `write!` into a
//! buffer inside a static or on the stack, with no allocation.

use core::fmt;

/// Up to `N` bytes of UTF-8 text.
///
/// A piece that does not fit is dropped whole (`write_str` fails and
/// writes nothing), so the text stays UTF-8.
///
/// # Invariants
///
/// `len <= N`, and `buf[..len]` is UTF-8: it is only ever extended by a
/// whole `&str`.
pub(crate) struct Text<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Text<N> {
    /// Empty text.
    pub(crate) const fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
        }
    }

    /// Forget the text.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Whether nothing was written since the last [`Text::clear`].
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        // By the invariant both never fail; "" keeps this panic-free.
        core::str::from_utf8(self.buf.get(..self.len).unwrap_or(&[])).unwrap_or("")
    }
}

impl<const N: usize> fmt::Write for Text<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        // A whole `&str` appended within `N`: the invariant holds.
        self.len = end;
        Ok(())
    }
}

impl<const N: usize> fmt::Display for Text<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
