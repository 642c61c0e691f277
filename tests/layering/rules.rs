//! The rules checked on a crate: its layers, its `unsafe` and exported symbols, its public
//! surface, and what the tool may name of the library.

use proc_macro2::{TokenStream, TokenTree};

use super::tree::{expand_use, line_of, Crate, Sources};

fn layer_of(layers: &[&[&str]], module: &str) -> Option<usize> {
    layers.iter().position(|row| row.contains(&module))
}

/// Every path that names a top-level module not below the module of the file writing it.
pub(crate) fn layering_violations(c: &Crate, layers: &[&[&str]]) -> Vec<String> {
    let tops = c.top_modules();
    let root_children = &c.modules[&Vec::new()].children;
    let mut out = Vec::new();
    for r in &c.refs {
        let Some(own) = c.file_module[&r.file].first() else {
            continue; // The crate root declares and re-exports everything.
        };
        let Some(own_layer) = layer_of(layers, own) else {
            continue; // Reported by `table_problems`.
        };
        let Some(abs) = c.resolve(&r.scope, &r.segs) else {
            continue;
        };
        let Some(target) = abs.first() else {
            continue;
        };
        if target == own || !root_children.contains(target) {
            continue; // Its own module, or an item of the root (an exported macro).
        }
        let below =
            tops.contains(target) && layer_of(layers, target).is_some_and(|l| l > own_layer);
        if !below {
            out.push(format!(
                "{}:{}: {} names crate::{target}, which is not below {own}",
                r.file, r.line, r.written
            ));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The layer table against the top-level modules: each has a row, each row names one.
pub(crate) fn table_problems(c: &Crate, layers: &[&[&str]]) -> Vec<String> {
    let tops = c.top_modules();
    let mut out: Vec<String> = tops
        .iter()
        .filter(|m| layer_of(layers, m).is_none())
        .map(|m| format!("{m}: module without a layer (add it to LAYERS)"))
        .collect();
    for m in layers.iter().flat_map(|row| row.iter()) {
        if !tops.contains(*m) {
            out.push(format!("LAYERS names {m}, which src/ lacks"));
        }
    }
    out
}

/// Every `(line, identifier)` of a file's tokens (comments and literals are not identifiers).
fn identifiers(text: &str) -> Vec<(usize, String)> {
    fn walk(ts: TokenStream, out: &mut Vec<(usize, String)>) {
        for t in ts {
            match t {
                TokenTree::Group(g) => walk(g.stream(), out),
                TokenTree::Ident(i) => out.push((line_of(i.span()), i.to_string())),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(text.parse().expect("the file was parsed already"), &mut out);
    out
}

/// Identifiers that may appear only in some places.
pub(crate) struct Confined {
    pub(crate) names: &'static [&'static str],
    /// Files, or directories (ending in `/`).
    pub(crate) places: &'static [&'static str],
}

/// For each rule and file outside its places, the first of its identifiers the file has.
pub(crate) fn confined_violations(c: &Crate, sources: &Sources, rules: &[Confined]) -> Vec<String> {
    let mut out = Vec::new();
    for f in c.file_module.keys() {
        let ids = identifiers(&sources[f]);
        for rule in rules {
            if rule
                .places
                .iter()
                .any(|p| f == p || (p.ends_with('/') && f.starts_with(p)))
            {
                continue;
            }
            if let Some((line, name)) = ids.iter().find(|(_, i)| rule.names.contains(&i.as_str())) {
                out.push(format!(
                    "{f}:{line}: `{name}` outside {}",
                    rule.places.join(", ")
                ));
            }
        }
    }
    out
}

/// What a crate root makes public at its top level: `(cfg, item)`, one per `pub use` leaf.
pub(crate) fn public_items(root: &syn::File) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    for item in &root.items {
        let (attrs, vis, names): (_, _, Vec<String>) = match item {
            syn::Item::Mod(m) => (&m.attrs, &m.vis, vec![m.ident.to_string()]),
            syn::Item::Use(u) => {
                let names = expand_use(&u.tree).iter().map(|l| l.written()).collect();
                (&u.attrs, &u.vis, names)
            }
            syn::Item::Fn(f) => (&f.attrs, &f.vis, vec![f.sig.ident.to_string()]),
            syn::Item::Struct(s) => (&s.attrs, &s.vis, vec![s.ident.to_string()]),
            syn::Item::Enum(e) => (&e.attrs, &e.vis, vec![e.ident.to_string()]),
            syn::Item::Type(t) => (&t.attrs, &t.vis, vec![t.ident.to_string()]),
            syn::Item::Const(k) => (&k.attrs, &k.vis, vec![k.ident.to_string()]),
            syn::Item::Static(s) => (&s.attrs, &s.vis, vec![s.ident.to_string()]),
            syn::Item::Trait(t) => (&t.attrs, &t.vis, vec![t.ident.to_string()]),
            syn::Item::Macro(m) => {
                let exported = m.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                let name = m.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
                if exported {
                    out.push((None, format!("{name}!")));
                }
                continue;
            }
            _ => continue,
        };
        if !matches!(vis, syn::Visibility::Public(_)) {
            continue;
        }
        let cfg = attrs.iter().find_map(|a| match &a.meta {
            syn::Meta::List(l) if l.path.is_ident("cfg") => Some(format!("cfg({})", l.tokens)),
            _ => None,
        });
        out.extend(names.into_iter().map(|n| (cfg.clone(), n)));
    }
    out
}

/// The paths of a crate that leave it through `hipfile` without going to the safe API.
pub(crate) fn beyond_the_safe_api(c: &Crate) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.refs {
        if r.segs.first().is_some_and(|s| s == "hipfile")
            && !r
                .segs
                .get(1)
                .is_some_and(|s| ["api", "Error", "Result"].contains(&s.as_str()))
        {
            out.push(format!("{}:{}: {}", r.file, r.line, r.written));
        }
    }
    out
}
