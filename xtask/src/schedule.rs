//! The guest suites of `cargo xtask test` after the stock kernel's mirror
//! suite: two rounds of two lanes, one lane per core, in the order that
//! is shortest for the state of the kernel cache.
//!
//! Each QEMU (TCG) guest runs in one host thread and each UML guest
//! natively on one core, so a guest on one lane and a build on the other
//! keep both cores busy; two builds at once share them. What is long
//! differs with the cache, so there are two schedules, both running every
//! suite once:
//!
//! - **fresh** (no kernel built yet: [`crate::steps::cache_state`]): the
//!   builds dominate (`test-steps` files with `"cache": "fresh"` in
//!   bench/results/ give each step's time). The longest chains are the
//!   6.12 UML suites with fast-test (two UML builds and an x86_64 build
//!   from nothing) and the shim suite with Debian's build and boot; the
//!   7.3 UML suites and nproc-bench, each with a build of its own, fill
//!   the last round.
//! - **cached** (every kernel current): the QEMU guests dominate, and the
//!   two longest, the shim suite and Debian's boot, must not share a
//!   lane.
//!
//! The suites that prepare the one patched 6.12 tree
//! (`tree::prepare_tree()`: uml-test --patched-off, fast-uml-test,
//! nproc-uml-test, fast-test, nproc-bench) never run in both lanes of one
//! round; the 7.3 suites have their own tree, Debian's suite its own
//! directory (`$KFAST_CACHE/debian`). The static guest binaries are shared
//! by all flavours and cargo's lock orders their builds.

use crate::steps::Step;
use crate::{debian, fast, fast_uml, nproc_bench, nproc_uml, shim_test, uml_test};

/// One round: the steps of the first lane, then of the second, by name.
pub type Round = [&'static [&'static str]; 2];

/// From nothing: the shim suite, then Debian's build and boot, beside the
/// 6.12 UML suites and fast-test; then nproc-bench beside the 7.3 UML
/// suites.
pub const FRESH: [Round; 2] = [
    [
        &[
            "shim-test",
            "debian-shim-test --build-only",
            "debian-shim-test",
        ],
        &[
            "uml-test --patched-off",
            "fast-uml-test",
            "nproc-uml-test",
            "fast-test",
        ],
    ],
    [
        &["nproc-bench"],
        &[
            "fast-uml-test --base 7.3",
            "uml-test --base 7.3",
            "nproc-uml-test --base 7.3",
        ],
    ],
];

/// With every kernel built: the shim suite beside the UML suites and
/// nproc-bench, then Debian's suite beside fast-test.
pub const CACHED: [Round; 2] = [
    [
        &["shim-test"],
        &[
            "uml-test --patched-off",
            "fast-uml-test",
            "nproc-uml-test",
            "fast-uml-test --base 7.3",
            "uml-test --base 7.3",
            "nproc-uml-test --base 7.3",
            "nproc-bench",
        ],
    ],
    [&["debian-shim-test"], &["fast-test"]],
];

/// The rounds for a cache that is `"fresh"` or not.
pub fn rounds(cache: &str) -> &'static [Round; 2] {
    if cache == "fresh" {
        &FRESH
    } else {
        &CACHED
    }
}

/// The suite a name in a [`Round`] stands for, with the options its own
/// command has by default; `None` for a name no suite has.
pub fn suite(name: &'static str) -> Option<Step<'static>> {
    let f: Box<dyn FnOnce() -> crate::Result<u8> + Send> = match name {
        "shim-test" => Box::new(|| shim_test::run(&shim_test::Options::default())),
        "debian-shim-test --build-only" => Box::new(|| debian::run(&debian::Options::build_only())),
        "debian-shim-test" => Box::new(|| debian::run(&debian::Options::default())),
        "uml-test --patched-off" => Box::new(|| uml_test::run(&uml_test::Options::ci())),
        "fast-uml-test" => Box::new(|| fast_uml::run(&fast_uml::Options::default())),
        "nproc-uml-test" => Box::new(|| nproc_uml::run(&nproc_uml::Options::default())),
        "fast-test" => Box::new(|| fast::run(&fast::Options::default())),
        "nproc-bench" => Box::new(|| nproc_bench::run(&nproc_bench::Options::default())),
        "fast-uml-test --base 7.3" => Box::new(|| {
            fast_uml::run(&fast_uml::Options {
                base: Some("7.3".to_string()),
                ..fast_uml::Options::default()
            })
        }),
        "uml-test --base 7.3" => Box::new(|| uml_test::run(&uml_test::Options::ci_base("7.3"))),
        "nproc-uml-test --base 7.3" => Box::new(|| {
            nproc_uml::run(&nproc_uml::Options {
                base: Some("7.3".to_string()),
                ..nproc_uml::Options::default()
            })
        }),
        _ => return None,
    };
    Some((name, f))
}

/// A lane's steps; a name no suite has is an error (a schedule that would
/// silently skip a suite).
pub fn lane(names: &[&'static str]) -> crate::Result<Vec<Step<'static>>> {
    names
        .iter()
        .map(|n| suite(n).ok_or_else(|| format!("schedule names no suite {n:?}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suites that call `tree::prepare_tree()` on the patched 6.12 tree.
    const PATCHED_6_12: &[&str] = &[
        "uml-test --patched-off",
        "fast-uml-test",
        "nproc-uml-test",
        "fast-test",
        "nproc-bench",
    ];

    fn names(rounds: &[Round; 2]) -> Vec<&'static str> {
        let mut v: Vec<&str> = rounds
            .iter()
            .flat_map(|r| r.iter().flat_map(|l| l.iter().copied()))
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn both_schedules_run_every_suite_once() {
        let fresh = names(&FRESH);
        let mut cached = names(&CACHED);
        // The cached schedule runs Debian's build inside its suite.
        cached.push("debian-shim-test --build-only");
        cached.sort_unstable();
        assert_eq!(fresh, cached);
        let mut once = fresh.clone();
        once.dedup();
        assert_eq!(once, fresh, "a suite listed twice");
        for n in fresh {
            assert!(suite(n).is_some(), "{n} is no suite");
        }
        assert!(suite("no-such-test").is_none());
        assert!(lane(&["fast-test", "no-such-test"]).is_err());
    }

    #[test]
    fn the_patched_tree_is_prepared_in_one_lane_at_a_time() {
        for rounds in [&FRESH, &CACHED] {
            for [a, b] in rounds {
                let uses = |l: &[&str]| l.iter().any(|n| PATCHED_6_12.contains(n));
                assert!(!(uses(a) && uses(b)), "{a:?} beside {b:?}");
            }
        }
    }

    #[test]
    fn debian_builds_before_it_boots() {
        let lane = FRESH[0][0];
        let build = lane
            .iter()
            .position(|n| *n == "debian-shim-test --build-only");
        let boot = lane.iter().position(|n| *n == "debian-shim-test");
        assert!(build < boot && build.is_some());
        assert_eq!(rounds("fresh"), &FRESH);
        assert_eq!(rounds("cached"), &CACHED);
    }
}
