//! The last two steps of 6.12's `kallsyms_lookup_buildid()`: after the core
//! table and the modules, `bpf_address_lookup()` and then
//! `ftrace_mod_address_lookup()`, over the symbols `/proc/kallsyms` lists
//! outside every module symtab.
//!
//! What the kernel prints for each kind of such line (`kernel/kallsyms.c`,
//! `include/linux/filter.h`, `kernel/bpf/core.c`, `kernel/trace/ftrace.c`):
//!
//! | `/proc/kallsyms` | looked up by | `%pS` |
//! |---|---|---|
//! | `[bpf]` (programs, trampolines, dispatchers) | `bpf_address_lookup()`: `start <= addr <= end` (end inclusive, for return addresses) | `name+0xoff/0xsize`, no module: the wrapper sets `*modname = NULL`; size = `end - start` (the JIT image length) |
//! | `[<module>]` after all symtabs (init functions of a module whose init text was freed, kept by ftrace) | `ftrace_mod_address_lookup()`: `ip <= addr < ip + size` | `name+0xoff/0xsize [module]`; size = the function's size when it was recorded |
//! | `[__builtin__ftrace]` (ftrace trampolines) | nothing | `0x<addr>`, raw |
//! | `[__builtin__kprobes]` (kprobe insn pages) | nothing | `0x<addr>`, raw |
//!
//! `/proc/kallsyms` gives the start of each symbol but not its size, so the
//! text above is known only in part: an address at a symbol's start is
//! inside it (offset 0, and `%ps` prints the name), but for any other
//! address, and for the size `%pS` prints, the listing says nothing. The
//! lookup therefore reports what it knows ([`PseudoHit`]), including the
//! distance to the next listed symbol, which bounds the size. (`ftrace_mod_get_kallsym()` also lists the first
//! recorded function of each module twice and never the last one, so an
//! address in that last function cannot be told from a raw one either.)
//!
//! `lookup_symbol_name()`, the `/proc/PID/wchan` path, consults neither.

use alloc::string::String;
use alloc::vec::Vec;

use crate::owned::RawSymbol;

/// Which kernel lookup a symbol belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PseudoKind {
    /// `bpf_address_lookup()`: printed without a module name.
    Bpf,
    /// `ftrace_mod_address_lookup()`: printed with its module's name.
    FtraceInit,
}

/// One symbol listed outside the module symtabs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PseudoSymbol {
    /// Start address.
    pub addr: u64,
    /// Symbol name.
    pub name: Vec<u8>,
    /// The bracketed name `/proc/kallsyms` lists it under.
    pub group: String,
    /// Which lookup finds it.
    pub kind: PseudoKind,
}

/// What the kernel's bpf and ftrace lookups can be said to find for an
/// address, from the listing alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PseudoHit<'a> {
    /// No listed symbol can contain the address: the kernel prints it raw
    /// (unless an unlisted symbol does; see the module docs).
    None,
    /// The address is `offset` bytes into `sym`, and the kernel prints it as
    /// that symbol if it lies within the symbol's size, which the listing
    /// does not give. `offset == 0` is always within.
    Within {
        /// The symbol.
        sym: &'a PseudoSymbol,
        /// `addr - sym.addr`.
        offset: u64,
        /// Distance from `sym.addr` to the next listed symbol of any kind:
        /// an upper bound of the symbol's size (`None` when none follows).
        room: Option<u64>,
    },
}

/// The `[bpf]` and ftrace-init symbols of one `/proc/kallsyms`, each kind
/// sorted by address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PseudoSymbols {
    bpf: Vec<PseudoSymbol>,
    ftrace: Vec<PseudoSymbol>,
    /// Every listed start address, sorted: no BPF image or module function
    /// extends over another symbol's start, so these bound the candidates.
    fences: Vec<u64>,
}

