//! The kernel's own kallsyms tables, exactly as `scripts/kallsyms.c` lays
//! them out (Linux 6.12 and 7.3: they differ only in how
//! `kallsyms_offsets` encodes an address, see [`OffsetEncoding`]), plus the
//! section bounds the lookup code consults.
//!
//! Nothing here is trusted: a [`KallsymsTables`] is a borrowed view over byte
//! slices that may come from a file, a fuzzer or kernel memory. Every access
//! goes through a checked accessor that returns `None` instead of panicking, and
//! [`KallsymsTables::validate`] checks the whole structure once so that callers
//! which need a verified table (the fast index builders) can refuse a bad one
//! as a whole.

/// Length of the kernel's name buffer (`KSYM_NAME_LEN`, 512 in 6.12 and
/// 7.3 alike).
pub const KSYM_NAME_LEN: usize = 512;

/// Symbols per marker (`kallsyms_markers` has one entry per 256 symbols).
pub const MARKER_STRIDE: usize = 256;

/// How a `kallsyms_offsets` entry gives an address
/// (`kallsyms_sym_address()`): the one thing 6.12 and 7.3 tables differ
/// in. The kernel decides it at build time; a reader decides it from what
/// the kernel has: a `kallsyms_relative_base` symbol exists only in the
/// 6.12 layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetEncoding {
    /// Linux 6.12: `kallsyms_relative_base + (u32)kallsyms_offsets[i]`;
    /// with `CONFIG_KALLSYMS_ABSOLUTE_PERCPU` (x86_64 SMP) a non-negative
    /// entry is the absolute address and a negative one
    /// `kallsyms_relative_base - 1 - kallsyms_offsets[i]`.
    RelativeBase {
        /// `kallsyms_relative_base`.
        base: u64,
        /// `CONFIG_KALLSYMS_ABSOLUTE_PERCPU`.
        absolute_percpu: bool,
    },
    /// Linux 7.3 (`scripts/kallsyms --pc-relative`, every 64-bit or
    /// relocatable kernel): `offset_to_ptr(&kallsyms_offsets[i])`, the
    /// address of the entry itself plus the sign-extended entry. There is
    /// no `kallsyms_relative_base` and no per-CPU special case. (7.3's
    /// other form, a non-relocatable 32-bit kernel's `(u32)` absolute
    /// value, is `RelativeBase { base: 0, absolute_percpu: false }`.)
    PcRelative {
        /// The address of `kallsyms_offsets[0]` in the kernel.
        table_addr: u64,
    },
}

impl Default for OffsetEncoding {
    /// A 6.12 table with base 0 and no per-CPU encoding.
    fn default() -> Self {
        OffsetEncoding::RelativeBase {
            base: 0,
            absolute_percpu: false,
        }
    }
}

impl OffsetEncoding {
    /// `kallsyms_relative_base`, which only the 6.12 layout has.
    #[inline]
    pub fn relative_base(self) -> Option<u64> {
        match self {
            OffsetEncoding::RelativeBase { base, .. } => Some(base),
            OffsetEncoding::PcRelative { .. } => None,
        }
    }

    /// `CONFIG_KALLSYMS_ABSOLUTE_PERCPU` (6.12 only; 7.3 has no such
    /// encoding).
    #[inline]
    pub fn absolute_percpu(self) -> bool {
        matches!(
            self,
            OffsetEncoding::RelativeBase {
                absolute_percpu: true,
                ..
            }
        )
    }

