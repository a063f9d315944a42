//! Terminal names from `tty_nr`, as libproc2's `dev_to_tty()` finds them
//! (library/devname.c): `/proc/tty/drivers` first, then the task's
//! `fd/2` link, then a table of well-known majors, then `fd/255`; every
//! candidate must be a device node with the right numbers. The answer loses
//! its `/dev/` prefix (`ABBREV_DEV`) and becomes `?` when nothing matched.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

struct Driver {
    name: Vec<u8>,
    devfs: bool,
    major: u32,
    minors: (u32, u32),
}

/// Resolves and caches terminal names.
pub struct TtyNamer {
    proc_root: PathBuf,
    drivers: Option<Vec<Driver>>,
    /// dev -> answer of the pid-independent lookups (drivers, guess).
    by_driver: HashMap<u32, Option<Vec<u8>>>,
    by_guess: HashMap<u32, Option<Vec<u8>>>,
}

/// glibc's `gnu_dev_major()` / `gnu_dev_minor()`.
fn major(dev: u64) -> u32 {
    (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32
}
fn minor(dev: u64) -> u32 {
    ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32
}

impl TtyNamer {
    /// A namer reading `/proc/tty/drivers` and `/proc/PID/fd` under `proc_root`.
    pub fn new(proc_root: impl Into<PathBuf>) -> Self {
        TtyNamer {
            proc_root: proc_root.into(),
            drivers: None,
            by_driver: HashMap::new(),
            by_guess: HashMap::new(),
        }
    }

    /// Appends the name `ps` shows in its TTY column for `tty_nr` of task
    /// `tid` to `out` (most tasks have none: a `?` and no allocation).
    pub fn push_name(&mut self, tty_nr: i32, tid: i32, out: &mut Vec<u8>) {
        // dev_to_tty(): `unsigned dev = dev_t_dev;` keeps the low 32 bits.
        let dev = tty_nr as u32;
        if dev == 0 {
            out.push(b'?');
            return;
        }
        let (maj, min) = (major(dev as u64), minor(dev as u64));
        let found = self
            .driver_name(dev, maj, min)
            .or_else(|| self.link_name(maj, min, tid, "fd/2"))
            .or_else(|| self.guess_name(dev, maj, min))
            .or_else(|| self.link_name(maj, min, tid, "fd/255"));
        match found {
            Some(path) => out.extend(abbreviate(&path)),
            None => out.push(b'?'),
        }
    }

    fn driver_name(&mut self, dev: u32, maj: u32, min: u32) -> Option<Vec<u8>> {
        if let Some(hit) = self.by_driver.get(&dev) {
            return hit.clone();
        }
        if self.drivers.is_none() {
            self.drivers = Some(load_drivers(&self.proc_root.join("tty/drivers")));
        }
        let drivers = self.drivers.as_deref().unwrap_or_default();
        // load_drivers() prepends, so the last line of the file is tried first.
        let hit = drivers
            .iter()
            .rev()
            .find(|d| d.major == maj && d.minors.0 <= min && d.minors.1 >= min)
            .and_then(|d| {
                let try_path = |p: Vec<u8>| is_dev(&p, maj, min).then_some(p);
                let mut a = b"/dev/".to_vec();
                a.extend_from_slice(&d.name);
                let mut b = a.clone();
                a.extend_from_slice(min.to_string().as_bytes());
                b.push(b'/');
                b.extend_from_slice(min.to_string().as_bytes());
                if exists(&a) {
                    return try_path(a);
                }
                if exists(&b) {
                    return try_path(b);
                }
                if d.devfs {
                    return None;
                }
                let mut c = b"/dev/".to_vec();
                c.extend_from_slice(&d.name);
                try_path(c)
            });
        self.by_driver.insert(dev, hit.clone());
        hit
    }

    fn link_name(&self, maj: u32, min: u32, tid: i32, which: &str) -> Option<Vec<u8>> {
        let target = std::fs::read_link(self.proc_root.join(tid.to_string()).join(which)).ok()?;
        let target = target.into_os_string().into_encoded_bytes();
        // TTY_NAME_SIZE - 1 bytes at most.
        if target.is_empty() || target.len() >= 127 {
            return None;
        }
        is_dev(&target, maj, min).then_some(target)
    }

    fn guess_name(&mut self, dev: u32, maj: u32, min: u32) -> Option<Vec<u8>> {
        if let Some(hit) = self.by_guess.get(&dev) {
            return hit.clone();
        }
        let hit = guess_path(maj, min)
            .filter(|p| is_dev(p.as_bytes(), maj, min))
            .map(String::into_bytes);
        self.by_guess.insert(dev, hit.clone());
        hit
    }
}

fn exists(path: &[u8]) -> bool {
    std::fs::metadata(as_path(path)).is_ok()
}

fn as_path(p: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(p))
}

/// `stat()` succeeds and `st_rdev` has these numbers.
fn is_dev(path: &[u8], maj: u32, min: u32) -> bool {
    match std::fs::metadata(as_path(path)) {
        Ok(m) => major(m.rdev()) == maj && minor(m.rdev()) == min,
        Err(_) => false,
    }
}

