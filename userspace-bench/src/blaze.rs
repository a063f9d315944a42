//! Reference resolver: blazesym's kernel symbolizer fed a `/proc/kallsyms`-format file.
//!
//! blazesym (0.2.x) is the library bpftrace and libbpf-tools use to turn kernel addresses into
//! names. It is driven here exactly as those tools drive it (`Symbolizer` + `Source::Kernel`), but
//! restricted to the one kallsyms file: `vmlinux` is disabled (no `/boot` or
//! `/usr/lib/debug/boot` search, so no ELF/DWARF and no `/proc/modules` or depmod lookups), the
//! KASLR offset is given as 0 (nothing is read from `/proc/kcore` or `/sys`), debug symbols, code
//! info, inlined functions and demangling are off.
//!
//! How blazesym's kallsyms handling differs from the kernel's own lookup (`kallsyms_lookup`), as
//! read in its source (`src/kernel/ksym.rs`) and observed in the tests below:
//!
//! - **Parsing.** Each line is split on ASCII whitespace; the first three tokens are taken as
//!   address, type and name, and anything after (the `[module]` tag) is dropped. Lines with fewer
//!   than three tokens or a non-hex address are skipped silently. Lines whose address is 0 are
//!   skipped, so a file read without privilege (`kptr_restrict`: all addresses 0) yields an empty
//!   table, which [`Blaze::new`] reports as an error. One invalid UTF-8 byte anywhere fails the
//!   whole load (it reads with `BufRead::read_line`).
//! - **Symbol type is ignored.** Text, data, rodata, bss, weak and absolute (`A`) symbols all go
//!   into one table, so non-text addresses resolve to the preceding symbol of any type. The kernel
//!   only resolves addresses inside its text ranges unless `CONFIG_KALLSYMS_ALL`.
//! - **Modules are not separate.** Module symbols are merged into the same address-sorted table
//!   and reported without a module name; an address in a gap between or after modules resolves to
//!   the preceding module symbol. The kernel consults the module's own bounds and symtab.
//! - **No sizes.** Every symbol is reported with `size: None` and extends up to the next higher
//!   address; the **last symbol in the file covers everything above it, up to `u64::MAX`**. The
//!   kernel bounds the last symbol by the end of its section (`_etext`, `_einittext`, module end).
//!   Addresses below the first symbol do not resolve in either.
//! - **Aliases.** For several symbols at one address blazesym returns the first one in *file*
//!   order (a stable sort by address, then a backwards scan to the first equal entry). For a real
//!   `/proc/kallsyms` that file order is the kernel's table order, so it picks the same alias as
//!   the kernel (e.g. `srso_alias_untrain_ret`, not `_stext`/`_text`, on x86-64); for a re-sorted
//!   or hand-written file the result depends on line order. Exception (a blazesym bug in
//!   `util::find_match_or_lower_bound_by_key`): for an address strictly inside the *lowest*
//!   alias group, the backwards scan runs off index 0 and returns the *last* alias of that group,
//!   so on this x86-64 kernel `_stext+0` is `srso_alias_untrain_ret` but `_stext+1` is
//!   `__pi__text+0x1`.
//! - **Per-call cost.** Each `symbolize` call `stat()`s the kallsyms path (blazesym's file cache
//!   always checks for a changed file, there is no knob for the kernel source) and allocates an
//!   owned `String` for every resolved name. A batch pays the `stat` once.
//! - **No name lookup.** blazesym's `inspect::Inspector` offers only ELF and Breakpad sources,
//!   not kallsyms (the kallsyms resolver's name index is crate-private), so
//!   [`Blaze::supports_name_lookup`] is `false`.
//!
//! A [`Blaze`] is neither `Send` nor `Sync` (blazesym's `Symbolizer` uses `Rc`/`RefCell`).

use std::path::Path;

use blazesym::symbolize::source::{Kernel, Source};
use blazesym::symbolize::{Input, Reason, Symbolized, Symbolizer};
use blazesym::MaybeDefault;

/// blazesym's kernel symbolizer over one kallsyms-format file.
pub struct Blaze {
    /// The symbolizer; it caches the parsed kallsyms table after the first call.
    symbolizer: Symbolizer,
    /// Kernel source naming only the kallsyms file (no vmlinux, KASLR offset 0).
    source: Source<'static>,
}

impl Blaze {
    /// Creates the symbolizer for `kallsyms` (a path to a /proc/kallsyms-format file) and forces it
    /// to parse the file now (by symbolizing one address), so parse cost can be timed separately
    /// from lookups.
    ///
    /// Fails if the file cannot be read, is not valid UTF-8, or contains no symbol with a non-zero
    /// address.
    pub fn new(kallsyms: &Path) -> Result<Self, String> {
        let symbolizer = Symbolizer::builder()
            .enable_code_info(false)
            .enable_inlined_fns(false)
            .enable_demangling(false)
            .build();
        let source = Source::Kernel(Kernel {
            kallsyms: MaybeDefault::Some(kallsyms.to_path_buf()),
            vmlinux: MaybeDefault::None,
            kaslr_offset: Some(0),
            debug_syms: false,
            ..Kernel::default()
        });
        let blaze = Self { symbolizer, source };
        // Any address forces the load; the highest one resolves whenever the table is non-empty,
        // because blazesym's last symbol has no upper bound.
        match blaze
            .symbolizer
            .symbolize_single(&blaze.source, Input::AbsAddr(u64::MAX))
        {
            Ok(Symbolized::Sym(_)) => Ok(blaze),
            Ok(Symbolized::Unknown(Reason::MissingSyms)) => Err(format!(
                "{}: no symbols with a non-zero address (unprivileged read?)",
                kallsyms.display()
            )),
            Ok(Symbolized::Unknown(reason)) => Err(format!(
                "{}: blazesym could not load symbols: {reason}",
                kallsyms.display()
            )),
            Err(err) => Err(format!("{}: blazesym: {err:#}", kallsyms.display())),
        }
    }