    /// `kallsyms_sym_address(idx)` for the entry `off` at position `idx`.
    ///
    /// # Examples
    ///
    /// The same entry read by each kernel's rule:
    ///
    /// ```
    /// use kallsyms_fast::OffsetEncoding;
    ///
    /// // 6.12: base + (u32)entry; with absolute per-CPU, a negative entry
    /// // counts down from base - 1 and a non-negative one is absolute.
    /// let base = 0xffff_ffff_8100_0000;
    /// let v612 = OffsetEncoding::RelativeBase { base, absolute_percpu: true };
    /// assert_eq!(v612.decode(5, 0x2_0000), 0x2_0000);
    /// assert_eq!(v612.decode(5, -0x101), base + 0x100);
    ///
    /// // 7.3: the address of the entry itself plus the entry.
    /// let table_addr = 0xffff_ffff_8260_0000;
    /// let v73 = OffsetEncoding::PcRelative { table_addr };
    /// assert_eq!(v73.decode(5, -0x10), table_addr + 5 * 4 - 0x10);
    /// ```
    #[inline]
    pub fn decode(self, idx: usize, off: i32) -> u64 {
        match self {
            OffsetEncoding::RelativeBase {
                base,
                absolute_percpu,
            } => decode_offset(off, base, absolute_percpu),
            OffsetEncoding::PcRelative { table_addr } => decode_pc_relative(table_addr, idx, off),
        }
    }
}

/// A borrowed view of one kernel's kallsyms tables.
///
/// Field names follow the kernel's symbols of the same name.
#[derive(Clone, Copy, Debug)]
pub struct KallsymsTables<'a> {
    /// `kallsyms_num_syms`.
    pub num_syms: u32,
    /// `kallsyms_offsets`: one entry per symbol, in address order.
    pub offsets: &'a [i32],
    /// How `offsets` encode addresses (and `kallsyms_relative_base`, which
    /// only the 6.12 layout has).
    pub encoding: OffsetEncoding,
    /// `kallsyms_names`: `[len][len token bytes]` records, `len` one byte or,
    /// with bit 7 set, two bytes (ULEB128, 14 bits).
    pub names: &'a [u8],
    /// `kallsyms_markers`: byte offset into `names` of every 256th record.
    pub markers: &'a [u32],
    /// `kallsyms_token_table`: NUL-terminated token strings.
    pub token_table: &'a [u8],
    /// `kallsyms_token_index`: offset of token `i` in `token_table`.
    pub token_index: &'a [u16],
    /// `kallsyms_seqs_of_names`: three big-endian bytes per symbol, giving the
    /// address-order position of the `i`-th symbol in name order.
    pub seqs_of_names: &'a [u8],
}

/// The section boundaries `is_ksym_addr()` and `get_symbol_pos()` use.
///
/// In the kernel these are linker symbols; the userspace mirror reads them
/// from the symbol table itself (`_stext`, `_etext`, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    /// `_stext`.
    pub stext: u64,
    /// `_etext`.
    pub etext: u64,
    /// `_sinittext`.
    pub sinittext: u64,
    /// `_einittext`.
    pub einittext: u64,
    /// `_end`.
    pub end: u64,
    /// `__init_begin`.
    pub init_begin: u64,
    /// `__init_end`.
    pub init_end: u64,
    /// The gate area (`in_gate_area_no_mm()`, the x86_64 vsyscall page), if
    /// the kernel has one: `[start, end)`.
    pub gate: Option<(u64, u64)>,
    /// `CONFIG_KALLSYMS_ALL`.
    pub all_symbols: bool,
}

impl Sections {
    /// Sections from the seven linker-symbol bounds in
    /// [`bounds`](Self::bounds)' order.
    pub const fn from_bounds(b: [u64; 7], gate: Option<(u64, u64)>, all_symbols: bool) -> Self {
        let [stext, etext, sinittext, einittext, end, init_begin, init_end] = b;
        Self {
            stext,
            etext,
            sinittext,
            einittext,
            end,
            init_begin,
            init_end,
            gate,
            all_symbols,
        }
    }

