//! Name expansion without a per-token scan or copy call.
//!
//! The kernel's `kallsyms_expand_symbol()` looks every token up through
//! `kallsyms_token_index` and copies it byte by byte up to its NUL. Here the
//! 256 tokens are copied once, at index build time, into fixed 16-byte slots
//! with their lengths (4.5 KiB per kernel, not per symbol). Expanding a
//! token is then one unaligned 16-byte store and an add. A token longer
//! than a slot is copied from the table, out of line: C-only kernels have
//! none (the longest is about 10 bytes), but a Rust-enabled one has crate
//! hashes such as `Cs2DxGA1hvVcO_4core` (19 bytes, in 3% of the symbols of
//! a 6.12 UML defconfig): copied out of line, their names need no fall
//! back to the kernel's whole walk.
//! The output is identical.

use crate::name::{expand_symbol_into, NameBuf};
use crate::tables::{KallsymsTables, KSYM_NAME_LEN};

const SLOT: usize = 16;

/// How an expansion goes on after its first token.
enum Start<'t> {
    /// From the slots: the record's other tokens, the next record's
    /// offset, and the length written so far.
    Slots {
        rest: &'t [u8],
        end: usize,
        pos: usize,
    },
    /// The kernel's walk: the first token is empty or longer than a slot.
    Kernel,
}
/// The length of a token longer than a slot: past any name's length, so
/// that the fast expansion's one bounds compare per token catches it.
const LONG: u16 = u16::MAX;

/// The token table in fixed slots.
///
/// Plain bytes only: every bit pattern, in particular all zeroes, is a
/// valid value.
#[derive(Clone)]
#[repr(C)]
pub struct TokenSlots {
    bytes: [[u8; SLOT]; 256],
    len: [u16; 256],
}

impl core::fmt::Debug for TokenSlots {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TokenSlots").finish_non_exhaustive()
    }
}

impl TokenSlots {
    /// Copies the tokens of `t`; `None` when a token is out of bounds.
    pub fn new(t: &KallsymsTables<'_>) -> Option<Self> {
        let mut s = Self {
            bytes: [[0; SLOT]; 256],
            len: [0; 256],
        };
        s.fill(t)?;
        Some(s)
    }

    /// Copies the tokens of `t` into `self` in place (the kernel shim keeps
    /// the 4.5 KiB of slots in allocated memory, not on the stack, and an
    /// all-zero `TokenSlots` is valid). `None` when a token is out of
    /// bounds; `self` is then partly filled.
    pub fn fill(&mut self, t: &KallsymsTables<'_>) -> Option<()> {
        let slots = self.bytes.iter_mut().zip(self.len.iter_mut());
        for (b, (bytes, len)) in (0..=u8::MAX).zip(slots) {
            let tok = t.token(b)?;
            *bytes = [0; SLOT];
            *len = LONG;
            // Fits a slot iff the prefix exists (then the length is <= 16).
            if let Some(dst) = bytes.get_mut(..tok.len()) {
                dst.copy_from_slice(tok);
                *len = u16::try_from(tok.len()).unwrap_or(LONG);
            }
        }
        Some(())
    }

    /// Same result as [`expand_symbol`](crate::name::expand_symbol) for the
    /// record at `off`.
    #[inline]
    pub fn expand(&self, t: &KallsymsTables<'_>, off: usize, out: &mut NameBuf) -> Option<usize> {
        let (buf, len) = out.raw_mut();
        *len = 0;
        let (next, n) = self.expand_into(t, off, buf)?;
        *len = n;
        Some(next)
    }

    /// Same result as [`expand_symbol_into`]: the name into a caller's
    /// `KSYM_NAME_LEN` buffer, returning the next record's offset and the
    /// name's length. Bytes past the name may be overwritten (scratch).
    #[inline]
    pub fn expand_into(
        &self,
        t: &KallsymsTables<'_>,
        off: usize,
        buf: &mut [u8; KSYM_NAME_LEN],
    ) -> Option<(usize, usize)> {
        let Start::Slots { rest, end, mut pos } = self.first_token(t, off, buf)? else {
            return expand_symbol_into(t, off, buf);
        };
        // The fast loop: per token one 16-byte load and store of its slot,
        // whatever its length (the bytes past it are scratch), and an add.
        // Its one compare is the store's bounds check: a token longer than
        // a slot adds LONG (65,535), which fails the next store's check
        // or the check after the loop, and so does a name that reaches the
        // buffer's last 16 bytes (over 496 bytes long: rare even among
        // Rust's mangled names). Either case starts over in
        // `expand_slow`, out of line: a C kernel has no token longer than
        // a slot; a Rust-enabled one has crate hashes in 3% of its names.
        for &b in rest {
            let src = self.bytes.get(usize::from(b))?;
            let l = *self.len.get(usize::from(b))?;
            // As arrays, so that no length check (and panic path) is left.
            let Some(dst) = buf.get_mut(pos..).and_then(|r| r.first_chunk_mut::<SLOT>()) else {
                return self.expand_slow(t, off, buf);
            };
            dst.copy_from_slice(src);
            // pos <= KSYM_NAME_LEN - SLOT and l <= u16::MAX: no overflow.
            pos = pos.wrapping_add(usize::from(l));
        }
        if pos > KSYM_NAME_LEN - 1 {
            return self.expand_slow(t, off, buf);
        }
        Some((end, pos))
    }

