//! Copy the kernel's symbol-related files into the capture directory.

use crate::Result;
use std::fs;
use std::path::Path;

/// What the capture step read, for address generation.
pub struct Capture {
    /// Contents of `/proc/kallsyms`.
    pub kallsyms: String,
    /// Contents of the `ksym_truth` module layout file.
    pub module_layout: String,
    /// Every module section address sysfs shows.
    pub sections: Vec<u64>,
    /// Kernel stack traces of all tasks (`ksym_truth/stacks`).
    pub stacks: String,
    /// Human-readable counts.
    pub summary: String,
}

const LAYOUT: &str = "/sys/kernel/debug/ksym_truth/module_layout";
const STACKS: &str = "/sys/kernel/debug/ksym_truth/stacks";

/// Write `data` to `path`, creating parent directories.
pub fn write(path: &Path, data: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
    }
    fs::write(path, data).map_err(|e| format!("write {}: {e}", path.display()))
}

fn read(path: &str) -> Result<String> {
    fs::read_to_string(path).map_err(|e| format!("read {path}: {e}"))
}

/// Capture kallsyms, modules and module sections into `out`, and the exact
/// module layout into `out/truth`.
pub fn capture(out: &Path) -> Result<Capture> {
    let kallsyms = read("/proc/kallsyms")?;
    write(&out.join("proc/kallsyms"), kallsyms.as_bytes())?;
    let modules = read("/proc/modules")?;
    write(&out.join("proc/modules"), modules.as_bytes())?;
    // The exact layout is truth, not input: the capture the mirror resolves
    // from has no `kallsyms-fast/module_layout`, like `kallsyms-bench
    // capture` of any machine, so the host derives the regions.
    let module_layout = read(LAYOUT)?;
    write(&out.join("truth/module_layout"), module_layout.as_bytes())?;
    let stacks = read(STACKS)?;
    write(&out.join("kallsyms-fast/stacks"), stacks.as_bytes())?;
    for f in ["/proc/cmdline", "/proc/version"] {
        let data = read(f)?;
        write(&out.join(&f[1..]), data.as_bytes())?;
    }
    let mut sections = 0;
    let mut section_addrs = Vec::new();
    let dir = fs::read_dir("/sys/module").map_err(|e| format!("/sys/module: {e}"))?;
    for m in dir.flatten() {
        let Ok(secs) = fs::read_dir(m.path().join("sections")) else {
            continue;
        };
        let name = m.file_name();
        for s in secs.flatten() {
            let data = fs::read(s.path()).map_err(|e| format!("{}: {e}", s.path().display()))?;
            let dst = out
                .join("sys/module")
                .join(&name)
                .join("sections")
                .join(s.file_name());
            write(&dst, &data)?;
            sections += 1;
            let text = String::from_utf8_lossy(&data);
            if let Ok(a) = u64::from_str_radix(text.trim().trim_start_matches("0x"), 16) {
                section_addrs.push(a);
            }
        }
    }
    let summary = format!(
        "kallsyms lines {}\nmodules {}\nmodule sections {sections}\nmodule_layout lines {}\n",
        kallsyms.lines().count(),
        modules.lines().count(),
        module_layout.lines().count()
    );
    Ok(Capture {
        kallsyms,
        module_layout,
        sections: section_addrs,
        stacks,
        summary,
    })
}
