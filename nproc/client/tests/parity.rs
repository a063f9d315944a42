//! Byte-for-byte parity of `nps` with the host's procps `ps`.
//!
//! The test starts tasks of its own with known attributes (nice, session
//! leader, controlling pty, threads, a zombie, odd names in two locales,
//! CPU time), waits until they sleep, and then runs `/bin/ps` and `nps`
//! with the same arguments over the same pids, several formats and widths,
//! with stdout on a pipe and on a 50-column pty, and compares stdout and
//! the exit status. A comparison counts only when
//! two `ps` runs around the `nps` run agree (the tasks did not change).
//!
//! It has its own `main` (harness = false) because the multi-threaded
//! fixture is this very executable started with `--sleeper-threads N`.

#[path = "parity/namespace.rs"]
mod namespace;

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PS: &str = "/bin/ps";
const NPS: &str = env!("CARGO_BIN_EXE_nps");

/// The source this host can serve: its kernel has no nproc family, so
/// `nps` reads /proc here (as it would on its own; the option makes sure).
/// The nproc source is compared with `/bin/ps` in a guest with
/// CONFIG_NPROC (guest/nps/parity.sh).
const NPS_SOURCE: [&str; 2] = ["--source", "proc"];

/// `nps` with the source option before `args`.
fn nps_args(args: &[String]) -> Vec<String> {
    NPS_SOURCE
        .iter()
        .map(|s| s.to_string())
        .chain(args.iter().cloned())
        .collect()
}

/// Every specifier nps supports, in one line.
const ALL_COLUMNS: &str = "pid,tid,lwp,spid,tgid,ppid,pgid,pgrp,sid,sess,session,tpgid,\
uid,euid,ruid,suid,svuid,fuid,fsuid,gid,egid,rgid,stat,state,s,vsz,vsize,rss,rssize,rsz,sz,\
%mem,pmem,time,cputime,cputimes,bsdtime,nlwp,thcount,tname,tt,tty,ni,nice,pri,opri,priority,\
psr,f,flag,flags,class,cls,policy,rtprio,sched,minflt,min_flt,majflt,maj_flt,wchan,ucmd,ucomm,\
comm,cmd,command,args,user,uname,euser,ruser,suser,fuser,fsuser,group,egroup,rgroup,sgroup,\
fgroup,fsgroup";

/// A named comparison: arguments and environment.
type Case<'a> = (&'a str, Vec<String>, Vec<(&'a str, &'a str)>);

struct Fixture {
    children: Vec<Child>,
    /// Every pid to list: our tasks, the zombie, and kthreadd.
    pids: Vec<u32>,
    /// The task that used CPU time: its %CPU changes too often for the
    /// columns that show it.
    burner: u32,
    _pty_master: File,
    _dir: tempfile::TempDir,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn sleeper(cmd: &mut Command) -> Child {
    cmd.stdin(Stdio::null());
    sleeper_with_stdin(cmd)
}

fn sleeper_with_stdin(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"))
}

/// A fresh pty; returns the master (kept open) and the slave's path.
fn open_pty() -> (File, PathBuf) {
    let master = File::options()
        .read(true)
        .write(true)
        .open("/dev/ptmx")
        .expect("open /dev/ptmx");
    let fd = master.as_raw_fd();
    let mut name = [0u8; 64];
    // SAFETY: fd is an open ptmx master; ptsname_r writes at most
    // name.len() bytes into the buffer it is given.
    let ok = unsafe {
        libc::grantpt(fd) == 0
            && libc::unlockpt(fd) == 0
            && libc::ptsname_r(fd, name.as_mut_ptr().cast(), name.len()) == 0
    };
    assert!(
        ok,
        "cannot set up a pty: {}",
        std::io::Error::last_os_error()
    );
    let len = name.iter().position(|&b| b == 0).expect("NUL-terminated");
    (master, PathBuf::from(OsStr::from_bytes(&name[..len])))
}

fn stat_field(pid: u32, index_after_comm: usize) -> Option<String> {
    let s = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let s = String::from_utf8_lossy(&s);
    let rest = &s[s.rfind(')')? + 2..];
    rest.split(' ').nth(index_after_comm).map(str::to_string)
}

fn zombie_child_of(pid: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let kid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let parent: u32 = stat_field(kid, 1)?.parse().ok()?;
        (parent == pid && stat_field(kid, 0)? == "Z").then_some(kid)
    })
}