    /// The seven linker-symbol bounds, in the order of
    /// `kallsyms_fast_shared::loader::SECTION_SYMBOLS` (`_stext`,
    /// `_etext`, `_sinittext`, `_einittext`, `_end`, `__init_begin`,
    /// `__init_end`): what a loader passes and a verifier probes.
    pub const fn bounds(&self) -> [u64; 7] {
        [
            self.stext,
            self.etext,
            self.sinittext,
            self.einittext,
            self.end,
            self.init_begin,
            self.init_end,
        ]
    }

    /// `is_kernel_inittext()`.
    #[inline]
    pub fn is_kernel_inittext(&self, addr: u64) -> bool {
        addr >= self.sinittext && addr < self.einittext
    }

    #[inline]
    fn in_gate_area(&self, addr: u64) -> bool {
        matches!(self.gate, Some((s, e)) if addr >= s && addr < e)
    }

    /// `is_kernel_text()`.
    #[inline]
    pub fn is_kernel_text(&self, addr: u64) -> bool {
        (addr >= self.stext && addr < self.etext) || self.in_gate_area(addr)
    }

    /// `is_kernel()`.
    #[inline]
    pub fn is_kernel(&self, addr: u64) -> bool {
        (addr >= self.stext && addr < self.end)
            || (addr >= self.init_begin && addr < self.init_end)
            || self.in_gate_area(addr)
    }

    /// `is_ksym_addr()`: whether the core table is consulted at all.
    #[inline]
    pub fn is_ksym_addr(&self, addr: u64) -> bool {
        if self.all_symbols {
            self.is_kernel(addr)
        } else {
            self.is_kernel_text(addr) || self.is_kernel_inittext(addr)
        }
    }

    /// The end `get_symbol_pos()` uses for the last symbol.
    #[inline]
    pub fn last_symbol_end(&self, addr: u64) -> u64 {
        if self.is_kernel_inittext(addr) {
            self.einittext
        } else if self.all_symbols {
            self.end
        } else {
            self.etext
        }
    }
}

/// Why a table failed validation. Names the field, as the kernel calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableError {
    /// A table is shorter than `kallsyms_num_syms` requires.
    TooShort(&'static str),
    /// A name record runs past the end of `kallsyms_names`, or is empty.
    BadNameRecord {
        /// Address-order position of the record.
        pos: u32,
    },
    /// A marker does not point at the start of record `256 * index`.
    BadMarker {
        /// Index into `kallsyms_markers`.
        index: u32,
    },
    /// A token index points outside the token table or at an unterminated token.
    BadToken {
        /// Token number (0..=255).
        token: u8,
    },
    /// Addresses are not in ascending order.
    Unsorted {
        /// Position of the first symbol below its predecessor.
        pos: u32,
    },
    /// `kallsyms_seqs_of_names` names a position out of range, or is not a
    /// permutation.
    BadSeq {
        /// Index into name order.
        index: u32,
    },
    /// A name expands to nothing or to more than `KSYM_NAME_LEN - 1` bytes.
    BadName {
        /// Address-order position of the symbol.
        pos: u32,
    },
    /// More symbols than the 24-bit `seqs_of_names` encoding can address.
    TooMany,
    /// `kallsyms_num_syms` is zero: no kernel has an empty table, and the
    /// indexes need one symbol to start from.
    Empty,
    /// `kallsyms_seqs_of_names` is not in the order `scripts/kallsyms`
    /// writes (name, then address, then position), which the binary search
    /// of `kallsyms_lookup_names()` relies on.
    NameOrder {
        /// Index into name order of the first entry below its predecessor.
        index: u32,
    },
}

