//! The character set procps escapes text for.
//!
//! procps calls `setlocale(LC_ALL, "")` (src/ps/display.c `main()`) and then
//! takes the UTF-8 path of its escapers when `nl_langinfo(CODESET)` is
//! "UTF-8" (src/ps/output.c and library/escape.c `escape_str()`); the UTF-8
//! path asks glibc's `iswprint()` and `wcwidth()` about each character. To
//! print the same bytes we ask the same functions, through the few `unsafe`
//! calls below.

use std::ffi::CStr;
use std::sync::OnceLock;

extern "C" {
    // glibc, <wctype.h> and <wchar.h>; wint_t is unsigned int and wchar_t is
    // int on every Linux ABI the project targets.
    fn iswprint(wc: libc::c_uint) -> libc::c_int;
    fn wcwidth(wc: libc::wchar_t) -> libc::c_int;
    fn __ctype_get_mb_cur_max() -> libc::size_t;
}

/// How text is escaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charset {
    /// A single-byte locale ("C", "POSIX"): bytes >= 0x80 print as `?`.
    Bytes,
    /// A UTF-8 locale: valid printable characters pass, with their width
    /// from the process's `LC_CTYPE` (set by [`Charset::from_environment`]).
    Utf8,
}

impl Charset {
    /// Sets the process locale from the environment exactly once, as ps
    /// does, and reports which escaping it selects. Call it before any other
    /// thread exists (setlocale is not thread-safe).
    pub fn from_environment() -> Charset {
        static CHOSEN: OnceLock<Charset> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            if environment_is_c() {
                // setlocale(LC_ALL, "") would pick "C" for every category,
                // the locale a process starts in: nothing to load or set.
                return Charset::Bytes;
            }
            // SAFETY: the argument is a valid NUL-terminated string; nps calls
            // this from main() before spawning threads, and OnceLock makes the
            // call happen once.
            unsafe { libc::setlocale(libc::LC_ALL, c"".as_ptr()) };
            // SAFETY: nl_langinfo returns a pointer to a NUL-terminated string
            // owned by the C library, valid until the next setlocale(), which
            // never comes; it is copied out at once.
            let codeset = unsafe { CStr::from_ptr(libc::nl_langinfo(libc::CODESET)) };
            // SAFETY: a pure query of the current locale, no arguments.
            let mb_cur_max = unsafe { __ctype_get_mb_cur_max() };
            if codeset.to_bytes().eq_ignore_ascii_case(b"UTF-8") && mb_cur_max > 1 {
                Charset::Utf8
            } else {
                Charset::Bytes
            }
        })
    }
}

/// The variables glibc's `setlocale(LC_ALL, "")` consults
/// (locale/findlocale.c `_nl_find_locale()`): `LC_ALL`, then each
/// category's own, then `LANG`.
const LOCALE_VARIABLES: [&str; 14] = [
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_COLLATE",
    "LC_MONETARY",
    "LC_MESSAGES",
    "LC_PAPER",
    "LC_NAME",
    "LC_ADDRESS",
    "LC_TELEPHONE",
    "LC_MEASUREMENT",
    "LC_IDENTIFICATION",
    "LANG",
];

/// True when `setlocale(LC_ALL, "")` can only choose the "C" locale: every
/// variable it reads is unset, empty, "C" or "POSIX" (glibc maps the last
/// three to "C" too). The conservative reading: one other value anywhere
/// and the call is made.
fn environment_is_c() -> bool {
    LOCALE_VARIABLES
        .iter()
        .all(|v| std::env::var_os(v).is_none_or(|x| x.is_empty() || x == "C" || x == "POSIX"))
}

/// glibc's `iswprint()` for a decoded character.
pub fn is_printable(c: char) -> bool {
    // SAFETY: iswprint takes any wint_t value and only reads locale tables.
    unsafe { iswprint(c as libc::c_uint) != 0 }
}

/// glibc's `wcwidth()` for a decoded character (-1 for non-printables).
pub fn width(c: char) -> i32 {
    // SAFETY: wcwidth takes any wchar_t value and only reads locale tables.
    unsafe { wcwidth(c as libc::wchar_t) }
}
