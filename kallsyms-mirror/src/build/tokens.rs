//! The token table: `optimize_token_table()` and its helpers
//! (`build_initial_token_table()`, `insert_real_symbols_in_table()`,
//! `optimize_result()`, `find_best_token()`, `compress_symbols()`,
//! `learn_symbol()`/`forget_symbol()`), and `expand_symbol()`.
//!
//! The algorithm is the tool's greedy one, unchanged: slots are filled from
//! 255 down to 0, each unused slot gets the byte pair with the highest count
//! (the lowest pair value `first | second << 8` on ties), and every symbol
//! containing the pair has all its non-overlapping occurrences replaced left
//! to right. Two shortcuts give the same result faster:
//!
//! - each symbol carries a 256-bit set of the bytes it holds, so symbols
//!   that cannot contain the pair are skipped without scanning them;
//! - a round stops once the pair's count reaches zero: after a symbol is
//!   rewritten it holds no occurrence of the pair (the replacement byte is
//!   new and unreplaced neighbours did not match), so the count is exactly
//!   the number of occurrences still ahead.

use alloc::vec;
use alloc::vec::Vec;

use super::filter::Entry;

/// `best_table`/`best_table_len`: slot `c` is the byte `c` itself (length
/// 1), a pair of earlier slots (length 2), or unused (length 0).
pub(super) struct BestTable {
    /// `best_table`.
    pub table: [[u8; 2]; 256],
    /// `best_table_len`.
    pub len: [u8; 256],
}

impl BestTable {
    /// `expand_symbol()` of every slot: the token strings of
    /// `kallsyms_token_table`.
    pub fn expand_all(&self) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); 256];
        for (c, slot) in out.iter_mut().enumerate() {
            if self.len[c] == 1 {
                *slot = vec![self.table[c][0]];
            }
        }
        // A pair only refers to real bytes or to slots filled before it,
        // i.e. with a higher number.
        for c in (0..256).rev() {
            if self.len[c] == 2 {
                let [a, b] = self.table[c];
                let mut s = out[a as usize].clone();
                s.extend_from_slice(&out[b as usize]);
                out[c] = s;
            }
        }
        out
    }
}

/// All symbols' bytes (`table[i]->sym`/`len`), compressed in place.
pub(super) struct Packed {
    buf: Vec<u8>,
    start: Vec<usize>,
    len: Vec<usize>,
    /// Bytes present in each symbol (a superset after rewriting, exact
    /// after recomputation).
    present: Vec<[u64; 4]>,
}

fn presence(s: &[u8]) -> [u64; 4] {
    let mut p = [0u64; 4];
    for &b in s {
        p[(b >> 6) as usize] |= 1 << (b & 63);
    }
    p
}

fn has(p: &[u64; 4], b: u8) -> bool {
    p[(b >> 6) as usize] & (1 << (b & 63)) != 0
}

impl Packed {
    /// The uncompressed table (`sym` of every entry, in table order).
    pub fn new(entries: &[Entry]) -> Self {
        let total = entries.iter().map(|e| e.sym.len()).sum();
        let mut buf = Vec::with_capacity(total);
        let mut start = Vec::with_capacity(entries.len());
        let mut len = Vec::with_capacity(entries.len());
        let mut present = Vec::with_capacity(entries.len());
        for e in entries {
            start.push(buf.len());
            len.push(e.sym.len());
            present.push(presence(&e.sym));
            buf.extend_from_slice(&e.sym);
        }
        Packed {
            buf,
            start,
            len,
            present,
        }
    }

    /// Number of symbols.
    pub fn count(&self) -> usize {
        self.start.len()
    }

    /// The compressed bytes of symbol `i` (empty when out of range).
    pub fn get(&self, i: usize) -> &[u8] {
        match (self.start.get(i), self.len.get(i)) {
            (Some(&s), Some(&l)) => self.buf.get(s..s + l).unwrap_or(&[]),
            _ => &[],
        }
    }
}

#[inline]
fn pair(a: u8, b: u8) -> usize {
    a as usize | (b as usize) << 8
}

/// `learn_symbol()`.
fn learn_symbol(profit: &mut [i64], s: &[u8]) {
    for w in s.windows(2) {
        profit[pair(w[0], w[1])] += 1;
    }
}

/// `forget_symbol()`.
fn forget_symbol(profit: &mut [i64], s: &[u8]) {
    for w in s.windows(2) {
        profit[pair(w[0], w[1])] -= 1;
    }
}

/// `find_best_token()`: the first pair with the highest count.
fn find_best_token(profit: &[i64]) -> usize {
    let mut best = 0;
    let mut bestprofit = -10000;
    for (i, &p) in profit.iter().enumerate() {
        if p > bestprofit {
            best = i;
            bestprofit = p;
        }
    }
    best
}

/// `compress_symbols()`: replaces the pair `tok` by `idx` in every symbol.
fn compress_symbols(packed: &mut Packed, profit: &mut [i64], tok: [u8; 2], idx: u8) {
    let [a, b] = tok;
    let key = pair(a, b);
    for i in 0..packed.count() {
        if profit[key] == 0 {
            break;
        }
        if !has(&packed.present[i], a) || !has(&packed.present[i], b) {
            continue;
        }
        let (start, len) = (packed.start[i], packed.len[i]);
        let s = &mut packed.buf[start..start + len];
        let Some(first) = s.windows(2).position(|w| w[0] == a && w[1] == b) else {
            continue;
        };
        forget_symbol(profit, s);
        let mut w = first;
        let mut r = first;
        while r < len {
            if r + 1 < len && s[r] == a && s[r + 1] == b {
                s[w] = idx;
                r += 2;
            } else {
                s[w] = s[r];
                r += 1;
            }
            w += 1;
        }
        let s = &s[..w];
        learn_symbol(profit, s);
        packed.present[i] = presence(s);
        packed.len[i] = w;
    }
}

/// `optimize_token_table()`: builds the token table and compresses every
/// symbol with it.
pub(super) fn optimize_token_table(packed: &mut Packed) -> BestTable {
    let mut profit = vec![0i64; 0x10000];
    let mut best = BestTable {
        table: [[0; 2]; 256],
        len: [0; 256],
    };
    // build_initial_token_table()
    for i in 0..packed.count() {
        learn_symbol(&mut profit, packed.get(i));
    }
    // insert_real_symbols_in_table()
    for &c in &packed.buf {
        best.table[c as usize][0] = c;
        best.len[c as usize] = 1;
    }
    // optimize_result(): slot 0 last.
    for i in (0..=255u8).rev() {
        if best.len[i as usize] != 0 {
            continue;
        }
        let tok = find_best_token(&profit);
        if profit[tok] == 0 {
            break;
        }
        let pair = [(tok & 0xff) as u8, (tok >> 8) as u8];
        best.len[i as usize] = 2;
        best.table[i as usize] = pair;
        compress_symbols(packed, &mut profit, pair, i);
    }
    best
}