impl core::fmt::Display for TableError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            TableError::TooShort(field) => {
                write!(f, "{field}: shorter than kallsyms_num_syms requires")
            }
            TableError::BadNameRecord { pos } => {
                write!(
                    f,
                    "kallsyms_names: record {pos} is empty or runs past the end"
                )
            }
            TableError::BadMarker { index } => {
                write!(
                    f,
                    "kallsyms_markers[{index}]: does not point at record {}",
                    u64::from(index).saturating_mul(MARKER_STRIDE as u64)
                )
            }
            TableError::BadToken { token } => {
                write!(
                    f,
                    "kallsyms_token_index[{token}]: outside kallsyms_token_table or unterminated"
                )
            }
            TableError::Unsorted { pos } => {
                write!(f, "kallsyms_offsets[{pos}]: address below its predecessor")
            }
            TableError::BadSeq { index } => {
                write!(
                    f,
                    "kallsyms_seqs_of_names[{index}]: out of range or repeated"
                )
            }
            TableError::BadName { pos } => write!(
                f,
                "kallsyms_names: symbol {pos} has an empty or over-long name"
            ),
            TableError::TooMany => write!(f, "kallsyms_num_syms: more than 2^24 symbols"),
            TableError::Empty => write!(f, "kallsyms_num_syms: no symbols"),
            TableError::NameOrder { index } => write!(
                f,
                "kallsyms_seqs_of_names[{index}]: not sorted by name, address and position"
            ),
        }
    }
}

impl<'a> KallsymsTables<'a> {
    /// Number of symbols as a `usize`.
    #[inline]
    pub fn len(&self) -> usize {
        self.num_syms as usize
    }

