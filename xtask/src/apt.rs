//! A private apt configuration for one Debian suite: its own sources
//! list, lists and cache under `$KFAST_CACHE/apt/<suite>/`, so the
//! system's sources stay untouched (the approach of `debian.rs`, whose
//! configuration lives apart, under `$KFAST_CACHE/debian/apt`).

use crate::{env, run, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Debian mirror.
const MIRROR: &str = "http://deb.debian.org/debian";
/// The keyring that signs Debian's suites (debian-archive-keyring).
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// apt reading one suite (`main`) of the Debian mirror.
pub struct Apt {
    dir: PathBuf,
    suite: String,
}

impl Apt {
    /// The configuration for `suite`, created when missing.
    pub fn new(suite: &str) -> Result<Self> {
        let dir = env::cache_dir().join("apt").join(suite);
        for d in ["lists/partial", "cache/archives/partial"] {
            let p = dir.join(d);
            fs::create_dir_all(&p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
        }
        let list = dir.join("sources.list");
        fs::write(
            &list,
            format!("deb [signed-by={KEYRING}] {MIRROR} {suite} main\n"),
        )
        .map_err(|e| format!("cannot write {}: {e}", list.display()))?;
        Ok(Apt {
            dir,
            suite: suite.to_string(),
        })
    }

    /// `tool` (apt-get, apt-cache) with this configuration.
    pub fn cmd(&self, tool: &str) -> Command {
        let d = &self.dir;
        let mut c = Command::new(tool);
        c.arg("-o")
            .arg(format!(
                "Dir::Etc::SourceList={}",
                d.join("sources.list").display()
            ))
            .args(["-o", "Dir::Etc::SourceParts=/dev/null"])
            .arg("-o")
            .arg(format!("Dir::State::Lists={}", d.join("lists").display()))
            .arg("-o")
            .arg(format!("Dir::Cache={}", d.join("cache").display()))
            .args(["-o", "APT::Architecture=amd64", "-q"]);
        c
    }

    /// `apt-get update`; with lists from an earlier run, a failure (no
    /// network) is a warning.
    pub fn update(&self) -> Result<()> {
        let had = fs::read_dir(self.dir.join("lists"))
            .map(|d| d.count() > 2)
            .unwrap_or(false);
        match run::output(self.cmd("apt-get").arg("update")) {
            Ok(_) => Ok(()),
            Err(e) if had => {
                eprintln!(
                    "apt: apt-get update of {} failed, using the lists of an earlier run: {e}",
                    self.suite
                );
                Ok(())
            }
            Err(e) => Err(format!("cannot read {MIRROR} {}: {e}", self.suite)),
        }
    }

    /// The version of `pkg` the suite serves.
    pub fn candidate(&self, pkg: &str) -> Result<String> {
        let out = run::output(
            self.cmd("apt-cache")
                .args(["show", "--no-all-versions", pkg]),
        )
        .map_err(|e| format!("{MIRROR} {} has no {pkg}: {e}", self.suite))?;
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("Version: "))
            .map(|v| v.trim().to_string())
            .ok_or_else(|| format!("{MIRROR} {} has no {pkg}", self.suite))
    }

    /// `apt-get download pkg=version` into `dir`.
    pub fn download(&self, pkg: &str, version: &str, dir: &Path) -> Result<()> {
        run::output(
            self.cmd("apt-get")
                .current_dir(dir)
                .args(["download", &format!("{pkg}={version}")]),
        )
        .map(|_| ())
    }
}
