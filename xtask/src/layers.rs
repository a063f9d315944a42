//! The module graph of xtask has no circle: a module reaches only modules
//! below it (commands over the harness library, the library over `env`
//! and `run`). The test reads the sources: a `crate::m` path or a
//! `use crate::{m, ...}` group in a module's non-test code is an edge.
//! Unit-test modules at the end of a file are not counted (a test may
//! use anything).

#![cfg(test)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Module name -> the crate modules its code names.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The code of a file without comments and without its trailing
/// `#[cfg(test)] mod tests`.
fn code(text: &str) -> String {
    let body = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    body.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level names a `use crate::{...}` group or a `crate::` path
/// refers to.
fn edges(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(item.trim()));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            out.insert(ident(item.trim()));
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

fn graph(src: &Path) -> Graph {
    let mut g = Graph::new();
    let mut visit = |module: String, path: &Path| {
        let text = fs::read_to_string(path).unwrap();
        g.entry(module).or_default().extend(edges(&code(&text)));
    };
    for e in fs::read_dir(src).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_some_and(|x| x == "rs") {
            visit(name, &path);
        } else if path.is_dir() && name != "bin" {
            for f in fs::read_dir(&path).unwrap() {
                visit(name.clone(), &f.unwrap().path());
            }
        }
    }
    let modules: BTreeSet<String> = g.keys().cloned().collect();
    for (m, deps) in g.iter_mut() {
        deps.retain(|d| modules.contains(d) && d != m && d != "main");
    }
    g
}

/// A circle in `g`, if there is one, as the path that closes it.
fn circle(g: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn walk(
        g: &Graph,
        m: &str,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(m) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = path.iter().position(|p| p == m).unwrap_or(0);
                let mut c = path[from..].to_vec();
                c.push(m.to_string());
                return Some(c);
            }
            None => {}
        }
        marks.insert(m.to_string(), Mark::Open);
        path.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = walk(g, d, marks, path) {
                return Some(c);
            }
        }
        path.pop();
        marks.insert(m.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    g.keys()
        .find_map(|m| walk(g, m, &mut marks, &mut Vec::new()))
}

#[test]
fn the_module_graph_has_no_circle() {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(g.len() > 30, "read {} modules only", g.len());
    assert!(
        g["fast"].contains("kernel"),
        "edges are read: {:?}",
        g["fast"]
    );
    if let Some(c) = circle(&g) {
        panic!("xtask modules in a circle: {}", c.join(" -> "));
    }
}

#[test]
fn a_circle_is_found_and_named() {
    let g: Graph = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
        .iter()
        .map(|(m, d)| (m.to_string(), BTreeSet::from([d.to_string()])))
        .collect();
    assert_eq!(circle(&g).unwrap(), ["a", "b", "c", "a"]);
    let edges = edges("use crate::{env, patches::input::{a, b}, Result};\nx = crate::fast::run();");
    assert_eq!(
        edges.into_iter().collect::<Vec<_>>(),
        ["env", "fast", "patches"]
    );
}
