//! The error type shared by all parsers.

use core::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::string::String;

/// What went wrong while reading or parsing one input file.
///
/// Displays as `FILE:LINE: message`, or `FILE: message` when the problem is
/// not tied to one line (I/O errors, empty files, zeroed addresses).
#[derive(Debug)]
pub struct ParseError {
    /// The file being read.
    pub file: PathBuf,
    /// 1-based line number, when the problem is on one line.
    pub line: Option<usize>,
    /// What is wrong.
    pub kind: ParseErrorKind,
}

impl ParseError {
    /// An error on line `line` (1-based) of `file`.
    pub fn at(file: &Path, line: usize, kind: ParseErrorKind) -> Self {
        ParseError {
            file: file.to_path_buf(),
            line: Some(line),
            kind,
        }
    }

    /// An error about `file` as a whole.
    pub fn whole(file: &Path, kind: ParseErrorKind) -> Self {
        ParseError {
            file: file.to_path_buf(),
            line: None,
            kind,
        }
    }

    /// An I/O error on `file`.
    pub fn io(file: &Path, err: io::Error) -> Self {
        Self::whole(file, ParseErrorKind::Io(err))
    }
}

/// A field of an input line, named in error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// A symbol or module address (`/proc/kallsyms`, `nm`, `/proc/modules`,
    /// section files, the module layout file).
    Address,
    /// The symbol type character.
    Type,
    /// The symbol name (or section file name).
    Name,
    /// The `[module]` column of `/proc/kallsyms`, or a module name in
    /// `/proc/modules` and the module layout file.
    Module,
    /// The size column (`/proc/modules`, module layout file).
    Size,
    /// The reference count column of `/proc/modules`.
    Refcount,
    /// The dependency list column of `/proc/modules`.
    Dependencies,
    /// The state column of `/proc/modules`.
    State,
    /// The `enum mod_mem_type` index of the module layout file.
    MemType,
    /// Text after the last field.
    Trailing,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::Address => "address",
            Field::Type => "type",
            Field::Name => "name",
            Field::Module => "module",
            Field::Size => "size",
            Field::Refcount => "refcount",
            Field::Dependencies => "dependencies",
            Field::State => "state",
            Field::MemType => "memory type",
            Field::Trailing => "trailing",
        })
    }
}