    /// Symbolizes `addrs` in one batch call (as blazesym users do); returns how many resolved to
    /// a symbol and a checksum (sum of name lengths plus offsets) so the optimizer cannot skip
    /// work. A failing call counts as nothing resolved.
    pub fn symbolize_batch(&self, addrs: &[u64]) -> (usize, u64) {
        let Ok(syms) = self
            .symbolizer
            .symbolize(&self.source, Input::AbsAddr(addrs))
        else {
            return (0, 0);
        };
        let mut resolved = 0;
        let mut checksum = 0u64;
        for sym in syms.iter().filter_map(Symbolized::as_sym) {
            resolved += 1;
            checksum = checksum
                .wrapping_add(sym.name.len() as u64)
                .wrapping_add(sym.offset as u64);
        }
        (resolved, checksum)
    }

    /// Symbolizes one address at a time (per-call cost); returns the symbol name and the offset
    /// of `addr` from the symbol's start, or `None` if it does not resolve.
    pub fn symbolize_one(&self, addr: u64) -> Option<(String, u64)> {
        match self
            .symbolizer
            .symbolize_single(&self.source, Input::AbsAddr(addr))
        {
            Ok(Symbolized::Sym(sym)) => Some((sym.name.into_owned(), sym.offset as u64)),
            _ => None,
        }
    }

    /// Name -> address. Always `None`: blazesym has no public lookup-by-name for kallsyms (see
    /// [`Blaze::supports_name_lookup`]).
    pub fn lookup_name(&self, _name: &str) -> Option<u64> {
        None
    }

    /// Whether [`Blaze::lookup_name`] works. `false`: blazesym's `inspect::Inspector::lookup`
    /// accepts only ELF and Breakpad sources; the name index of its kallsyms resolver is private.
    pub fn supports_name_lookup(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::PathBuf;

    /// A kallsyms-format file in the temp dir, removed on drop.
    struct TempKallsyms(PathBuf);

    impl TempKallsyms {
        fn new(tag: &str, contents: &str) -> Self {
            let path = std::env::temp_dir().join(format!(
                "kallsyms-bench-blaze-{}-{tag}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            std::fs::write(&path, contents).expect("write temp kallsyms");
            Self(path)
        }
    }

    impl Drop for TempKallsyms {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    const FIVE: &str = "\
ffffffff81000000 T _stext
ffffffff81000100 t alpha
ffffffff81000180 T beta
ffffffff81000400 W gamma
ffffffffc0001000 t delta\t[some_mod]
";

    #[test]
    fn resolves_inside_and_not_below() {
        let file = TempKallsyms::new("five", FIVE);
        let blaze = Blaze::new(&file.0).expect("load");
        assert_eq!(
            blaze.symbolize_one(0xffffffff81000123),
            Some(("alpha".to_string(), 0x23))
        );
        assert_eq!(
            blaze.symbolize_one(0xffffffff81000180),
            Some(("beta".to_string(), 0))
        );
        assert_eq!(
            blaze.symbolize_one(0xffffffffc0001008),
            Some(("delta".to_string(), 8))
        );
        assert_eq!(blaze.symbolize_one(0xffffffff80ffffff), None);
        assert_eq!(blaze.symbolize_one(0), None);
        let (n, sum) = blaze.symbolize_batch(&[0xffffffff81000123, 0x1000, 0xffffffff81000400]);
        assert_eq!((n, sum), (2, 5 + 0x23 + 5));
        assert!(!blaze.supports_name_lookup());
        assert_eq!(blaze.lookup_name("alpha"), None);
    }

    /// Pins the behaviours documented at the top of this file.
    #[test]
    fn documented_differences() {
        let file = TempKallsyms::new(
            "alias",
            "ffff0010 T z_first\nffff0010 T y_second\n\
             ffff0020 T b_first\nffff0020 T a_second\n",
        );
        let blaze = Blaze::new(&file.0).expect("load");
        // First alias in file order (not by name), except for an inexact hit in the lowest group.
        assert_eq!(blaze.symbolize_one(0xffff0020), Some(("b_first".into(), 0)));
        assert_eq!(blaze.symbolize_one(0xffff0021), Some(("b_first".into(), 1)));
        assert_eq!(blaze.symbolize_one(0xffff0010), Some(("z_first".into(), 0)));
        assert_eq!(
            blaze.symbolize_one(0xffff0011),
            Some(("y_second".into(), 1))
        );
        // The last symbol has no upper bound.
        assert_eq!(
            blaze.symbolize_one(u64::MAX),
            Some(("b_first".into(), u64::MAX - 0xffff0020))
        );
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(Blaze::new(Path::new("/nonexistent/kallsyms")).is_err());
        let zeros = TempKallsyms::new("zeros", "0000000000000000 T a\n0000000000000000 T b\n");
        assert!(Blaze::new(&zeros.0).is_err());
        let garbage = TempKallsyms::new("garbage", "not a kallsyms file\n\n x\n");
        assert!(Blaze::new(&garbage.0).is_err());
        let empty = TempKallsyms::new("empty", "");
        assert!(Blaze::new(&empty.0).is_err());
    }
}
