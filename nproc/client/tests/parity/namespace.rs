//! The option forms that list every process (`ax`, `-e`, `aux`, `axjf`,
//! sorting, forests, selection by user or name...), compared in a PID
//! namespace of their own with its own /proc, where "every process" is the
//! fixture and nothing else: `unshare --pid --fork --mount-proc` runs this
//! test binary again (`--in-namespace`) as the namespace's init.
//!
//! Both listers list themselves; that line (found by its pid column) is
//! dropped from both outputs, and so is the namespace's init, this test:
//! it has just spawned the lister and may still be running when the
//! faster of the two reads its state. The fixture adds, to the common one, a
//! 3 KB command line, a 150-thread process, names with blanks and
//! unicode, and a second zombie.

use super::{compare_listing, setup, DropLines, Fixture};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// The flag that selects this suite in the test binary.
pub const FLAG: &str = "--in-namespace";

/// Extra tasks for the namespace: kept alive with the fixture.
fn more_tasks() -> Vec<Child> {
    let spawn = |c: &mut Command| {
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {c:?}: {e}"))
    };
    let long_arg = "x".repeat(3000);
    vec![
        spawn(
            Command::new("sleep")
                .arg("1000")
                .arg0(format!("sleep {long_arg}")),
        ),
        spawn(
            Command::new(std::env::current_exe().expect("current_exe"))
                .args(["--sleeper-threads", "150"]),
        ),
        spawn(
            Command::new("sleep")
                .arg("1000")
                .arg0(OsStr::from_bytes(b"name with  blanks \xce\xbb \xff")),
        ),
    ]
}

