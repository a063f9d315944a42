//! Byte scans eight bytes at a time, for the short strings of a line
//! (a name, a wait channel): a `u64` test or move per eight bytes instead
//! of a loop iteration per byte or a `memcpy` call.
//!
//! The tests are Bit Twiddling Hacks' `hasless()` and `hasmore()`, whose
//! "is there such a byte" answers are exact; they may flag bytes above
//! the first match too, so only the lowest flagged byte is used.

/// `0x01` in every byte.
const ONES: u64 = u64::MAX / 255;
/// `0x80` in every byte.
const HIGH: u64 = ONES * 0x80;

/// The bytes of `w` below `n` (<= 0x80): the lowest flagged is the first.
fn below(w: u64, n: u8) -> u64 {
    w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH
}

/// The bytes of `w` above `n` (<= 0x7f): the lowest flagged is the first.
fn above(w: u64, n: u8) -> u64 {
    (w.wrapping_add(ONES * u64::from(0x7f - n)) | w) & HIGH
}

/// `c`, eight bytes, as a little-endian word: its first byte lowest.
fn word(c: &[u8]) -> u64 {
    u64::from_le_bytes(c.try_into().expect("8 bytes"))
}

/// Whether every byte of `s` (at least 8 long) is printable ASCII,
/// 0x20..=0x7e: tested eight at a time, the last eight overlapping.
pub fn all_printable(s: &[u8]) -> bool {
    let tail = &s[s.len() - 8..];
    s.chunks_exact(8).all(|c| printable_word(word(c))) && printable_word(word(tail))
}

/// Whether all eight bytes of `w` are 0x20..=0x7e.
fn printable_word(w: u64) -> bool {
    below(w, 0x20) | above(w, 0x7e) == 0
}

/// Where the first NUL of `s` is.
pub fn first_nul(s: &[u8]) -> Option<usize> {
    let mut chunks = s.chunks_exact(8);
    for (i, c) in chunks.by_ref().enumerate() {
        let zero = below(word(c), 1);
        if zero != 0 {
            return Some(i * 8 + zero.trailing_zeros() as usize / 8);
        }
    }
    let rest = chunks.remainder();
    let at = s.len() - rest.len();
    rest.iter().position(|&b| b == 0).map(|i| at + i)
}

/// Copies `src` into `dst`, as long: in fixed 8-byte moves (the last
/// eight overlapping) from 8 bytes on.
pub fn copy_words(src: &[u8], dst: &mut [u8]) {
    if src.len() < 8 {
        dst.copy_from_slice(src);
        return;
    }
    for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
        d.copy_from_slice(s);
    }
    let at = src.len() - 8;
    dst[at..].copy_from_slice(&src[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn edge_bytes() -> impl Strategy<Value = u8> {
        prop_oneof![
            0x1eu8..0x22,
            0x7cu8..0x82,
            Just(0),
            Just(1),
            Just(0xff),
            any::<u8>()
        ]
    }

    proptest! {
        #[test]
        fn printable_words_as_byte_tests(
            w in any::<u64>(),
            bytes in proptest::array::uniform8(edge_bytes()),
        ) {
            for w in [w, u64::from_le_bytes(bytes)] {
                let want = w.to_le_bytes().iter().all(|b| (0x20..=0x7e).contains(b));
                prop_assert_eq!(printable_word(w), want, "{:#x}", w);
            }
        }

        #[test]
        fn scans_as_byte_loops(
            s in proptest::collection::vec(
                prop_oneof![6 => 0x20u8..0x7f, 1 => edge_bytes()],
                0..70,
            ),
        ) {
            prop_assert_eq!(first_nul(&s), s.iter().position(|&b| b == 0));
            if s.len() >= 8 {
                prop_assert_eq!(
                    all_printable(&s),
                    s.iter().all(|b| (0x20..=0x7e).contains(b))
                );
            }
            let mut dst = vec![b'#'; s.len()];
            copy_words(&s, &mut dst);
            prop_assert_eq!(dst, s);
        }
    }
}