/// A sleeper under other ids, through util-linux setpriv; without root
/// (setpriv needs it) a plain sleeper, and the test says so.
fn as_other_user(ids: &[&str]) -> Command {
    // SAFETY: geteuid() has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("note: not root, so no tasks run under other users");
        let mut c = Command::new("sleep");
        c.arg("1000");
        return c;
    }
    let mut c = Command::new("setpriv");
    c.args(ids).args(["--clear-groups", "sleep", "1000"]);
    c
}

/// A user whose name does not fit the 8 cells of USER, else `nobody`.
fn long_user_name() -> String {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .filter_map(|l| l.split(':').next())
        .find(|n| n.len() > 8)
        .unwrap_or("nobody")
        .to_string()
}

fn setup() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut children = vec![
        sleeper(Command::new("sleep").arg("1000")),
        sleeper(Command::new("nice").args(["-n", "7", "sleep", "1000"])),
        sleeper(Command::new("setsid").args(["sleep", "1000"])),
        sleeper(Command::new("sleep").arg("1000").process_group(0)),
        // A zombie: sh's background child exits and the exec'd sleep never
        // reaps it.
        sleeper(Command::new("sh").args(["-c", "sleep 0 & exec sleep 1000"])),
        // More than a second of CPU time, then sleep.
        sleeper(Command::new("sh").args([
            "-c",
            "i=0; while [ $i -lt 700000 ]; do i=$((i+1)); done; exec sleep 1000",
        ])),
        // Users and groups with names of every length, and none.
        sleeper(&mut as_other_user(&[
            "--ruid", "65534", "--euid", "4000000", "--rgid", "65534", "--egid", "4000001",
        ])),
        sleeper(&mut as_other_user(&[
            "--reuid",
            &long_user_name(),
            "--regid",
            "0",
        ])),
        // Three threads.
        sleeper(
            Command::new(std::env::current_exe().expect("current_exe"))
                .args(["--sleeper-threads", "3"]),
        ),
    ];
    // A name that is cut inside a UTF-8 character (comm keeps 15 bytes),
    // with a control character; argv[0] with wide characters, a newline, a
    // tab and an invalid byte.
    let odd = dir
        .path()
        .join("a\u{e9}\u{1}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}");
    std::fs::copy(which("sleep"), &odd).expect("copy sleep");
    children.push(sleeper(
        Command::new(&odd)
            .arg0(OsStr::from_bytes(b"\xe6\xbc\xa2\xe5\xad\x97\nx\ty \xff z"))
            .arg("1000"),
    ));
    // A controlling pty, in the foreground.
    let (master, slave) = open_pty();
    children.push(sleeper_with_stdin(
        Command::new("setsid")
            .args(["-c", "sleep", "1000"])
            .stdin(File::open(&slave).expect("open pty slave")),
    ));
    let zombie_parent = children[4].id();
    let burner = children[5].id();
    let threads = children[8].id();
    // Wait until every task sleeps, the zombie exists and the threads run.
    let start = Instant::now();
    let zombie = loop {
        let sleeping = children
            .iter()
            .all(|c| stat_field(c.id(), 0).as_deref() == Some("S"));
        let nlwp = stat_field(threads, 17);
        let comm_ok = children.iter().all(|c| {
            std::fs::read(format!("/proc/{}/comm", c.id()))
                .map(|s| {
                    !s.starts_with(b"sh\n") && !s.starts_with(b"setsid") && !s.starts_with(b"nice")
                })
                .unwrap_or(false)
        });
        if let (true, Some("3"), true, Some(z)) = (
            sleeping,
            nlwp.as_deref(),
            comm_ok,
            zombie_child_of(zombie_parent),
        ) {
            break z;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let states: Vec<_> = children
                .iter()
                .map(|c| (c.id(), stat_field(c.id(), 0)))
                .collect();
            for c in &mut children {
                let _ = c.kill();
                let _ = c.wait();
            }
            panic!(
                "fixture tasks never settled: states {states:?}, threads {nlwp:?}, comm ok {comm_ok}, zombie {:?}",
                zombie_child_of(zombie_parent)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut pids: Vec<u32> = children.iter().map(Child::id).collect();
    pids.push(zombie);
    pids.push(2); // kthreadd: a kernel thread, no cmdline, stable
    pids.sort_unstable();
    Fixture {
        children,
        pids,
        burner,
        _pty_master: master,
        _dir: dir,
    }
}

fn which(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} not found");
}

/// What a lister printed: stdout (without its own line, when asked),
/// stderr, exit status.
type Output = (Vec<u8>, Vec<u8>, Option<i32>);

/// nps as `ps`: a symbolic link of that name, so that ps's usage text
/// (which names the program) is the same, with the source it reads here.
fn nps_as_ps() -> &'static str {
    static LINK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINK.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("nps-parity-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let link = dir.join("ps");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(NPS, &link).expect("symlink nps as ps");
        link.to_string_lossy().into_owned()
    })
}

