//! Which kernel's kallsyms layout and module layout rules apply.
//!
//! The mirror knows two: Linux 6.12 and Linux 7.3. It never guesses one
//! from a version string: a caller that builds tables chooses it, and a
//! reader of a real kernel's tables decides from what the tables have
//! (only 6.12 has a `kallsyms_relative_base` symbol).
//!
//! What differs between the two, from their `kernel/kallsyms.c` and
//! `scripts/kallsyms.c`:
//! - `kallsyms_offsets`: 6.12 stores `addr - kallsyms_relative_base`
//!   (with `--absolute-percpu`, per-CPU symbols as absolute values and the
//!   rest as `relative_base - 1 - addr`); 7.3 has no
//!   `kallsyms_relative_base` and no `--absolute-percpu`: with
//!   `--pc-relative` (every 64-bit or relocatable kernel) an entry is
//!   `addr - &entry` (`offset_to_ptr()`), otherwise the address itself as
//!   a `u32` ([`crate::tables::OffsetEncoding`]);
//! - `scripts/kallsyms.c` output: 7.3 drops the `#include
//!   <asm/bitsperlong.h>`/`PTR`/`ALGN` preamble, aligns every label with
//!   `.balign 4` (6.12: 8 on 64-bit), adds `.size` directives after
//!   `kallsyms_names`, `kallsyms_markers`, `kallsyms_token_table` and
//!   `kallsyms_offsets`, prints offsets as `_text - . + (N)`, and no longer
//!   makes per-CPU symbols type `A`;
//! - unchanged: `KSYM_NAME_LEN` (512), the name records and their ULEB128
//!   length, the token table and index, `kallsyms_markers`,
//!   `kallsyms_seqs_of_names`, `get_symbol_pos()`, `is_ksym_addr()` and
//!   the last symbol's end (`_einittext`, `_end` or `_etext`).

/// A kernel whose kallsyms tables and module layout the mirror knows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KernelLayout {
    /// Linux 6.12 (the patch series' and the test kernels' base).
    #[default]
    Linux6_12,
    /// Linux 7.3 (Debian trixie-backports' 7.3.4).
    Linux7_3,
}

/// What a kernel's own symbol list (`/proc/kallsyms`, in position order)
/// says about its tables, when it lists them (`CONFIG_KALLSYMS_ALL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeenTables {
    /// 6.12 when `kallsyms_relative_base` is listed, 7.3 when
    /// `kallsyms_offsets` is and `kallsyms_relative_base` is not.
    pub layout: KernelLayout,
    /// The address of `kallsyms_offsets`, if listed.
    pub offsets_addr: Option<u64>,
}

impl SeenTables {
    /// Decides from what the list has: `None` when it names neither table
    /// (a kernel without `CONFIG_KALLSYMS_ALL` lists no data symbols), in
    /// which case nothing visible depends on the encoding.
    pub fn of_symbols(core: &[crate::owned::RawSymbol]) -> Option<Self> {
        let find = |n: &[u8]| core.iter().find(|s| s.name == n).map(|s| s.addr);
        let offsets_addr = find(b"kallsyms_offsets");
        if find(b"kallsyms_relative_base").is_some() {
            Some(SeenTables {
                layout: KernelLayout::Linux6_12,
                offsets_addr,
            })
        } else {
            offsets_addr.map(|a| SeenTables {
                layout: KernelLayout::Linux7_3,
                offsets_addr: Some(a),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned::RawSymbol;
    use alloc::vec::Vec;

    fn sym(addr: u64, name: &str) -> RawSymbol {
        RawSymbol {
            addr,
            kind: b'R',
            name: name.as_bytes().to_vec(),
        }
    }

    #[test]
    fn decided_by_the_tables_present() {
        let v612: Vec<RawSymbol> = [
            sym(0x10, "kallsyms_offsets"),
            sym(0x20, "kallsyms_relative_base"),
        ]
        .into();
        let v73: Vec<RawSymbol> =
            [sym(0x10, "kallsyms_offsets"), sym(0x20, "kallsyms_names")].into();
        assert_eq!(
            SeenTables::of_symbols(&v612),
            Some(SeenTables {
                layout: KernelLayout::Linux6_12,
                offsets_addr: Some(0x10)
            })
        );
        assert_eq!(
            SeenTables::of_symbols(&v73),
            Some(SeenTables {
                layout: KernelLayout::Linux7_3,
                offsets_addr: Some(0x10)
            })
        );
        assert_eq!(SeenTables::of_symbols(&[sym(1, "_stext")]), None);
    }
}
