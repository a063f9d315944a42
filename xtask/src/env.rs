//! Paths and tool locations shared by all subcommands.

use std::path::{Path, PathBuf};

/// Debian package whose tarball provides the kernel source.
pub const KERNEL_SRC_TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";
/// Top-level directory inside the tarball.
pub const KERNEL_SRC_DIRNAME: &str = "linux-source-6.12";
/// The rustc the kernel build uses (Debian `rustc-web`, ships with `core` sources).
pub const KERNEL_RUSTC: &str = "/usr/bin/rustc";
/// bindgen-cli version installed by `setup` (kernel wants >= 0.65.1, not 0.66.x).
pub const BINDGEN_VERSION: &str = "0.73.2";
/// Parallel jobs for kernel builds (the machine has 2 cores, shared).
pub const MAKE_JOBS: &str = "-j2";

/// Root of the repository (the parent of the xtask crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// The cache directory holding kernel trees, build outputs and run logs.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("KFAST_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/kallsyms-fast"))
}

/// The cargo that runs this xtask (falls back to `cargo` in PATH).
pub fn cargo() -> PathBuf {
    std::env::var_os("CARGO")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("cargo"))
}

/// Which x86_64 kernel a step works on: each has its own source tree,
/// build directory, guest artefacts and run directory, so the stock
/// suites (`guest-test`) run unchanged against the patched kernel and
/// nothing of one kernel's is rebuilt or overwritten by another's. Every
/// function that builds or boots an x86_64 kernel takes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// The stock test kernel (`build`, pristine tree).
    Stock,
    /// The `CONFIG_KALLSYMS_FAST` series applied (`fast-build`), with the
    /// test kernel's lockdep.
    Patched,
    /// The patched kernel built as a distribution kernel is, without lock
    /// debugging, with -O2 and per-CPU slabs (`bench-build`): what
    /// `nproc-bench` times (see `xtask/configs/bench-kernel.config`).
    Bench,
}

impl Flavor {
    /// Whether the kernel has the series applied.
    pub fn patched(self) -> bool {
        self != Flavor::Stock
    }

    /// Directory the kernel source lives in.
    pub fn kernel_src(self) -> PathBuf {
        if self.patched() {
            patched_src()
        } else {
            pristine_src()
        }
    }

    /// The kernel's `O=` build directory.
    pub fn kernel_build(self) -> PathBuf {
        cache_dir().join(match self {
            Flavor::Stock => "build",
            Flavor::Patched => "fast-build",
            Flavor::Bench => "bench-build",
        })
    }

    /// Working area for guest artefacts (modules, initramfs, agent).
    pub fn guest_dir(self) -> PathBuf {
        work_dir().join(match self {
            Flavor::Stock => "guest",
            Flavor::Patched => "fast-guest",
            Flavor::Bench => "bench-guest",
        })
    }

    /// Directory for the last guest run (console log, result channel,
    /// capture).
    pub fn run_dir(self) -> PathBuf {
        work_dir().join("runs").join(match self {
            Flavor::Stock => "latest",
            Flavor::Patched => "fast-latest",
            Flavor::Bench => "bench-latest",
        })
    }
}

/// The pristine source unpacked from Debian's tarball.
pub fn pristine_src() -> PathBuf {
    cache_dir().join("src").join(KERNEL_SRC_DIRNAME)
}

/// The pristine source with the series applied (`fast.rs` makes it).
pub fn patched_src() -> PathBuf {
    cache_dir().join("fast-src").join(KERNEL_SRC_DIRNAME)
}

/// Cargo install root for bindgen-cli.
pub fn cargo_root() -> PathBuf {
    cache_dir().join("cargo")
}

/// The bindgen binary installed by `setup`.
pub fn bindgen() -> PathBuf {
    cargo_root().join("bin").join("bindgen")
}

/// Per-checkout working area: guest artefacts, shim builds and run logs.
///
/// `$KFAST_WORK` when set, else the cache directory. Two checkouts sharing
/// one kernel cache (one `$KFAST_CACHE`) set different `$KFAST_WORK`s so
/// their guest runs do not overwrite each other.
pub fn work_dir() -> PathBuf {
    std::env::var_os("KFAST_WORK")
        .map(PathBuf::from)
        .unwrap_or_else(cache_dir)
}

/// `PATH` with `/usr/bin` first, as the kernel's Rust build needs.
pub fn kernel_path_var() -> String {
    let old = std::env::var("PATH").unwrap_or_default();
    format!("/usr/bin:/bin:/usr/sbin:/sbin:{old}")
}

/// Common `make` arguments for kernel and out-of-tree module builds.
pub fn kernel_make_vars() -> Vec<String> {
    vec![
        "ARCH=x86_64".into(),
        format!("RUSTC={KERNEL_RUSTC}"),
        format!("HOSTRUSTC={KERNEL_RUSTC}"),
        format!("BINDGEN={}", bindgen().display()),
    ]
}

/// Make a `make` command with the kernel toolchain environment.
pub fn kernel_make() -> std::process::Command {
    let mut cmd = std::process::Command::new("make");
    cmd.env("PATH", kernel_path_var());
    cmd
}
