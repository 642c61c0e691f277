//! The library's layering, checked on its source (ARCHITECTURE.md draws the same picture).
//!
//! - Every top-level module of `src/` has a layer; a module may name (`crate::x`) only modules
//!   of lower layers. Modules of one layer do not name each other.
//! - Inside a module, the files do not import each other in a cycle (a file naming its own
//!   module's `mod.rs`, its parent, is allowed: that is how Rust modules share their types).
//! - `#[no_mangle]` appears only under `src/ffi/`.
//! - `unsafe` appears only where it is allowed (the list below).
//! - `src/lib.rs` makes public only `api`, `ffi` and `Error`/`Result` (and, for tests only,
//!   `internals`), and the `hipfile` tool names only `hipfile::api` and the error type.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers, top to bottom. A module names only modules of later rows.
const LAYERS: &[&[&str]] = &[
    &["ffi", "api"],
    &["driver"],
    &["backend"],
    &["request"],
    &["engine"],
    &["stats"],
    &["config"],
    &["error"],
    &["runtime"],
    &["log"],
    &["sys"],
    &["vocab"],
];

/// Files (or directories) where `unsafe` may appear.
const UNSAFE_ALLOWED: &[&str] = &[
    "src/ffi/",
    "src/runtime/",
    "src/sys/",
    // The one place the engine lends memory: the application's host memory of a request as
    // slices chunk by chunk, the pinned bounce buffers of the pool, and bounce buffers owned
    // by the runtime's copies in flight.
    "src/engine/lend/",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/<module>/...` or `src/<module>.rs` → `<module>` (`lib` for `src/lib.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a file without comments (line and doc comments; block comments are not used).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            // Keep string literals that contain `//` (URLs) harmless: they are not paths.
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::NAME` in `code`, and every `crate::{a, b::c}` group's first segments.
fn crate_refs(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
        rest = after;
    }
    out
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|row| row.contains(&module))
}

#[test]
fn modules_import_only_downward() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut modules = BTreeSet::new();
    let mut violations = Vec::new();
    for f in &files {
        let m = module_of(&src, f);
        if m == "lib" {
            continue;
        }
        modules.insert(m.clone());
        let Some(own) = layer_of(&m) else {
            violations.push(format!("{m}: module without a layer (add it to LAYERS)"));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for r in crate_refs(&code(&text)) {
            if r == m {
                continue;
            }
            match layer_of(&r) {
                Some(l) if l > own => {}
                _ => violations.push(format!(
                    "{}: names crate::{r}, which is not below {m}",
                    f.strip_prefix(&src).unwrap().display()
                )),
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    // Every layer names a module that exists (the table stays the truth).
    for row in LAYERS {
        for m in *row {
            assert!(modules.contains(*m), "LAYERS names {m}, which src/ lacks");
        }
    }
}

#[test]
fn files_of_a_module_import_no_cycle() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // module directory -> (file stem -> siblings it names)
    let mut graphs: BTreeMap<PathBuf, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in &files {
        let dir = f.parent().unwrap().to_path_buf();
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        if stem == "mod" || dir == src {
            continue;
        }
        let module = dir
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('/', "::");
        let siblings: BTreeSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let p = e.unwrap().path();
                let s = p.file_stem()?.to_string_lossy().to_string();
                (p.extension().is_some_and(|x| x == "rs") && s != "mod").then_some(s)
            })
            .collect();
        let text = code(&std::fs::read_to_string(f).unwrap());
        let mut names = BTreeSet::new();
        for s in &siblings {
            if s == &stem {
                continue;
            }
            let via_super = format!("super::{s}");
            let via_crate = format!("crate::{module}::{s}");
            let named = [via_super, via_crate].iter().any(|p| {
                text.match_indices(p.as_str()).any(|(i, _)| {
                    !text[i + p.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
            });
            if named {
                names.insert(s.clone());
            }
        }
        graphs.entry(dir).or_default().insert(stem, names);
    }
    let mut cycles = Vec::new();
    for (dir, g) in &graphs {
        // Depth-first search for a back edge.
        fn visit(
            n: &str,
            g: &BTreeMap<String, BTreeSet<String>>,
            state: &mut BTreeMap<String, u8>,
            path: &mut Vec<String>,
        ) -> Option<Vec<String>> {
            state.insert(n.to_string(), 1);
            path.push(n.to_string());
            for m in g.get(n).into_iter().flatten() {
                match state.get(m.as_str()).copied().unwrap_or(0) {
                    1 => {
                        let start = path.iter().position(|p| p == m).unwrap();
                        let mut c = path[start..].to_vec();
                        c.push(m.clone());
                        return Some(c);
                    }
                    0 => {
                        if let Some(c) = visit(m, g, state, path) {
                            return Some(c);
                        }
                    }
                    _ => {}
                }
            }
            path.pop();
            state.insert(n.to_string(), 2);
            None
        }
        let mut state = BTreeMap::new();
        for n in g.keys() {
            if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
                if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
                    cycles.push(format!(
                        "{}: {}",
                        dir.strip_prefix(&src).unwrap().display(),
                        c.join(" -> ")
                    ));
                    // The search state is left mid-way: one cycle per module is enough.
                    break;
                }
            }
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn no_mangle_only_in_ffi_and_unsafe_only_where_allowed() {
    let src = src();
    let root = src.parent().unwrap();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().to_string();
        let text = code(&std::fs::read_to_string(f).unwrap());
        if text.contains("no_mangle") && !rel.starts_with("src/ffi/") {
            violations.push(format!("{rel}: #[no_mangle] outside src/ffi/"));
        }
        let has_unsafe = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == "unsafe");
        let allowed = UNSAFE_ALLOWED
            .iter()
            .any(|a| rel.starts_with(a) || rel == *a);
        if has_unsafe && !allowed {
            violations.push(format!("{rel}: unsafe outside the allowed places"));
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_checker_sees_what_it_must() {
    // The scanner itself: a reference in a group, a path, a comment that must not count.
    let refs = crate_refs(&code(
        "use crate::{driver::X, stats};\nlet a = crate::backend::f();\n// crate::ffi\n",
    ));
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        ["backend", "driver", "stats"]
    );
    assert_eq!(layer_of("ffi"), Some(0));
    assert!(layer_of("driver") < layer_of("backend"));
    assert_eq!(layer_of("nothing"), None);
}

/// Items `src/lib.rs` makes public at its top level: `pub mod NAME` and `pub use PATH`, each
/// with the `#[cfg(...)]` line above it, if any.
fn lib_exports(lib: &str) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    let mut cfg = None;
    let mut depth = 0usize;
    for line in code(lib).lines() {
        let t = line.trim();
        if depth == 0 {
            if t.starts_with("#[cfg(") {
                cfg = Some(t.to_string());
            } else if let Some(rest) = t
                .strip_prefix("pub mod ")
                .or_else(|| t.strip_prefix("pub use "))
            {
                let item = rest.trim_end_matches(['{', ';', ' ']).to_string();
                out.push((cfg.take(), item));
            } else if !t.is_empty() && !t.starts_with("#[") {
                cfg = None;
            }
        }
        depth += t.matches('{').count();
        depth = depth.saturating_sub(t.matches('}').count());
    }
    out
}

