//! The workspace's production code as the architecture checks see it:
//! each crate's manifest, its module tree (from `lib.rs` or `main.rs`
//! through every `mod` not under `#[cfg(test)]`), the imports between its
//! files, its functions' lengths, its string literals and its lines.
//!
//! Code under `#[cfg(test)]` is left out everywhere: it is not production
//! code, and a test module may use whatever it tests.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// One crate of the workspace.
#[derive(Debug)]
pub struct Crate {
    /// The package name (`pktlab-wire`).
    pub name: String,
    /// Its folder, relative to the workspace (`crates/wire`).
    pub dir: PathBuf,
    /// The workspace crates of its `[dependencies]`, by package name.
    pub deps: BTreeSet<String>,
    /// Every module, by its path from the crate root (`[]` is the root).
    pub modules: BTreeMap<Vec<String>, Module>,
}

/// One module: its file and what it defines, imports and calls.
#[derive(Debug, Default)]
pub struct Module {
    /// Relative to the workspace (`crates/wire/src/frame.rs`); an inline
    /// module shares its parent's file.
    pub file: PathBuf,
    pub children: BTreeSet<String>,
    /// `use` bindings at module level: name → the path as written.
    pub uses: HashMap<String, Vec<String>>,
}

/// What one file holds.
#[derive(Debug, Default)]
pub struct FileFacts {
    /// Production lines: the file's lines less those of `#[cfg(test)]` items.
    pub lines: usize,
    /// (function name, first line, lines) of every production function.
    pub functions: Vec<(String, usize, usize)>,
    /// Every path that may name something of this crate: (the module it
    /// is written in, its segments, its line).
    pub paths: Vec<(Vec<String>, Vec<String>, usize)>,
    /// The string literals of its code (not of its attributes).
    pub strings: Vec<String>,
}

/// The whole workspace.
#[derive(Debug)]
pub struct Workspace {
    pub crates: Vec<Crate>,
    pub files: BTreeMap<PathBuf, FileFacts>,
}

/// An import of one file by another, with where it is written.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: PathBuf,
    pub to: PathBuf,
    pub line: usize,
    pub path: String,
}

/// True for `#[cfg(test)]` (and `#[cfg(all(test, ...))]`).
pub fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| match &a.meta {
        syn::Meta::List(l) if l.path.is_ident("cfg") => l
            .tokens
            .to_string()
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w == "test"),
        _ => false,
    })
}

impl Workspace {
    /// Reads every crate under `root/crates`.
    pub fn load(root: &Path) -> Workspace {
        let mut crates = Vec::new();
        let mut files = BTreeMap::new();
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
            .expect("crates/")
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("Cargo.toml").is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            let rel = dir.strip_prefix(root).unwrap().to_path_buf();
            crates.push(load_crate(root, &rel, &mut files));
        }
        Workspace { crates, files }
    }

    pub fn krate(&self, name: &str) -> &Crate {
        self.crates
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no crate {name}"))
    }

    /// Production lines of a crate.
    pub fn lines_of(&self, c: &Crate) -> usize {
        c.files().iter().map(|f| self.files[f].lines).sum()
    }

    /// Every import between two files of crate `c`.
    pub fn edges(&self, c: &Crate) -> Vec<Edge> {
        let mut out = BTreeSet::new();
        for file in c.files() {
            for (module, segs, line) in &self.files[&file].paths {
                let Some(target) = c.resolve(module, segs, 0) else {
                    continue;
                };
                let to = c.modules[&target].file.clone();
                if to != file {
                    out.insert(Edge {
                        from: file.clone(),
                        to,
                        line: *line,
                        path: segs.join("::"),
                    });
                }
            }
        }
        out.into_iter().collect()
    }
}

impl Crate {
    /// Its files, each once.
    pub fn files(&self) -> Vec<PathBuf> {
        let set: BTreeSet<PathBuf> = self.modules.values().map(|m| m.file.clone()).collect();
        set.into_iter().collect()
    }

