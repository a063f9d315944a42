//! Which tasks are shown: src/ps/select.c (`select_bits_setup()`,
//! `table_accept()`, `want_this_proc()`) and the pid lists of
//! src/ps/parser.c (`parse_list()` with `parse_pid()`).

use crate::task::Task;

/// The simple selection letters given (`SS_*` in src/ps/common.h).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Simple {
    /// BSD `a`.
    pub bsd_a: bool,
    /// BSD `x`.
    pub bsd_x: bool,
    /// Standard `-a`.
    pub unix_a: bool,
    /// Standard `-d`.
    pub unix_d: bool,
}

impl Simple {
    fn any(self) -> bool {
        self.bsd_a || self.bsd_x || self.unix_a || self.unix_d
    }
}

/// Who is asking: `table_accept()` compares against these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Me {
    /// `geteuid()`.
    pub euid: u32,
    /// Our controlling terminal's `tty_nr`.
    pub tty: i32,
}

/// The resolved selection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    all: bool,
    /// The table's bits, and who it compares against.
    table: Option<(u16, Me)>,
    pids: Vec<i32>,
    hide_kernel: bool,
}

impl Selection {
    /// select_bits_setup() for the default personality: `-e`/`-A` or BSD
    /// `ax` select everything; otherwise a 16-entry table indexed by (our
    /// euid, session leader, no tty, our tty) decides, plus any pid list.
    /// `me` is called only when the table applies: `-e` and `ax` need not
    /// read /proc/self/stat for a terminal they do not compare.
    pub fn new(
        all: bool,
        simple: Simple,
        bsd_syntax: bool,
        pids: Vec<i32>,
        me: impl FnOnce() -> Me,
    ) -> Result<Self, String> {
        let mut all = all;
        let bits = if !simple.any() && !bsd_syntax {
            Some(0xaa00)
        } else if simple.unix_a || simple.unix_d {
            if simple.bsd_a || simple.bsd_x {
                return Err("process selection options conflict".into());
            }
            Some(match (simple.unix_a, simple.unix_d) {
                (true, true) => 0x3f3f,
                (true, false) => 0x0303,
                _ => 0x3333,
            })
        } else {
            // BSD 'g' is implied by every personality but SunOS 4.
            match (simple.bsd_a, simple.bsd_x) {
                (false, false) => Some(0x0a0a),
                (true, false) => Some(0x0f0f),
                (false, true) => Some(0xaaaa),
                (true, true) => {
                    all = true;
                    None
                }
            }
        };
        // The table applies when a letter was given or no list was.
        let table = if simple.any() || pids.is_empty() {
            bits
        } else {
            None
        };
        Ok(Selection {
            all,
            table: if all {
                None
            } else {
                table.map(|bits| (bits, me()))
            },
            pids,
            hide_kernel: false,
        })
    }

    /// `LIBPROC_HIDE_KERNEL` (library/readproc.c `simple_readproc()`):
    /// drop kthreadd and its children.
    pub fn hide_kernel_threads(mut self, hide: bool) -> Self {
        self.hide_kernel = hide;
        self
    }

    /// The nproc fields [`Selection::wants`] reads besides the tgid: the
    /// table's (our euid, session leadership, the terminal) and
    /// `LIBPROC_HIDE_KERNEL`'s parent. `-e` and `ax` need none of them.
    pub fn fields(&self) -> &'static [u16] {
        use nproc_proto::field_id as f;
        match (self.table.is_some(), self.hide_kernel) {
            (true, true) => &[f::EUID, f::SID, f::TTY_NR, f::PPID],
            (true, false) => &[f::EUID, f::SID, f::TTY_NR],
            (false, true) => &[f::PPID],
            (false, false) => &[],
        }
    }

    /// want_this_proc().
    pub fn wants(&self, t: &Task) -> bool {
        if self.hide_kernel && (t.ppid == 2 || t.tid == 2) {
            return false;
        }
        if self.all {
            return true;
        }
        if let Some((bits, me)) = self.table {
            let index = (t.euid() == me.euid) as u16
                | ((t.sid == t.tgid) as u16) << 1
                | ((t.tty_nr == 0) as u16) << 2
                | ((t.tty_nr == me.tty) as u16) << 3;
            if bits & (1 << index) != 0 {
                return true;
            }
        }
        self.pids.contains(&t.tgid)
    }
}

