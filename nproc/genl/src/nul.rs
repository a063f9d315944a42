//! Finding a string attribute's NUL.
//!
//! A dump carries two strings per task, a comm and a symbol name, 5 to 30
//! bytes each. A byte loop was 8% of nps's decode under TCG; `memchr`,
//! which replaced it, spends most of its ~70 instructions per call
//! choosing and setting up a vector search that ends in the first vector
//! (callgrind of `cargo bench -p nps --bench dump`: 137 instructions per
//! task for the two). Eight bytes at a time in a general register
//! saves about half of that on such strings (`fill_task` 1,081 -> 1,015
//! instructions per task in the same bench).

/// `0x01` in every byte.
const LO: u64 = u64::from_ne_bytes([0x01; 8]);
/// `0x80` in every byte.
const HI: u64 = u64::from_ne_bytes([0x80; 8]);

/// The index of the first zero byte of `word` read little-endian, if any.
///
/// `(x - LO) & !x & HI` sets bit 7 of every zero byte; a byte above a zero
/// byte may be flagged too (the borrow), one below never is, so the lowest
/// flag is the first zero.
#[inline(always)]
fn zero_in(word: [u8; 8]) -> Option<usize> {
    let x = u64::from_le_bytes(word);
    let flags = x.wrapping_sub(LO) & !x & HI;
    (flags != 0).then(|| (flags.trailing_zeros() / 8) as usize)
}

/// The index of the first NUL in `v`, `None` when there is none.
#[inline]
pub(crate) fn first_nul(v: &[u8]) -> Option<usize> {
    let mut words = v.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        if let Some(i) = w.first_chunk::<8>().and_then(|w| zero_in(*w)) {
            return Some(at + i);
        }
        at += 8;
    }
    if words.remainder().is_empty() {
        return None;
    }
    // The last eight bytes, overlapping words already found NUL-free: the
    // first zero among them is the first of the remainder.
    match v.len().checked_sub(8).and_then(|start| v.get(start..)) {
        Some(last) => last
            .first_chunk::<8>()
            .and_then(|w| zero_in(*w))
            .map(|i| v.len() - 8 + i),
        None => words.remainder().iter().position(|&b| b == 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length to 40, a NUL at every place (or none), one more NUL
    /// after it, and fillers that trip the borrow trick (0x01 and 0x80 on
    /// either side of a zero, 0xff).
    #[test]
    fn finds_what_a_byte_loop_finds() {
        for len in 0..=40 {
            for fill in [0x01, 0x7f, 0x80, 0xff, b'a'] {
                for nul in (0..len).map(Some).chain([None]) {
                    for second in (0..len).map(Some).chain([None]) {
                        let mut v = vec![fill; len];
                        for i in [nul, second].into_iter().flatten() {
                            v[i] = 0;
                        }
                        let want = v.iter().position(|&b| b == 0);
                        assert_eq!(first_nul(&v), want, "{v:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_zero_after_a_one_is_not_missed() {
        // 0x01 then 0x00: the 0x01 byte's borrow must not hide the zero.
        let mut v = [b'x'; 16];
        v[9] = 0x01;
        v[10] = 0;
        assert_eq!(first_nul(&v), Some(10));
        assert_eq!(first_nul(&v[..3]), None);
    }
}