#[test]
fn the_crate_exports_the_safe_api_the_error_and_the_c_abi_only() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let exports = lib_exports(&lib);
    let internals = Some("#[cfg(feature = \"test-internals\")]".to_string());
    assert_eq!(
        exports,
        [
            (None, "api".to_string()),
            (None, "ffi".to_string()),
            (None, "error::{Error, Result}".to_string()),
            (internals, "internals".to_string()),
        ],
        "src/lib.rs: only api, ffi, Error/Result (and the test-only internals) are public"
    );
    // The scanner itself.
    assert_eq!(
        lib_exports("pub mod a;\nmod b;\n#[cfg(x)]\npub mod c {\n    pub use d;\n}\npub use e;\n"),
        [
            (None, "a".to_string()),
            (Some("#[cfg(x)]".to_string()), "c".to_string()),
            (None, "e".to_string()),
        ]
    );
}

#[test]
fn the_tool_uses_only_the_safe_api() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/hipfile-cli/src");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(!files.is_empty());
    let mut violations = Vec::new();
    for f in &files {
        let text = code(&std::fs::read_to_string(f).unwrap());
        let mut rest = text.as_str();
        while let Some(i) = rest.find("hipfile::") {
            let after = &rest[i + "hipfile::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !["api", "Error", "Result"].contains(&name.as_str()) {
                violations.push(format!("{}: hipfile::{name}", f.display()));
            }
            rest = after;
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}
