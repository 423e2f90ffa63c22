//! docs/ARCHITECTURE.md as the architecture test reads it: the crate
//! table of "The crate map" and the table of "Layers inside crates".

use std::collections::BTreeSet;

use crate::code::Workspace;

/// One row of the crate table.
#[derive(Debug)]
pub struct CrateRow {
    pub name: String,
    pub dir: String,
    /// The workspace crates it depends on, by package name.
    pub deps: BTreeSet<String>,
}

/// What the page states.
#[derive(Debug)]
pub struct Page {
    /// From the bottom layer up, as the page lists them.
    pub crates: Vec<CrateRow>,
    /// (package name, its top-level modules' layers, top first).
    pub layers: Vec<(String, Vec<Vec<String>>)>,
}

/// The cells of the rows of the first table after the heading `heading`
/// (the header row and the rule left out).
fn table_after(text: &str, heading: &str) -> Result<Vec<Vec<String>>, String> {
    let mut lines = text.lines().skip_while(|l| l.trim() != heading);
    if lines.next().is_none() {
        return Err(format!("no heading {heading:?}"));
    }
    let rows: Vec<Vec<String>> = lines
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    if rows.len() < 3 {
        return Err(format!("no table with rows under {heading:?}"));
    }
    Ok(rows[2..].to_vec())
}

/// The text between the first pair of backticks of `cell`.
fn quoted(cell: &str) -> Option<String> {
    let rest = cell.split_once('`')?.1;
    Some(rest.split_once('`')?.0.to_string())
}

/// Every text between backticks in `cell`.
fn all_quoted(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// `wire` → `pktlab-wire`; `pktlab` stays.
fn package(short: &str) -> String {
    if short == "pktlab" {
        short.to_string()
    } else {
        format!("pktlab-{short}")
    }
}

impl Page {
    pub fn parse(text: &str) -> Result<Page, String> {
        let mut crates = Vec::new();
        for row in table_after(text, "## The crate map")? {
            let [name, dir, _job, deps] = row.as_slice() else {
                return Err(format!(
                    "a crate table row has {} cells, not 4: {row:?}",
                    row.len()
                ));
            };
            let name = quoted(name).ok_or(format!("no `crate` in {name:?}"))?;
            let dir = quoted(dir).ok_or(format!("no `folder` in {dir:?}"))?;
            let deps = if deps == "nothing" {
                BTreeSet::new()
            } else {
                deps.split(',').map(|d| package(d.trim())).collect()
            };
            crates.push(CrateRow { name, dir, deps });
        }
        let mut layers = Vec::new();
        for row in table_after(text, "## Layers inside crates")? {
            let [name, stack] = row.as_slice() else {
                return Err(format!(
                    "a layers table row has {} cells, not 2: {row:?}",
                    row.len()
                ));
            };
            let name = quoted(name).ok_or(format!("no `crate` in {name:?}"))?;
            let stack = stack.split(" > ").map(all_quoted).collect();
            layers.push((name, stack));
        }
        Ok(Page { crates, layers })
    }
}

/// Where the crate table and the manifests differ.
pub fn crate_table_problems(page: &Page, ws: &Workspace) -> Vec<String> {
    let mut problems = Vec::new();
    for c in &ws.crates {
        let Some(row) = page.crates.iter().find(|r| r.name == c.name) else {
            problems.push(format!(
                "{} ({}) is missing from the crate table",
                c.name,
                c.dir.display()
            ));
            continue;
        };
        if row.dir != c.dir.to_string_lossy() {
            problems.push(format!(
                "the crate table puts {} in {}, its Cargo.toml is in {}",
                c.name,
                row.dir,
                c.dir.display()
            ));
        }
        for d in c.deps.difference(&row.deps) {
            problems.push(format!(
                "{} depends on {d} ({}/Cargo.toml), which the crate table does not allow",
                c.name,
                c.dir.display()
            ));
        }
        for d in row.deps.difference(&c.deps) {
            problems.push(format!(
                "the crate table says {} depends on {d}; its Cargo.toml does not",
                c.name
            ));
        }
    }
    for (i, row) in page.crates.iter().enumerate() {
        if !ws.crates.iter().any(|c| c.name == row.name) {
            problems.push(format!(
                "the crate table lists {}, which is no crate of the workspace",
                row.name
            ));
        }
        let below: BTreeSet<&String> = page.crates[..i].iter().map(|r| &r.name).collect();
        for d in row.deps.iter().filter(|d| !below.contains(d)) {
            problems.push(format!(
                "{} depends on {d}, which the crate table does not list above it (upward)",
                row.name
            ));
        }
    }
    problems
}

/// The imports between a crate's top-level modules that go against the
/// layers the page states.
pub fn layer_problems(page: &Page, ws: &Workspace) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, stack) in &page.layers {
        let Some(c) = ws.crates.iter().find(|c| &c.name == name) else {
            problems.push(format!(
                "the layers table lists {name}, which is no crate of the workspace"
            ));
            continue;
        };
        let layer_of = |m: &str| stack.iter().position(|l| l.iter().any(|x| x == m));
        let top_level: BTreeSet<&String> = c
            .modules
            .keys()
            .filter(|p| p.len() == 1)
            .map(|p| &p[0])
            .collect();
        for m in &top_level {
            if layer_of(m).is_none() {
                problems.push(format!(
                    "module {m} of {name} is in no layer of the layers table"
                ));
            }
        }
        for m in stack.iter().flatten() {
            if !top_level.contains(m) {
                problems.push(format!(
                    "the layers table lists module {m} of {name}, which has none"
                ));
            }
        }
        // One problem per file and module it imports from: the first line.
        let mut said = BTreeSet::new();
        for e in ws.edges(c) {
            let (from, to) = (c.module_of(&e.from), c.module_of(&e.to));
            let (Some(f), Some(t)) = (from.first(), to.first()) else {
                continue;
            };
            if f == t {
                continue;
            }
            if let (Some(lf), Some(lt)) = (layer_of(f), layer_of(t)) {
                if lf >= lt && said.insert((e.from.clone(), t.clone())) {
                    problems.push(format!(
                        "{}:{} imports {} from module {t}, which the layers table puts {} module {f} of {name}",
                        e.from.display(),
                        e.line,
                        e.path,
                        if lf == lt { "beside" } else { "above" }
                    ));
                }
            }
        }
    }
    problems
}
