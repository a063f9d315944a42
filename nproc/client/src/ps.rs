//! One `ps` run: dump, select, order, print (src/ps/display.c
//! `simple_spew()`, `fancy_spew()`, `show_forest()`, and the header
//! bookkeeping of output.c's `show_one_proc()`).

use crate::parser::{tf, Headers};
use crate::render::columns::OUTBUF_SIZE;
use crate::render::forest::Forest;
use crate::render::known::known;
use crate::render::{Ctx, Layout};
use crate::select::Selection;
use crate::sort::{sort_tasks, SortKey};
use crate::source::{Scope, Source, SourceError, Want};
use crate::task::Task;
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

/// Everything a run needs besides the source and the rendering context.
pub struct Plan {
    /// The columns of process lines (and of every line but `-m`'s thread
    /// lines).
    pub layout: Layout,
    /// `-m`, `m`: the columns of thread lines.
    pub task_layout: Option<Layout>,
    /// `TF_*` after `thread_option_check()`.
    pub thread_flags: u32,
    /// `forest_type`: 0, `b'u'`, `b'g'` or `b'b'`.
    pub forest: u8,
    /// The sort keys in the order ps applies them.
    pub sort: Vec<SortKey>,
    /// Which tasks to print.
    pub selection: Selection,
    /// The header style.
    pub headers: Headers,
    /// `screen_rows`, for `--headers`.
    pub screen_rows: usize,
    /// BSD `e`: read each task's environment (from /proc, whatever the
    /// source: the nproc family does not serve it).
    pub environ: bool,
}

/// `t` with its environment read as libproc2 reads it for BSD `e`: its
/// own directory's `environ`, at most `MAX_BUFSZ` bytes.
fn with_environ(t: &Task) -> Task {
    use std::io::Read;
    let path = if t.tid == t.tgid {
        format!("/proc/{}/environ", t.tgid)
    } else {
        format!("/proc/{}/task/{}/environ", t.tgid, t.tid)
    };
    let mut t = t.clone();
    t.environ = std::fs::File::open(path).ok().and_then(|f| {
        let mut buf = Vec::new();
        f.take(crate::procfs::CMDLINE_MAX as u64)
            .read_to_end(&mut buf)
            .ok()
            .map(|_| buf)
    });
    t
}

/// Why a run stopped.
#[derive(Debug)]
pub enum RunError {
    /// The source failed.
    Source(SourceError),
    /// Writing failed.
    Io(io::Error),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Source(e) => write!(f, "{e}"),
            RunError::Io(e) => write!(f, "write error: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// The lines printed so far and when the next header is due
/// (`lines_to_next_header`, `header_gap`, `did_stuff`).
struct Printer<'o> {
    out: &'o mut dyn Write,
    buf: Vec<u8>,
    to_next_header: i64,
    gap: i64,
    did_stuff: bool,
}

impl Printer<'_> {
    /// One line (the header for `None`), with show_one_proc()'s complaint
    /// about a line wider than its buffer (`--cols` past 131072).
    fn line(&mut self, t: Option<&Task>, layout: &Layout, ctx: &mut Ctx<'_>) {
        if layout.active_cols > OUTBUF_SIZE {
            crate::stdio::eprint("fix bigness error\n");
        }
        layout.line(t, ctx, &mut self.buf);
    }

