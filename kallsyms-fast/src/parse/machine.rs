//! A whole machine's symbol sources, read from a root directory: the live
//! system (`/`) or a snapshot made by [`Machine::capture`].
//!
//! Files, relative to the root:
//!
//! | path | required | parser |
//! |------|----------|--------|
//! | `proc/kallsyms` | yes | [`ProcKallsyms`] |
//! | `proc/modules` | no (kernels without modules) | [`parse_proc_modules`] |
//! | `sys/module/<name>/sections/*` | no; only for modules in `proc/modules` | [`read_sections`] |
//! | `kallsyms-fast/module_layout` | no | [`parse_module_layout`] |

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::string::String;
use std::vec::Vec;

use super::error::{ParseError, ParseErrorKind};
use super::kallsyms::ProcKallsyms;
use super::layout::{parse_module_layout, ModuleLayout};
use super::modules::{parse_proc_modules, ProcModule};
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

/// Reads a whole file; `Ok(None)` if it does not exist.
fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, ParseError> {
    match fs::read(path) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ParseError::io(path, e)),
    }
}

fn read_required(path: &Path) -> Result<Vec<u8>, ParseError> {
    fs::read(path).map_err(|e| ParseError::io(path, e))
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
        let ks = ProcKallsyms::parse(&ks_path, &read_required(&ks_path)?)?;

        let mod_path = root.join(MODULES);
        let procs = match read_optional(&mod_path)? {
            Some(d) => parse_proc_modules(&mod_path, &d)?,
            None => Vec::new(),
        };
        let layout_path = root.join(LAYOUT);
        let layouts = match read_optional(&layout_path)? {
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
    pub fn capture(from_root: &Path, to_dir: &Path) -> Result<CaptureStats, ParseError> {
        let mut stats = CaptureStats::default();
        let mut put = |rel: &Path, data: &[u8]| -> Result<(), ParseError> {
            let dest = to_dir.join(rel);
            if let Some(parent) = dest.parent() {
                fs::create_dir_all(parent).map_err(|e| ParseError::io(parent, e))?;
            }
            fs::write(&dest, data).map_err(|e| ParseError::io(&dest, e))?;
            stats.files += 1;
            stats.bytes += data.len() as u64;
            Ok(())
        };

        let ks_path = from_root.join(KALLSYMS);
        let ks = read_required(&ks_path)?;
        ProcKallsyms::parse(&ks_path, &ks)?;

        let mod_path = from_root.join(MODULES);
        let mods = read_optional(&mod_path)?;
        let procs = match &mods {
            Some(d) => parse_proc_modules(&mod_path, d)?,
            None => Vec::new(),
        };

        let layout_path = from_root.join(LAYOUT);
        let layout = read_optional(&layout_path)?;
        if let Some(d) = &layout {
            parse_module_layout(&layout_path, d)?;
        }

        put(Path::new(KALLSYMS), &ks)?;
        if let Some(d) = &mods {
            put(Path::new(MODULES), d)?;
        }
        if let Some(d) = &layout {
            put(Path::new(LAYOUT), d)?;
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
                let Some(data) = read_optional(&path)? else {
                    continue;
                };
                put(&rel_dir.join(ent.file_name()), &data)?;
            }
        }
        Machine::load(to_dir)?;
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> Self {
            let p = std::env::temp_dir().join(std::format!(
                "kallsyms-fast-machine-{tag}-{}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&p);
            fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
        fn write(&self, rel: &str, data: &str) {
            let p = self.0.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, data).unwrap();
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
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
}
