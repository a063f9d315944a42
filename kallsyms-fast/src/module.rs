//! Module symbols: the data `find_kallsyms_symbol()` scans, and a faithful
//! port of that scan (`kernel/module/kallsyms.c`, 6.12).
//!
//! A module's symbols are its ELF symtab in symtab order; the order matters,
//! because among symbols at one address the lowest index wins.

/// `enum mod_mem_type` order (6.12): text, data, rodata, ro_after_init,
/// init text, init data, init rodata.
pub const MOD_MEM_NUM_TYPES: usize = 7;
/// `MOD_TEXT`.
pub const MOD_TEXT: usize = 0;
/// `MOD_INIT_TEXT`.
pub const MOD_INIT_TEXT: usize = 4;

/// `mod_mem_type_is_text()`.
#[inline]
pub fn mem_type_is_text(ty: usize) -> bool {
    ty == MOD_TEXT || ty == MOD_INIT_TEXT
}

/// One `struct module_memory`: `[base, base + size)`. An absent region has
/// size 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemRegion {
    /// `base`.
    pub base: u64,
    /// `size`.
    pub size: u64,
}

impl MemRegion {
    /// `within_module_mem_type()`: `addr - base < size`, unsigned.
    #[inline]
    pub fn contains(&self, addr: u64) -> bool {
        addr.wrapping_sub(self.base) < self.size
    }
}

/// A module's memory layout, indexed by `mod_mem_type`.
pub type ModuleLayout = [MemRegion; MOD_MEM_NUM_TYPES];

/// Read access to one module's symtab, as the kernel keeps it
/// (`mod->kallsyms`): `Elf_Sym` values, section indexes and names.
pub trait ModuleSymtab {
    /// `num_symtab`. Index 0 is the ELF null symbol, never matched.
    fn num_symtab(&self) -> usize;
    /// `kallsyms_symbol_value()` of entry `i`.
    fn value(&self, i: usize) -> u64;
    /// Whether entry `i` is `SHN_UNDEF` (type `U` in `/proc/kallsyms`).
    fn is_undef(&self, i: usize) -> bool;
    /// Name of entry `i`, without NUL.
    fn name(&self, i: usize) -> &[u8];
}

/// `is_mapping_symbol()` (include/linux/module_symbol.h, 6.12).
#[inline]
pub fn is_mapping_symbol(name: &[u8]) -> bool {
    matches!(name, [b'.', b'L', ..] | [b'L', b'0', ..] | [b'$', ..])
}

/// Whether `find_kallsyms_symbol()` considers entry `i` at all.
#[inline]
pub fn symbol_is_candidate<S: ModuleSymtab + ?Sized>(s: &S, i: usize) -> bool {
    if s.is_undef(i) {
        return false;
    }
    let name = s.name(i);
    !name.is_empty() && !is_mapping_symbol(name)
}

/// The region `find_kallsyms_symbol()` bounds the search by: the first
/// memory type (in `enum mod_mem_type` order) containing `addr`, text types
/// only unless `CONFIG_KALLSYMS_ALL`.
#[inline]
pub fn region_for(layout: &ModuleLayout, addr: u64, all_symbols: bool) -> Option<MemRegion> {
    layout
        .iter()
        .enumerate()
        .find(|(ty, r)| (all_symbols || mem_type_is_text(*ty)) && r.contains(addr))
        .map(|(_, r)| *r)
}

/// `within_module()`: whether any region (core or init) contains `addr`.
#[inline]
pub fn within_module(layout: &ModuleLayout, addr: u64) -> bool {
    layout.iter().any(|r| r.contains(addr))
}

/// The answer of a module lookup: symtab index, size and offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleHit {
    /// Index into the module's symtab.
    pub index: usize,
    /// `nextval - bestval`.
    pub size: u64,
    /// `addr - bestval`.
    pub offset: u64,
}