/// Runs the cases; returns (passed, failed).
pub fn run_cases(fx: &Fixture) -> (usize, usize) {
    let _ = fx;
    let mut more = more_tasks();
    // Let the new tasks exec and settle into their sleeps.
    std::thread::sleep(std::time::Duration::from_secs(1));
    let utf8 = [("LC_ALL", "C.UTF-8")];
    let s = |v: &str| -> Vec<String> { v.split_whitespace().map(str::to_string).collect() };
    // (arguments, PID column)
    let mut cases: Vec<(Vec<String>, Option<usize>)> = [
        ("ax", 1),
        ("aux", 2),
        ("ax u", 2),
        ("aux w", 2),
        ("auxww", 2),
        ("-aux", 2),
        ("-ax", 1),
        ("-x", 1),
        ("x", 1),
        ("-e", 1),
        ("-A", 1),
        ("-ef", 2),
        ("-eF", 2),
        ("-ely", 3),
        ("-el", 4),
        ("-efl", 4),
        ("-ej", 1),
        ("-ejH", 1),
        ("-eH", 1),
        ("-e --forest", 1),
        ("axf", 1),
        ("axjf", 2),
        ("axj", 2),
        ("axl", 3),
        ("-eL", 1),
        ("-eLf", 2),
        ("-eT", 1),
        ("axH", 1),
        // -m and m print a thread line without a pid for every process,
        // the init's too, whose state is racy (see above): leave it out.
        ("-m -N -p 1", 1),
        ("m -N -p 1", 1),
        ("-mf -N -p 1", 2),
        ("-ec", 1),
        ("-elc", 4),
        ("-e -O rss", 1),
        ("ax O rss", 1),
        ("ax O-p", 1),
        ("-eo pid,rss,comm --sort=-rss", 1),
        ("-eo pid,comm --sort=comm,-pid", 1),
        ("-eo pid,user,nlwp --sort +nlwp", 1),
        ("ax k -pid", 1),
        ("aux --sort=-%mem", 2),
        ("-ef --sort=start_time", 2),
        ("-e --sort=tty -o pid,tty,cmd", 1),
        ("-u root", 1),
        ("-u 0 -o pid,user,comm", 1),
        ("U root", 1),
        ("-U root", 1),
        ("-G root", 1),
        ("-g root", 1),
        ("-C sleep", 1),
        ("-C sleep,sh -f", 2),
        ("-p 2", 1),
        ("p 2", 1),
        ("2", 1),
        ("-N -p 2", 1),
        ("-N -C sleep", 1),
        ("--ppid 1", 1),
        ("--ppid 1 -o pid,ppid,comm --no-headers", 1),
        ("-s 1", 1),
        ("--sid 1", 1),
        ("-q 2", 1),
        ("ax r", 1),
        ("ax c", 1),
        ("axe", 1),
        ("auxe", 2),
        ("axce", 1),
        ("axfe", 1),
        ("-e e -o pid,comm", 1),
        ("-eL e", 1),
        ("axc -o pid,args", 1),
        ("-e --cols 60", 1),
        ("-ef --width=200", 2),
        ("-ef --columns 0x40", 2),
        ("-e --headers --rows 5", 1),
        ("-e --no-headers", 1),
        ("axh", 1),
    ]
    .iter()
    .map(|(a, c)| (s(a), Some(*c)))
    .collect();
    // Every specifier nps prints, alone (with the pid to find the
    // lister's line) and all together.
    let printable: Vec<&str> = nps::render::known::KNOWN
        .iter()
        .filter(|k| {
            nps::render::spec::one_spec(k.spec, None).is_some()
                || nps::render::spec::by_printer(k, None).is_some()
        })
        .map(|k| k.spec)
        .collect();
    assert!(printable.len() > 120, "{printable:?}");
    for spec in &printable {
        cases.push((s(&format!("-e -o pid,{spec}")), Some(1)));
    }
    cases.push((s(&format!("-e -o pid,{}", printable.join(","))), Some(1)));
    // Errors: nothing listed, ps's message and usage on stderr.
    for bad in [
        "-Q",
        "--no-headers --no-headers",
        "--",
        "--cols 3000000000",
        "-p 0",
        "-o pid,bogus",
        "--sort bogus",
        "-u no-such-user-here",
        "-V x",
        "-L -T",
        "-H -L",
        "O",
        "-q 1 -q 2",
        "-q 1 --sort pid",
    ] {
        cases.push((s(bad), None));
    }
    let mut passed = 0;
    let mut failed = 0;
    for (args, col) in &cases {
        let name = args.join(" ");
        let drop = col.map(|col| DropLines { col, also: &["1"] });
        match compare_listing(&name, args, &utf8, drop) {
            Ok(()) => {
                passed += 1;
                println!("ok: namespace: {name}");
            }
            Err(e) => {
                failed += 1;
                println!("FAILED: namespace: {e}");
            }
        }
    }
    for c in &mut more {
        let _ = c.kill();
        let _ = c.wait();
    }
    (passed, failed)
}

/// The suite as the namespace's init: builds the fixture, runs the cases,
/// prints `namespace: N passed, M failed` and exits 1 on a failure.
pub fn inner_main() -> ! {
    let fx = setup();
    let (passed, failed) = run_cases(&fx);
    drop(fx);
    println!("namespace: {passed} passed, {failed} failed");
    std::process::exit(i32::from(failed > 0));
}

/// Runs the suite in a new PID namespace; `None` when this host cannot
/// make one (not root, or no util-linux `unshare`), which the caller
/// reports.
pub fn outer() -> Option<(usize, usize)> {
    // SAFETY: geteuid() has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let exe = std::env::current_exe().expect("current_exe");
    // Only a missing unshare skips the suite; any other failure fails it.
    let out = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "--kill-child"])
        .arg(exe)
        .arg(FLAG)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let Some(last) = text.lines().rev().find(|l| l.starts_with("namespace: ")) else {
        println!(
            "FAILED: namespace suite ended without a summary: {:?}",
            out.status
        );
        return Some((0, 1));
    };
    let nums: Vec<usize> = last
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    match nums.as_slice() {
        [p, f] => Some((*p, *f)),
        _ => Some((0, 1)),
    }
}
