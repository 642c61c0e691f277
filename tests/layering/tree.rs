//! The checked crate as rustc sees it: its module tree, followed from the root through the
//! `mod` declarations, and every path its code writes, resolved to what it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// A module's path from the crate root (empty for the root).
pub(crate) type ModPath = Vec<String>;

/// Source files by path from the package root (`src/lib.rs`, `src/engine/mod.rs`).
pub(crate) type Sources = BTreeMap<String, String>;

/// One module: the file that holds it (its own, or its parent's for an inline `mod x { }`), the
/// modules it declares, and the names its `use` items bring in (name -> path as written).
pub(crate) struct Module {
    pub(crate) file: String,
    pub(crate) children: BTreeSet<String>,
    pub(crate) imports: BTreeMap<String, Vec<String>>,
}

impl Module {
    fn new(file: &str) -> Module {
        Module {
            file: file.to_string(),
            children: BTreeSet::new(),
            imports: BTreeMap::new(),
        }
    }
}

/// A path the code writes: where (file, line, the module it is written in) and what.
pub(crate) struct Ref {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) scope: ModPath,
    pub(crate) segs: Vec<String>,
    /// As written, for messages (`super::super::driver::Driver`, `crate::vocab::*`).
    pub(crate) written: String,
}

/// A crate's module tree, and every path its code writes.
pub(crate) struct Crate {
    pub(crate) modules: BTreeMap<ModPath, Module>,
    /// Each file reached, and the module it holds.
    pub(crate) file_module: BTreeMap<String, ModPath>,
    pub(crate) refs: Vec<Ref>,
    /// Files that do not parse, `mod` declarations without a file, files no `mod` reaches.
    pub(crate) problems: Vec<String>,
}

