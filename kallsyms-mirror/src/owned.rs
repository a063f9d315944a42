//! Owned storage for a set of kallsyms tables (builders and parsers).

use alloc::vec::Vec;

use crate::tables::{KallsymsTables, OffsetEncoding, Sections};

/// One symbol as `nm -n` or `/proc/kallsyms` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RawSymbol {
    /// Symbol value.
    pub addr: u64,
    /// Type character (`T`, `t`, `D`, ...).
    pub kind: u8,
    /// Name bytes (no NUL).
    pub name: Vec<u8>,
}

/// Owned kallsyms tables, laid out byte for byte as `scripts/kallsyms.c`
/// emits them. See [`KallsymsTables`] for the meaning of each field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedTables {
    /// `kallsyms_offsets`.
    pub offsets: Vec<i32>,
    /// How `offsets` encode addresses (with 6.12's
    /// `kallsyms_relative_base`, or 7.3's PC-relative entries and the
    /// address of `kallsyms_offsets`).
    pub encoding: OffsetEncoding,
    /// `kallsyms_names`.
    pub names: Vec<u8>,
    /// `kallsyms_markers`.
    pub markers: Vec<u32>,
    /// `kallsyms_token_table`.
    pub token_table: Vec<u8>,
    /// `kallsyms_token_index` (256 entries).
    pub token_index: Vec<u16>,
    /// `kallsyms_seqs_of_names`.
    pub seqs_of_names: Vec<u8>,
    /// Section bounds for lookups over these tables.
    pub sections: Sections,
}

impl OwnedTables {
    /// A borrowed view of these tables.
    #[inline]
    pub fn view(&self) -> KallsymsTables<'_> {
        KallsymsTables {
            num_syms: self.offsets.len() as u32,
            offsets: &self.offsets,
            encoding: self.encoding,
            names: &self.names,
            markers: &self.markers,
            token_table: &self.token_table,
            token_index: &self.token_index,
            seqs_of_names: &self.seqs_of_names,
        }
    }
}
