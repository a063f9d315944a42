//! nproc client: task records and `nps`, a `ps` whose output is
//! byte-identical to Debian's procps-ng 4.0.2 for the columns it supports.
//!
//! * [`task`]: the record (`Task`, `Global`) holding raw kernel values;
//! * [`source`]: the `Source` trait; [`netlink`] reads the kernel's nproc
//!   family (the default), [`procfs`] reads `/proc`: same records;
//! * [`render`]: procps's escaping, terminal names, column printers and
//!   line layout; [`select`]: which tasks are shown;
//! * [`cli`]: the `nps` command line; [`ps`]: one run.
//!
//! Every rule carries a pointer to the procps-ng 4.0.2 source it
//! reproduces (src/ps/*.c, library/*.c of the v4.0.2 tag).

pub mod cli;
pub mod netlink;
pub mod procfs;
pub mod ps;
pub mod render;
pub mod screen;
pub mod select;
pub mod source;
pub mod task;

pub use source::{Scope, Source, SourceError, Want};
pub use task::{Global, Task, Wchan};