/// The directory where the files of the modules `file` declares live.
fn mod_dir(file: &str) -> String {
    let path = Path::new(file);
    let parent = path.parent().unwrap().to_string_lossy().to_string();
    let stem = path.file_stem().unwrap().to_string_lossy();
    if ["lib", "main", "mod"].contains(&stem.as_ref()) {
        parent
    } else {
        join(&parent, &stem)
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

pub(crate) fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

impl Crate {
    /// Follows the `mod` declarations from `root` (`src/lib.rs`, `src/main.rs`).
    pub(crate) fn load(sources: &Sources, root: &str) -> Crate {
        let mut c = Crate {
            modules: BTreeMap::new(),
            file_module: BTreeMap::new(),
            refs: Vec::new(),
            problems: Vec::new(),
        };
        c.modules.insert(Vec::new(), Module::new(root));
        let mut queue = vec![(root.to_string(), Vec::new())];
        while let Some((file, path)) = queue.pop() {
            let text = &sources[&file];
            c.file_module.insert(file.clone(), path.clone());
            let ast = match syn::parse_file(text) {
                Ok(ast) => ast,
                Err(e) => {
                    c.problems
                        .push(format!("{file}:{}: {e}", line_of(e.span())));
                    continue;
                }
            };
            let mut collector = Collector {
                krate: &mut c,
                sources,
                queue: &mut queue,
                dir: mod_dir(&file),
                file,
                scope: path,
            };
            collector.visit_file(&ast);
        }
        for f in sources.keys() {
            if f.ends_with(".rs") && !c.file_module.contains_key(f) {
                c.problems.push(format!(
                    "{f}: no `mod` declaration reaches it from {root} (the checks would not see it)"
                ));
            }
        }
        c.problems.sort();
        c
    }

    /// The absolute path (from the crate root) of what `segs`, written in `scope`, names, with
    /// re-exports followed; `None` when it names something outside the crate (the standard
    /// library, a dependency) or an item local to a function.
    pub(crate) fn resolve(&self, scope: &ModPath, segs: &[String]) -> Option<ModPath> {
        self.resolve_at(scope, segs, 0)
    }

    fn resolve_at(&self, scope: &ModPath, segs: &[String], depth: usize) -> Option<ModPath> {
        // Deeper than any real chain of imports: a `use` naming itself.
        if depth > 16 {
            return None;
        }
        let (first, rest) = segs.split_first()?;
        let mut base = match first.as_str() {
            "crate" | "$crate" => Vec::new(),
            "self" => scope.clone(),
            "super" => {
                let mut b = scope.clone();
                b.pop()?;
                b
            }
            name => {
                let module = self.modules.get(scope)?;
                if module.children.contains(name) {
                    let mut b = scope.clone();
                    b.push(name.to_string());
                    b
                } else {
                    let target = module.imports.get(name)?;
                    self.resolve_at(scope, target, depth + 1)?
                }
            }
        };
        let mut rest = rest;
        while let Some((s, tail)) = rest.split_first() {
            match s.as_str() {
                "super" => {
                    base.pop()?;
                }
                "self" => {}
                _ => break,
            }
            rest = tail;
        }
        base.extend(rest.iter().cloned());
        Some(self.follow_reexports(base, depth))
    }

    /// `crate::engine::Pool`, where `engine` imports `Pool` from `engine::lend::bounce`, names
    /// `engine::lend::bounce::Pool`.
    fn follow_reexports(&self, abs: ModPath, depth: usize) -> ModPath {
        for k in 0..abs.len() {
            let prefix = abs[..k].to_vec();
            let Some(module) = self.modules.get(&prefix) else {
                break;
            };
            let name = &abs[k];
            if module.children.contains(name) {
                continue;
            }
            if let Some(target) = module.imports.get(name) {
                if let Some(mut r) = self.resolve_at(&prefix, target, depth + 1) {
                    r.extend(abs[k + 1..].iter().cloned());
                    return r;
                }
            }
            break;
        }
        abs
    }

    /// The file that holds the item at `abs`: the file of its innermost module.
    pub(crate) fn file_of(&self, abs: &[String]) -> &str {
        (0..=abs.len())
            .rev()
            .find_map(|k| self.modules.get(&abs[..k]))
            .map(|m| m.file.as_str())
            .expect("the root module exists")
    }

    /// Top-level modules with a file of their own (an inline module of the root, such as the
    /// test-only `internals`, belongs to the root).
    pub(crate) fn top_modules(&self) -> BTreeSet<String> {
        let root = &self.modules[&Vec::new()];
        root.children
            .iter()
            .filter(|c| {
                self.modules
                    .get(&vec![c.to_string()])
                    .is_some_and(|m| m.file != root.file)
            })
            .cloned()
            .collect()
    }
}

/// Walks one file: declares its modules (queueing their files), records its imports and every
/// path it writes.
struct Collector<'a> {
    krate: &'a mut Crate,
    sources: &'a Sources,
    queue: &'a mut Vec<(String, ModPath)>,
    file: String,
    /// The module being walked (an inline module nests in its file's module).
    scope: ModPath,
    /// Where the files of the modules declared in `scope` live.
    dir: String,
}

impl Collector<'_> {
    fn record(&mut self, segs: Vec<String>, line: usize, written: String) {
        self.krate.refs.push(Ref {
            file: self.file.clone(),
            line,
            scope: self.scope.clone(),
            segs,
            written,
        });
    }

    /// `a::b::c` sequences in a macro's tokens (`tracing::debug!(.., crate::x::f())`); resolving
    /// them later keeps only those that name a module of the crate.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let is_colon = |i: usize, spacing: Option<Spacing>| {
            matches!(tokens.get(i), Some(TokenTree::Punct(p))
                if p.as_char() == ':' && spacing.is_none_or(|s| p.spacing() == s))
        };
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => {
                    self.scan_tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(first) => {
                    // `$crate::x` in a macro definition is `crate::x`.
                    let dollar = i > 0
                        && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
                    let continues = i >= 2 && is_colon(i - 1, None) && is_colon(i - 2, None);
                    let mut segs = vec![if dollar {
                        format!("${first}")
                    } else {
                        first.to_string()
                    }];
                    let mut j = i + 1;
                    while is_colon(j, Some(Spacing::Joint)) && is_colon(j + 1, None) {
                        let Some(TokenTree::Ident(next)) = tokens.get(j + 2) else {
                            break;
                        };
                        segs.push(next.to_string());
                        j += 3;
                    }
                    if segs.len() >= 2 && !continues {
                        let written = segs.join("::");
                        self.record(segs, line_of(first.span()), written);
                    }
                    i = j;
                }
                _ => i += 1,
            }
        }
    }
}

/// One leaf of a `use` tree.
pub(crate) struct UseLeaf {
    /// The full path (`use a::{b::c}` -> `a::b::c`; `use a::{self}` -> `a`; a glob's prefix).
    pub(crate) segs: Vec<String>,
    /// The name it binds in its module: none for a glob, `_` or a keyword (`use super::{self}`).
    pub(crate) bound: Option<String>,
    pub(crate) glob: bool,
    pub(crate) line: usize,
}