/// `ABBREV_DEV`, the 64-byte chop, and `?` for bytes outside 0x21..0x7e.
fn abbreviate(path: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let p = match path.strip_prefix(b"/dev/") {
        Some(rest) if !rest.is_empty() => rest,
        _ => path,
    };
    p.iter()
        .take(64)
        .map(|&c| if c <= b' ' || c > 126 { b'?' } else { c })
}

/// load_drivers(): every " /dev/" starts a device column; a name ending in
/// "%d" is a devfs-style directory; "MAJ MIN" or "MAJ MIN-MAX" follow.
fn load_drivers(path: &Path) -> Vec<Driver> {
    use std::io::Read;
    let mut buf = vec![0u8; 9999];
    let n = match std::fs::File::open(path).and_then(|mut f| f.read(&mut buf)) {
        Ok(n) => n,
        Err(_) => return Vec::new(),
    };
    buf.truncate(n);
    let mut out = Vec::new();
    let mut p = 0;
    while let Some(at) = find(&buf[p..], b" /dev/") {
        p += at + 6;
        let Some(sp) = buf[p..].iter().position(|&b| b == b' ') else {
            continue;
        };
        let end = p + sp;
        let mut name = &buf[p..end];
        let mut devfs = false;
        if name.len() >= 3 && name.ends_with(b"%d") {
            name = &name[..name.len() - 2];
            devfs = true;
        }
        let name = name[..name.len().min(15)].to_vec();
        p = end;
        while buf.get(p) == Some(&b' ') {
            p += 1;
        }
        let (maj, digits) = atoi(&buf[p..]);
        p += digits;
        while buf.get(p) == Some(&b' ') {
            p += 1;
        }
        if let Some(minors) = minor_range(&buf[p..]) {
            out.push(Driver {
                name,
                devfs,
                major: maj as u16 as u32,
                minors,
            });
        }
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// atoi(): optional leading whitespace and sign, then digits.
fn atoi(s: &[u8]) -> (i64, usize) {
    let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    let v = std::str::from_utf8(&s[..digits])
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    (v, digits)
}

/// sscanf("%u-%u"): one number, or a range.
fn minor_range(s: &[u8]) -> Option<(u32, u32)> {
    let (a, n) = atoi(s);
    if n == 0 {
        return None;
    }
    let rest = &s[n..];
    if rest.first() == Some(&b'-') {
        let (b, m) = atoi(&rest[1..]);
        if m > 0 {
            return Some((a as u32, b as u32));
        }
    }
    Some((a as u32, a as u32))
}

/// guess_name()'s names for major 204 ("Low-density serial ports"),
/// indexed by minor, from library/devname.c.
const LOW_DENSITY_NAMES: [&str; 212] = [
    "LU0", "LU1", "LU2", "LU3", "FB0", "SA0", "SA1", "SA2", "SC0", "SC1", "SC2", "SC3", "FW0",
    "FW1", "FW2", "FW3", "AM0", "AM1", "AM2", "AM3", "AM4", "AM5", "AM6", "AM7", "AM8", "AM9",
    "AM10", "AM11", "AM12", "AM13", "AM14", "AM15", "DB0", "DB1", "DB2", "DB3", "DB4", "DB5",
    "DB6", "DB7", "SG0", "SMX0", "SMX1", "SMX2", "MM0", "MM1", "CPM0", "CPM1", "CPM2", "CPM3",
    "IOC0", "IOC1", "IOC2", "IOC3", "IOC4", "IOC5", "IOC6", "IOC7", "IOC8", "IOC9", "IOC10",
    "IOC11", "IOC12", "IOC13", "IOC14", "IOC15", "IOC16", "IOC17", "IOC18", "IOC19", "IOC20",
    "IOC21", "IOC22", "IOC23", "IOC24", "IOC25", "IOC26", "IOC27", "IOC28", "IOC29", "IOC30",
    "IOC31", "VR0", "VR1", "IOC84", "IOC85", "IOC86", "IOC87", "IOC88", "IOC89", "IOC90", "IOC91",
    "IOC92", "IOC93", "IOC94", "IOC95", "IOC96", "IOC97", "IOC98", "IOC99", "IOC100", "IOC101",
    "IOC102", "IOC103", "IOC104", "IOC105", "IOC106", "IOC107", "IOC108", "IOC109", "IOC110",
    "IOC111", "IOC112", "IOC113", "IOC114", "IOC115", "SIOC0", "SIOC1", "SIOC2", "SIOC3", "SIOC4",
    "SIOC5", "SIOC6", "SIOC7", "SIOC8", "SIOC9", "SIOC10", "SIOC11", "SIOC12", "SIOC13", "SIOC14",
    "SIOC15", "SIOC16", "SIOC17", "SIOC18", "SIOC19", "SIOC20", "SIOC21", "SIOC22", "SIOC23",
    "SIOC24", "SIOC25", "SIOC26", "SIOC27", "SIOC28", "SIOC29", "SIOC30", "SIOC31", "PSC0", "PSC1",
    "PSC2", "PSC3", "PSC4", "PSC5", "AT0", "AT1", "AT2", "AT3", "AT4", "AT5", "AT6", "AT7", "AT8",
    "AT9", "AT10", "AT11", "AT12", "AT13", "AT14", "AT15", "NX0", "NX1", "NX2", "NX3", "NX4",
    "NX5", "NX6", "NX7", "NX8", "NX9", "NX10", "NX11", "NX12", "NX13", "NX14", "NX15", "J0", "UL0",
    "UL1", "UL2", "UL3", "xvc0", "PZ0", "PZ1", "PZ2", "PZ3", "TX0", "TX1", "TX2", "TX3", "TX4",
    "TX5", "TX6", "TX7", "SC0", "SC1", "SC2", "SC3", "MAX0", "MAX1", "MAX2", "MAX3",
];

/// guess_name(): the device paths of well-known majors.
fn guess_path(maj: u32, min: u32) -> Option<String> {
    let p = |prefix: &str, n: u32| Some(format!("/dev/{prefix}{n}"));
    match maj {
        3 => {
            if min > 255 {
                return None;
            }
            let t0 = b"pqrstuvwxyzabcde"[(min >> 4) as usize] as char;
            let t1 = b"0123456789abcdef"[(min & 0x0f) as usize] as char;
            Some(format!("/dev/tty{t0}{t1}"))
        }
        4 if min < 64 => p("tty", min),
        4 => p("ttyS", min - 64),
        11 => p("ttyB", min),
        17 => p("ttyH", min),
        19 => p("ttyC", min),
        22 | 23 => p("ttyD", min),
        24 => p("ttyE", min),
        32 => p("ttyX", min),
        43 => p("ttyI", min),
        46 => p("ttyR", min),
        48 => p("ttyL", min),
        57 => p("ttyP", min),
        71 => p("ttyF", min),
        75 => p("ttyW", min),
        78 | 112 => p("ttyM", min),
        105 => p("ttyV", min),
        136..=143 => p("pts/", min + (maj - 136) * 256),
        148 => p("ttyT", min),
        154 => p("ttySR", min),
        156 => p("ttySR", min + 256),
        164 => p("ttyCH", min),
        166 => p("ttyACM", min),
        172 => p("ttyMX", min),
        174 => p("ttySI", min),
        188 => p("ttyUSB", min),
        // The table's entries are 6-byte arrays printed whole ("%.6s").
        204 => LOW_DENSITY_NAMES
            .get(min as usize)
            .map(|n| format!("/dev/tty{n}")),
        208 => p("ttyU", min),
        216 => p("ttyUB", min),
        224 => p("ttyY", min),
        227 => p("3270/tty", min),
        229 => p("iseries/vtty", min),
        256 => p("ttyEQ", min),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_numbers() {
        // pts/3: major 136, minor 3, as new_encode_dev() packs it.
        assert_eq!((major(34819), minor(34819)), (136, 3));
        // minor 300 spills into the high bits.
        let dev = (300 & 0xff) | (136 << 8) | ((300 & !0xff) << 12);
        assert_eq!((major(dev), minor(dev)), (136, 300));
    }

    #[test]
    fn drivers_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("drivers");
        std::fs::write(
            &path,
            "/dev/tty             /dev/tty        5       0 system:/dev/tty\n\
             serial               /dev/ttyS       4      64 serial\n\
             pty_slave            /dev/pts      136 0-1048575 pty:slave\n\
             odd                  /dev/tts/%d     9 x-y odd\n",
        )
        .unwrap();
        let d = load_drivers(&path);
        let got: Vec<_> = d
            .iter()
            .map(|d| (d.name.clone(), d.devfs, d.major, d.minors))
            .collect();
        assert_eq!(
            got,
            vec![
                (b"tty".to_vec(), false, 5, (0, 0)),
                (b"ttyS".to_vec(), false, 4, (64, 64)),
                (b"pts".to_vec(), false, 136, (0, 1048575)),
            ]
        );
    }

    #[test]
    fn abbreviation_and_no_tty() {
        assert_eq!(abbreviate(b"/dev/pts/3").collect::<Vec<_>>(), b"pts/3");
        assert_eq!(abbreviate(b"/dev/").collect::<Vec<_>>(), b"/dev/");
        assert_eq!(abbreviate(b"/dev/a b").collect::<Vec<_>>(), b"a?b");
        let mut out = Vec::new();
        TtyNamer::new("/nonexistent").push_name(0, 1, &mut out);
        assert_eq!(out, b"?");
        assert_eq!(guess_path(4, 65).as_deref(), Some("/dev/ttyS1"));
        assert_eq!(guess_path(137, 2).as_deref(), Some("/dev/pts/258"));
        assert_eq!(guess_path(204, 186).as_deref(), Some("/dev/ttyJ0"));
        assert_eq!(guess_path(204, 5).as_deref(), Some("/dev/ttySA0"));
        assert_eq!(guess_path(204, LOW_DENSITY_NAMES.len() as u32), None);
    }
}
