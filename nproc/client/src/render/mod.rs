//! Turning task records into procps-ng 4.0.2's exact bytes.

pub mod charset;
pub mod clock;
pub mod columns;
pub mod escape;
pub mod layout;
pub mod names;
pub mod short;
pub mod spec;
pub mod table;
pub mod tty;
mod words;

pub use charset::Charset;
pub use columns::{Ctx, Just, Kind};
pub use layout::{Column, Layout};
pub use names::Names;
pub use tty::TtyNamer;