impl UseLeaf {
    /// As written, for messages: `a::b::c`, `a::*`.
    pub(crate) fn written(&self) -> String {
        let path = self.segs.join("::");
        if self.glob {
            format!("{path}::*")
        } else {
            path
        }
    }
}

/// A `use` tree with its groups expanded, leaf by leaf.
pub(crate) fn expand_use(tree: &syn::UseTree) -> Vec<UseLeaf> {
    fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
        let leaf = |prefix: &[String], ident: &syn::Ident| {
            let mut segs = prefix.to_vec();
            if ident != "self" {
                segs.push(ident.to_string());
            }
            segs
        };
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let segs = leaf(prefix, &n.ident);
                let bound = segs
                    .last()
                    .filter(|s| !["self", "super", "crate"].contains(&s.as_str()))
                    .cloned();
                out.push(UseLeaf {
                    segs,
                    bound,
                    glob: false,
                    line: line_of(n.ident.span()),
                });
            }
            syn::UseTree::Rename(r) => out.push(UseLeaf {
                segs: leaf(prefix, &r.ident),
                bound: (r.rename != "_").then(|| r.rename.to_string()),
                glob: false,
                line: line_of(r.rename.span()),
            }),
            syn::UseTree::Glob(g) => out.push(UseLeaf {
                segs: prefix.clone(),
                bound: None,
                glob: true,
                line: line_of(g.star_token.span),
            }),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    walk(t, prefix, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let name = m.ident.to_string();
        let mut child = self.scope.clone();
        child.push(name.clone());
        self.krate
            .modules
            .get_mut(&self.scope)
            .expect("the module being walked is declared")
            .children
            .insert(name.clone());
        let line = line_of(m.ident.span());
        if m.attrs.iter().any(|a| a.path().is_ident("path")) {
            self.krate.problems.push(format!(
                "{}:{line}: mod {name}: #[path] is not followed by this check",
                self.file
            ));
            return;
        }
        match &m.content {
            Some((_, items)) => {
                self.krate
                    .modules
                    .insert(child.clone(), Module::new(&self.file));
                let scope = std::mem::replace(&mut self.scope, child);
                let inner = join(&self.dir, &name);
                let dir = std::mem::replace(&mut self.dir, inner);
                for item in items {
                    self.visit_item(item);
                }
                self.scope = scope;
                self.dir = dir;
            }
            None => {
                let flat = format!("{}.rs", join(&self.dir, &name));
                let nested = join(&join(&self.dir, &name), "mod.rs");
                let found: Vec<&String> = [&flat, &nested]
                    .into_iter()
                    .filter(|f| self.sources.contains_key(*f))
                    .collect();
                match found[..] {
                    [f] => {
                        self.krate.modules.insert(child.clone(), Module::new(f));
                        self.queue.push((f.clone(), child));
                    }
                    [] => self.krate.problems.push(format!(
                        "{}:{line}: mod {name}: neither {flat} nor {nested} exists",
                        self.file
                    )),
                    _ => self.krate.problems.push(format!(
                        "{}:{line}: mod {name}: both {flat} and {nested} exist",
                        self.file
                    )),
                }
            }
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if u.leading_colon.is_some() {
            return; // `use ::dependency::x`: outside the crate.
        }
        for leaf in expand_use(&u.tree) {
            let written = leaf.written();
            if let Some(name) = leaf.bound {
                self.krate
                    .modules
                    .get_mut(&self.scope)
                    .expect("the module being walked is declared")
                    .imports
                    .insert(name, leaf.segs.clone());
            }
            self.record(leaf.segs, leaf.line, written);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() && p.segments.len() >= 2 {
            let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            let written = segs.join("::");
            self.record(segs, line_of(p.segments[0].ident.span()), written);
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.scan_tokens(m.tokens.clone());
        visit::visit_macro(self, m);
    }
}

/// Every `.rs` file under `dir`, keyed by its path from the package root.
pub(crate) fn read_tree(package: &Path, dir: &str) -> Sources {
    fn walk(package: &Path, dir: &Path, out: &mut Sources) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(package, &p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let key = p
                    .strip_prefix(package)
                    .unwrap()
                    .to_string_lossy()
                    .to_string();
                out.insert(key, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = Sources::new();
    walk(package, &package.join(dir), &mut out);
    out
}
