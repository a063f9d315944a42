//! What a userspace loader hands to an in-kernel user of the running
//! kernel's own kallsyms tables (`kmod-shim`): one `<symbol> <hex address>`
//! line per name below, read from `/proc/kallsyms`. The module trusts none
//! of them until `sprint_symbol()` confirms each one. Shared by the loader
//! (`kallsyms-bench shim load`) and the module, so the two cannot drift.

/// The tables, each with the minimum size the module checks before reading
/// (the rest is checked once `kallsyms_num_syms` is known).
/// `kallsyms_relative_base` ([`RELATIVE_BASE`]) is the one optional line
/// ([`OPTIONAL_SYMBOLS`]): Linux 6.12 has it, 7.3 does not (its
/// `kallsyms_offsets` are PC-relative). A loader sends it when
/// `/proc/kallsyms` lists it; the module reads the offsets with 6.12's
/// encoding when it is sent (and verified), 7.3's when it is not.
pub const TABLE_SYMBOLS: [(&str, usize); 8] = [
    ("kallsyms_num_syms", 4),
    ("kallsyms_relative_base", 8),
    ("kallsyms_offsets", 4),
    ("kallsyms_names", 1),
    ("kallsyms_markers", 4),
    ("kallsyms_token_table", 1),
    ("kallsyms_token_index", 512),
    ("kallsyms_seqs_of_names", 3),
];

/// Index of `kallsyms_relative_base` in [`TABLE_SYMBOLS`] (and in
/// [`LOADER_SYMBOLS`]).
pub const RELATIVE_BASE: usize = 1;

/// The lines a loader may leave out: those naming a table only some
/// kernels have (`kallsyms_relative_base`: 6.12 yes, 7.3 no).
pub const OPTIONAL_SYMBOLS: [&str; 1] = ["kallsyms_relative_base"];

/// Whether a loader may leave the line for `name` out.
pub fn is_optional(name: &str) -> bool {
    OPTIONAL_SYMBOLS.contains(&name)
}

/// Functions the module calls through verified addresses:
/// `lookup_module_symbol_name()` (the stock module path),
/// `lookup_symbol_name()` (the stock wchan lookup, for the bench),
/// `__module_address()` (which module holds an address) and
/// `kallsyms_lookup()` (the stock chain behind `%pS`); none is exported.
pub const FUNCTION_SYMBOLS: [&str; 4] = [
    "lookup_module_symbol_name",
    "lookup_symbol_name",
    "__module_address",
    "kallsyms_lookup",
];

/// The section bounds of [`Sections`](kallsyms_fast::Sections), in the order of
/// [`Sections::bounds`](kallsyms_fast::Sections::bounds).
pub const SECTION_SYMBOLS: [&str; 7] = [
    "_stext",
    "_etext",
    "_sinittext",
    "_einittext",
    "_end",
    "__init_begin",
    "__init_end",
];

/// Number of lines a loader sends.
pub const NUM_LOADER_SYMBOLS: usize =
    TABLE_SYMBOLS.len() + FUNCTION_SYMBOLS.len() + SECTION_SYMBOLS.len();

/// Every name, in the order above: tables, functions, sections.
// Evaluated at compile time: a bad index or overflow fails the build.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub const LOADER_SYMBOLS: [&str; NUM_LOADER_SYMBOLS] = {
    let mut out = [""; NUM_LOADER_SYMBOLS];
    let mut i = 0;
    while i < TABLE_SYMBOLS.len() {
        out[i] = TABLE_SYMBOLS[i].0;
        i += 1;
    }
    let mut j = 0;
    while j < FUNCTION_SYMBOLS.len() {
        out[i + j] = FUNCTION_SYMBOLS[j];
        j += 1;
    }
    let mut k = 0;
    while k < SECTION_SYMBOLS.len() {
        out[i + j + k] = SECTION_SYMBOLS[k];
        k += 1;
    }
    out
};

#[cfg(test)]
mod tests {
    use super::{is_optional, LOADER_SYMBOLS, RELATIVE_BASE, SECTION_SYMBOLS, TABLE_SYMBOLS};
    use kallsyms_fast::Sections;

    /// The module finds the relative base by index: the index must name it,
    /// and it must be the only optional line.
    #[test]
    fn relative_base_is_the_optional_line() {
        assert_eq!(TABLE_SYMBOLS[RELATIVE_BASE].0, "kallsyms_relative_base");
        assert_eq!(LOADER_SYMBOLS[RELATIVE_BASE], "kallsyms_relative_base");
        let mut optional = LOADER_SYMBOLS.iter().filter(|n| is_optional(n));
        assert_eq!(optional.next(), Some(&"kallsyms_relative_base"));
        assert_eq!(optional.next(), None);
    }

    /// `Sections::bounds()` lists the fields in the loader's name order, and
    /// `from_bounds()` puts them back.
    #[test]
    fn section_symbols_follow_bounds_order() {
        let s = Sections {
            stext: 1,
            etext: 2,
            sinittext: 3,
            einittext: 4,
            end: 5,
            init_begin: 6,
            init_end: 7,
            gate: Some((8, 9)),
            all_symbols: true,
        };
        for (name, b) in SECTION_SYMBOLS.iter().zip(s.bounds()) {
            let field = match *name {
                "_stext" => s.stext,
                "_etext" => s.etext,
                "_sinittext" => s.sinittext,
                "_einittext" => s.einittext,
                "_end" => s.end,
                "__init_begin" => s.init_begin,
                "__init_end" => s.init_end,
                other => panic!("unknown section symbol {other}"),
            };
            assert_eq!(field, b, "{name}");
        }
        assert_eq!(Sections::from_bounds(s.bounds(), s.gate, true), s);
    }
}
