//! nproc under Smack, against /proc: a reader labelled `Reader` (uid
//! `uid`, no capability, so no `CAP_MAC_OVERRIDE`) and a sleeper labelled
//! `Secret`. Without a rule `Reader Secret rx` (search the directory,
//! read the file), Smack refuses the reader the sleeper's /proc files (the
//! task's label is its /proc inodes'), and nproc must send the sleeper as
//! its pid alone; with the rule, both give its values. The tasks of the
//! floor label `_` stay readable to both. Every task nproc gives values
//! of must have files the reader can open under the same /proc.

use nproc_genl::{open_procfs, Client, TaskRequest};
use nproc_proto::{field_id, Scope};
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::path::Path;

const SMACKFS: &str = "/sys/fs/smackfs";

/// Sets this process's Smack label (needs `CAP_MAC_ADMIN`).
fn set_label(label: &str) -> std::io::Result<()> {
    std::fs::write("/proc/self/attr/current", label)
}

/// Adds (or, with access "-", clears) the rule `subject object access`.
fn set_rule(subject: &str, object: &str, access: &str) -> Result<(), String> {
    std::fs::write(
        format!("{SMACKFS}/load2"),
        format!("{subject} {object} {access}"),
    )
    .map_err(|e| format!("{SMACKFS}/load2 `{subject} {object} {access}`: {e}"))
}

/// What the reader saw: (tasks listed, whether the sleeper had values,
/// whether /proc let it open the sleeper's stat, failures).
fn read_as_reader(uid: u32, sleeper: u64) -> Result<(usize, bool, bool, Vec<String>), String> {
    let mut p = [0; 2];
    // SAFETY: pipe(2) writes two descriptors into the array.
    if unsafe { libc::pipe(p.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the child reports over the pipe and leaves with _exit(2).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let report = (|| -> Result<String, String> {
            set_label("Reader").map_err(|e| format!("label Reader: {e}"))?;
            crate::drop_to(uid).map_err(|e| format!("drop to {uid}: {e}"))?;
            let procfs = open_procfs(Path::new("/proc")).map_err(|e| e.to_string())?;
            let dir = procfs.as_raw_fd();
            let mut c = Client::connect_with_procfs(Some(procfs)).map_err(|e| e.to_string())?;
            let req = TaskRequest::from_names(&["tgid", "comm", "cmdline"], Scope::Processes)
                .expect("fields of the table");
            let d = c.tasks(&req).map_err(|e| e.to_string())?;
            let mut fails = Vec::new();
            let mut sleeper_values = false;
            for r in &d {
                let Some(t) = r.get(field_id::TGID).and_then(|v| v.as_u64()) else {
                    continue;
                };
                if r.get(field_id::COMM).is_none() {
                    continue;
                }
                sleeper_values |= t == sleeper;
                let path = CString::new(format!("{t}/stat")).expect("no NUL");
                // SAFETY: openat(2) relative to our procfs descriptor.
                let fd = unsafe { libc::openat(dir, path.as_ptr(), libc::O_RDONLY) };
                if fd < 0 {
                    fails.push(format!(
                        "nproc gave the values of {t}, whose stat /proc refuses: {}",
                        std::io::Error::last_os_error()
                    ));
                } else {
                    // SAFETY: our own descriptor.
                    unsafe { libc::close(fd) };
                }
            }
            let path = CString::new(format!("{sleeper}/stat")).expect("no NUL");
            // SAFETY: openat(2) relative to our procfs descriptor.
            let fd = unsafe { libc::openat(dir, path.as_ptr(), libc::O_RDONLY) };
            let proc_opens = fd >= 0;
            if proc_opens {
                // SAFETY: our own descriptor.
                unsafe { libc::close(fd) };
            }
            Ok(format!(
                "{} {} {}\n{}",
                d.len(),
                u8::from(sleeper_values),
                u8::from(proc_opens),
                fails.join("\n")
            ))
        })();
        let text = report.unwrap_or_else(|e| format!("error {e}"));
        // SAFETY: write(2) of our buffer to our pipe, then _exit(2).
        unsafe {
            libc::write(p[1], text.as_ptr().cast(), text.len());
            libc::_exit(0)
        }
    }
    // SAFETY: closing the child's end in the parent.
    unsafe { libc::close(p[1]) };
    let mut text = String::new();
    // SAFETY: `p[0]` is ours; the File owns it from here.
    let _ = std::io::Read::read_to_string(
        &mut unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(p[0]) },
        &mut text,
    );
    // SAFETY: waitpid(2) on our child.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    let mut lines = text.lines();
    let head = lines.next().unwrap_or_default();
    if let Some(e) = head.strip_prefix("error ") {
        return Err(e.to_string());
    }
    let n: Vec<usize> = head
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let fails = lines.filter(|l| !l.is_empty()).map(String::from).collect();
    match n[..] {
        [listed, values, opens] => Ok((listed, values == 1, opens == 1, fails)),
        _ => Err(format!("the reader reported {text:?}")),
    }
}

/// Runs the comparison without and with the rule; returns the failures.
pub fn run(uid: u32) -> Vec<String> {
    let lsm = std::fs::read_to_string("/sys/kernel/security/lsm").unwrap_or_default();
    if !lsm.split(',').any(|l| l.trim() == "smack") {
        return vec![format!("Smack is not active (lsm: {lsm:?})")];
    }
    if !Path::new(SMACKFS).join("load2").exists() {
        return vec![format!("{SMACKFS} is not mounted")];
    }
    // The floor label `_` (every other task, the pipes, the output) is
    // only readable by default: the reader writes its report.
    if let Err(e) = set_rule("Reader", "_", "rwxa") {
        return vec![e];
    }
    // SAFETY: the child labels itself and sleeps until killed.
    let sleeper = unsafe {
        let pid = libc::fork();
        if pid == 0 {
            if set_label("Secret").is_err() {
                libc::_exit(1);
            }
            loop {
                libc::pause();
            }
        }
        pid
    };
    // Let it take its label.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut fails = Vec::new();
    let s = u64::try_from(sleeper).unwrap_or(0);
    for (rule, want) in [("-", false), ("rx", true)] {
        if let Err(e) = set_rule("Reader", "Secret", rule) {
            fails.push(e);
            continue;
        }
        match read_as_reader(uid, s) {
            Ok((listed, values, opens, f)) => {
                println!(
                    "smack: rule `Reader Secret {rule}`: {listed} tasks listed; the Secret \
                     sleeper's values from nproc: {values}, its stat from /proc: {opens}"
                );
                fails.extend(f);
                if values != want || opens != want {
                    fails.push(format!(
                        "rule `Reader Secret {rule}`: nproc values {values}, /proc opens {opens}, \
                         expected {want} for both"
                    ));
                }
                if listed < 2 {
                    fails.push(format!("only {listed} tasks listed: nothing compared"));
                }
            }
            Err(e) => fails.push(format!("rule `Reader Secret {rule}`: {e}")),
        }
    }
    // SAFETY: kill(2) and waitpid(2) on our own child.
    unsafe {
        libc::kill(sleeper, libc::SIGKILL);
        libc::waitpid(sleeper, std::ptr::null_mut(), 0);
    }
    fails
}