    /// Whether the table has no symbols.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.num_syms == 0
    }

    /// `kallsyms_sym_address()`; `None` when `idx` is out of range.
    #[inline]
    pub fn sym_address(&self, idx: usize) -> Option<u64> {
        let off = *self.offsets.get(idx)?;
        Some(self.encoding.decode(idx, off))
    }

    /// `get_symbol_seq()`: address-order position of the `index`-th symbol in
    /// name order.
    #[inline]
    pub fn symbol_seq(&self, index: usize) -> Option<usize> {
        let start = index.checked_mul(3)?;
        let &[b0, b1, b2] = self.seqs_of_names.get(start..start.checked_add(3)?)? else {
            return None;
        };
        Some((usize::from(b0) << 16) | (usize::from(b1) << 8) | usize::from(b2))
    }

    /// The token string of token byte `t`, without its terminating NUL.
    #[inline]
    pub fn token(&self, t: u8) -> Option<&'a [u8]> {
        let start = *self.token_index.get(t as usize)? as usize;
        let rest = self.token_table.get(start..)?;
        let len = rest.iter().position(|&b| b == 0)?;
        rest.get(..len)
    }

    /// Decodes the record header at byte offset `off` of `kallsyms_names`:
    /// returns `(first data byte offset, data length)`.
    #[inline]
    pub fn record_at(&self, off: usize) -> Option<(usize, usize)> {
        let b0 = usize::from(*self.names.get(off)?);
        if b0 & 0x80 != 0 {
            let b1 = usize::from(*self.names.get(off.checked_add(1)?)?);
            Some((off.checked_add(2)?, (b0 & 0x7f) | (b1 << 7)))
        } else {
            Some((off.checked_add(1)?, b0))
        }
    }

    /// `get_symbol_pos()`'s end for a symbol starting at `start`: the first
    /// address above `start` at positions `from..` ("search for next
    /// non-aliased symbol"), else the end of the section holding `addr`.
    /// `None` when an address cannot be read.
    #[inline]
    pub fn symbol_end(&self, s: &Sections, from: usize, start: u64, addr: u64) -> Option<u64> {
        for i in from..self.len() {
            let a = self.sym_address(i)?;
            if a > start {
                return Some(a);
            }
        }
        Some(s.last_symbol_end(addr))
    }

    /// The token bytes of the record at byte offset `off` of
    /// `kallsyms_names`, and the offset of the next record; `None` when the
    /// record runs past the end.
    #[inline]
    pub fn record(&self, off: usize) -> Option<(&'a [u8], usize)> {
        let (data, len) = self.record_at(off)?;
        let end = data.checked_add(len)?;
        Some((self.names.get(data..end)?, end))
    }

    /// Checks the whole structure once: at least one symbol, lengths,
    /// record framing, markers,
    /// tokens, address order, name lengths and that `seqs_of_names` is a
    /// permutation. `scratch` must hold at least `num_syms` bits
    /// (`num_syms.div_ceil(64)` words); it is overwritten.
    ///
    /// Whether `seqs_of_names` is in name order is checked separately, by
    /// [`check_name_order`](Self::check_name_order): it needs every
    /// record's offset in name order, which costs a walk of up to 255
    /// records per symbol here (half a second on a 122k-symbol table) but
    /// little once the address index exists (tens of ms, random access).
    /// Address lookups do not depend on it; a caller that serves name
    /// lookups over tables it did not build itself should call it.
    pub fn validate(&self, scratch: &mut [u64]) -> Result<(), TableError> {
        let n = self.len();
        if n > (1 << 24) {
            return Err(TableError::TooMany);
        }
        if n == 0 {
            return Err(TableError::Empty);
        }
        if self.offsets.len() < n {
            return Err(TableError::TooShort("kallsyms_offsets"));
        }
        if self.markers.len() < n.div_ceil(MARKER_STRIDE) {
            return Err(TableError::TooShort("kallsyms_markers"));
        }
        if self.token_index.len() < 256 {
            return Err(TableError::TooShort("kallsyms_token_index"));
        }
        // n <= 2^24 (checked above): 3 * n cannot saturate.
        if self.seqs_of_names.len() < n.saturating_mul(3) {
            return Err(TableError::TooShort("kallsyms_seqs_of_names"));
        }
        if scratch.len() < n.div_ceil(64) {
            return Err(TableError::TooShort("scratch"));
        }
        let mut token_len = [0usize; 256];
        for (t, slot) in (0..=u8::MAX).zip(token_len.iter_mut()) {
            *slot = self
                .token(t)
                .ok_or(TableError::BadToken { token: t })?
                .len();
        }
        let mut off = 0usize;
        let mut prev = 0u64;
        for pos in 0..n {
            if pos % MARKER_STRIDE == 0
                && self
                    .markers
                    .get(pos / MARKER_STRIDE)
                    .and_then(|&m| usize::try_from(m).ok())
                    != Some(off)
            {
                return Err(TableError::BadMarker {
                    index: pos32(pos / MARKER_STRIDE),
                });
            }
            let bad = TableError::BadNameRecord { pos: pos32(pos) };
            let (data, len) = self.record_at(off).ok_or(bad)?;
            let end = data.checked_add(len).ok_or(bad)?;
            let bytes = self.names.get(data..end).ok_or(bad)?;
            if len == 0 {
                return Err(bad);
            }
            // The first expanded byte is the type; the name is the rest.
            let expanded = bytes.iter().fold(0usize, |sum, &t| {
                sum.saturating_add(token_len.get(usize::from(t)).copied().unwrap_or(0))
            });
            if !(2..=KSYM_NAME_LEN).contains(&expanded) {
                return Err(TableError::BadName { pos: pos32(pos) });
            }
            off = end;
            let addr = self
                .sym_address(pos)
                .ok_or(TableError::TooShort("kallsyms_offsets"))?;
            if pos > 0 && addr < prev {
                return Err(TableError::Unsorted { pos: pos32(pos) });
            }
            prev = addr;
        }
        for w in scratch.iter_mut().take(n.div_ceil(64)) {
            *w = 0;
        }
        for i in 0..n {
            let bad = TableError::BadSeq { index: pos32(i) };
            let seq = self.symbol_seq(i).ok_or(bad)?;
            let bit = 1u64 << (seq % 64);
            let word = scratch.get_mut(seq / 64).filter(|_| seq < n).ok_or(bad)?;
            if *word & bit != 0 {
                return Err(bad);
            }
            *word |= bit;
        }
        Ok(())
    }

    /// Checks that `seqs_of_names` is in the order `compare_names()` of
    /// `scripts/kallsyms.c` gives: names ascending by `strcmp()`, equal
    /// names by address, then position. Addresses ascend with position in
    /// a table whose offsets are sorted, so equal names must come in
    /// ascending position. Call it on a table that passed
    /// [`validate`](Self::validate); `offset_of(pos)` is the byte offset
    /// of record `pos` (`AddrIndex::name_offset`, or
    /// [`crate::name::record_offset`]).
    ///
    /// Both name lookups need this order: `kallsyms_lookup_names()`
    /// binary-searches `seqs_of_names`, the fast name index does not read
    /// it, so on a table out of order the two disagree. The comparison
    /// streams the expanded names, with no buffer.
    pub fn check_name_order(
        &self,
        offset_of: impl Fn(usize) -> Option<usize>,
    ) -> Result<(), TableError> {
        let mut prev: Option<(usize, usize)> = None;
        for i in 0..self.len() {
            let bad = TableError::NameOrder { index: pos32(i) };
            let seq = self.symbol_seq(i).ok_or(bad)?;
            let off = offset_of(seq).ok_or(bad)?;
            if let Some((prev_seq, prev_off)) = prev {
                let order = self.compare_names(prev_off, off).ok_or(bad)?;
                if order.then(prev_seq.cmp(&seq)) != core::cmp::Ordering::Less {
                    return Err(bad);
                }
            }
            prev = Some((seq, off));
        }
        Ok(())
    }

    /// `strcmp()` of the expanded names (type character dropped) of the
    /// records at `a` and `b`, one byte at a time.
    fn compare_names(&self, a: usize, b: usize) -> Option<core::cmp::Ordering> {
        let mut a = NameBytes::new(self, a)?;
        let mut b = NameBytes::new(self, b)?;
        // Equal leading token bytes expand to equal bytes: skip them (names
        // next to each other in name order share long prefixes, usually
        // compressed alike), once they include a non-empty first token,
        // which carries the type character.
        let same = a
            .record
            .iter()
            .zip(b.record)
            .take_while(|(x, y)| x == y)
            .count();
        let first = *a.record.first()?;
        if same > 0 && !self.token(first)?.is_empty() {
            a.skip_tokens(same)?;
            b.skip_tokens(same)?;
        }
        // Each name expands to at most KSYM_NAME_LEN bytes (validated).
        for _ in 0..=KSYM_NAME_LEN {
            match (a.next_byte()?, b.next_byte()?) {
                (None, None) => return Some(core::cmp::Ordering::Equal),
                (x, y) if x != y => return Some(x.cmp(&y)),
                _ => {}
            }
        }
        None
    }
}