    /// The module path of the file (the outermost module it holds).
    pub fn module_of(&self, file: &Path) -> Vec<String> {
        self.modules
            .iter()
            .filter(|(_, m)| m.file == file)
            .map(|(p, _)| p.clone())
            .min_by_key(Vec::len)
            .expect("a file of the crate")
    }

    /// The module whose file defines what `segs`, written in `from`,
    /// names; None when it names nothing of this crate.
    pub fn resolve(&self, from: &[String], segs: &[String], depth: usize) -> Option<Vec<String>> {
        if depth > 16 || segs.is_empty() {
            return None;
        }
        let (mut cur, mut rest): (Vec<String>, &[String]) = match segs[0].as_str() {
            "crate" => (Vec::new(), &segs[1..]),
            "self" => (from.to_vec(), &segs[1..]),
            "super" => {
                let mut cur = from.to_vec();
                let mut rest = segs;
                while rest.first().map(String::as_str) == Some("super") {
                    cur.pop()?;
                    rest = &rest[1..];
                }
                (cur, rest)
            }
            first => {
                let m = self.modules.get(from)?;
                if !m.children.contains(first) && !m.uses.contains_key(first) {
                    return None;
                }
                (from.to_vec(), segs)
            }
        };
        loop {
            let Some(s) = rest.first() else {
                return Some(cur);
            };
            let m = &self.modules[&cur];
            if m.children.contains(s) {
                cur.push(s.clone());
                rest = &rest[1..];
                continue;
            }
            if let Some(target) = m.uses.get(s) {
                let mut t = target.clone();
                t.extend(rest[1..].iter().cloned());
                // A binding of something outside the crate names nothing
                // of it.
                return self.resolve(&cur, &t, depth + 1);
            }
            return Some(cur);
        }
    }
}

