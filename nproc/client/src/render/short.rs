//! Short cells: the values most columns print (numbers, the state
//! letters, times, a wait channel, a name in the C locale) are at most
//! [`SHORT`] bytes, so they are printed into a fixed array instead of a
//! `Vec`: no capacity checks, no `memcpy` call per piece, and the layout
//! can copy the whole array in one fixed-size move.

use super::words::copy_words;

/// The most bytes a short cell holds.
pub const SHORT: usize = 64;

/// The most digits of a `u64`.
const U64_DIGITS: usize = 20;

/// `"00" "01" ... "99"`: two digits per lookup.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
                             2021222324252627282930313233343536373839\
                             4041424344454647484950515253545556575859\
                             6061626364656667686970717273747576777879\
                             8081828384858687888990919293949596979899";

/// A number as printf prints it: `"%d"`/`"%ld"` or `"%u"`/`"%lu"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Number {
    /// Printed with `"%d"`.
    Signed(i64),
    /// Printed with `"%u"`.
    Unsigned(u64),
}

/// A short cell being printed: `buf[..len]` so far.
///
/// Every printer writes well under [`SHORT`] bytes (the longest, a wait
/// channel or a name, 63); a write past the end would panic, not corrupt.
pub struct Short<'a> {
    buf: &'a mut [u8; SHORT],
    len: usize,
}

impl<'a> Short<'a> {
    /// An empty cell over `buf`, whose old contents are overwritten.
    pub fn new(buf: &'a mut [u8; SHORT]) -> Self {
        Short { buf, len: 0 }
    }

    /// The bytes printed so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was printed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one byte.
    pub fn byte(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    /// Appends `s`.
    pub fn bytes(&mut self, s: &[u8]) {
        copy_words(s, &mut self.buf[self.len..self.len + s.len()]);
        self.len += s.len();
    }

    /// Lets `print` write into the rest of the array and appends the
    /// number of bytes it returns.
    pub fn fill(&mut self, print: impl FnOnce(&mut [u8]) -> usize) {
        self.len += print(&mut self.buf[self.len..]);
    }

    /// Appends `n`, inlining the digit loop: the printer of most columns.
    #[inline(always)]
    pub fn number(&mut self, n: Number) {
        match n {
            Number::Signed(v) => {
                if v < 0 {
                    self.byte(b'-');
                }
                self.digits(v.unsigned_abs());
            }
            Number::Unsigned(v) => self.digits(v),
        }
    }

    /// Appends `v` as `"%u"`/`"%lu"` print it.
    pub fn unsigned(&mut self, v: u64) {
        self.digits(v);
    }

    /// [`Short::unsigned`], inlined.
    #[inline(always)]
    fn digits(&mut self, v: u64) {
        // The digits are printed backwards, from the middle of `digits`,
        // without counting them first; then, where the array has room, a
        // fixed 20 bytes from the first digit on are copied (a few vector
        // moves): what follows the last digit lands in the rest of the
        // array, which later bytes overwrite.
        let mut digits = [0u8; 2 * U64_DIGITS];
        let mut at = U64_DIGITS;
        let mut v = v;
        while v >= 100 {
            let pair = (v % 100) as usize * 2;
            v /= 100;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if v >= 10 {
            let pair = v as usize * 2;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            at -= 1;
            digits[at] = b'0' + v as u8;
        }
        let n = U64_DIGITS - at;
        if let Some(dst) = self.buf.get_mut(self.len..self.len + U64_DIGITS) {
            let chunk: &[u8; U64_DIGITS] = digits[at..at + U64_DIGITS]
                .try_into()
                .expect("U64_DIGITS bytes");
            dst.copy_from_slice(chunk);
        } else {
            self.buf[self.len..self.len + n].copy_from_slice(&digits[at..U64_DIGITS]);
        }
        self.len += n;
    }

    /// Appends `v` as `"%0*u"` prints it with a width of 2: at least two
    /// digits.
    pub fn two_digits(&mut self, v: u64) {
        if v < 100 {
            let pair = v as usize * 2;
            self.bytes(&PAIRS[pair..pair + 2]);
        } else {
            self.unsigned(v);
        }
    }

    /// Appends `v` as `"%*u"` prints it with a width of `width`: spaces
    /// first, up to `width` bytes in all.
    pub fn right(&mut self, v: u64, width: usize) {
        for _ in decimal_len(v)..width {
            self.byte(b' ');
        }
        self.unsigned(v);
    }
}

/// How many digits `"%u"` prints for `v`.
fn decimal_len(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |l| l as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn with(f: impl FnOnce(&mut Short<'_>)) -> String {
        let mut buf = [b'#'; SHORT];
        let mut s = Short::new(&mut buf);
        f(&mut s);
        let n = s.len();
        String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[test]
    fn edges() {
        for v in [0, 9, 10, 99, 100, 101, 999, 1000, u32::MAX as u64, u64::MAX] {
            assert_eq!(with(|s| s.unsigned(v)), v.to_string());
        }
        assert_eq!(
            with(|s| s.number(Number::Signed(i64::MIN))),
            i64::MIN.to_string()
        );
        assert_eq!(with(|s| s.two_digits(7)), "07");
        assert_eq!(with(|s| s.two_digits(123)), "123");
        assert_eq!(with(|s| s.right(7, 3)), "  7");
        assert_eq!(with(|s| s.right(12345, 3)), "12345");
    }

    proptest! {
        #[test]
        fn numbers_as_core_fmt_prints_them(u in any::<u64>(), i in any::<i64>(), w in 0usize..8) {
            let small = u % 1000;
            prop_assert_eq!(
                with(|s| {
                    s.unsigned(u);
                    s.byte(b'|');
                    s.number(Number::Signed(i));
                    s.byte(b'|');
                    s.two_digits(small);
                    s.byte(b'|');
                    s.right(small, w);
                }),
                format!("{u}|{i}|{small:02}|{small:w$}")
            );
        }
    }
}
