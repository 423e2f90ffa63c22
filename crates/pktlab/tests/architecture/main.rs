//! The architecture test: docs/ARCHITECTURE.md against the code.
//!
//! - The crate table ("The crate map") lists every crate of the workspace
//!   and, for each, exactly the workspace crates its `Cargo.toml`
//!   `[dependencies]` name; a crate depends only on crates in rows above
//!   its own.
//! - No crate holds more than a fifth of the workspace's production lines.
//! - Inside a crate, no file imports a file of a module that encloses its
//!   own (upward) and no files import each other in a circle.
//! - Where the page states the layers of a crate's modules ("Layers inside
//!   crates"), a module imports only modules of lower layers.
//! - No production function is longer than 120 lines; the binary does not
//!   grow past its ratchet ([`MAX_BINARY_LINES`]); each results file's
//!   name is a string in one production file, the one that writes it.
//!
//! Production code only: `#[cfg(test)]` items are left out
//! (`code.rs`).

mod code;
mod page;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use code::{Crate, Edge, Workspace};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace")
}

fn workspace() -> Workspace {
    Workspace::load(&root())
}

fn architecture_page() -> page::Page {
    let path = root().join("docs/ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).expect("docs/ARCHITECTURE.md");
    page::Page::parse(&text).unwrap_or_else(|e| panic!("docs/ARCHITECTURE.md: {e}"))
}

/// Fails with every problem, one a line.
fn fail_on(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "\n{}\n",
        problems
            .iter()
            .map(|p| format!("- {p}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_crate_table_is_the_manifests() {
    let ws = workspace();
    let page = architecture_page();
    fail_on(page::crate_table_problems(&page, &ws));
}

#[test]
fn no_crate_holds_more_than_a_fifth_of_the_lines() {
    let ws = workspace();
    let total: usize = ws.crates.iter().map(|c| ws.lines_of(c)).sum();
    let problems = ws
        .crates
        .iter()
        .filter(|c| ws.lines_of(c) * 5 > total)
        .map(|c| {
            format!(
                "{} holds {} of the workspace's {total} production lines, more than a fifth",
                c.name,
                ws.lines_of(c)
            )
        })
        .collect();
    fail_on(problems);
}

#[test]
fn no_file_imports_upward_or_in_a_circle() {
    let ws = workspace();
    let mut problems = Vec::new();
    for c in &ws.crates {
        let edges = ws.edges(c);
        // One problem per file and file it imports from: the first line.
        let mut said = BTreeSet::new();
        for e in &edges {
            if is_upward(c, e) && said.insert((&e.from, &e.to)) {
                problems.push(format!(
                    "{}:{} imports {} from {}, a module enclosing its own (upward)",
                    e.from.display(),
                    e.line,
                    e.path,
                    e.to.display()
                ));
            }
        }
        if let Some(circle) = find_circle(&edges) {
            problems.push(format!(
                "{}: files import each other in a circle: {}",
                c.name,
                circle
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" -> ")
            ));
        }
    }
    fail_on(problems);
}

#[test]
fn modules_keep_the_layers_the_page_states() {
    let ws = workspace();
    let page = architecture_page();
    fail_on(page::layer_problems(&page, &ws));
}

/// True when `e` goes from a file to the file of a module that encloses
/// the file's own module (`super::X`, `crate::X` defined in `lib.rs`).
fn is_upward(c: &Crate, e: &Edge) -> bool {
    let from = c.module_of(&e.from);
    let to = c.module_of(&e.to);
    to.len() < from.len() && from.starts_with(&to)
}

/// One circle of imports among files, first file repeated last; None
/// when there is none.
pub fn find_circle(edges: &[Edge]) -> Option<Vec<PathBuf>> {
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for e in edges {
        graph
            .entry(e.from.clone())
            .or_default()
            .insert(e.to.clone());
    }
    circle_in(&graph)
}

/// A circle in a directed graph (depth-first, colouring), as its nodes.
pub fn circle_in<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Option<Vec<N>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Colour {
        White,
        Grey,
        Black,
    }
    fn visit<N: Ord + Clone>(
        n: &N,
        graph: &BTreeMap<N, BTreeSet<N>>,
        colour: &mut BTreeMap<N, Colour>,
        stack: &mut Vec<N>,
    ) -> Option<Vec<N>> {
        colour.insert(n.clone(), Colour::Grey);
        stack.push(n.clone());
        for next in graph.get(n).into_iter().flatten() {
            match colour.get(next).copied().unwrap_or(Colour::White) {
                Colour::Grey => {
                    let at = stack.iter().position(|s| s == next).expect("on the stack");
                    let mut circle = stack[at..].to_vec();
                    circle.push(next.clone());
                    return Some(circle);
                }
                Colour::White => {
                    if let Some(c) = visit(next, graph, colour, stack) {
                        return Some(c);
                    }
                }
                Colour::Black => {}
            }
        }
        stack.pop();
        colour.insert(n.clone(), Colour::Black);
        None
    }
    let mut colour = BTreeMap::new();
    for n in graph.keys() {
        if colour.get(n).copied().unwrap_or(Colour::White) == Colour::White {
            if let Some(c) = visit(n, graph, &mut colour, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn a_circle_is_found_and_a_tree_is_not() {
    let g = |edges: &[(u8, u8)]| {
        let mut m: BTreeMap<u8, BTreeSet<u8>> = BTreeMap::new();
        for (a, b) in edges {
            m.entry(*a).or_default().insert(*b);
        }
        m
    };
    assert_eq!(circle_in(&g(&[(1, 2), (2, 3), (1, 3)])), None);
    assert_eq!(
        circle_in(&g(&[(1, 2), (2, 3), (3, 4), (4, 2)])),
        Some(vec![2, 3, 4, 2])
    );
}

/// The longest a production function may be, in lines.
const MAX_FUNCTION_LINES: usize = 120;

#[test]
fn functions_fit_on_a_screen() {
    let ws = workspace();
    let mut problems = Vec::new();
    for (file, facts) in &ws.files {
        for (name, line, len) in &facts.functions {
            if *len > MAX_FUNCTION_LINES {
                problems.push(format!(
                    "{}:{line}: fn {name} is {len} lines long, more than {MAX_FUNCTION_LINES}",
                    file.display()
                ));
            }
        }
    }
    fail_on(problems);
}

/// The most production lines the binary may hold: it turns arguments into
/// calls and events into text, the libraries do the work. A ratchet, a
/// little above today's count: the aim is 2,500; what is left is mostly
/// clap's argument types and their help, their conversion into the
/// libraries' options, and the display of a campaign's events
/// (docs/ARCHITECTURE.md).
const MAX_BINARY_LINES: usize = 3060;

#[test]
fn the_binary_is_thin() {
    let ws = workspace();
    let lines = ws.lines_of(ws.krate("pktlab"));
    assert!(
        lines <= MAX_BINARY_LINES,
        "crates/pktlab holds {lines} production lines, more than {MAX_BINARY_LINES}: \
         move the work into the library that owns it"
    );
}

/// The files of a results folder, each named in one production file: the
/// one that writes it.
const RESULTS_FILES: &[&str] = &[
    "campaign.toml",
    "env.json",
    "rfc2544-settings.json",
    "summary.json",
    "trials.jsonl",
    "rfc2544.json",
    "rfc9693.json",
    "latency-histograms.jsonl",
    "ministat.txt",
    "sweep.txt",
    "runs.csv",
    "report.html",
];

#[test]
fn each_results_file_is_named_in_one_file() {
    let ws = workspace();
    let mut problems = Vec::new();
    for name in RESULTS_FILES {
        let files: Vec<String> = ws
            .files
            .iter()
            .filter(|(_, f)| f.strings.iter().any(|s| s == name))
            .map(|(p, _)| p.display().to_string())
            .collect();
        if files.len() != 1 {
            problems.push(format!(
                "{name} is named as a string in {} production files, not 1: {}",
                files.len(),
                files.join(", ")
            ));
        }
    }
    fail_on(problems);
}
