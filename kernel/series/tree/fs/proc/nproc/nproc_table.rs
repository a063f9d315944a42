// SPDX-License-Identifier: GPL-2.0

//! The nproc field table, from the nproc-proto crate, for the C side.
//!
//! `nproc.c` serves `NPROC_CMD_GET_FIELDS` from this table and encodes every
//! value with the type the table gives, so the crate stays the one source of
//! truth of the wire format; at init it also checks that the table and
//! `include/uapi/linux/nproc.h` agree.

use nproc_proto::{FieldDesc, FieldSet, GLOBAL_ITEMS, NAME_MAX, TASK_FIELDS};

/// One table entry as C sees it (`struct nproc_field_desc` in `nproc.h`).
#[repr(C)]
pub struct NprocFieldDesc {
    /// Field or item id.
    pub id: u16,
    /// `NPROC_SET_TASK` or `NPROC_SET_GLOBAL`.
    pub set: u16,
    /// `NPROC_TYPE_*`.
    pub ty: u32,
    /// `NPROC_UNIT_*`.
    pub unit: u32,
    /// `NPROC_FLAG_*`.
    pub flags: u32,
    /// The name, NUL-terminated.
    pub name: [u8; NAME_MAX + 1],
}

/// Copies entry `index` of table `set` (`NPROC_SET_*`) into `*out`.
///
/// Returns false, leaving `*out` alone, past the end of the table or for an
/// unknown set. Allocates nothing, sleeps never.
///
/// # Safety
///
/// `out` must be valid for a write of one `NprocFieldDesc`.
#[no_mangle]
pub unsafe extern "C" fn nproc_proto_desc(set: u32, index: u32, out: *mut NprocFieldDesc) -> bool {
    let table: &[FieldDesc] = match FieldSet::from_u32(set) {
        Some(FieldSet::Task) => &TASK_FIELDS,
        Some(FieldSet::Global) => &GLOBAL_ITEMS,
        None => return false,
    };
    let Some(d) = usize::try_from(index).ok().and_then(|i| table.get(i)) else {
        return false;
    };
    let mut name = [0u8; NAME_MAX + 1];
    // The crate's tests keep every name within NAME_MAX bytes; a longer
    // one would be cut, never overflow, and the last byte stays NUL.
    for (dst, src) in name.iter_mut().take(NAME_MAX).zip(d.name.bytes()) {
        *dst = src;
    }
    let desc = NprocFieldDesc {
        id: d.id,
        // `set` named a table above: 1 or 2.
        set: set as u16,
        ty: d.ty as u32,
        unit: d.unit as u32,
        flags: d.flags,
        name,
    };
    // SAFETY: the caller passes a pointer valid for this write.
    unsafe { out.write(desc) };
    true
}