/// The expanded name of one record, one byte at a time, without the type
/// character (what `kallsyms_expand_symbol()` writes, minus the buffer).
struct NameBytes<'t, 'a> {
    tables: &'t KallsymsTables<'a>,
    /// Token bytes of the record not yet expanded.
    record: &'a [u8],
    /// Rest of the current token.
    token: &'a [u8],
    skipped_first: bool,
}

impl<'t, 'a> NameBytes<'t, 'a> {
    fn new(tables: &'t KallsymsTables<'a>, off: usize) -> Option<Self> {
        let (data, len) = tables.record_at(off)?;
        Some(Self {
            tables,
            record: tables.names.get(data..data.checked_add(len)?)?,
            token: &[],
            skipped_first: false,
        })
    }

    /// Skips the first `n` tokens of the record, type character included
    /// (the first token must not be empty).
    fn skip_tokens(&mut self, n: usize) -> Option<()> {
        self.record = self.record.get(n..)?;
        self.skipped_first = true;
        Some(())
    }

    /// `Some(None)` at the end of the name, `None` for a token out of
    /// bounds.
    fn next_byte(&mut self) -> Option<Option<u8>> {
        loop {
            if let Some((&c, rest)) = self.token.split_first() {
                self.token = rest;
                if self.skipped_first {
                    return Some(Some(c));
                }
                self.skipped_first = true;
                continue;
            }
            let Some((&t, rest)) = self.record.split_first() else {
                return Some(None);
            };
            self.record = rest;
            self.token = self.tables.token(t)?;
        }
    }
}

