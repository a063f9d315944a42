//! `nps`: task records from the nproc family or /proc, and a `ps` whose
//! output is byte-identical to Debian's procps-ng 4.0.2.
//!
//! * [`task`]: the record (`Task`, `Global`) holding raw kernel values;
//! * [`source`]: the `Source` trait; [`netlink`] reads the kernel's nproc
//!   family (the default), [`procfs`] reads `/proc`: same records;
//! * [`render`]: procps's escaping, terminal names, column printers and
//!   line layout; [`select`]: which tasks are shown;
//! * [`parser`]: ps's command line; [`sortformat`]: its format and sort
//!   lists; [`sort`]: its sorting; [`support`]: what nps refuses;
//!   [`ps`]: one listing; [`run`]: one invocation; [`stdio`]: ps's
//!   handling of write errors.
//!
//! Every rule carries a pointer to the procps-ng 4.0.2 source it
//! reproduces (src/ps/*.c, library/*.c of the v4.0.2 tag).

pub mod help;
pub mod netlink;
pub mod parser;
pub mod procfs;
pub mod ps;
pub mod render;
pub mod run;
pub mod screen;
pub mod select;
pub mod sort;
pub mod sortformat;
pub mod source;
pub mod stdio;
pub mod support;
pub mod task;

pub use source::{Scope, Source, SourceError, Want};
pub use task::{Global, Task, Wchan};
