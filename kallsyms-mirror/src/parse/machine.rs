//! A whole machine's symbol sources, read from a root directory: the live
//! system (`/`) or a snapshot made by [`Machine::capture`].
//!
//! Files, relative to the root:
//!
//! | path | required | parser |
//! |------|----------|--------|
//! | `proc/kallsyms` | yes | [`ProcKallsyms`] |
//! | `proc/modules` | no (kernels without modules) | [`parse_proc_modules_with`] |
//! | `sys/module/<name>/sections/*` | no; only for modules in `proc/modules` | [`read_sections`] |
//! | `kallsyms-fast/module_layout` | no | [`parse_module_layout`] |
//!
//! Hidden addresses are refused ([`ParseErrorKind::ZeroedAddresses`]);
//! `proc/kallsyms` says whether they are, and a zero base in
//! `proc/modules` beside a visible `proc/kallsyms` is a module without
//! text (the rule and why: [`parse_proc_modules_with`]).

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::string::String;
use std::vec::Vec;

use super::error::{ParseError, ParseErrorKind};
use super::kallsyms::{ModuleSymbols, ProcKallsyms};
use super::layout::{parse_module_layout, ModuleLayout};
use super::modules::{parse_proc_modules_with, ProcModule};
use super::read::{read_capped, KALLSYMS_CAP, MODULES_CAP, SECTION_CAP};
use super::sections::read_sections;
use crate::owned::RawSymbol;

const KALLSYMS: &str = "proc/kallsyms";
const MODULES: &str = "proc/modules";
const SYS_MODULE: &str = "sys/module";
const LAYOUT: &str = "kallsyms-fast/module_layout";

/// Everything known about one module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineModule {
    /// Module name.
    pub name: String,
    /// Its `/proc/kallsyms` symbols in file (symtab) order; empty if it has
    /// none there.
    pub symbols: Vec<RawSymbol>,
    /// Its `/proc/modules` line, if listed there.
    pub proc: Option<ProcModule>,
    /// Its sysfs sections, sorted by address (empty if unknown).
    pub sections: Vec<(String, u64)>,
    /// Its exact `mod->mem[]` regions, if the layout file lists it.
    pub layout: Option<ModuleLayout>,
}

/// The symbol sources of one machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Core kernel symbols, ascending.
    pub core: Vec<RawSymbol>,
    /// Modules: those with `/proc/kallsyms` symbols in that order, then
    /// those only in `/proc/modules`, then those only in the layout file.
    pub modules: Vec<MachineModule>,
    /// The `/proc/kallsyms` symbols outside every module symtab (`[bpf]`,
    /// `[__builtin__ftrace]`, `[__builtin__kprobes]`, and freed module init
    /// functions ftrace remembers), as [`ProcKallsyms::pseudo`] has them.
    pub pseudo: Vec<ModuleSymbols>,
    /// The root this was loaded from.
    pub root: PathBuf,
}

/// What [`Machine::capture`] copied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Number of files written.
    pub files: usize,
    /// Total bytes written.
    pub bytes: u64,
}

fn is_not_found(e: &ParseError) -> bool {
    matches!(&e.kind, ParseErrorKind::Io(io) if io.kind() == io::ErrorKind::NotFound)
}

