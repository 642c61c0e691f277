//! The library's layering, checked on its parsed source (ARCHITECTURE.md draws the same picture).
//!
//! - Every top-level module of `src/` has a layer; a module may name only modules of lower
//!   layers. Modules of one layer do not name each other.
//! - The files of a top-level module do not import each other in a cycle, whether they sit in
//!   one directory or not (a file naming one of its ancestor modules is allowed: that is how
//!   Rust modules share their types, and an ancestor naming its descendants is how it declares
//!   and re-exports them). Between top-level modules, the layers rule cycles out.
//! - `#[no_mangle]` appears only under `src/ffi/`.
//! - `unsafe` appears only where it is allowed (the list below).
//! - `src/lib.rs` makes public only `api`, `ffi` and `Error`/`Result` (and, for tests only,
//!   `internals`), and the `hipfile` tool names only `hipfile::api` and the error type.
//!
//! The files are parsed with `syn` and the module tree is followed from `src/lib.rs` through
//! its `mod` declarations, so what the checks see is what rustc compiles: every path the code
//! writes (in `use` trees, with their groups expanded; in types and expressions; inside macro
//! invocations) is resolved from where it is written (`crate::`, `self::`, any number of
//! `super::`, a child module, a name a `use` brought in, a re-export) to the module it names.
//! Comments and string literals are not code, so they never count.
//!
//! `layering/tree.rs` builds the module tree and resolves paths, `layering/rules.rs` and
//! `layering/cycles.rs` hold the checks, and `layering/checker_tests.rs` runs them on small
//! source trees, among them violations an earlier text-matching version of this file let
//! through.

// Under `layering/` (a directory Cargo does not take for a test of its own).
#[path = "layering/checker_tests.rs"]
mod checker_tests;
#[path = "layering/cycles.rs"]
mod cycles;
#[path = "layering/rules.rs"]
mod rules;
#[path = "layering/tree.rs"]
mod tree;

use std::path::Path;

use cycles::import_cycles;
use rules::{
    beyond_the_safe_api, confined_violations, layering_violations, public_items, table_problems,
    Confined,
};
use tree::{read_tree, Crate, Sources};

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

/// Identifiers that appear only in some files (or directories).
const CONFINED: &[Confined] = &[
    Confined {
        names: &["unsafe"],
        places: &[
            "src/ffi/",
            "src/runtime/",
            "src/sys/",
            // The one place the engine lends memory: the application's host memory of a
            // request as slices chunk by chunk, the pinned bounce buffers of the pool, and
            // bounce buffers owned by the runtime's copies in flight.
            "src/engine/lend/",
        ],
    },
    // Exported symbols: the C door.
    Confined {
        names: &["no_mangle", "export_name"],
        places: &["src/ffi/"],
    },
    // A handle token's C value: made and read at the C door, and where the tokens are
    // defined (the GPU runtimes, under runtime/, use the field itself).
    Confined {
        names: &["from_c_handle", "c_handle"],
        places: &[
            "src/ffi/",
            "src/driver/files.rs",
            "src/driver/batch.rs",
            "src/runtime/seam.rs",
        ],
    },
];

fn package() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The library's sources, loaded; a file that does not parse or that no `mod` reaches fails.
fn library() -> (Sources, Crate) {
    let sources = read_tree(package(), "src");
    let c = Crate::load(&sources, "src/lib.rs");
    assert!(c.problems.is_empty(), "{}", c.problems.join("\n"));
    (sources, c)
}

#[test]
fn modules_import_only_downward() {
    let (_, c) = library();
    let problems = [table_problems(&c, LAYERS), layering_violations(&c, LAYERS)].concat();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn files_import_no_cycle() {
    let (_, c) = library();
    let cycles = import_cycles(&c);
    assert!(cycles.is_empty(), "{}", cycles.join("\n"));
}

#[test]
fn unsafe_exports_and_handle_values_stay_in_their_places() {
    let (sources, c) = library();
    let violations = confined_violations(&c, &sources, CONFINED);
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_crate_exports_the_safe_api_the_error_and_the_c_abi_only() {
    let lib = std::fs::read_to_string(package().join("src/lib.rs")).unwrap();
    let internals = Some("cfg(feature = \"test-internals\")".to_string());
    assert_eq!(
        public_items(&syn::parse_file(&lib).unwrap()),
        [
            (None, "api".to_string()),
            (None, "ffi".to_string()),
            (None, "error::Error".to_string()),
            (None, "error::Result".to_string()),
            (internals, "internals".to_string()),
        ],
        "src/lib.rs: only api, ffi, Error/Result (and the test-only internals) are public"
    );
}

#[test]
fn the_tool_uses_only_the_safe_api() {
    let dir = "crates/hipfile-cli/src";
    let sources = read_tree(package(), dir);
    let c = Crate::load(&sources, &format!("{dir}/main.rs"));
    assert!(c.problems.is_empty(), "{}", c.problems.join("\n"));
    assert!(c.refs.iter().any(|r| r.written.starts_with("hipfile::api")));
    let violations = beyond_the_safe_api(&c);
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}