    /// The start of both expansions: the record at `off` split into its
    /// first token and the rest, the first token's slot (less the type
    /// character it starts with) copied to `buf`. Returns the rest, the
    /// next record's offset and the name's length so far;
    /// [`Start::Kernel`] when the first token is empty or longer than a
    /// slot; `None` for a malformed record.
    #[inline(always)]
    fn first_token<'t>(
        &self,
        t: &KallsymsTables<'t>,
        off: usize,
        buf: &mut [u8; KSYM_NAME_LEN],
    ) -> Option<Start<'t>> {
        let (bytes, end) = t.record(off)?;
        let (&first, rest) = bytes.split_first()?;
        // A u8 always indexes the 256 slots: these `get`s cannot fail and
        // compile to plain loads.
        let first_len = *self.len.get(usize::from(first))?;
        if first_len == LONG || first_len == 0 {
            return Some(Start::Kernel);
        }
        // The first token starts with the type character: drop it.
        let first_slot = self.bytes.get(usize::from(first))?;
        buf[..SLOT - 1].copy_from_slice(&first_slot[1..]);
        // first_len >= 1 (checked above).
        Some(Start::Slots {
            rest,
            end,
            pos: usize::from(first_len).saturating_sub(1),
        })
    }

    /// [`expand_into`](Self::expand_into) for a name with a token longer
    /// than a slot, or a name near `KSYM_NAME_LEN`: slots where they fit,
    /// the long tokens copied from the token table, and the kernel's own
    /// walk for a name that reaches the buffer's last 16 bytes (which cuts
    /// it where the kernel does). Out of line and cold: inlined, its
    /// variable-length copy would be merged with the loop's 16-byte slot
    /// copy into a `memcpy` call per token.
    #[cold]
    #[inline(never)]
    fn expand_slow(
        &self,
        t: &KallsymsTables<'_>,
        off: usize,
        buf: &mut [u8; KSYM_NAME_LEN],
    ) -> Option<(usize, usize)> {
        let Start::Slots { rest, end, mut pos } = self.first_token(t, off, buf)? else {
            return expand_symbol_into(t, off, buf);
        };
        for &b in rest {
            let l = *self.len.get(usize::from(b))?;
            if l == LONG {
                match copy_long_token(t, b, buf, pos) {
                    Some(next) => pos = next,
                    None => return expand_symbol_into(t, off, buf),
                }
                continue;
            }
            // pos <= KSYM_NAME_LEN - 1 and l <= SLOT: no saturation.
            let next = pos.saturating_add(usize::from(l));
            if next > KSYM_NAME_LEN - 1 {
                return expand_symbol_into(t, off, buf);
            }
            let src = self.bytes.get(usize::from(b))?;
            let Some(dst) = buf.get_mut(pos..).and_then(|r| r.first_chunk_mut::<SLOT>()) else {
                return expand_symbol_into(t, off, buf);
            };
            dst.copy_from_slice(src);
            pos = next;
        }
        Some((end, pos))
    }
}

/// Copies token `b`, longer than a slot, from the token table to
/// `buf[pos..]`; returns the position after it, or `None` when the name
/// would pass `KSYM_NAME_LEN - 1` bytes (the caller then takes the
/// kernel's walk, which cuts it where the kernel does). Out of line:
/// inlined, its variable-length copy would be merged with the loop's
/// 16-byte slot copy into a `memcpy` call per token.
#[cold]
#[inline(never)]
fn copy_long_token(
    t: &KallsymsTables<'_>,
    b: u8,
    buf: &mut [u8; KSYM_NAME_LEN],
    pos: usize,
) -> Option<usize> {
    let tok = t.token(b)?;
    let next = pos.checked_add(tok.len())?;
    if next > KSYM_NAME_LEN - 1 {
        return None;
    }
    // Equal lengths (next = pos + tok.len()); zip leaves no panic path.
    for (d, &c) in buf.get_mut(pos..next)?.iter_mut().zip(tok) {
        *d = c;
    }
    Some(next)
}