/// Reads a whole regular file of at most `cap` bytes; `Ok(None)` if it does
/// not exist.
fn read_optional(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, ParseError> {
    match read_capped(path, cap) {
        Ok(d) => Ok(Some(d)),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

fn sections_dir(root: &Path, module: &str) -> PathBuf {
    root.join(SYS_MODULE).join(module).join("sections")
}

impl Machine {
    /// Loads `root/proc/kallsyms`, `root/proc/modules`,
    /// `root/sys/module/*/sections/*` and `root/kallsyms-fast/module_layout`
    /// (see the module docs for which are optional).
    pub fn load(root: &Path) -> Result<Machine, ParseError> {
        let ks_path = root.join(KALLSYMS);
        let ks = ProcKallsyms::parse(&ks_path, &read_capped(&ks_path, KALLSYMS_CAP)?)?;

        let mod_path = root.join(MODULES);
        let procs = match read_optional(&mod_path, MODULES_CAP)? {
            Some(d) => parse_proc_modules_with(&mod_path, &d, &ks)?,
            None => Vec::new(),
        };
        let layout_path = root.join(LAYOUT);
        let layouts = match read_optional(&layout_path, MODULES_CAP)? {
            Some(d) => parse_module_layout(&layout_path, &d)?,
            None => Vec::new(),
        };

        let mut modules: Vec<MachineModule> = ks
            .modules
            .into_iter()
            .map(|m| MachineModule {
                name: m.name,
                symbols: m.symbols,
                proc: None,
                sections: Vec::new(),
                layout: None,
            })
            .collect();
        // Name -> index: one hash lookup per line keeps loading linear.
        let mut by_name: HashMap<String, usize> = modules
            .iter()
            .enumerate()
            .rev() // The first of duplicate names wins, as a scan would.
            .map(|(i, m)| (m.name.clone(), i))
            .collect();
        let mut position = |modules: &mut Vec<MachineModule>, name: &str| -> usize {
            if let Some(&i) = by_name.get(name) {
                return i;
            }
            modules.push(MachineModule {
                name: name.into(),
                symbols: Vec::new(),
                proc: None,
                sections: Vec::new(),
                layout: None,
            });
            by_name.insert(name.into(), modules.len() - 1);
            modules.len() - 1
        };
        for p in procs {
            let sections = match read_sections(&sections_dir(root, &p.name)) {
                Ok(s) => s,
                // Missing directory, or the module went away while reading.
                Err(e) if is_not_found(&e) => Vec::new(),
                Err(e) => return Err(e),
            };
            let i = position(&mut modules, &p.name);
            if let Some(m) = modules.get_mut(i) {
                m.sections = sections;
                m.proc = Some(p);
            }
        }
        for (name, l) in layouts {
            let i = position(&mut modules, &name);
            if let Some(m) = modules.get_mut(i) {
                m.layout = Some(l);
            }
        }
        Ok(Machine {
            core: ks.core,
            modules,
            pseudo: ks.pseudo,
            root: root.to_path_buf(),
        })
    }

    /// Snapshots the files [`Machine::load`] reads from `from_root` into
    /// `to_dir`, with the same relative layout, then loads the snapshot to
    /// verify it.
    ///
    /// Every source is read fully before anything is written (the `/proc`
    /// files report size 0, so `fs::copy` would copy nothing) and parsed, so
    /// a bad source is reported under its own path. Section directories are
    /// copied only for modules listed in `proc/modules`.
    ///
    /// `to_dir` must not exist yet or be an empty directory (not a symlink
    /// to one): a snapshot must never mix with stale files of another
    /// machine. The files are written into a fresh private (0700) temporary
    /// directory beside `to_dir`, with `O_EXCL` and mode 0600 (the
    /// addresses are what kptr_restrict protects), verified, and renamed
    /// onto `to_dir` in one step; on any error it is removed and `to_dir` is
    /// left as it was. So nothing is written through a symlink, and a
    /// snapshot is either complete or absent.
    pub fn capture(from_root: &Path, to_dir: &Path) -> Result<CaptureStats, ParseError> {
        let ks_path = from_root.join(KALLSYMS);
        let ks = read_capped(&ks_path, KALLSYMS_CAP)?;
        let parsed = ProcKallsyms::parse(&ks_path, &ks)?;

        let mod_path = from_root.join(MODULES);
        let mods = read_optional(&mod_path, MODULES_CAP)?;
        let procs = match &mods {
            Some(d) => parse_proc_modules_with(&mod_path, d, &parsed)?,
            None => Vec::new(),
        };
        // Only the verdict was needed: free the parsed table before the
        // rest is read.
        drop(parsed);

        let layout_path = from_root.join(LAYOUT);
        let layout = read_optional(&layout_path, MODULES_CAP)?;
        if let Some(d) = &layout {
            parse_module_layout(&layout_path, d)?;
        }

        let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        files.push((PathBuf::from(KALLSYMS), ks));
        if let Some(d) = mods {
            files.push((PathBuf::from(MODULES), d));
        }
        if let Some(d) = layout {
            files.push((PathBuf::from(LAYOUT), d));
        }
        for p in &procs {
            let dir = sections_dir(from_root, &p.name);
            let rd = match fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(ParseError::io(&dir, e)),
            };
            let rel_dir = Path::new(SYS_MODULE).join(&p.name).join("sections");
            for ent in rd {
                let ent = ent.map_err(|e| ParseError::io(&dir, e))?;
                let path = ent.path();
                let ft = ent.file_type().map_err(|e| ParseError::io(&path, e))?;
                if ft.is_dir() {
                    continue;
                }
                let Some(data) = read_optional(&path, SECTION_CAP)? else {
                    continue;
                };
                files.push((rel_dir.join(ent.file_name()), data));
            }
        }
        write_snapshot(to_dir, &files)
    }
}

/// `to_dir` must be absent or an empty directory.
fn check_destination(to_dir: &Path) -> Result<(), ParseError> {
    let refuse = |why: &str| {
        ParseError::io(
            to_dir,
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                std::format!("{why}; capture writes only into a new or empty directory"),
            ),
        )
    };
    match fs::symlink_metadata(to_dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ParseError::io(to_dir, e)),
        Ok(m) if m.file_type().is_symlink() => Err(refuse("is a symbolic link")),
        Ok(m) if !m.is_dir() => Err(refuse("exists and is not a directory")),
        Ok(_) => {
            let mut rd = fs::read_dir(to_dir).map_err(|e| ParseError::io(to_dir, e))?;
            match rd.next() {
                None => Ok(()),
                Some(_) => Err(refuse("is not empty")),
            }
        }
    }
}