/// The kinds of [`ParseError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// Reading (or, for captures, writing) the file failed.
    Io(io::Error),
    /// The line ends before the given field.
    Truncated {
        /// The first missing field.
        missing: Field,
    },
    /// A field is present but not in the expected form.
    Malformed {
        /// The offending field.
        field: Field,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An address (or other hex number) that is not 1 to 16 hex digits with
    /// an optional `0x` prefix.
    BadAddress {
        /// The field that holds it.
        field: Field,
        /// The offending text (lossy, cut to 40 bytes).
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A symbol name longer than the kernel can print (`KSYM_NAME_LEN` is
    /// 512 including the NUL, so at most 511 bytes).
    NameTooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// A symbol name that is not valid UTF-8.
    ///
    /// Rejected: kernel symbol names come from C identifiers, assembler
    /// labels and (mangled, ASCII) Rust symbols, so the kernel never prints
    /// one for a real symbol; such a line means the file is corrupt or is
    /// not a symbol listing at all.
    NonUtf8Name,
    /// Core symbols are not in ascending address order, as `/proc/kallsyms`
    /// and `nm -n` always list them.
    Unsorted {
        /// The previous line's address.
        prev: u64,
        /// This line's (smaller) address.
        addr: u64,
    },
    /// Every address in the file is zero: the kernel hid them. (In
    /// `/proc/modules` a zero base among visible addresses is a module
    /// without text; see
    /// [`parse_proc_modules`](super::modules::parse_proc_modules).)
    ZeroedAddresses,
    /// The file holds no entries at all.
    Empty,
    /// The path is not a regular file (a FIFO, a device, a directory...):
    /// refused, as reading it could block forever or never end.
    NotRegular {
        /// What it is instead ("a FIFO", "a character device", ...).
        what: &'static str,
    },
    /// The file is longer than the cap for its kind (see
    /// [`read_capped`](super::read::read_capped)).
    TooLarge {
        /// The cap in bytes.
        cap: u64,
    },
    /// More symbols than the parser accepts from one file (see
    /// [`MAX_SYMBOLS`](super::kallsyms::MAX_SYMBOLS)).
    TooManySymbols {
        /// The limit.
        limit: usize,
    },
    /// A core symbol too far from the others for the kernel's 32-bit
    /// `kallsyms_offsets` encoding, so no 6.12 kernel lists both.
    OutOfRange {
        /// The symbol's name (lossy, cut to 40 bytes).
        name: String,
        /// Its address.
        addr: u64,
        /// The symbol it was measured against (lossy, cut to 40 bytes).
        anchor: String,
        /// That symbol's line.
        anchor_line: usize,
        /// That symbol's address.
        anchor_addr: u64,
    },
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Io(e) => write!(f, "I/O error: {e}"),
            ParseErrorKind::Truncated { missing } => {
                write!(f, "truncated line: the {missing} field is missing")
            }
            ParseErrorKind::Malformed { field, reason } => {
                write!(f, "malformed {field} field: {reason}")
            }
            ParseErrorKind::BadAddress {
                field,
                text,
                reason,
            } => write!(f, "bad {field} {text:?}: {reason}"),
            ParseErrorKind::NameTooLong { len } => write!(
                f,
                "symbol name is {len} bytes long, more than the kernel's limit of 511 \
                 (KSYM_NAME_LEN 512 including the NUL)"
            ),
            ParseErrorKind::NonUtf8Name => write!(
                f,
                "symbol name is not valid UTF-8 (the kernel never prints such names; \
                 the file is corrupt or not a symbol listing)"
            ),
            ParseErrorKind::Unsorted { prev, addr } => write!(
                f,
                "symbols are not sorted by address ({addr:#x} after {prev:#x}); \
                 expected ascending order as /proc/kallsyms and `nm -n` give it"
            ),
            ParseErrorKind::ZeroedAddresses => write!(
                f,
                "all addresses are zero: the kernel hid them from the process that opened \
                 the file. Linux shows them (kallsyms_show_value()) only to an opener with \
                 CAP_SYSLOG in the initial user namespace while kernel.kptr_restrict is 0 or 1, \
                 or to anyone when kptr_restrict is 0 and kernel.perf_event_paranoid is 1 or \
                 less, and to no one when kptr_restrict is 2. Root in a container or user \
                 namespace without CAP_SYSLOG sees zeros too"
            ),
            ParseErrorKind::Empty => write!(f, "the file holds no entries"),
            ParseErrorKind::NotRegular { what } => {
                write!(f, "not a regular file ({what}); refusing to read it")
            }
            ParseErrorKind::TooLarge { cap } => write!(
                f,
                "larger than {cap} bytes, far more than any real kernel writes there; \
                 refusing to read further"
            ),
            ParseErrorKind::TooManySymbols { limit } => write!(
                f,
                "more than {limit} symbols, far more than any kernel has; refusing the rest"
            ),
            ParseErrorKind::OutOfRange {
                name,
                addr,
                anchor,
                anchor_line,
                anchor_addr,
            } => write!(
                f,
                "core symbol {name:?} at {addr:#x} is too far from {anchor:?} at {anchor_addr:#x} \
                 (line {anchor_line}): the kernel stores core addresses as 32-bit offsets from \
                 kallsyms_relative_base, so no kernel lists both"
            ),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.kind),
            None => write!(f, "{}: {}", self.file.display(), self.kind),
        }
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ParseErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn display_with_and_without_line() {
        let e = ParseError::at(
            Path::new("/proc/kallsyms"),
            7,
            ParseErrorKind::Truncated {
                missing: Field::Name,
            },
        );
        assert_eq!(
            e.to_string(),
            "/proc/kallsyms:7: truncated line: the name field is missing"
        );
        let e = ParseError::whole(Path::new("/proc/kallsyms"), ParseErrorKind::ZeroedAddresses);
        let s = e.to_string();
        assert!(s.starts_with("/proc/kallsyms: all addresses are zero"));
        assert!(s.contains("CAP_SYSLOG") && s.contains("perf_event_paranoid"));
        assert!(s.contains("kptr_restrict is 2"));
        let e = ParseError::io(
            Path::new("x"),
            io::Error::new(io::ErrorKind::NotFound, "gone"),
        );
        assert_eq!(e.to_string(), "x: I/O error: gone");
        assert!(std::error::Error::source(&e).is_some());
    }

    #[test]
    fn messages_name_the_problem() {
        let k = ParseErrorKind::NameTooLong { len: 600 };
        assert!(k.to_string().contains("600"));
        let k = ParseErrorKind::Unsorted {
            prev: 0x20,
            addr: 0x10,
        };
        assert!(k.to_string().contains("0x10 after 0x20"));
        let k = ParseErrorKind::BadAddress {
            field: Field::Address,
            text: "zz".into(),
            reason: "not a hexadecimal number",
        };
        assert_eq!(
            k.to_string(),
            "bad address \"zz\": not a hexadecimal number"
        );
        assert!(ParseErrorKind::NonUtf8Name.to_string().contains("UTF-8"));
        assert!(ParseErrorKind::Empty.to_string().contains("no entries"));
    }
}
