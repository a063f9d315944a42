//! User and group names: libproc2's `pwcache_get_user()` and
//! `pwcache_get_group()` (library/pwcache.c), cached per id like theirs.
//!
//! The lookups go through glibc (`getpwuid_r`, `getgrgid_r`) so that NSS
//! sources other than /etc/passwd (LDAP, systemd-userdb, ...) name users
//! exactly as they do for procps.

use std::collections::HashMap;
use std::ffi::CStr;

/// `P_G_SZ`: a name this long or longer is shown as its number.
const P_G_SZ: usize = 33;

/// Cached user and group names.
#[derive(Default)]
pub struct Names {
    users: HashMap<u32, Vec<u8>>,
    groups: HashMap<u32, Vec<u8>>,
}

impl Names {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The name of user `uid`, or its decimal number.
    pub fn user(&mut self, uid: u32) -> &[u8] {
        self.users
            .entry(uid)
            .or_insert_with(|| or_number(user_name(uid), uid))
    }

    /// The name of group `gid`, or its decimal number.
    pub fn group(&mut self, gid: u32) -> &[u8] {
        self.groups
            .entry(gid)
            .or_insert_with(|| or_number(group_name(gid), gid))
    }
}

fn or_number(name: Option<Vec<u8>>, id: u32) -> Vec<u8> {
    match name {
        Some(n) if n.len() < P_G_SZ => n,
        _ => id.to_string().into_bytes(),
    }
}

/// Retries a `*_r` lookup with a growing buffer while it reports ERANGE.
fn with_buffer(mut call: impl FnMut(&mut [u8]) -> Result<Option<Vec<u8>>, i32>) -> Option<Vec<u8>> {
    let mut size = 1024;
    while size <= 1 << 20 {
        let mut buf = vec![0u8; size];
        match call(&mut buf) {
            Ok(found) => return found,
            Err(libc::ERANGE) => size *= 4,
            Err(_) => return None,
        }
    }
    None
}

fn user_name(uid: u32) -> Option<Vec<u8>> {
    with_buffer(|buf| {
        // SAFETY: an all-zero passwd is a valid value (null pointers, zero
        // ids) that getpwuid_r overwrites.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer refers to live storage of the advertised
        // size; on success result points to pw, whose strings live in buf.
        let rc = unsafe {
            libc::getpwuid_r(
                uid,
                &mut pw,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut result,
            )
        };
        if rc != 0 {
            return Err(rc);
        }
        if result.is_null() || pw.pw_name.is_null() {
            return Ok(None);
        }
        // SAFETY: pw_name is a NUL-terminated string inside buf, still alive.
        Ok(Some(
            unsafe { CStr::from_ptr(pw.pw_name) }.to_bytes().to_vec(),
        ))
    })
}

fn group_name(gid: u32) -> Option<Vec<u8>> {
    with_buffer(|buf| {
        // SAFETY: an all-zero group is a valid value that getgrgid_r
        // overwrites.
        let mut gr: libc::group = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::group = std::ptr::null_mut();
        // SAFETY: as for getpwuid_r above.
        let rc = unsafe {
            libc::getgrgid_r(
                gid,
                &mut gr,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut result,
            )
        };
        if rc != 0 {
            return Err(rc);
        }
        if result.is_null() || gr.gr_name.is_null() {
            return Ok(None);
        }
        // SAFETY: gr_name is a NUL-terminated string inside buf, still alive.
        Ok(Some(
            unsafe { CStr::from_ptr(gr.gr_name) }.to_bytes().to_vec(),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_unknown() {
        let mut n = Names::new();
        assert_eq!(n.user(0), b"root");
        assert_eq!(n.group(0), b"root");
        // No system has this id: procps prints the number.
        assert_eq!(n.user(3_999_999_999), b"3999999999");
        assert_eq!(or_number(Some(vec![b'x'; 33]), 7), b"7");
    }
}
