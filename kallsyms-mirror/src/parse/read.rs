//! Reading an input file with bounds: regular files only, never blocking on
//! a FIFO, never more than a stated number of bytes.
//!
//! The inputs are procfs and sysfs files or copies of them. procfs and
//! sysfs files are regular files that report size 0 in `stat`, so the size
//! cannot be checked up front: the read itself stops one byte past the cap.
//! A FIFO would block `open()` until a writer appears and a character
//! device such as `/dev/zero` never ends, so the file is opened with
//! `O_NONBLOCK` (which regular files ignore) and refused unless `fstat`
//! says it is a regular file.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::vec::Vec;

use super::error::{ParseError, ParseErrorKind};

/// Cap for `/proc/kallsyms` (and `nm`/`System.map` listings): 256 MiB.
///
/// A distribution kernel with a few hundred modules lists about 20 MB
/// (some 200,000 symbols at ~45 bytes); an `allyesconfig` kernel with
/// `CONFIG_KALLSYMS_ALL` about 1.5 million symbols, ~70 MB. 256 MiB leaves
/// room for both and still bounds the memory a hostile file can take.
pub const KALLSYMS_CAP: u64 = 256 << 20;

/// Cap for `/proc/modules` and the module layout file: 16 MiB.
///
/// A `/proc/modules` line is at most a few hundred bytes (the dependency
/// list is the long part); 16 MiB is tens of thousands of modules.
pub const MODULES_CAP: u64 = 16 << 20;

/// Cap for one `/sys/module/<name>/sections/<section>` file: 4 KiB.
///
/// The kernel writes `0x%px\n` (19 bytes on 64-bit); sysfs attributes are
/// at most one page.
pub const SECTION_CAP: u64 = 4 << 10;

/// Reads all of `path`, refusing anything that is not a regular file and
/// anything longer than `cap` bytes.
///
/// Errors name the file: [`ParseErrorKind::NotRegular`],
/// [`ParseErrorKind::TooLarge`], or [`ParseErrorKind::Io`] (the `NotFound`
/// kind is kept, so callers can treat a missing optional file as absent).
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ParseError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| ParseError::io(path, e))?;
    read_open_capped(path, file, cap)
}

/// [`read_capped`] for an already opened file; `path` names it in errors.
pub fn read_open_capped(path: &Path, file: File, cap: u64) -> Result<Vec<u8>, ParseError> {
    let meta = file.metadata().map_err(|e| ParseError::io(path, e))?;
    if !meta.file_type().is_file() {
        return Err(ParseError::whole(
            path,
            ParseErrorKind::NotRegular {
                what: file_type_name(&meta.file_type()),
            },
        ));
    }
    // `stat` says 0 for procfs and sysfs files: a hint, not a bound.
    let hint = usize::try_from(meta.len().min(cap)).unwrap_or(0);
    let mut data = Vec::with_capacity(hint);
    file.take(cap.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| ParseError::io(path, e))?;
    if data.len() as u64 > cap {
        return Err(ParseError::whole(path, ParseErrorKind::TooLarge { cap }));
    }
    Ok(data)
}

/// A word for the kind of a non-regular file, for error messages.
fn file_type_name(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn regular_files_and_caps() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"0123456789").unwrap();
        assert_eq!(read_capped(&p, 10).unwrap(), b"0123456789");
        let e = read_capped(&p, 9).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::TooLarge { cap: 9 }));
        assert!(e
            .to_string()
            .starts_with(&std::format!("{}: ", p.display())));
        let e = read_capped(&dir.path().join("missing"), 9).unwrap_err();
        assert!(
            matches!(&e.kind, ParseErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound)
        );
    }

    #[test]
    fn refuses_devices_dirs_and_fifos() {
        let e = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(
            matches!(
                e.kind,
                ParseErrorKind::NotRegular {
                    what: "a character device"
                }
            ),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let e = read_capped(dir.path(), 10).unwrap_err();
        assert!(matches!(
            e.kind,
            ParseErrorKind::NotRegular {
                what: "a directory"
            }
        ));
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Would block forever in open() without O_NONBLOCK.
        let e = read_capped(&fifo, 10).unwrap_err();
        assert!(
            matches!(e.kind, ParseErrorKind::NotRegular { what: "a FIFO" }),
            "{e}"
        );
    }

    #[test]
    fn procfs_files_report_size_zero_and_still_read() {
        // /proc/self/status is a regular file of stat size 0.
        let d = read_capped(Path::new("/proc/self/status"), 1 << 20).unwrap();
        assert!(d.starts_with(b"Name:"));
    }
}
