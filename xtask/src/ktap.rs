//! KTAP result lines, read as the kernel's own parser reads them
//! (`tools/testing/kunit/kunit_parser.py`: `TEST_RESULT` and
//! `TEST_RESULT_SKIP`), for every KUnit run the harness checks: the
//! `kallsyms_fast` suite's debugfs results on QEMU and on UML.
//!
//! A result line is `[indent](ok|not ok) <number>[ ][- ]<name>[ # <directive>]`;
//! the `SKIP` directive makes it skipped whatever its `ok`. Only result
//! lines matter here: the harness asks whether a suite's own line passed
//! and whether any test failed, not how the plan was numbered.

/// A test's outcome, as `kunit_parser.TestStatus` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// `ok` without a `SKIP` directive.
    Success,
    /// `not ok` without a `SKIP` directive.
    Failure,
    /// Either, with `# SKIP`.
    Skipped,
}

/// One result line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestResult<'a> {
    /// The test's number in its plan.
    pub number: u64,
    /// The test (case or suite) name.
    pub name: &'a str,
    /// Its outcome.
    pub status: Status,
}

/// `line` as a result line, or `None` when it is not one.
pub fn parse_result(line: &str) -> Option<TestResult<'_>> {
    let t = line.trim_start();
    let (ok, rest) = match t.strip_prefix("not ok ") {
        Some(r) => (false, r),
        None => (true, t.strip_prefix("ok ")?),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let number = rest.get(..digits)?.parse().ok()?;
    let rest = rest.get(digits..)?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let rest = rest
        .strip_prefix(":- ")
        .or_else(|| rest.strip_prefix("- "))
        .unwrap_or(rest);
    // TEST_RESULT: the name runs to the first '#', which must open a
    // ` # ` directive; a '#' anywhere else makes the line no result.
    let mut name = match rest.find('#') {
        None => rest,
        Some(i) => {
            let before = rest.get(..i)?.strip_suffix(' ')?;
            rest.get(i + 1..)?.starts_with(' ').then_some(before)?
        }
    };
    // TEST_RESULT_SKIP: `(.*) # SKIP ?(.*)$`, its greedy name.
    let skipped = match rest.rfind(" # SKIP") {
        Some(j) => {
            name = rest.get(..j)?;
            true
        }
        None => false,
    };
    let status = match (skipped, ok) {
        (true, _) => Status::Skipped,
        (false, true) => Status::Success,
        (false, false) => Status::Failure,
    };
    Some(TestResult {
        number,
        name,
        status,
    })
}

/// Every result line of `text`.
pub fn results(text: &str) -> impl Iterator<Item = TestResult<'_>> {
    text.lines().filter_map(parse_result)
}

/// The outcomes of the test called `name` (a suite run once per results
/// file, or once per run on one console), in order.
pub fn verdicts<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = Status> + 'a {
    results(text)
        .filter(move |r| r.name == name)
        .map(|r| r.status)
}

/// The names of the tests that failed (skips are not failures, as in
/// `kunit.py`).
pub fn failures(text: &str) -> Vec<&str> {
    results(text)
        .filter(|r| r.status == Status::Failure)
        .map(|r| r.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Option<(u64, &str, Status)> {
        parse_result(line).map(|r| (r.number, r.name, r.status))
    }

    #[test]
    fn result_lines_as_kunit_parser_reads_them() {
        assert_eq!(
            one("ok 1 kallsyms_fast"),
            Some((1, "kallsyms_fast", Status::Success))
        );
        assert_eq!(
            one("    not ok 12 kallsyms_fast_test_modules"),
            Some((12, "kallsyms_fast_test_modules", Status::Failure))
        );
        assert_eq!(
            one("    ok 3 - case_b # SKIP no modules"),
            Some((3, "case_b", Status::Skipped))
        );
        assert_eq!(
            one("not ok 2 case_c # SKIP"),
            Some((2, "case_c", Status::Skipped))
        );
        assert_eq!(
            one("ok 4 case_d # TODO later"),
            Some((4, "case_d", Status::Success))
        );
        assert_eq!(one("ok 5 :- case_e"), Some((5, "case_e", Status::Success)));
    }

    #[test]
    fn other_lines_are_no_results() {
        for line in [
            "KTAP version 1",
            "# Subtest: kallsyms_fast",
            "1..7",
            "    # kallsyms_fast_test_core: 4096 addresses, 0 mismatches",
            "ok kallsyms_fast",
            "okay 1 x",
            "ok 1 bad#name",
            "",
        ] {
            assert_eq!(parse_result(line), None, "{line:?}");
        }
    }

    #[test]
    fn suite_verdicts_and_failures() {
        let text = "KTAP version 1\n# Subtest: kallsyms_fast\n1..3\n    ok 1 a\n    \
                    not ok 2 b\n    ok 3 c # SKIP\nnot ok 1 kallsyms_fast\n\
                    ok 1 kallsyms_fast\nok 2 other\n";
        assert_eq!(
            verdicts(text, "kallsyms_fast").collect::<Vec<_>>(),
            [Status::Failure, Status::Success]
        );
        assert_eq!(failures(text), ["b", "kallsyms_fast"]);
        assert!(failures("ok 1 x\n    ok 2 y # SKIP\n").is_empty());
    }
}