/// Which stdout lines to drop: those whose whitespace-separated field
/// `col` (1-based) is the lister's own pid (ps and nps each list
/// themselves, with their own pid) or one of `also`, and the thread lines
/// that follow a dropped process line (`m` and `-m` print each thread
/// under its process with `-` for the pid: the lister's own thread's %CPU
/// is its own start-up, 99 for a ps that used a tick, 0 for a faster one).
#[derive(Clone, Copy)]
struct DropLines<'a> {
    col: usize,
    also: &'a [&'a str],
}

/// Runs `prog` with `args` and `env`, dropping lines as `drop` says.
fn run_lister(
    prog: &str,
    args: &[String],
    env: &[(&str, &str)],
    drop: Option<DropLines<'_>>,
) -> Output {
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .env_remove("COLUMNS")
        .env_remove("LINES")
        .env_remove("LIBPROC_HIDE_KERNEL")
        .env_remove("PS_FORMAT")
        .env_remove("PS_PERSONALITY")
        .env_remove("CMD_ENV");
    for (k, v) in env {
        // An empty value removes the variable.
        if v.is_empty() {
            cmd.env_remove(k);
        } else {
            cmd.env(k, v);
        }
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{prog}: {e}"));
    let pid = child.id().to_string();
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{prog}: {e}"));
    let mut stdout = out.stdout;
    if let Some(DropLines { col, also }) = drop {
        let mut dropping = false;
        let kept: Vec<&[u8]> = stdout
            .split_inclusive(|&b| b == b'\n')
            .filter(|line| {
                let field = line
                    .split(|b| b.is_ascii_whitespace())
                    .filter(|f| !f.is_empty())
                    .nth(col - 1);
                match field {
                    Some(b"-") => {}
                    Some(f) => {
                        dropping = f == pid.as_bytes() || also.iter().any(|a| a.as_bytes() == f)
                    }
                    None => dropping = false,
                }
                !dropping
            })
            .collect();
        stdout = kept.concat();
    }
    (stdout, out.stderr, out.status.code())
}

fn run(prog: &str, args: &[String], env: &[(&str, &str)]) -> Output {
    run_lister(prog, args, env, None)
}

/// ps, nps, ps: compare nps's stdout, stderr and exit status with ps's
/// when both ps runs agree, with lines dropped as `drop` says.
fn compare_listing(
    name: &str,
    args: &[String],
    env: &[(&str, &str)],
    drop: Option<DropLines<'_>>,
) -> Result<(), String> {
    // %CPU of a task that used CPU time changes every few tens of
    // milliseconds: try often, without pausing.
    for _ in 0..50 {
        let before = run_lister(PS, args, env, drop);
        let ours = run_lister(nps_as_ps(), &nps_args(args), env, drop);
        let after = run_lister(PS, args, env, drop);
        if before != after {
            // A busy task's %CPU can move on every run: nps between the
            // two ps runs, field by field, passes (parity.sh's rule).
            if ours.1 == before.1 && ours.2 == before.2 && between(&ours.0, &before.0, &after.0) {
                return Ok(());
            }
            continue;
        }
        if ours == before {
            return Ok(());
        }
        return Err(format!(
            "{name}: `ps {}` with {env:?} differs\n--- ps (exit {:?})\n{}{}--- nps (exit {:?})\n{}{}",
            args.join(" "),
            before.2,
            String::from_utf8_lossy(&before.0),
            String::from_utf8_lossy(&before.1),
            ours.2,
            String::from_utf8_lossy(&ours.0),
            String::from_utf8_lossy(&ours.1)
        ));
    }
    Err(format!(
        "{name}: ps output never settled for `{}`",
        args.join(" ")
    ))
}

/// Whether each line of `ours` equals that line of `a` or of `b`, or has
/// each whitespace-separated field equal to theirs or a number between
/// theirs: what a listing taken between two others may show. The three
/// must have the same number of lines and, per line, of fields.
fn between(ours: &[u8], a: &[u8], b: &[u8]) -> bool {
    let lines =
        |t: &[u8]| -> Vec<Vec<u8>> { t.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect() };
    let (o, a, b) = (lines(ours), lines(a), lines(b));
    if o.len() != a.len() || o.len() != b.len() {
        return false;
    }
    let fields = |l: &[u8]| -> Vec<Vec<u8>> {
        l.split(u8::is_ascii_whitespace)
            .filter(|f| !f.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let num = |f: &[u8]| std::str::from_utf8(f).ok()?.parse::<f64>().ok();
    o.iter().zip(&a).zip(&b).all(|((o, a), b)| {
        if o == a || o == b {
            return true;
        }
        let (fo, fa, fb) = (fields(o), fields(a), fields(b));
        fo.len() == fa.len()
            && fo.len() == fb.len()
            && fo.iter().zip(&fa).zip(&fb).all(|((o, a), b)| {
                o == a
                    || o == b
                    || matches!((num(o), num(a), num(b)),
                        (Some(o), Some(a), Some(b)) if a.min(b) <= o && o <= a.max(b))
            })
    })
}

fn compare(name: &str, args: &[String], env: &[(&str, &str)]) -> Result<(), String> {
    compare_listing(name, args, env, None)
}

/// The same comparison with stdout on a 50-column terminal: util-linux
/// `script` runs the command on a fresh pty sized by `stty`.
fn compare_on_terminal(name: &str, args: &[String]) -> Result<(), String> {
    let on_tty = |prog: &str| {
        let line = format!("stty cols 50 rows 20; {prog} {}", args.join(" "));
        let a = ["-qc".to_string(), line, "/dev/null".to_string()];
        run("script", &a, &[("LC_ALL", "C.UTF-8")])
    };
    for _ in 0..50 {
        let before = on_tty(PS);
        let ours = on_tty(&format!("{NPS} {}", NPS_SOURCE.join(" ")));
        let after = on_tty(PS);
        if before != after {
            continue;
        }
        if ours == before {
            return Ok(());
        }
        return Err(format!(
            "{name}: on a terminal\n--- ps\n{}--- nps\n{}",
            String::from_utf8_lossy(&before.0),
            String::from_utf8_lossy(&ours.0)
        ));
    }
    Err(format!("{name}: ps output never settled"))
}

/// `--help [SECTION]`: nps prints ps's text byte for byte (stdout,
/// stderr and exit status as ps's), then its own options, which are
/// checked on their own: the block follows ps's text exactly once and
/// names both of nps's options.
fn compare_help(args: &[String]) -> Result<(), String> {
    let ps = run(PS, args, &[]);
    let ours = run(nps_as_ps(), &nps_args(args), &[]);
    let name = args.join(" ");
    let Some(ps_part) = ours.0.strip_suffix(nps::help::NPS_OPTIONS.as_bytes()) else {
        return Err(format!(
            "`{name}`: nps's options do not end the text\n{}",
            String::from_utf8_lossy(&ours.0)
        ));
    };
    if (ps_part, &ours.1, ours.2) != (&ps.0[..], &ps.1, ps.2) {
        return Err(format!(
            "`{name}`: ps's part differs\n--- ps (exit {:?})\n{}{}--- nps (exit {:?})\n{}{}",
            ps.2,
            String::from_utf8_lossy(&ps.0),
            String::from_utf8_lossy(&ps.1),
            ours.2,
            String::from_utf8_lossy(ps_part),
            String::from_utf8_lossy(&ours.1)
        ));
    }
    let section = nps::help::NPS_OPTIONS;
    for word in [
        "\nnps options:\n",
        "--source <auto|nproc|proc>",
        "--fields",
        "nps(1)",
    ] {
        if !section.contains(word) {
            return Err(format!("`{name}`: nps's options lack {word:?}"));
        }
    }
    if section.contains("For more details see ps(1).") || ps_part.ends_with(section.as_bytes()) {
        return Err(format!("`{name}`: nps's options are repeated"));
    }
    Ok(())
}

fn sleeper_threads(n: usize) -> ! {
    for _ in 1..n {
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_secs(1000));
        });
    }
    loop {
        std::thread::sleep(Duration::from_secs(1000));
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--sleeper-threads") {
        sleeper_threads(argv.get(2).and_then(|n| n.parse().ok()).unwrap_or(3));
    }
    if argv.get(1).map(String::as_str) == Some(namespace::FLAG) {
        namespace::inner_main();
    }
    assert!(
        Path::new(PS).exists(),
        "{PS} (procps) is needed: the parity test compares nps with it"
    );
    let fx = setup();
    let list = fx
        .pids
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let p = |rest: &[&str]| {
        let mut v = s(&["-p", &list]);
        v.extend(s(rest));
        v
    };
    let calm: Vec<String> = fx
        .pids
        .iter()
        .filter(|&&p| p != fx.burner)
        .map(u32::to_string)
        .collect();
    let calm = calm.join(",");
    let p_calm = |rest: &[&str]| {
        let mut v = s(&["-p", &calm]);
        v.extend(s(rest));
        v
    };
    let utf8 = [("LC_ALL", "C.UTF-8")];
    let c = [("LC_ALL", "C")];
    let no_locale = [
        ("LC_ALL", ""),
        ("LC_CTYPE", ""),
        ("LC_MESSAGES", ""),
        ("LANG", ""),
        ("LANGUAGE", ""),
    ];
    let cases: Vec<Case> = vec![
        ("default", p(&[]), utf8.to_vec()),
        (
            "bsd columns",
            p(&["-o", "pid,tname,stat,bsdtime,args"]),
            utf8.to_vec(),
        ),
        (
            "bsd columns, C locale",
            p(&["-o", "pid,tname,stat,bsdtime,args"]),
            c.to_vec(),
        ),
        (
            // nps skips setlocale() when it could only pick "C".
            "bsd columns, no locale variables",
            p(&["-o", "pid,tname,stat,bsdtime,args"]),
            no_locale.to_vec(),
        ),
        (
            "benchmark columns",
            p(&["-o", "pid,tid,ppid,uid,stat,vsz,rss,time,nlwp,comm,wchan"]),
            utf8.to_vec(),
        ),
        (
            "wchan columns",
            p(&["-o", "pid,stat,wchan,comm"]),
            utf8.to_vec(),
        ),
        ("every column", p(&["-o", ALL_COLUMNS]), utf8.to_vec()),
        (
            "every column, C locale",
            p(&["-o", ALL_COLUMNS]),
            c.to_vec(),
        ),
        ("threads", p(&["-L"]), utf8.to_vec()),
        (
            "thread columns",
            p(&["-L", "-o", "pid,lwp,nlwp,stat,psr,wchan,comm"]),
            utf8.to_vec(),
        ),
        (
            "bsd u columns",
            p_calm(&[
                "-o",
                "user,pid,pcpu,pmem,vsz,rss,tname,stat,start_time,bsdtime,args",
            ]),
            utf8.to_vec(),
        ),
        (
            "time columns",
            p_calm(&[
                "-o",
                "pid,etime,etimes,pcpu,%cpu,c,cp,start_time,stime,start,bsdstart,lstart",
            ]),
            utf8.to_vec(),
        ),
        (
            "time columns, another zone",
            p(&["-o", "pid,start_time,stime,start,bsdstart,lstart"]),
            vec![("LC_ALL", "C"), ("TZ", "America/Los_Angeles")],
        ),
        (
            "PS_FORMAT",
            p(&["-L"]),
            vec![
                ("LC_ALL", "C.UTF-8"),
                ("PS_FORMAT", "pid,lwp,user,stat,comm"),
            ],
        ),
        (
            "bad PS_FORMAT",
            p(&[]),
            vec![("LC_ALL", "C.UTF-8"), ("PS_FORMAT", "pid,nope")],
        ),
        (
            "LIBPROC_HIDE_KERNEL",
            p(&["-o", "pid,ppid,comm"]),
            vec![("LC_ALL", "C.UTF-8"), ("LIBPROC_HIDE_KERNEL", "1")],
        ),
        ("full format", p(&["-f"]), utf8.to_vec()),
        ("long format", p(&["-l"]), utf8.to_vec()),
        ("full long format", p(&["-fl"]), utf8.to_vec()),
        ("full format threads", p(&["-fL"]), utf8.to_vec()),
        (
            "narrow names",
            p(&["-o", "pid,user:4,ruser:5,group:2,comm"]),
            utf8.to_vec(),
        ),
        (
            "overrides",
            p(&[
                "-o",
                "pid:9=P,comm=COMMAND_HEADER_WIDE,wchan:3",
                "-o",
                "stat=",
                "-o",
                "args",
            ]),
            utf8.to_vec(),
        ),
        (
            "no headers",
            p(&["--no-headers", "-o", "pid,args"]),
            utf8.to_vec(),
        ),
        ("empty headers", p(&["-o", "pid=,comm="]), utf8.to_vec()),
        (
            "narrow",
            p(&["-o", "pid,wchan,args"]),
            vec![("LC_ALL", "C.UTF-8"), ("COLUMNS", "30")],
        ),
        (
            "narrow wchan last",
            p(&["-o", "pid,comm,wchan"]),
            vec![("LC_ALL", "C.UTF-8"), ("COLUMNS", "24")],
        ),
        (
            "too narrow",
            p(&[]),
            vec![("LC_ALL", "C"), ("COLUMNS", "12")],
        ),
        (
            "w",
            p(&["-w", "-o", "pid,args"]),
            vec![("LC_ALL", "C.UTF-8"), ("COLUMNS", "40")],
        ),
        ("nothing selected", s(&["-p", "2147483646"]), utf8.to_vec()),
        // ps's usage after an error is ps's alone (nps's options are
        // --help's only).
        ("usage after an error", s(&["-Q"]), utf8.to_vec()),
    ];
    let mut results: Vec<(&str, Result<(), String>)> = Vec::new();
    for (name, args, env) in &cases {
        results.push((name, compare(name, args, env)));
    }
    results.push((
        "terminal, last column cut",
        compare_on_terminal("terminal", &p(&["-o", "pid,user,stat,args"])),
    ));
    results.push((
        "terminal, wide list",
        compare_on_terminal("terminal wide", &p(&["-o", ALL_COLUMNS])),
    ));
    let help_forms: &[&[&str]] = &[
        &["--help"],
        &["--help", "s"],
        &["--help", "simple"],
        &["--help", "l"],
        &["--help", "list"],
        &["--help", "o"],
        &["--help", "output"],
        &["--help", "t"],
        &["--help", "threads"],
        &["--help", "m"],
        &["--help", "misc"],
        &["--help", "a"],
        &["--help", "all"],
        &["--help=all"],
        &["--help:t"],
        &["--help", "bogus"],
    ];
    let help_names: Vec<String> = help_forms.iter().map(|a| a.join(" ")).collect();
    for (form, name) in help_forms.iter().zip(&help_names) {
        results.push((name, compare_help(&s(form))));
    }
    let mut failed = 0;
    for (name, r) in &results {
        match r {
            Ok(()) => println!("ok: {name}"),
            Err(e) => {
                failed += 1;
                println!("FAILED: {e}");
            }
        }
    }
    drop(fx);
    let mut passed = results.len() - failed;
    match namespace::outer() {
        Some((p, f)) => {
            passed += p;
            failed += f;
        }
        None => println!(
            "note: the namespace suite (every-process forms) needs root and util-linux unshare: not run"
        ),
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