/// Writes `files` (relative path, contents) into a private temporary
/// directory beside `to_dir`, verifies it loads, and renames it onto
/// `to_dir`.
fn write_snapshot(to_dir: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<CaptureStats, ParseError> {
    use std::os::unix::fs::OpenOptionsExt;

    check_destination(to_dir)?;
    let parent = match to_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".kallsyms-capture-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir_in(parent)
        .map_err(|e| ParseError::io(parent, e))?;
    let mut stats = CaptureStats::default();
    for (rel, data) in files {
        let dest = tmp.path().join(rel);
        if let Some(dir) = dest.parent() {
            fs::create_dir_all(dir).map_err(|e| ParseError::io(dir, e))?;
        }
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&dest)
            .map_err(|e| ParseError::io(&dest, e))?;
        io::Write::write_all(&mut f, data).map_err(|e| ParseError::io(&dest, e))?;
        stats.files += 1;
        stats.bytes += data.len() as u64;
    }
    Machine::load(tmp.path())?;
    // Replaces an empty directory, fails on anything else (ENOTEMPTY if a
    // file appeared since the check, ENOTDIR for a symlink); `tmp` is
    // removed on failure when it drops.
    fs::rename(tmp.path(), to_dir).map_err(|e| ParseError::io(to_dir, e))?;
    // Renamed away: nothing left to clean up.
    let _ = tmp.keep();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A private scratch directory (random name), removed when the second
    /// field drops.
    struct TempDir(PathBuf, #[allow(dead_code)] tempfile::TempDir);
    impl TempDir {
        fn new(_tag: &str) -> Self {
            let t = tempfile::tempdir().unwrap();
            TempDir(t.path().to_path_buf(), t)
        }
        fn write(&self, rel: &str, data: &str) {
            let p = self.0.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, data).unwrap();
        }
    }

    const KS: &str = "ffffffff81000000 T _stext\nffffffff81000010 t helper\n\
                      ffffffffc0001000 t a_fn\t[a]\nffffffffc0001010 T a_fn2\t[a]\n\
                      ffffffffc0300000 t bpf_prog_x\t[bpf]\n";

    #[test]
    fn load_full_and_minimal() {
        let t = TempDir::new("load");
        t.write(KALLSYMS, KS);
        // Only kallsyms: a kernel without modules.
        let m = Machine::load(&t.0).unwrap();
        assert_eq!(m.core.len(), 2);
        assert_eq!(m.modules.len(), 1);
        assert_eq!(m.modules[0].name, "a");
        assert!(m.modules[0].proc.is_none());

        t.write(
            MODULES,
            "a 8192 0 - Live 0xffffffffc0001000\nb 4096 0 - Live 0xffffffffc0002000\n",
        );
        t.write("sys/module/a/sections/.text", "0xffffffffc0001000\n");
        t.write("sys/module/a/sections/.data", "0xffffffffc0004000\n");
        t.write("sys/module/a/sections/.init.text", "0xffffffffc0008000\n");
        // Not in proc/modules: ignored even though malformed.
        t.write("sys/module/zz/sections/.text", "garbage\n");
        t.write(
            LAYOUT,
            "a 0 ffffffffc0001000 1000\na 1 ffffffffc0004000 1000\n",
        );
        let m = Machine::load(&t.0).unwrap();
        assert_eq!(m.modules.len(), 2);
        let a = &m.modules[0];
        assert_eq!(a.symbols.len(), 2);
        assert_eq!(a.proc.as_ref().unwrap().size, 8192);
        let names: Vec<&str> = a.sections.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(names, [".text", ".data", ".init.text"]);
        let l = a.layout.unwrap();
        assert_eq!(l[0], Some((0xffffffffc0001000, 0x1000)));
        assert_eq!(l[4], None);
        // b: listed in proc/modules only, no sections dir.
        assert_eq!(m.modules[1].name, "b");
        assert!(m.modules[1].symbols.is_empty());
        assert!(m.modules[1].sections.is_empty());
        assert_eq!(m.root, t.0);

        // Errors name the file.
        t.write("sys/module/a/sections/.bss", "0xzz\n");
        let e = Machine::load(&t.0).unwrap_err();
        assert!(e.file.ends_with("sys/module/a/sections/.bss"), "{e}");
    }

    #[test]
    fn load_errors() {
        let t = TempDir::new("errors");
        let e = Machine::load(&t.0).unwrap_err();
        assert!(is_not_found(&e));
        assert!(e.file.ends_with(KALLSYMS));
        t.write(KALLSYMS, KS);
        t.write(MODULES, "a 8192 0 - Live 0x0000000000000000\n");
        let e = Machine::load(&t.0).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::ZeroedAddresses));
        assert!(e.file.ends_with(MODULES));
    }

    /// A module without text (base 0 in proc/modules, data symbols only)
    /// beside visible addresses loads, and so does a capture of it; hidden
    /// addresses are still refused with the reason.
    #[test]
    fn textless_module_loads_hidden_addresses_do_not() {
        const NLS: &str = "ffffffffc0010000 r nls_table\t[nls]\n\
                           ffffffffc0012040 D __this_module\t[nls]\n";
        let t = TempDir::new("textless");
        // `[bpf]` ends the module symtabs: put nls before it, as the kernel
        // lists module symtabs before BPF programs.
        let (core_and_a, bpf) = KS.split_at(KS.find("ffffffffc0300000").unwrap());
        t.write(KALLSYMS, &std::format!("{core_and_a}{NLS}{bpf}"));
        t.write(
            MODULES,
            "a 8192 1 - Live 0xffffffffc0001000\nnls 12288 1 a, Live 0x0000000000000000\n",
        );
        t.write("sys/module/nls/sections/.rodata", "0xffffffffc0010000\n");
        t.write(
            "sys/module/nls/sections/.gnu.linkonce.this_module",
            "0xffffffffc0012040\n",
        );
        let m = Machine::load(&t.0).unwrap();
        let nls = m.modules.iter().find(|m| m.name == "nls").unwrap();
        assert_eq!(nls.proc.as_ref().unwrap().base, 0);
        assert_eq!(nls.symbols.len(), 2);
        assert_eq!(nls.sections.len(), 2);

        // Alone in proc/modules, still visible beside proc/kallsyms.
        t.write(MODULES, "nls 12288 0 - Live 0x0000000000000000\n");
        Machine::load(&t.0).unwrap();

        let dst = TempDir::new("textless-capture");
        let snap = dst.0.join("snap");
        Machine::capture(&t.0, &snap).unwrap();
        let mut b = Machine::load(&snap).unwrap();
        b.root = m.root.clone();
        assert_eq!(Machine::load(&t.0).unwrap(), b);

        // Every base zero while `a`, Live, lists text symbols: this
        // proc/modules was read with addresses hidden.
        t.write(
            MODULES,
            "a 8192 1 - Live 0x0000000000000000\nnls 12288 1 a, Live 0x0000000000000000\n",
        );
        let e = Machine::load(&t.0).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::ZeroedAddresses), "{e}");
        assert!(e.file.ends_with(MODULES) && e.line.is_none(), "{e}");
        let e = Machine::capture(&t.0, &dst.0.join("snap2")).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::ZeroedAddresses), "{e}");
        // `a` still loading lists init text a text-less core may have.
        t.write(
            MODULES,
            "a 8192 1 - Loading 0x0000000000000000\nnls 12288 1 a, Live 0x0000000000000000\n",
        );
        Machine::load(&t.0).unwrap();

        // Hidden: proc/kallsyms all zero, refused there first.
        t.write(
            KALLSYMS,
            "0000000000000000 T _stext\n0000000000000000 r nls_table\t[nls]\n",
        );
        let e = Machine::load(&t.0).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::ZeroedAddresses), "{e}");
        assert!(e.file.ends_with(KALLSYMS), "{e}");
    }

    #[test]
    fn capture_round_trip() {
        let src = TempDir::new("capsrc");
        let dst = TempDir::new("capdst");
        src.write(KALLSYMS, KS);
        src.write(MODULES, "a 8192 0 - Live 0xffffffffc0001000\n");
        src.write("sys/module/a/sections/.text", "0xffffffffc0001000\n");
        src.write("sys/module/a/sections/__mcount_loc", "0xffffffffc0006000\n");
        src.write("sys/module/zz/sections/.text", "0xffffffffc0009000\n");
        src.write(LAYOUT, "a 0 ffffffffc0001000 1000\n");
        let stats = Machine::capture(&src.0, &dst.0).unwrap();
        assert_eq!(stats.files, 5);
        assert!(!dst.0.join("sys/module/zz").exists());
        let a = Machine::load(&src.0).unwrap();
        let mut b = Machine::load(&dst.0).unwrap();
        b.root = a.root.clone();
        assert_eq!(a, b);

        src.write(KALLSYMS, "");
        let e = Machine::capture(&src.0, &dst.0).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::Empty));
        assert!(e.file.starts_with(&src.0));
    }

    #[test]
    fn capture_destination_rules() {
        use std::string::ToString;
        let src = TempDir::new("capsrc");
        src.write(KALLSYMS, KS);
        let scratch = TempDir::new("capdst");
        let leftovers = |dir: &Path| {
            fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.starts_with(".kallsyms-capture-"))
                .count()
        };

        // A new directory: created, private.
        let fresh = scratch.0.join("fresh");
        assert_eq!(Machine::capture(&src.0, &fresh).unwrap().files, 1);
        assert!(fresh.join(KALLSYMS).is_file());
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&fresh.join(KALLSYMS)), 0o600);
        assert_eq!(mode(&fresh), 0o700);

        // Non-empty (here: the previous snapshot): refused, untouched.
        let e = Machine::capture(&src.0, &fresh).unwrap_err();
        assert!(e.to_string().contains("is not empty"), "{e}");
        assert_eq!(fs::read(fresh.join(KALLSYMS)).unwrap(), KS.as_bytes());

        // A stale file or a planted symlink inside: refused, nothing written
        // through the link.
        let planted = scratch.0.join("planted");
        fs::create_dir_all(planted.join("proc")).unwrap();
        let victim = scratch.0.join("victim");
        fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, planted.join(KALLSYMS)).unwrap();
        let e = Machine::capture(&src.0, &planted).unwrap_err();
        assert!(e.to_string().contains("is not empty"), "{e}");
        assert_eq!(fs::read(&victim).unwrap(), b"precious");

        // DIR itself a symlink to an empty directory: refused.
        let empty = scratch.0.join("empty");
        fs::create_dir(&empty).unwrap();
        let link = scratch.0.join("link");
        std::os::unix::fs::symlink(&empty, &link).unwrap();
        let e = Machine::capture(&src.0, &link).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(fs::read_dir(&empty).unwrap().count(), 0);

        // An existing empty directory is fine.
        Machine::capture(&src.0, &empty).unwrap();
        assert!(empty.join(KALLSYMS).is_file());
        assert_eq!(leftovers(&scratch.0), 0);
    }
}
