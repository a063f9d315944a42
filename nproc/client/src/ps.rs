//! One `ps` run: dump, select, print (src/ps/display.c `simple_spew()`).

use crate::render::{Ctx, Layout};
use crate::select::Selection;
use crate::source::{Scope, Source, SourceError, Want};
use std::io::{self, Write};

/// Everything a run needs besides the source and the rendering context.
pub struct Plan {
    /// The columns and line width.
    pub layout: Layout,
    /// Processes or threads.
    pub scope: Scope,
    /// Which tasks to print.
    pub selection: Selection,
    /// Whether to print the header line.
    pub header: bool,
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

impl Plan {
    /// What the columns and the selection need from the source.
    pub fn want(&self) -> Want {
        let kinds = || self.layout.columns().iter().map(|c| c.kind);
        let mut fields = crate::netlink::fields::bitmap(kinds());
        for id in self.selection.fields() {
            fields.set(*id);
        }
        Want {
            fields,
            cmdline: kinds().any(|k| k.wants_cmdline()),
            wchan: kinds().any(|k| k.wants_wchan()),
        }
    }

    /// Whether a column prints a time of day: only then does `nps` set up
    /// the time zone (reading /etc/localtime), as ps always does.
    pub fn wants_local_time(&self) -> bool {
        self.layout
            .columns()
            .iter()
            .any(|c| c.kind.wants_local_time())
    }

    /// Prints the header (before the first line, if wanted) and every
    /// selected task, flushing `out` as lines accumulate. Returns whether a
    /// task was printed: ps prints the header anyway and exits 1 otherwise.
    pub fn run(
        &self,
        source: &mut dyn Source,
        ctx: &mut Ctx<'_>,
        out: &mut dyn Write,
    ) -> Result<bool, RunError> {
        // check_headers(): no header when every header text is empty.
        let header = self.header && self.layout.columns().iter().any(|c| !c.name.is_empty());
        let mut buf = Vec::with_capacity(64 * 1024);
        let mut printed = false;
        let mut failed = None;
        let want = self.want();
        source
            .for_each_task(self.scope, want, &mut |t| {
                if !self.selection.wants(t) {
                    return true;
                }
                if !printed && header {
                    self.layout.line(None, ctx, &mut buf);
                }
                printed = true;
                self.layout.line(Some(t), ctx, &mut buf);
                if buf.len() >= 60 * 1024 {
                    if let Err(e) = out.write_all(&buf) {
                        failed = Some(e);
                        return false;
                    }
                    buf.clear();
                }
                true
            })
            .map_err(RunError::Source)?;
        if let Some(e) = failed {
            return Err(RunError::Io(e));
        }
        if !printed && header {
            self.layout.line(None, ctx, &mut buf);
        }
        out.write_all(&buf).map_err(RunError::Io)?;
        out.flush().map_err(RunError::Io)?;
        Ok(printed)
    }
}