fn load_crate(root: &Path, dir: &Path, files: &mut BTreeMap<PathBuf, FileFacts>) -> Crate {
    let manifest: toml::Table = std::fs::read_to_string(root.join(dir).join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let name = manifest["package"]["name"].as_str().unwrap().to_string();
    let deps = manifest
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|t| {
            t.keys()
                .filter(|k| k.starts_with("pktlab-"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let src = dir.join("src");
    let rootfile = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|f| root.join(f).is_file())
        .unwrap_or_else(|| panic!("{} has neither lib.rs nor main.rs", src.display()));
    let mut c = Crate {
        name,
        dir: dir.to_path_buf(),
        deps,
        modules: BTreeMap::new(),
    };
    load_file(root, &mut c, files, Vec::new(), rootfile);
    c
}

/// Where `mod name;` of a module in `file` is.
fn child_file(root: &Path, file: &Path, name: &str) -> PathBuf {
    let stem = file.file_stem().unwrap().to_string_lossy();
    let dir = if ["lib", "main", "mod"].contains(&stem.as_ref()) {
        file.parent().unwrap().to_path_buf()
    } else {
        file.with_extension("")
    };
    let flat = dir.join(format!("{name}.rs"));
    if root.join(&flat).is_file() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

fn load_file(
    root: &Path,
    c: &mut Crate,
    files: &mut BTreeMap<PathBuf, FileFacts>,
    module: Vec<String>,
    file: PathBuf,
) {
    let text = std::fs::read_to_string(root.join(&file))
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut facts = FileFacts {
        lines: text.lines().count(),
        ..FileFacts::default()
    };
    let mut pending = Vec::new();
    walk_items(&ast.items, &module, &file, c, &mut facts, &mut pending);
    files.insert(file.clone(), facts);
    for (m, name) in pending {
        let f = child_file(root, &c.modules[&m].file.clone(), &name);
        let mut path = m.clone();
        path.push(name);
        load_file(root, c, files, path, f);
    }
}

/// Records the module `module` (in `file`) and its items.
fn walk_items(
    items: &[syn::Item],
    module: &[String],
    file: &Path,
    c: &mut Crate,
    facts: &mut FileFacts,
    pending: &mut Vec<(Vec<String>, String)>,
) {
    c.modules.insert(
        module.to_vec(),
        Module {
            file: file.to_path_buf(),
            ..Module::default()
        },
    );
    for item in items {
        if is_cfg_test(item_attrs(item)) {
            let span = item.span();
            facts.lines -= span.end().line - span.start().line + 1;
            continue;
        }
        match item {
            syn::Item::Mod(m) => {
                let name = m.ident.to_string();
                c.modules
                    .get_mut(module)
                    .unwrap()
                    .children
                    .insert(name.clone());
                let mut path = module.to_vec();
                path.push(name.clone());
                match &m.content {
                    Some((_, inner)) => walk_items(inner, &path, file, c, facts, pending),
                    None => pending.push((module.to_vec(), name)),
                }
            }
            syn::Item::Use(u) => {
                let mut leaves = Vec::new();
                use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
                let m = c.modules.get_mut(module).unwrap();
                for (binding, path) in leaves {
                    let line = u.span().start().line;
                    facts.paths.push((module.to_vec(), path.clone(), line));
                    if let Some(b) = binding {
                        m.uses.insert(b, path);
                    }
                }
            }
            other => {
                let mut v = Visitor {
                    module: module.to_vec(),
                    facts,
                };
                v.visit_item(other);
            }
        }
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The leaves of a `use` tree: (the name bound, or None for a glob; the
/// path).
fn use_leaves(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Option<String>, Vec<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                out.push((prefix.last().cloned(), prefix.clone()));
            } else {
                let mut p = prefix.clone();
                p.push(name.clone());
                out.push((Some(name), p));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut p = prefix.clone();
            if r.ident != "self" {
                p.push(r.ident.to_string());
            }
            out.push((Some(r.rename.to_string()), p));
        }
        syn::UseTree::Glob(_) => out.push((None, prefix.clone())),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_leaves(t, prefix, out);
            }
        }
    }
}

/// Collects the paths, functions and strings of the production items of
/// one module.
struct Visitor<'a> {
    module: Vec<String>,
    facts: &'a mut FileFacts,
}

impl Visitor<'_> {
    fn function(&mut self, name: &syn::Ident, sig: &syn::Signature, block: &syn::Block) {
        let first = sig.fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        self.facts
            .functions
            .push((name.to_string(), first, last - first + 1));
    }

    fn tokens(&mut self, tokens: &TokenStream) {
        // Paths and strings inside macro calls: `format!`, `matches!`, ...
        if let Ok(exprs) = syn::parse::Parser::parse2(
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
            tokens.clone(),
        ) {
            for e in &exprs {
                self.visit_expr(e);
            }
            return;
        }
        for t in tokens.clone() {
            match t {
                TokenTree::Literal(l) => {
                    if let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string()) {
                        self.facts.strings.push(s.value());
                    }
                }
                TokenTree::Group(g) => self.tokens(&g.stream()),
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    /// `pub(crate)`, `pub(super)`: no import.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if is_cfg_test(&f.attrs) {
            return;
        }
        self.function(&f.sig.ident, &f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_cfg_test(&f.attrs) {
            return;
        }
        self.function(&f.sig.ident, &f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(&f.sig.ident, &f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p.span().start().line;
        self.facts.paths.push((self.module.clone(), segs, line));
        syn::visit::visit_path(self, p);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // A `use` inside a function: an import of its own.
        let mut leaves = Vec::new();
        use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
        for (_, path) in leaves {
            self.facts
                .paths
                .push((self.module.clone(), path, u.span().start().line));
        }
    }

    fn visit_lit_str(&mut self, s: &'ast syn::LitStr) {
        self.facts.strings.push(s.value());
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(&m.tokens);
    }
}
