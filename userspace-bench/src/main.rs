//! `kallsyms-bench`: resolve addresses exactly as the kernel prints them,
//! capture a machine's symbol files, and benchmark kallsyms-fast against the
//! mainline 6.12 algorithm, the 2.6.9 linear scan and blazesym.

mod bench;
mod blaze;
mod latency;
mod load;
mod resolve;
mod shim;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Kernel address -> symbol, as the kernel does it, and how fast.
///
/// With no subcommand, benchmarks this machine's /proc/kallsyms (or, when it
/// is unreadable or its addresses are hidden, an embedded real table from a
/// Linux 6.18 x86_64 machine) and records the run in the checkout's
/// bench/results/ (as `bench` does; see `bench --help`).
#[derive(Parser)]
#[command(name = "kallsyms-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Print `<addr> <sprint_symbol() output>` for each hex address (arguments, or stdin one per line).
    ///
    /// An address whose kernel text the files do not determine (inside a
    /// `[bpf]` program or an ftrace-kept module init function, whose sizes
    /// /proc/kallsyms does not list) gets the most likely answer (the room
    /// up to the next listed symbol as its size), explained on stderr; the
    /// exit status stays 0, as every other line is exact. Bad input exits
    /// non-zero.
    Resolve {
        /// Root of the machine's files (DIR/proc/kallsyms, DIR/proc/modules, DIR/sys/module).
        #[arg(long, default_value = "/")]
        root: PathBuf,
        /// Print the `%ps` form (`sprint_symbol_no_offset()`: no `+off/size`).
        #[arg(long, conflicts_with = "wchan")]
        no_offset: bool,
        /// Print what `/proc/PID/wchan` shows for a task whose wchan is the address.
        #[arg(long)]
        wchan: bool,
        /// Addresses in hex, with or without 0x.
        addrs: Vec<String>,
    },
    /// Copy this machine's symbol files into DIR, for `resolve --root DIR` elsewhere.
    ///
    /// DIR must be new or an empty directory; the files are written into a
    /// private temporary directory beside it and renamed into place, so DIR
    /// ends up complete (mode 0700, files 0600: they hold the addresses
    /// kptr_restrict protects) or untouched.
    Capture {
        /// Root to copy from: the live machine, or an earlier capture.
        #[arg(long, default_value = "/")]
        from: PathBuf,
        /// Destination directory (new, or empty).
        dir: PathBuf,
    },
    /// Side-by-side benchmark: 2.6.9, mainline 6.12, kallsyms-fast (cold and cached), blazesym;
    /// for modules also the sorted-symtab baseline.
    Bench {
        /// Root of the machine's files.
        #[arg(long, default_value = "/")]
        root: PathBuf,
        /// JSON output for scripts.
        #[arg(long)]
        json: bool,
        /// Fewer operations and rounds (a smoke run: not recorded unless --results is given).
        #[arg(long)]
        quick: bool,
        /// Write the run as a dated JSON file into DIR (default for a full
        /// run: this checkout's bench/results/, which README.md's headline
        /// table is generated from).
        #[arg(long, value_name = "DIR")]
        results: Option<PathBuf>,
        /// Do not write the run into bench/results/.
        #[arg(long, conflicts_with = "results")]
        no_record: bool,
    },
    /// One algorithm over one of the benchmark's address streams, nothing else: for
    /// callgrind/cachegrind (`--toggle-collect='*profile_loop*'`) or perf stat.
    Profile {
        /// Root of the machine's files.
        #[arg(long, default_value = "/")]
        root: PathBuf,
        /// Which of the benchmark's address streams.
        #[arg(long, value_enum, default_value_t = bench::Stream::Uniform)]
        stream: bench::Stream,
        /// Which lookup.
        #[arg(long, value_enum, default_value_t = bench::ProfileAlgo::Fast)]
        algo: bench::ProfileAlgo,
        /// Lookups to run, cycling over the stream (0: the setup alone).
        #[arg(long, default_value_t = 50_000)]
        ops: usize,
        /// Make each lookup's input depend on the previous lookup's result, so that
        /// lookups cannot overlap: the printed time per lookup is then a lookup's
        /// latency, not the stream's throughput.
        #[arg(long)]
        chain: bool,
    },
    /// Load and enable the kmod-shim kernel module; time /proc/PID/wchan reads.
    Shim(shim::ShimArgs),
    /// Nanoseconds per dependent load for working sets from 16 KiB to 256 MiB (a pointer
    /// chase): what each link of a lookup's chain of loads costs on this machine.
    Latency,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Resolve {
            root,
            no_offset,
            wchan,
            addrs,
        }) => {
            let form = if wchan {
                resolve::Form::Wchan
            } else if no_offset {
                resolve::Form::NoOffset
            } else {
                resolve::Form::Symbol
            };
            resolve::run(&root, &addrs, form)
        }
        Some(Command::Capture { from, dir }) => {
            kallsyms_mirror::parse::Machine::capture(&from, &dir)
                .map(|s| {
                    eprintln!(
                        "kallsyms-bench: captured {} files, {} bytes into {}",
                        s.files,
                        s.bytes,
                        dir.display()
                    )
                })
                .map_err(|e| e.to_string())
        }
        Some(Command::Shim(args)) => shim::run(&args),
        Some(Command::Latency) => latency::run(),
        Some(Command::Profile {
            root,
            stream,
            algo,
            ops,
            chain,
        }) => bench::profile(&bench::ProfileOptions {
            root,
            stream,
            algo,
            ops,
            chain,
        }),
        Some(Command::Bench {
            root,
            json,
            quick,
            results,
            no_record,
        }) => bench::run(&bench::Options {
            root,
            json,
            quick,
            record: bench::record_dir(results, no_record, quick),
        }),
        None => bench::run(&bench::Options {
            root: PathBuf::from("/"),
            json: false,
            quick: false,
            record: bench::record_dir(None, false, false),
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kallsyms-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
