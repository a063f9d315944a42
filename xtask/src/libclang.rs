//! A libclang for bindgen newer than the host's, without installing it.
//!
//! Linux 7.3's Rust support wants libclang 17.0.1 or newer for bindgen
//! (`scripts/min-tool-version.sh`); bookworm's default is 14. Bookworm also
//! serves LLVM 19 (for `rustc-web`), so its `libclang1-19`, `libllvm19` and
//! `libclang-common-19-dev` (the compiler's own headers) are downloaded with
//! the system's apt (`apt-get download`: nothing is installed, and bindgen
//! runs of other builds on the host, which pick the newest installed
//! libclang, are not changed) and unpacked under `$KFAST_CACHE/libclang-19`.
//! A build that needs it gets `LIBCLANG_PATH` and `LD_LIBRARY_PATH`.

use crate::{env, run, Result};
use std::fs;
use std::path::PathBuf;
use std::process::Command;

/// The LLVM version bookworm serves beside its default.
const LLVM: &str = "19";

/// The environment that makes bindgen load the private libclang,
/// downloaded and unpacked on first use.
pub fn env_vars() -> Result<Vec<(String, String)>> {
    let dir = env::cache_dir().join(format!("libclang-{LLVM}"));
    let root = dir.join("root");
    let lib = root.join(format!("usr/lib/llvm-{LLVM}/lib"));
    let so = root.join(format!(
        "usr/lib/x86_64-linux-gnu/libclang-{LLVM}.so.{LLVM}"
    ));
    let stamp = dir.join(".kfast-unpacked");
    if !stamp.exists() || !so.exists() {
        let debs: PathBuf = dir.join("debs");
        fs::create_dir_all(&debs).map_err(|e| format!("cannot create {}: {e}", debs.display()))?;
        let pkgs = [
            format!("libclang1-{LLVM}"),
            format!("libllvm{LLVM}"),
            format!("libclang-common-{LLVM}-dev"),
        ];
        eprintln!(
            "libclang: downloading {} into {}",
            pkgs.join(", "),
            debs.display()
        );
        run::output(
            Command::new("apt-get")
                .current_dir(&debs)
                .args(["download", "-q"])
                .args(&pkgs),
        )?;
        for ent in fs::read_dir(&debs).map_err(|e| format!("{}: {e}", debs.display()))? {
            let p = ent.map_err(|e| format!("{}: {e}", debs.display()))?.path();
            if p.extension().is_some_and(|x| x == "deb") {
                run::output(Command::new("dpkg-deb").arg("-x").arg(&p).arg(&root))?;
            }
        }
        if !so.exists() {
            return Err(format!(
                "libclang: {} missing after unpacking",
                so.display()
            ));
        }
        fs::write(&stamp, LLVM).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    Ok(vec![
        ("LIBCLANG_PATH".into(), lib.display().to_string()),
        (
            "LD_LIBRARY_PATH".into(),
            root.join("usr/lib/x86_64-linux-gnu").display().to_string(),
        ),
    ])
}
