//! Which tasks are shown: src/ps/select.c (`select_bits_setup()`,
//! `table_accept()`, `want_this_proc()`).

use crate::task::Task;

/// Which id a selection list compares (`SEL_*` in src/ps/common.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelKind {
    /// `-U`, `--User`: real uid.
    Ruid,
    /// `-u`, `U`, `--user`: effective uid.
    Euid,
    /// `-G`, `--Group`: real gid.
    Rgid,
    /// `-g` (names), `--group`: effective gid.
    Egid,
    /// Trailing `-PGRP`: process group.
    Pgrp,
    /// `-p`, `p`, `--pid`, trailing pids: tgid.
    Pid,
    /// `-q`, `q`, `--quick-pid`: tgid, listed in the given order.
    PidQuick,
    /// `-t`, `t`, `--tty`, `T`: controlling terminal.
    Tty,
    /// `-s`, `--sid`, `-g` (numbers), trailing `+SID`: session.
    Sess,
    /// `-C`: command name.
    Comm,
    /// `--ppid`: parent.
    Ppid,
}

/// One selection list (`selection_node`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelNode {
    /// What it compares.
    pub kind: SelKind,
    /// The ids (for every kind but [`SelKind::Comm`]), as ps stores them.
    pub ids: Vec<u64>,
    /// The names of a [`SelKind::Comm`] list, each at most 63 bytes.
    pub names: Vec<Vec<u8>>,
}

impl SelNode {
    /// proc_was_listed() for this list: ids compare as `unsigned`.
    fn matches(&self, t: &Task) -> bool {
        let v: u32 = match self.kind {
            SelKind::Ruid => t.uid[0],
            SelKind::Euid => t.uid[1],
            SelKind::Rgid => t.gid[0],
            SelKind::Egid => t.gid[1],
            SelKind::Pgrp => t.pgid as u32,
            SelKind::Pid | SelKind::PidQuick => t.tgid as u32,
            SelKind::Tty => t.tty_nr as u32,
            SelKind::Sess => t.sid as u32,
            SelKind::Ppid => t.ppid as u32,
            SelKind::Comm => return self.names.iter().any(|n| comm_matches(&t.comm, n)),
        };
        self.ids.iter().any(|&id| id as u32 == v)
    }

    /// The nproc fields [`SelNode::matches`] reads.
    fn fields(&self) -> &'static [u16] {
        use nproc_proto::field_id as f;
        match self.kind {
            SelKind::Ruid => &[f::UID],
            SelKind::Euid => &[f::EUID],
            SelKind::Rgid => &[f::GID],
            SelKind::Egid => &[f::EGID],
            SelKind::Pgrp => &[f::PGID],
            SelKind::Pid | SelKind::PidQuick => &[],
            SelKind::Tty => &[f::TTY_NR],
            SelKind::Sess => &[f::SID],
            SelKind::Ppid => &[f::PPID],
            SelKind::Comm => &[f::COMM],
        }
    }
}

/// SEL_COMM: `strncmp(comm, name, 63)`, and a 15-byte comm (the kernel's
/// cut) also matches a longer name that starts with it.
fn comm_matches(comm: &[u8], name: &[u8]) -> bool {
    let c = &comm[..comm.iter().position(|&b| b == 0).unwrap_or(comm.len())];
    if c.len() == 15 && name.len() >= 15 && name[..15] == c[..] {
        return true;
    }
    c[..c.len().min(63)] == name[..name.len().min(63)]
}

/// Who is asking: `table_accept()` compares against these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Me {
    /// `geteuid()`.
    pub euid: u32,
    /// Our controlling terminal's `tty_nr`.
    pub tty: i32,
}

/// The resolved selection: ps's `want_this_proc()` with its inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    all: bool,
    /// The table's bits, used when a letter was given or no list was.
    table: Option<u16>,
    me: Me,
    lists: Vec<SelNode>,
    running_only: bool,
    negate: bool,
    hide_kernel: bool,
}

/// The selection letters (`SS_*` in src/ps/common.h).
pub mod ss {
    /// BSD `x`.
    pub const B_X: u32 = 0x01;
    /// BSD `g`.
    pub const B_G: u32 = 0x02;
    /// `-d`.
    pub const U_D: u32 = 0x04;
    /// `-a`.
    pub const U_A: u32 = 0x08;
    /// BSD `a`.
    pub const B_A: u32 = 0x10;
}