/// A position for an error: tables hold at most 2^24 symbols (checked
/// first), so it always fits.
pub(crate) fn pos32(pos: usize) -> u32 {
    u32::try_from(pos).unwrap_or(u32::MAX)
}

/// 7.3's `kallsyms_sym_address()`: `offset_to_ptr(&kallsyms_offsets[idx])`,
/// i.e. `(unsigned long)&kallsyms_offsets[idx] + kallsyms_offsets[idx]`
/// (the `int` sign-extended, the sum modulo 2^64), where
/// `&kallsyms_offsets[idx]` is `table_addr + 4 * idx`.
#[inline]
pub fn decode_pc_relative(table_addr: u64, idx: usize, off: i32) -> u64 {
    // `idx` is below 2^24 for any validated table; the arithmetic wraps
    // like the kernel's pointer arithmetic for any other.
    #[allow(clippy::cast_sign_loss)]
    let bits = i64::from(off) as u64;
    let entry = (idx as u64).wrapping_mul(4);
    table_addr.wrapping_add(entry).wrapping_add(bits)
}

/// 6.12's `kallsyms_sym_address()` decoding of one `kallsyms_offsets`
/// entry.
#[inline]
pub fn decode_offset(off: i32, relative_base: u64, absolute_percpu: bool) -> u64 {
    if !absolute_percpu {
        // `(u32)kallsyms_offsets[idx]`: the bits, as an unsigned offset.
        #[allow(clippy::cast_sign_loss)]
        let bits = off as u32;
        return relative_base.wrapping_add(u64::from(bits));
    }
    if off >= 0 {
        u64::from(off.unsigned_abs())
    } else {
        // relative_base - 1 - off, in the kernel's unsigned long arithmetic
        // (the int is sign-extended, then taken modulo 2^64).
        #[allow(clippy::cast_sign_loss)]
        let bits = i64::from(off) as u64;
        relative_base.wrapping_sub(1).wrapping_sub(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 7.3: `&kallsyms_offsets[i] + (int)kallsyms_offsets[i]`, the entry
    /// sign-extended and the sum modulo 2^64.
    #[test]
    fn pc_relative_is_entry_address_plus_entry() {
        let t = 0xffff_ffff_8260_0000u64;
        assert_eq!(decode_pc_relative(t, 0, 0), t);
        assert_eq!(decode_pc_relative(t, 3, 0x10), t + 12 + 0x10);
        assert_eq!(decode_pc_relative(t, 2, -0x60_0000), t + 8 - 0x60_0000);
        assert_eq!(decode_pc_relative(t, 1, i32::MIN), t + 4 - (1u64 << 31));
        assert_eq!(decode_pc_relative(u64::MAX - 4, 1, 1), 0);
        let e = OffsetEncoding::PcRelative { table_addr: t };
        assert_eq!(e.decode(2, -0x60_0000), t + 8 - 0x60_0000);
        // The 6.12 encodings are unchanged.
        let r = OffsetEncoding::RelativeBase {
            base: 0xffff_ffff_8100_0000,
            absolute_percpu: false,
        };
        assert_eq!(
            r.decode(7, -1),
            0xffff_ffff_8100_0000u64.wrapping_add(0xffff_ffff)
        );
        let p = OffsetEncoding::RelativeBase {
            base: 0xffff_ffff_8100_0000,
            absolute_percpu: true,
        };
        assert_eq!(p.decode(7, 0x1000), 0x1000);
        assert_eq!(p.decode(7, -1), 0xffff_ffff_8100_0000);
    }
}