    /// show_one_proc(): a header first when one is due, then the line.
    fn show(&mut self, t: Option<&Task>, layout: &Layout, ctx: &mut Ctx<'_>) -> io::Result<()> {
        if t.is_some() {
            self.to_next_header -= 1;
            if self.to_next_header == 0 {
                self.to_next_header = self.gap;
                self.line(None, layout, ctx);
            }
        }
        self.did_stuff = true;
        self.line(t, layout, ctx);
        if self.buf.len() >= 60 * 1024 {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// The end: a header alone when nothing was printed; whether anything
    /// was (ps exits 1 otherwise).
    fn finish(&mut self, layout: &Layout, ctx: &mut Ctx<'_>) -> io::Result<bool> {
        let printed = self.did_stuff;
        if !printed {
            self.to_next_header -= 1;
            if self.to_next_header == 0 {
                self.line(None, layout, ctx);
            }
        }
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()?;
        Ok(printed)
    }
}

impl Plan {
    /// What the columns, the sort and the selection need from the source.
    pub fn want(&self) -> Want {
        let layouts = [Some(&self.layout), self.task_layout.as_ref()];
        let kinds = || {
            layouts
                .iter()
                .flatten()
                .flat_map(|l| l.columns().iter().map(|c| c.kind))
        };
        let mut fields = crate::netlink::fields::bitmap(kinds());
        for id in self.selection.fields() {
            fields.set(id);
        }
        let mut cmdline = kinds().any(|k| k.wants_cmdline());
        let mut wchan = kinds().any(|k| k.wants_wchan());
        for spec in self.sort_specs() {
            // The fields of an nps column sorting by the same item.
            let item = known(spec).map(|k| k.sort);
            let column = crate::render::columns::COLUMNS
                .iter()
                .find(|c| known(c.spec).map(|k| k.sort) == item);
            if let Some(c) = column {
                for id in crate::netlink::fields::for_kind(c.kind) {
                    fields.set(*id);
                }
                cmdline |= c.kind.wants_cmdline();
                wchan |= c.kind.wants_wchan();
            }
        }
        Want {
            fields,
            cmdline,
            wchan,
        }
    }

    /// The specifiers the sort reads, including the forest's own keys.
    fn sort_specs(&self) -> Vec<&'static str> {
        let mut v: Vec<&str> = self.sort.iter().map(|k| k.row.spec).collect();
        if self.forest != 0 {
            v.extend(["ppid", "start_time"]);
        }
        if self.thread_flags & tf::SHOW_BOTH != 0 {
            v.push("start_time");
        }
        v
    }

    /// Whether a column prints a time of day: only then does `nps` set up
    /// the time zone (reading /etc/localtime), as ps always does.
    pub fn wants_local_time(&self) -> bool {
        self.layout
            .columns()
            .iter()
            .any(|c| c.kind.wants_local_time())
    }

    fn scope(&self, fancy: bool) -> Scope {
        let t = self.thread_flags;
        let threads = if fancy {
            t & tf::LOOSE_TASKS != 0
        } else {
            t & (tf::LOOSE_TASKS | tf::SHOW_TASK) != 0
        };
        if threads {
            Scope::Threads
        } else {
            Scope::Processes
        }
    }

    /// Prints the header and every selected task as ps would. Returns
    /// whether a task was printed (ps prints the header anyway and exits 1
    /// otherwise).
    pub fn run(
        &self,
        source: &mut dyn Source,
        ctx: &mut Ctx<'_>,
        out: &mut dyn Write,
    ) -> Result<bool, RunError> {
        // check_headers(): one header, none, or one per screenful; none
        // either when every header text is empty.
        let named = self.layout.columns().iter().any(|c| !c.name.is_empty());
        let (to_next_header, gap) = match self.headers {
            Headers::Multi => (1, self.screen_rows as i64 - 1),
            Headers::None => (-1, -1),
            Headers::Single if named => (1, -1),
            Headers::Single => (-1, -1),
        };
        let mut p = Printer {
            out,
            buf: Vec::with_capacity(64 * 1024),
            to_next_header,
            gap,
            did_stuff: false,
        };
        let fancy = self.forest != 0 || !self.sort.is_empty();
        let scope = self.scope(fancy);
        let want = self.want();
        let quick = self.selection.quick_pids();
        if fancy || quick.is_some() || self.thread_flags & tf::SHOW_BOTH != 0 {
            let mut all = Vec::new();
            source
                .for_each_task(scope, want, &mut |t| {
                    all.push(if self.environ {
                        with_environ(t)
                    } else {
                        t.clone()
                    });
                    true
                })
                .map_err(RunError::Source)?;
            if let Some(pids) = quick {
                self.quick(&all, &pids, &mut p, ctx).map_err(RunError::Io)?;
            } else if fancy {
                self.fancy(&all, &mut p, ctx).map_err(RunError::Io)?;
            } else {
                self.with_threads(&mut all, &mut p, ctx)
                    .map_err(RunError::Io)?;
            }
        } else {
            let mut failed = None;
            source
                .for_each_task(scope, want, &mut |t| {
                    if !self.selection.wants(t) {
                        return true;
                    }
                    let read;
                    let t = if self.environ {
                        read = with_environ(t);
                        &read
                    } else {
                        t
                    };
                    match p.show(Some(t), &self.layout, ctx) {
                        Ok(()) => true,
                        Err(e) => {
                            failed = Some(e);
                            false
                        }
                    }
                })
                .map_err(RunError::Source)?;
            if let Some(e) = failed {
                return Err(RunError::Io(e));
            }
        }
        p.finish(&self.layout, ctx).map_err(RunError::Io)
    }

    /// `-q`: the listed pids in the order given, each read anew.
    fn quick(
        &self,
        all: &[Task],
        pids: &[i32],
        p: &mut Printer<'_>,
        ctx: &mut Ctx<'_>,
    ) -> io::Result<()> {
        let layout = self.task_layout.as_ref().unwrap_or(&self.layout);
        for &pid in pids {
            for t in all.iter().filter(|t| t.tgid == pid) {
                if self.selection.wants(t) {
                    p.show(Some(t), layout, ctx)?;
                }
            }
        }
        Ok(())
    }

    /// `-m`, `m`: each process line, then its threads' lines, ordered by
    /// start time within the process (the `TF_show_proc|TF_show_task` case
    /// of simple_spew()).
    fn with_threads(
        &self,
        all: &mut [Task],
        p: &mut Printer<'_>,
        ctx: &mut Ctx<'_>,
    ) -> io::Result<()> {
        all.sort_by_key(|t| t.start_time);
        all.sort_by_key(|t| t.tgid);
        let task_layout = self.task_layout.as_ref().unwrap_or(&self.layout);
        let mut i = 0;
        while i < all.len() {
            let t = &all[i];
            if !self.selection.wants(t) {
                i += 1;
                continue;
            }
            let own = t.tid;
            p.show(Some(t), &self.layout, ctx)?;
            // The loop starts at the process's own record: it is printed
            // again as its first thread.
            while i < all.len() && all[i].tgid == own {
                p.show(Some(&all[i]), task_layout, ctx)?;
                i += 1;
            }
        }
        Ok(())
    }

    /// fancy_spew(): select, sort (with the forest's keys), then a flat
    /// list or the forest.
    fn fancy(&self, all: &[Task], p: &mut Printer<'_>, ctx: &mut Ctx<'_>) -> io::Result<()> {
        let mut tasks: Vec<&Task> = all.iter().filter(|t| self.selection.wants(t)).collect();
        if tasks.is_empty() {
            return Ok(());
        }
        let mut keys = Vec::new();
        if self.forest != 0 {
            // prep_forest_sort(): start time, then ppid unless the user
            // sorts, then the user's keys.
            let key = |spec| SortKey {
                row: known(spec).expect("a format_array row"),
                order: 1,
            };
            keys.push(key("start_time"));
            if self.sort.is_empty() {
                keys.push(key("ppid"));
            }
        }
        keys.extend_from_slice(&self.sort);
        sort_tasks(&mut tasks, &keys, ctx);
        if self.forest == 0 {
            for t in tasks {
                p.show(Some(t), &self.layout, ctx)?;
            }
            return Ok(());
        }
        self.show_forest(&tasks, p, ctx)
    }

    /// show_forest(): every task whose parent is not listed is a root,
    /// taken from the end of the array; show_tree() below each, written
    /// with an explicit stack so that a deep chain of processes cannot
    /// overflow ours.
    fn show_forest(
        &self,
        tasks: &[&Task],
        p: &mut Printer<'_>,
        ctx: &mut Ctx<'_>,
    ) -> io::Result<()> {
        /// `forest_prefix` holds 4 * 32 KiB + 100 bytes.
        const PREFIX_MAX: usize = 4 * 32 * 1024 + 100;
        struct Frame {
            me: usize,
            level: usize,
            /// The next child to look at, once the first one is found.
            next: usize,
        }
        let n = tasks.len();
        let style = self.forest;
        let mut prefix = vec![0u8; PREFIX_MAX];
        // The prefix as a C string: up to its first NUL.
        let set_ctx = |prefix: &[u8], ctx: &mut Ctx<'_>| {
            let len = prefix.iter().position(|&b| b == 0).unwrap_or(prefix.len());
            ctx.forest = Forest {
                style,
                prefix: prefix[..len].to_vec(),
            };
        };
        // ps scans the whole array for each parent and each first child;
        // the same answers from two maps keep a large listing linear.
        let listed: HashSet<i32> = tasks.iter().map(|t| t.tgid).collect();
        let mut first_child: HashMap<i32, usize> = HashMap::new();
        for (i, t) in tasks.iter().enumerate() {
            first_child.entry(t.ppid).or_insert(i);
        }
        for root in (0..n).rev() {
            if listed.contains(&tasks[root].ppid) {
                continue;
            }
            let mut stack: Vec<Frame> = Vec::new();
            // Enter show_tree(root, level 0, no sibling).
            let mut enter = Some((root, 0usize, false));
            loop {
                if let Some((me, level, sibling)) = enter.take() {
                    if level > 0 {
                        prefix[level - 1] = if sibling { b'+' } else { b'L' };
                    }
                    prefix[level] = 0;
                    set_ctx(&prefix, ctx);
                    let shown = p.show(Some(tasks[me]), &self.layout, ctx);
                    ctx.forest = Forest::default();
                    shown?;
                    let pid = tasks[me].tgid;
                    let Some(&first) = first_child.get(&pid) else {
                        continue;
                    };
                    if level > 0 {
                        prefix[level - 1] = if sibling { b'|' } else { b' ' };
                    }
                    prefix[level] = 0;
                    stack.push(Frame {
                        me,
                        level,
                        next: first,
                    });
                }
                let Some(top) = stack.last_mut() else {
                    break;
                };
                let i = top.next;
                let pid = tasks[top.me].tgid;
                if i >= n {
                    prefix[top.level] = 0;
                    stack.pop();
                    continue;
                }
                let more = i + 1 < n && tasks[i + 1].ppid == pid;
                let level = if pid == 1 && style != b'u' {
                    top.level
                } else if top.level + 1 < PREFIX_MAX {
                    top.level + 1
                } else {
                    top.level
                };
                top.next = if more { i + 1 } else { n };
                enter = Some((i, level, more));
            }
        }
        Ok(())
    }
}