/// parse_list() with parse_pid(): blank- or comma-separated ids, each
/// `strtoul(..., 0)` (so `0x10` and `010` are accepted) in 1..=0x7fffffff.
pub fn parse_pids(list: &str) -> Result<Vec<i32>, String> {
    let items: Vec<&str> = list.split([' ', ',', '\t']).collect();
    if items.iter().any(|s| s.is_empty()) {
        return Err("improper list".into());
    }
    items
        .into_iter()
        .map(|s| {
            let n = strtoul0(s).ok_or("process ID list syntax error")?;
            if !(1..=0x7fff_ffff).contains(&n) {
                return Err("process ID out of range".into());
            }
            Ok(n as i32)
        })
        .collect()
}

/// strtoul(s, &end, 0) that must consume the whole string.
fn strtoul0(s: &str) -> Option<u64> {
    let t = s.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse().ok()
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

    #[test]
    fn plain_ps_shows_our_processes_on_our_tty() {
        let s = Selection::new(false, Simple::default(), false, vec![], || ME).unwrap();
        assert!(s.wants(&task(1000, 1, 34816)));
        assert!(!s.wants(&task(0, 1, 34816)));
        assert!(!s.wants(&task(1000, 1, 0)));
    }

    #[test]
    fn bsd_letters() {
        let x = Simple {
            bsd_x: true,
            ..Simple::default()
        };
        let s = Selection::new(false, x, true, vec![], || ME).unwrap();
        assert!(s.wants(&task(1000, 1, 0)));
        assert!(!s.wants(&task(0, 1, 0)));
        let ax = Simple {
            bsd_a: true,
            bsd_x: true,
            ..Simple::default()
        };
        let s = Selection::new(false, ax, true, vec![], || ME).unwrap();
        assert!(s.wants(&task(0, 1, 0)));
        let mut kthread = task(0, 0, 0);
        kthread.ppid = 2;
        assert!(s.wants(&kthread));
        assert!(!s.hide_kernel_threads(true).wants(&kthread));
        let a = Simple {
            bsd_a: true,
            ..Simple::default()
        };
        let s = Selection::new(false, a, true, vec![], || ME).unwrap();
        assert!(s.wants(&task(0, 1, 34817)));
        assert!(!s.wants(&task(0, 1, 0)));
    }

    /// What `wants` decides must not change when a field it did not ask
    /// for (`fields`) changes: nps leaves such fields out of the request.
    #[test]
    fn the_selection_reads_only_the_fields_it_names() {
        use nproc_proto::field_id as f;
        let simple = |bsd_a, bsd_x, unix_a| Simple {
            bsd_a,
            bsd_x,
            unix_a,
            ..Simple::default()
        };
        let selections = [
            Selection::new(false, Simple::default(), false, vec![], || ME).unwrap(),
            Selection::new(false, simple(false, true, false), true, vec![], || ME).unwrap(),
            Selection::new(false, simple(true, true, false), true, vec![], || ME).unwrap(),
            Selection::new(false, simple(false, false, true), false, vec![], || ME).unwrap(),
            Selection::new(false, Simple::default(), false, vec![50], || ME).unwrap(),
        ];
        for s in selections {
            for s in [s.clone(), s.hide_kernel_threads(true)] {
                let named = s.fields();
                for euid in [0, 1000] {
                    for (sid, tty, ppid) in [(50, 0, 1), (1, 34816, 2), (50, 34817, 7)] {
                        let t = task(euid, sid, tty);
                        let mut t = Task { ppid, ..t };
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
                        assert_eq!(s.wants(&t), want, "{s:?} {t:?}");
                    }
                }
            }
        }
        let all = Selection::new(true, Simple::default(), false, vec![], || ME).unwrap();
        assert!(all.fields().is_empty());
    }

    #[test]
    fn pid_lists() {
        let s = Selection::new(false, Simple::default(), false, vec![50], || ME).unwrap();
        assert!(s.wants(&task(0, 1, 0)));
        assert!(!s.wants(&Task::empty(51, 51)));
        assert_eq!(parse_pids("1,2 0x10"), Ok(vec![1, 2, 16]));
        assert_eq!(parse_pids("1,,2"), Err("improper list".into()));
        assert_eq!(parse_pids("0"), Err("process ID out of range".into()));
        assert_eq!(
            parse_pids("abc"),
            Err("process ID list syntax error".into())
        );
        let mixed = Simple {
            bsd_a: true,
            unix_a: true,
            ..Simple::default()
        };
        assert!(Selection::new(false, mixed, true, vec![], || ME).is_err());
    }
}
