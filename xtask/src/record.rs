//! `cargo xtask record <kind> [DIR]`: a results file from a run's output
//! directory, for a run whose command did not record it (or to record
//! an older run again). The command layer: it names the commands whose
//! output it reads; `results` below it knows only the files.

use crate::results::{kernel_bench, write, Origin};
use crate::{env, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// Options of `cargo xtask record`.
#[derive(clap::Args, Debug)]
pub struct RecordOptions {
    /// `uml-native` (a `fast-uml-test` run's `out/` directory), `qemu-tcg`
    /// (a `fast-test` guest run's directory) or `nproc` (`nproc-bench`'s
    /// host-clock run directory; the instruction clock's is beside it).
    pub kind: String,
    /// The run's directory (default: the last run's, under $KFAST_WORK).
    pub dir: Option<PathBuf>,
}

/// `cargo xtask record <kind> [DIR]`: a results file from a run's output.
pub fn record(o: &RecordOptions) -> Result<u8> {
    let runs = env::work_dir();
    match o.kind.as_str() {
        "uml-native" => {
            let d = o
                .dir
                .clone()
                .unwrap_or_else(|| runs.join("uml-runs/fast-latest/out"));
            let file = d.join("bench");
            record_kernel_bench("uml-native", crate::fast_uml::COMMAND, &file)
        }
        "qemu-tcg" => {
            let d = o
                .dir
                .clone()
                .unwrap_or_else(|| runs.join("runs/fast-guest"));
            record_kernel_bench("qemu-tcg", crate::fast::COMMAND, &d.join("result.txt"))
        }
        "nproc" => {
            let d = o
                .dir
                .clone()
                .unwrap_or_else(|| runs.join("runs/nproc-bench"));
            let icount = d.with_file_name(format!(
                "{}-icount",
                d.file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("nproc-bench")
            ));
            crate::nproc_bench::record_output(&d.join("result.txt"), &icount.join("result.txt"))
        }
        k => Err(format!("unknown kind {k:?}: uml-native, qemu-tcg or nproc")),
    }
    .map(|_| 0)
}

fn record_kernel_bench(kind: &str, command: &str, file: &Path) -> Result<PathBuf> {
    let text = fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let body = kernel_bench(&text)
        .ok_or_else(|| format!("{}: no benchmark table in it", file.display()))?;
    write(kind, command, Origin::Output(file), body)
}
