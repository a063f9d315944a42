//! The documents say what the code does: the man page and the README
//! list exactly the format specifiers nps refuses.

use nps::render::known::KNOWN;
use nps::render::spec::{by_printer, one_spec};

/// The specifiers ps knows and nps cannot print.
fn refused() -> Vec<&'static str> {
    KNOWN
        .iter()
        .filter(|k| one_spec(k.spec, None).is_none() && by_printer(k, None).is_none())
        .map(|k| k.spec)
        .collect()
}

/// The words between `start` and `end` in `text`.
fn listed<'a>(text: &'a str, start: &str, end: &str) -> Vec<&'a str> {
    let from = text.find(start).expect("the list's start") + start.len();
    let to = from + text[from..].find(end).expect("the list's end");
    text[from..to].split_whitespace().collect()
}

#[test]
fn the_man_page_lists_the_refused_specifiers() {
    let man = include_str!("../nps.1");
    let words = listed(man, "The format specifiers\n", ", and sorting by");
    assert_eq!(words, refused());
}

#[test]
fn the_readme_lists_the_refused_specifiers() {
    let readme = include_str!("../README.md");
    let words: Vec<&str> = listed(readme, "Format specifiers (", ")")
        .iter()
        .map(|w| w.trim_matches(|c| c == '`' || c == ',' || c == ':'))
        .filter(|w| !w.is_empty())
        .collect();
    assert_eq!(
        words.len(),
        1,
        "the README gives the count first: {words:?}"
    );
    let list = listed(readme, "refused specifiers:\n", "\n\n");
    let list: Vec<&str> = list.iter().map(|w| w.trim_matches('`')).collect();
    assert_eq!(words[0].parse::<usize>().ok(), Some(refused().len()));
    assert_eq!(list, refused());
}

/// The README's install lines put the manual where `man nps` looks: in a
/// `man1` directory under `share/man`, as the file the man page is, whose
/// `.TH` names it `NPS`, section 1.
#[test]
fn the_readme_installs_the_man_page_where_man_finds_it() {
    let readme = include_str!("../README.md");
    let lines: Vec<&str> = readme
        .lines()
        .filter(|l| l.contains("install -Dm644"))
        .collect();
    assert!(!lines.is_empty(), "the README installs the man page");
    for l in lines {
        let words: Vec<&str> = l.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "-Dm644").expect("-Dm644");
        assert_eq!(words[at + 1], "nproc/client/nps.1", "{l}");
        assert!(
            words[at + 2]
                .trim_matches('"')
                .ends_with("/share/man/man1/nps.1"),
            "{l}"
        );
    }
    let man = include_str!("../nps.1");
    assert!(man.starts_with(".TH NPS 1 \""), "{}", &man[..40]);
    for option in [".BR \\-\\-source ", ".B \\-\\-fields\n"] {
        assert!(man.contains(option), "the man page documents {option}");
    }
}
