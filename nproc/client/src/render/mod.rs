//! Turning task records into procps-ng 4.0.2's exact bytes.

pub mod charset;
pub mod clock;
pub mod columns;
pub mod escape;
pub mod forest;
pub mod known;
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

/// Runs `f` with a rendering context over `global`, as the unit tests
/// need one: the C locale, no terminal names (a /proc root that does not
/// exist), the clock at 0.
#[cfg(test)]
pub(crate) fn with_test_ctx<R>(global: &crate::Global, f: impl FnOnce(&mut Ctx<'_>) -> R) -> R {
    let mut tty = TtyNamer::new("/nonexistent");
    let mut names = Names::new();
    let mut ctx = Ctx {
        global,
        charset: Charset::Bytes,
        tty: &mut tty,
        names: &mut names,
        now: 0,
        forest: Default::default(),
        environ: false,
    };
    f(&mut ctx)
}