/// select_bits_setup() for the default personality: the table's bits, or
/// `None` for "everything" (BSD `ax`, made `-e`).
pub fn select_bits(simple: u32, prefer_bsd: bool) -> Result<Option<u16>, &'static str> {
    if simple == 0 && !prefer_bsd {
        return Ok(Some(0xaa00));
    }
    // BSD 'g' is implied by every personality but SunOS 4.
    let v = if simple & (ss::U_A | ss::U_D) == 0 {
        simple | ss::B_G
    } else {
        simple
    };
    const G: u32 = ss::B_G;
    Ok(Some(match v {
        x if x == ss::U_A | ss::U_D => 0x3f3f,
        x if x == ss::U_A => 0x0303,
        x if x == ss::U_D => 0x3333,
        x if x == G => 0x0a0a,
        x if x == G | ss::B_A => 0x0f0f,
        x if x == G | ss::B_X => 0xaaaa,
        x if x == G | ss::B_X | ss::B_A => return Ok(None),
        _ => return Err("process selection options conflict"),
    }))
}

impl Selection {
    /// The selection of `-e` and `ax` (`all`), else of the table `bits`
    /// (applied when `simple` letters were given or `lists` is empty) and
    /// the lists; then BSD `r` and `-N`.
    pub fn new(all: bool, bits: Option<u16>, simple: u32, lists: Vec<SelNode>, me: Me) -> Self {
        let table = if simple != 0 || lists.is_empty() {
            bits
        } else {
            None
        };
        Selection {
            all,
            table: if all { None } else { table },
            me,
            lists,
            running_only: false,
            negate: false,
            hide_kernel: false,
        }
    }

    /// BSD `r`: running (or uninterruptible) tasks only.
    pub fn running_only(mut self, on: bool) -> Self {
        self.running_only = on;
        self
    }

    /// `-N`, `--deselect`: the complement.
    pub fn negate(mut self, on: bool) -> Self {
        self.negate = on;
        self
    }

    /// `LIBPROC_HIDE_KERNEL` (library/readproc.c `simple_readproc()`):
    /// drop kthreadd and its children.
    pub fn hide_kernel_threads(mut self, hide: bool) -> Self {
        self.hide_kernel = hide;
        self
    }

    /// The quick pid list (`-q`), in the order given, if there is one.
    pub fn quick_pids(&self) -> Option<Vec<i32>> {
        let node = self.lists.iter().find(|n| n.kind == SelKind::PidQuick)?;
        // parse_list() stores items back to front.
        Some(node.ids.iter().map(|&id| id as i32).collect())
    }

    /// The nproc fields [`Selection::wants`] reads besides the tgid.
    pub fn fields(&self) -> Vec<u16> {
        use nproc_proto::field_id as f;
        let mut v = Vec::new();
        if self.table.is_some() {
            v.extend([f::EUID, f::SID, f::TTY_NR]);
        }
        if self.hide_kernel {
            v.push(f::PPID);
        }
        if self.running_only {
            v.push(f::STATE);
        }
        for n in &self.lists {
            v.extend_from_slice(n.fields());
        }
        v
    }

