//! What the `kallsyms_fast` KUnit suite's info lines say about the module
//! indexes, read the same way by `fast-test` (QEMU) and `fast-uml-test`.
//!
//! The suite prints, per case, `module symbols: N addresses (..., X of Y
//! module addresses by a module index), ...` and `module names: ... X of Y
//! module names by a module name index ...`. It fails itself when X != Y;
//! the harness also requires Y > 0 in a run with modules loaded, so a suite
//! that silently checked nothing (no module seen, a changed message) fails.

/// `X of Y <what>` in `line`, if there.
fn x_of_y(line: &str, what: &str) -> Option<(u64, u64)> {
    let before = line.split(what).next().filter(|b| b.len() < line.len())?;
    let mut words = before.split_whitespace().rev();
    let y = words.next()?.parse().ok()?;
    (words.next()? == "of").then_some(())?;
    let x = words.next()?.trim_start_matches('(').parse().ok()?;
    Some((x, y))
}

/// Problems with the module-index counts of one KUnit run that had
/// modules loaded (empty when both indexes answered for everything).
pub fn module_index_problems(run: &str, text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for (what, label) in [
        (
            " module addresses by a module index",
            "module address index",
        ),
        (" module names by a module name index", "module name index"),
    ] {
        let counts: Vec<(u64, u64)> = text.lines().filter_map(|l| x_of_y(l, what)).collect();
        if !counts.iter().any(|&(_, y)| y > 0) {
            bad.push(format!("KUnit ({run}): the {label} was checked on nothing"));
        }
        for (x, y) in counts.into_iter().filter(|(x, y)| x != y) {
            bad.push(format!("KUnit ({run}): the {label} answered {x} of {y}"));
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "    # kallsyms_fast_test_modules: module symbols: 3075 addresses \
        (0 answered by the core index, 3075 of 3075 module addresses by a module index), 0 mismatches\n\
        # kallsyms_fast_test_module_names: module names: 1024 names (1024 answered by the name index, \
        1024 with the module side, 1024 of 1024 module names by a module name index), 0 mismatches\n";

    #[test]
    fn both_indexes_must_answer_something() {
        assert!(module_index_problems("module", GOOD).is_empty());
        let none = GOOD.replace("3075 of 3075", "0 of 0");
        assert_eq!(
            module_index_problems("module", &none),
            ["KUnit (module): the module address index was checked on nothing"]
        );
        let partial = GOOD.replace("1024 of 1024", "1000 of 1024");
        assert_eq!(
            module_index_problems("after", &partial),
            ["KUnit (after): the module name index answered 1000 of 1024"]
        );
        assert_eq!(
            module_index_problems("module", "ok 1 kallsyms_fast\n").len(),
            2
        );
    }

    #[test]
    fn reads_x_of_y() {
        assert_eq!(x_of_y("(5 of 7 things)", " things"), Some((5, 7)));
        assert_eq!(x_of_y("5 of 7 things", " other"), None);
        assert_eq!(x_of_y("5 and 7 things", " things"), None);
    }
}
