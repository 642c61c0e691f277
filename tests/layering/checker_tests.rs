//! The checker on small source trees. The first three are the violations its text-matching
//! predecessor let through.

use super::cycles::import_cycles;
use super::rules::{
    beyond_the_safe_api, confined_violations, layering_violations, public_items, table_problems,
    Confined,
};
use super::tree::{Crate, Sources};

fn tree(files: &[(&str, &str)]) -> Crate {
    let sources: Sources = files
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    Crate::load(&sources, "src/lib.rs")
}

/// A table for the small trees.
const SMALL: &[&[&str]] = &[
    &["driver"],
    &["backend"],
    &["engine"],
    &["error"],
    &["vocab"],
];

#[test]
fn a_super_super_import_names_an_upper_layer() {
    let c = tree(&[
        ("src/lib.rs", "mod driver;\nmod engine;\n"),
        ("src/driver/mod.rs", "pub struct Driver;\n"),
        ("src/engine/mod.rs", "mod pipeline;\n"),
        (
            "src/engine/pipeline.rs",
            "//! Pipeline.\n\nuse super::super::driver::Driver;\n",
        ),
    ]);
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(
        layering_violations(&c, SMALL),
        ["src/engine/pipeline.rs:3: super::super::driver::Driver names crate::driver, which is not below engine"]
    );
}

#[test]
fn a_nested_use_group_names_an_upper_layer() {
    let c = tree(&[
        ("src/lib.rs", "mod backend;\nmod driver;\nmod engine;\n"),
        ("src/driver/mod.rs", "pub struct Driver;\n"),
        (
            "src/engine/mod.rs",
            "pub struct Engine;\npub struct Pool;\n",
        ),
        (
            "src/backend/mod.rs",
            "use crate::{\n    engine::{Engine, Pool},\n    driver::Driver,\n};\n",
        ),
    ]);
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(
        layering_violations(&c, SMALL),
        ["src/backend/mod.rs:3: crate::driver::Driver names crate::driver, which is not below backend"]
    );
}

#[test]
fn a_cycle_written_as_a_use_group_of_super() {
    let c = tree(&[
        ("src/lib.rs", "mod engine;\n"),
        ("src/engine/mod.rs", "mod a;\nmod b;\n"),
        (
            "src/engine/a.rs",
            "use super::{b};\npub fn f() {\n    b::g();\n}\n",
        ),
        (
            "src/engine/b.rs",
            "pub fn g() {}\npub fn h() {\n    super::a::f();\n}\n",
        ),
    ]);
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(
        import_cycles(&c),
        ["import cycle: src/engine/a.rs -> src/engine/b.rs -> src/engine/a.rs"]
    );
}

#[test]
fn a_cycle_across_directories_and_through_a_reexport() {
    let c = tree(&[
        ("src/lib.rs", "mod engine;\n"),
        (
            "src/engine/mod.rs",
            "mod lend;\nmod pipeline;\npub(crate) use lend::bounce::Pool;\n",
        ),
        ("src/engine/lend/mod.rs", "pub(crate) mod bounce;\n"),
        (
            "src/engine/lend/bounce.rs",
            "pub struct Pool;\nfn f(_: crate::engine::pipeline::Chunk) {}\n",
        ),
        // `super::Pool` is the re-export of `lend::bounce::Pool`.
        (
            "src/engine/pipeline.rs",
            "pub struct Chunk;\nfn g(_: super::Pool) {}\n",
        ),
    ]);
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(
        import_cycles(&c),
        ["import cycle: src/engine/lend/bounce.rs -> src/engine/pipeline.rs -> src/engine/lend/bounce.rs"]
    );
}