    /// want_this_proc().
    pub fn wants(&self, t: &Task) -> bool {
        if self.hide_kernel && (t.ppid == 2 || t.tid == 2) {
            return false;
        }
        let mut accepted = self.all
            || self.table.is_some_and(|bits| {
                let index = (t.euid() == self.me.euid) as u16
                    | ((t.sid == t.tgid) as u16) << 1
                    | ((t.tty_nr == 0) as u16) << 2
                    | ((t.tty_nr == self.me.tty) as u16) << 3;
                bits & (1 << index) != 0
            })
            || self.lists.iter().any(|n| n.matches(t));
        if self.running_only && !matches!(t.state, b'R' | b'D') {
            accepted = false;
        }
        accepted != self.negate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: Me = Me {
        euid: 1000,
        tty: 34816,
    };

    fn task(euid: u32, sid: i32, tty: i32) -> Task {
        let mut t = Task::empty(50, 50);
        t.uid = [euid; 4];
        t.sid = sid;
        t.tty_nr = tty;
        t
    }

    fn table(simple: u32, bsd: bool) -> Selection {
        let bits = select_bits(simple, bsd).unwrap();
        Selection::new(bits.is_none(), bits, simple, vec![], ME)
    }

    fn list(kind: SelKind, ids: &[u64]) -> SelNode {
        SelNode {
            kind,
            ids: ids.to_vec(),
            names: Vec::new(),
        }
    }

    #[test]
    fn plain_ps_shows_our_processes_on_our_tty() {
        let s = table(0, false);
        assert!(s.wants(&task(1000, 1, 34816)));
        assert!(!s.wants(&task(0, 1, 34816)));
        assert!(!s.wants(&task(1000, 1, 0)));
    }

    #[test]
    fn bsd_letters() {
        let s = table(ss::B_X, true);
        assert!(s.wants(&task(1000, 1, 0)));
        assert!(!s.wants(&task(0, 1, 0)));
        let s = table(ss::B_A | ss::B_X, true);
        assert!(s.wants(&task(0, 1, 0)));
        let mut kthread = task(0, 0, 0);
        kthread.ppid = 2;
        assert!(s.wants(&kthread));
        assert!(!s.hide_kernel_threads(true).wants(&kthread));
        let s = table(ss::B_A, true);
        assert!(s.wants(&task(0, 1, 34817)));
        assert!(!s.wants(&task(0, 1, 0)));
        assert_eq!(
            select_bits(ss::B_A | ss::U_A, true),
            Err("process selection options conflict")
        );
    }

    /// What `wants` decides must not change when a field it did not ask
    /// for (`fields`) changes: nps leaves such fields out of the request.
    #[test]
    fn the_selection_reads_only_the_fields_it_names() {
        use nproc_proto::field_id as f;
        let mut comm = list(SelKind::Comm, &[]);
        comm.names = vec![b"sleep".to_vec()];
        let selections = [
            table(0, false),
            table(ss::B_X, true),
            table(ss::B_A | ss::B_X, true),
            table(ss::U_A, false),
            Selection::new(false, Some(0xaa00), 0, vec![list(SelKind::Pid, &[50])], ME),
            Selection::new(false, Some(0xaa00), 0, vec![list(SelKind::Euid, &[0])], ME),
            Selection::new(false, Some(0xaa00), 0, vec![list(SelKind::Ppid, &[7])], ME),
            Selection::new(false, Some(0xaa00), 0, vec![comm], ME).negate(true),
            table(ss::B_X, true).running_only(true),
        ];
        for s in selections {
            for s in [s.clone(), s.hide_kernel_threads(true)] {
                let named = s.fields();
                for euid in [0, 1000] {
                    for (sid, tty, ppid) in [(50, 0, 1), (1, 34816, 2), (50, 34817, 7)] {
                        let t = task(euid, sid, tty);
                        let mut t = Task { ppid, ..t };
                        t.comm = b"sleep".to_vec();
                        t.state = b'R';
                        let want = s.wants(&t);
                        if !named.contains(&f::EUID) {
                            t.uid = [77; 4];
                        }
                        if !named.contains(&f::SID) {
                            t.sid = 77;
                        }
                        if !named.contains(&f::TTY_NR) {
                            t.tty_nr = 77;
                        }
                        if !named.contains(&f::PPID) {
                            t.ppid = 2;
                        }
                        if !named.contains(&f::COMM) {
                            t.comm = b"x".to_vec();
                        }
                        if !named.contains(&f::STATE) {
                            t.state = b'S';
                        }
                        assert_eq!(s.wants(&t), want, "{s:?} {t:?}");
                    }
                }
            }
        }
        assert!(table(ss::B_A | ss::B_X, true).fields().is_empty());
    }

    #[test]
    fn lists_negation_and_running() {
        let s = Selection::new(false, Some(0xaa00), 0, vec![list(SelKind::Pid, &[50])], ME);
        assert!(s.wants(&task(0, 1, 0)));
        assert!(!s.wants(&Task::empty(51, 51)));
        let s = s.negate(true);
        assert!(!s.wants(&task(0, 1, 0)));
        assert!(s.wants(&Task::empty(51, 51)));
        let s = table(ss::B_A | ss::B_X, true).running_only(true);
        let mut t = task(0, 1, 0);
        t.state = b'S';
        assert!(!s.wants(&t));
        t.state = b'D';
        assert!(s.wants(&t));
    }

    #[test]
    fn command_names() {
        assert!(comm_matches(b"sleep", b"sleep"));
        assert!(!comm_matches(b"sleep", b"slee"));
        // The kernel keeps 15 bytes: a longer name given matches them.
        assert!(comm_matches(b"averyveryverylo", b"averyveryverylongname"));
        assert!(!comm_matches(b"short", b"shorter"));
    }
}