impl PseudoSymbols {
    /// Sorts the groups `/proc/kallsyms` lists after the module symtabs
    /// (`(bracketed name, symbols)`) into the lookups that see them;
    /// `__builtin__*` groups are not looked up. `others` are the addresses
    /// of every other listed symbol (core and module symtabs): with the
    /// groups' own, they bound how far a symbol can extend.
    pub fn new<'a>(
        groups: impl IntoIterator<Item = (&'a str, &'a [RawSymbol])>,
        others: impl IntoIterator<Item = u64>,
    ) -> Self {
        let mut out = Self::default();
        out.fences.extend(others);
        for (group, syms) in groups {
            out.fences.extend(syms.iter().map(|s| s.addr));
            let (kind, list) = if group == "bpf" {
                (PseudoKind::Bpf, &mut out.bpf)
            } else if group.starts_with("__builtin__") {
                continue;
            } else {
                (PseudoKind::FtraceInit, &mut out.ftrace)
            };
            list.extend(syms.iter().map(|s| PseudoSymbol {
                addr: s.addr,
                name: s.name.clone(),
                group: group.into(),
                kind,
            }));
        }
        out.bpf.sort_by_key(|s| s.addr);
        out.ftrace.sort_by_key(|s| s.addr);
        out.fences.sort_unstable();
        out.fences.dedup();
        out
    }

    /// `bpf_address_lookup()`, then `ftrace_mod_address_lookup()`, as far
    /// as the listing tells; only meaningful for an address that neither
    /// the core table nor any module resolved.
    ///
    /// A candidate is the last symbol of a kind starting at or below
    /// `addr`, provided no other listed symbol starts between it and
    /// `addr` (BPF images and module functions hold no other symbol). The
    /// bpf candidate wins when both exist, as the kernel asks bpf first;
    /// its end is unknown, so the ftrace one is never reached with
    /// certainty.
    pub fn lookup(&self, addr: u64) -> PseudoHit<'_> {
        for list in [&self.bpf, &self.ftrace] {
            let i = list.partition_point(|s| s.addr <= addr);
            let Some(sym) = i.checked_sub(1).and_then(|j| list.get(j)) else {
                continue;
            };
            // Duplicates (ftrace lists a function twice): take the first.
            let first = list.partition_point(|s| s.addr < sym.addr);
            let sym = list.get(first).unwrap_or(sym);
            let j = self.fences.partition_point(|&f| f <= addr);
            let bounded = j
                .checked_sub(1)
                .and_then(|k| self.fences.get(k))
                .is_none_or(|&last| last <= sym.addr);
            if bounded {
                let room = self.fences.get(j).map(|&next| next - sym.addr);
                return PseudoHit::Within {
                    sym,
                    offset: addr - sym.addr,
                    room,
                };
            }
        }
        PseudoHit::None
    }

    /// True when there is no symbol either lookup sees.
    pub fn is_empty(&self) -> bool {
        self.bpf.is_empty() && self.ftrace.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(addr: u64, name: &str) -> RawSymbol {
        RawSymbol {
            addr,
            kind: b't',
            name: name.as_bytes().to_vec(),
        }
    }

    #[test]
    fn kinds_and_lookup() {
        let bpf = [sym(0x3000, "bpf_prog_b"), sym(0x1000, "bpf_prog_a")];
        let init = [sym(0x8000, "m_init"), sym(0x8000, "m_init")];
        let tramp = [sym(0x5000, "ftrace_trampoline")];
        let p = PseudoSymbols::new(
            [
                ("m", &init[..]),
                ("__builtin__ftrace", &tramp[..]),
                ("bpf", &bpf[..]),
            ],
            [0x9000],
        );
        assert!(matches!(p.lookup(0xfff), PseudoHit::None));
        let PseudoHit::Within { sym, offset, .. } = p.lookup(0x1000) else {
            panic!()
        };
        assert_eq!(
            (sym.name.as_slice(), offset, sym.kind),
            (&b"bpf_prog_a"[..], 0, PseudoKind::Bpf)
        );
        let PseudoHit::Within { sym, offset, .. } = p.lookup(0x3010) else {
            panic!()
        };
        assert_eq!((sym.name.as_slice(), offset), (&b"bpf_prog_b"[..], 0x10));
        // bpf_prog_b may extend up to the trampoline, which is never
        // looked up: the kernel prints its address raw.
        assert!(matches!(
            p.lookup(0x4fff),
            PseudoHit::Within { offset: 0x1fff, .. }
        ));
        assert!(matches!(p.lookup(0x5000), PseudoHit::None));
        assert!(matches!(p.lookup(0x7fff), PseudoHit::None));
        let PseudoHit::Within { sym, offset, .. } = p.lookup(0x8004) else {
            panic!()
        };
        assert_eq!(
            (sym.group.as_str(), sym.kind, offset),
            ("m", PseudoKind::FtraceInit, 4)
        );
        // Bounded by another listed symbol (a module's, say).
        assert!(matches!(p.lookup(0x9000), PseudoHit::None));
        let only_init =
            PseudoSymbols::new([("m", &init[..]), ("__builtin__ftrace", &tramp[..])], []);
        assert!(matches!(only_init.lookup(0x5000), PseudoHit::None));
        let PseudoHit::Within { sym, offset, .. } = only_init.lookup(0x8000) else {
            panic!()
        };
        assert_eq!(
            (sym.group.as_str(), sym.kind, offset),
            ("m", PseudoKind::FtraceInit, 0)
        );
        assert!(PseudoSymbols::new([("__builtin__kprobes", &tramp[..])], []).is_empty());
    }
}
