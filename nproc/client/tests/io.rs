//! Hostile output and arguments: a full or closed stdout or stderr, a
//! reader that goes away, absurd widths, 10,000 pids, non-UTF-8 bytes.
//! nps must end as `/bin/ps` ends (exit status, stderr with the program
//! name swapped), never by a signal or a panic.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};

const PS: &str = "/bin/ps";
const NPS: &str = env!("CARGO_BIN_EXE_nps");

/// Where a standard descriptor points.
#[derive(Clone, Copy, Debug)]
enum To {
    Pipe,
    Full,
    Closed,
    Null,
}

/// Runs `prog ARGS` with stdout and stderr as given: (exit code, signal,
/// stderr when piped).
fn run(prog: &str, args: &[&[u8]], out: To, err: To) -> (Option<i32>, Option<i32>, Vec<u8>) {
    let mut cmd = Command::new(prog);
    cmd.args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
        .env_remove("COLUMNS")
        .env_remove("PS_FORMAT")
        .env_remove("PS_PERSONALITY")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    let open = |to: To| match to {
        To::Pipe => Stdio::piped(),
        To::Full => Stdio::from(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .expect("/dev/full"),
        ),
        To::Null | To::Closed => Stdio::null(),
    };
    cmd.stdout(open(out)).stderr(open(err));
    let close_out = matches!(out, To::Closed);
    let close_err = matches!(err, To::Closed);
    // SAFETY: the closure only calls close(), which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if close_out {
                libc::close(1);
            }
            if close_err {
                libc::close(2);
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap_or_else(|e| panic!("{prog}: {e}"));
    (o.status.code(), o.status.signal(), o.stderr)
}

/// nps as `ps` (a symbolic link of that name), as ps's usage text names
/// the program it was run as.
fn nps_as_ps() -> &'static str {
    static LINK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINK.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("nps-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let link = dir.join("ps");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(NPS, &link).expect("symlink nps as ps");
        link.to_string_lossy().into_owned()
    })
}

/// Runs ps and nps alike; nps must end as ps did: the same exit status
/// and stderr (glibc's `error()` names argv[0], so nps's link is renamed
/// /bin/ps there), never a signal.
fn same(args: &[&[u8]], out: To, err: To) {
    let ps = run(PS, args, out, err);
    let nps = run(nps_as_ps(), args, out, err);
    let nps_err = String::from_utf8_lossy(&nps.2).replace(nps_as_ps(), PS);
    assert_eq!(nps.1, None, "nps {args:?} died by signal {:?}", nps.1);
    assert_eq!(
        (nps.0, nps_err.as_str()),
        (ps.0, String::from_utf8_lossy(&ps.2).as_ref()),
        "nps {:?} with stdout {out:?}, stderr {err:?}",
        args.iter()
            .map(|a| String::from_utf8_lossy(a))
            .collect::<Vec<_>>()
    );
}

#[test]
fn full_and_closed_outputs_end_as_ps_ends() {
    let cases: [&[&[u8]]; 6] = [
        &[b"--help"],
        &[b"--help", b"all"],
        &[b"-V"],
        &[b"-p", b"1"],
        &[b"-p", b"2147483646"],
        &[b"-Q"],
    ];
    for args in cases {
        for (out, err) in [
            (To::Full, To::Pipe),
            (To::Closed, To::Pipe),
            (To::Null, To::Full),
            (To::Null, To::Closed),
            (To::Full, To::Full),
            (To::Closed, To::Closed),
        ] {
            same(args, out, err);
        }
    }
}

#[test]
fn a_reader_that_goes_away_ends_quietly() {
    // `| head -1` of a long listing: status 0, nothing on stderr.
    let mut child = Command::new(NPS)
        .args(["-eLo", "pid,args", "--cols", "5000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nps");
    let mut out = child.stdout.take().expect("piped");
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut out, &mut first).expect("a header");
    drop(out);
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(0), "{:?}", o.status);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn absurd_arguments_get_ps_answers() {
    let many: Vec<u8> = (1..=10_000)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
        .into_bytes();
    let cases: Vec<Vec<&[u8]>> = vec![
        vec![b"--cols", b"2147483648"],
        vec![b"--cols", b"99999999999999999999999"],
        vec![b"--width=1999999999", b"-p", b"1", b"-o", b"pid"],
        vec![b"-o", b"pid:99999999999999999999"],
        vec![b"-o", b"pid:2147483648"],
        vec![b"-p", &many, b"-o", b"pid"],
        vec![b"-o", b"pid=\xff\xfe", b"-p", b"1"],
        vec![b"-C", b"\xff\xfe\x80"],
        vec![b"-u", b"\xff"],
        vec![b"\xff"],
        vec![b"-\xff"],
        vec![b"--\xff"],
        vec![b"--sort", b"\xff"],
        vec![b"-o", b"\xff"],
    ];
    for args in &cases {
        same(args, To::Pipe, To::Pipe);
    }
}

#[test]
fn header_bytes_are_printed_as_given() {
    // A header override is bytes, not text: ps prints them as they are.
    let args: [&[u8]; 4] = [b"-o", b"pid=\xff\xfe \xce\xbb", b"-p", b"1"];
    let out = |prog: &str| {
        Command::new(prog)
            .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("run")
            .stdout
    };
    assert_eq!(out(NPS), out(PS));
}

#[test]
fn refusals_name_the_option_typed() {
    // ps runs these; nps refuses each with the word the user typed, on
    // stderr alone, and exit status 2 (which ps never uses).
    for (args, typed) in [
        (&["-Z"][..], "-Z"),
        (&["Z"], "Z"),
        (&["aux", "-Z"], "-Z"),
        (&["-M"], "-M"),
        (&["ax", "S"], "S"),
        (&["ax", "--cumulative"], "--cumulative"),
        (&["-e", "--context"], "--context"),
        (&["-q", "1", "m"], "-q' with 'm"),
    ] {
        let o = Command::new(NPS)
            .args(["--source", "proc"])
            .args(args)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .expect("nps");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!("nps: option '{typed}' is not supported\n"),
            "{args:?}"
        );
    }
}