#[test]
fn naming_an_ancestor_or_a_descendant_is_no_cycle() {
    let c = tree(&[
        ("src/lib.rs", "mod engine;\n"),
        (
            "src/engine/mod.rs",
            "mod lend;\npub struct Engine;\nfn f(_: lend::Lent) {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        ),
        (
            "src/engine/lend.rs",
            "use super::Engine;\npub struct Lent;\nfn g(_: crate::engine::Engine) {}\n",
        ),
    ]);
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(import_cycles(&c), Vec::<String>::new());
}

#[test]
fn paths_in_code_macros_and_root_reexports_are_resolved() {
    let c = tree(&[
        (
            "src/lib.rs",
            "mod driver;\nmod engine;\nmod error;\nmod vocab;\npub use error::{Error, Result};\n",
        ),
        ("src/driver/mod.rs", "pub fn count() -> usize { 0 }\n"),
        ("src/error.rs", "pub struct Error;\npub type Result = ();\n"),
        (
            "src/engine/mod.rs",
            concat!(
                "// crate::driver in a comment, and in a string: \"crate::driver\".\n",
                "fn f() -> crate::Result {\n",
                "    tracing::debug!(target: \"x\", \"{}\", crate::driver::count());\n",
                "    let _ = self::inner::g();\n",
                "}\n",
                "mod inner {\n",
                "    pub fn g() -> usize { super::super::driver::count() }\n",
                "}\n",
            ),
        ),
        (
            "src/vocab.rs",
            "use crate as root;\npub fn e() -> crate::Error { crate::Error }\n",
        ),
    ]);
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(
        layering_violations(&c, SMALL),
        [
            "src/engine/mod.rs:3: crate::driver::count names crate::driver, which is not below engine",
            "src/engine/mod.rs:7: super::super::driver::count names crate::driver, which is not below engine",
            "src/vocab.rs:2: crate::Error names crate::error, which is not below vocab",
        ]
    );
}

#[test]
fn the_module_tree_is_followed_from_the_root() {
    let c = tree(&[
        ("src/lib.rs", "mod engine;\nmod missing;\n"),
        ("src/engine/mod.rs", "mod pool;\n"),
        ("src/engine/pool.rs", "fn f() {\n"),
        ("src/stray.rs", "pub fn f() {}\n"),
    ]);
    assert_eq!(
        c.problems,
        [
            "src/engine/pool.rs:1: cannot parse string into token stream",
            "src/lib.rs:2: mod missing: neither src/missing.rs nor src/missing/mod.rs exists",
            "src/stray.rs: no `mod` declaration reaches it from src/lib.rs (the checks would not see it)",
        ]
    );
    assert_eq!(
        table_problems(&c, &[&["vocab"]]),
        [
            "engine: module without a layer (add it to LAYERS)",
            "LAYERS names vocab, which src/ lacks",
        ]
    );
}

#[test]
fn confined_identifiers_are_found_in_code_only() {
    let files = [
        ("src/lib.rs", "mod engine;\nmod ffi;\n"),
        (
            "src/ffi/mod.rs",
            "#[no_mangle]\npub unsafe extern \"C\" fn f(h: usize) {\n    T::from_c_handle(h);\n}\n",
        ),
        (
            "src/engine/mod.rs",
            concat!(
                "mod lend;\n",
                "/// Never unsafe, no from_c_handle.\n",
                "fn g() {\n",
                "    let _ = \"#[no_mangle] unsafe\";\n",
                "}\n",
                "#[unsafe(no_mangle)]\n",
                "fn h(t: T) -> usize {\n",
                "    t.c_handle()\n",
                "}\n",
            ),
        ),
        (
            "src/engine/lend/mod.rs",
            "fn f() {\n    unsafe { g() }\n}\n",
        ),
    ];
    let sources: Sources = files
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    let c = Crate::load(&sources, "src/lib.rs");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    let rules = [
        Confined {
            names: &["unsafe"],
            places: &["src/ffi/", "src/engine/lend/"],
        },
        Confined {
            names: &["no_mangle", "export_name"],
            places: &["src/ffi/"],
        },
        Confined {
            names: &["from_c_handle", "c_handle"],
            places: &["src/ffi/", "src/engine/token.rs"],
        },
    ];
    assert_eq!(
        confined_violations(&c, &sources, &rules),
        [
            "src/engine/mod.rs:6: `unsafe` outside src/ffi/, src/engine/lend/",
            "src/engine/mod.rs:6: `no_mangle` outside src/ffi/",
            "src/engine/mod.rs:8: `c_handle` outside src/ffi/, src/engine/token.rs",
        ]
    );
}

#[test]
fn public_items_and_the_tool_check_see_groups() {
    let root = syn::parse_file(
        "pub mod a;\nmod b;\n#[cfg(x)]\npub mod c {\n    pub use d;\n}\npub use e::{f, g::{h as i, *}};\npub(crate) fn j() {}\npub fn k() {}\n",
    )
    .unwrap();
    assert_eq!(
        public_items(&root),
        [
            (None, "a".to_string()),
            (Some("cfg(x)".to_string()), "c".to_string()),
            (None, "e::f".to_string()),
            (None, "e::g::h".to_string()),
            (None, "e::g::*".to_string()),
            (None, "k".to_string()),
        ]
    );
    let c = tree(&[(
        "src/lib.rs",
        "use hipfile::{api::Driver, Error, internals::stats};\nfn f() {\n    println!(\"{}\", hipfile::ffi::X);\n}\n",
    )]);
    assert_eq!(
        beyond_the_safe_api(&c),
        [
            "src/lib.rs:1: hipfile::internals::stats",
            "src/lib.rs:3: hipfile::ffi::X",
        ]
    );
}
