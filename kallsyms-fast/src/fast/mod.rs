//! The fast path over the kernel's own tables: an address index, direct
//! record offsets, a name index and per-module indexes. Every answer equals
//! the mainline port's (`kallsyms-mirror`'s `mainline`, see `tests/`),
//! only the search differs.
//!
//! [`FastCore`] is the address side only: what `%pS` and wchan need, and
//! all the kernel shim builds. The name index (`kallsyms_lookup_name()`)
//! is a separate value passed to [`FastCore::lookup_name`], behind the
//! `name-index` feature, so that a kernel build compiles no hash code.

pub mod addr_index;
pub mod expand;
pub mod module_index;
#[cfg(feature = "name-index")]
pub mod name_index;
pub mod prefetch;

use crate::name::NameBuf;
use crate::tables::{KallsymsTables, Sections, KSYM_NAME_LEN};

/// Position, size and offset of the symbol covering an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolPos {
    /// Address-order position of the first alias at the symbol's address.
    pub pos: usize,
    /// `symbolsize`: distance to the next distinct address (or section end).
    pub size: u64,
    /// `offset`: `addr - symbol_start`.
    pub offset: u64,
}

pub use addr_index::{build_addr_index, AddrIndex, AddrIndexLayout};
pub use expand::TokenSlots;
pub use module_index::{collect_module_candidates, find_in_index, sort_module_index, ModEntry};
#[cfg(feature = "name-index")]
pub use name_index::{
    build_module_name_index, build_name_index, module_name_index_capacity, name_hash, NameIndex,
    NameIndexLayout,
};

/// The core-kernel fast path by address: tables, bounds, the address
/// index and the token slots. The kernel shim and the userspace mirror
/// call the same [`lookup_into`](Self::lookup_into).
#[derive(Clone, Copy, Debug)]
pub struct FastCore<'a> {
    /// The kernel tables.
    pub tables: KallsymsTables<'a>,
    /// Section bounds.
    pub sections: Sections,
    /// Address index and record offsets.
    pub addr: AddrIndex<'a>,
    /// The token table in fixed slots.
    pub tokens: &'a TokenSlots,
}

impl<'a> FastCore<'a> {
    /// Same answer as `Mainline::lookup()`.
    #[inline]
    pub fn lookup(&self, addr: u64, name: &mut NameBuf) -> Option<SymbolPos> {
        let (buf, len) = name.raw_mut();
        *len = 0;
        let (p, n) = self.lookup_into(addr, buf)?;
        *len = n;
        Some(p)
    }

    /// Position, size and offset of the symbol covering `addr`, without
    /// its name: `None` when `is_ksym_addr()` is false.
    #[inline]
    pub fn symbol_pos(&self, addr: u64) -> Option<SymbolPos> {
        if !self.sections.is_ksym_addr(addr) {
            return None;
        }
        self.addr.symbol_pos(&self.tables, &self.sections, addr)
    }

    /// [`lookup`](Self::lookup) writing the name into a caller's
    /// `KSYM_NAME_LEN` buffer (in the kernel, the caller's own `namebuf`):
    /// returns the position and the name's length; no NUL is written.
    #[inline]
    pub fn lookup_into(
        &self,
        addr: u64,
        buf: &mut [u8; KSYM_NAME_LEN],
    ) -> Option<(SymbolPos, usize)> {
        if !self.sections.is_ksym_addr(addr) {
            return None;
        }
        let (p, off) = self.addr.locate(&self.tables, &self.sections, addr)?;
        let (_, n) = self.tokens.expand_into(&self.tables, off, buf)?;
        Some((p, n))
    }

    /// Same answer as `Mainline::lookup_name()`, through `names`, a name
    /// index built over these tables. `scratch` takes each candidate's
    /// expanded name (the kernel's `namebuf`); its content afterwards is
    /// unspecified.
    #[cfg(feature = "name-index")]
    #[inline]
    pub fn lookup_name(
        &self,
        names: &NameIndex<'_>,
        name: &[u8],
        scratch: &mut NameBuf,
    ) -> Option<u64> {
        let pos = names.lookup(&self.tables, &self.addr, self.tokens, name, scratch)?;
        self.tables.sym_address(pos)
    }
}
