//! The exported Rust functions must have exactly the prototypes of `include/hipfile.h`.
//!
//! cbindgen (configured by `cbindgen.toml`: functions only, C type names as written in
//! `src/ffi`) generates the prototypes of every `#[no_mangle] extern "C"` function of the
//! crate into `$CARGO_TARGET_TMPDIR/header_prototypes/generated_prototypes.h`. Then:
//! - the set of generated function names must be exactly the 39 entry points of the ABI,
//!   so a missing or extra export fails;
//! - `tests/c/prototypes_check.c`, which includes `hipfile.h`, `hipfile-stats.h` and the
//!   generated file, must compile as C11 and as C++17: both reject a redeclaration whose
//!   type differs from the header's.
//!
//! Exported functions must be written out literally (`#[no_mangle] pub unsafe extern "C" fn
//! hipFileXxx(..)`), not produced by a macro: cbindgen reads the source, it does not
//! expand macros.

mod common;

use common::cc::{out_dir, root};
use common::expected_exports;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

struct Generated {
    /// The generated header.
    path: PathBuf,
    /// Its text.
    text: String,
    /// The exported function names cbindgen found.
    names: BTreeSet<String>,
}

/// Runs cbindgen once per test binary; every test reads the same result.
fn generated() -> &'static Generated {
    static GENERATED: OnceLock<Generated> = OnceLock::new();
    GENERATED.get_or_init(|| {
        let config = cbindgen::Config::from_file(root().join("cbindgen.toml"))
            .unwrap_or_else(|e| panic!("cannot read cbindgen.toml: {e}"));
        let bindings = cbindgen::Builder::new()
            .with_config(config)
            .with_crate(root())
            .generate()
            .unwrap_or_else(|e| panic!("cbindgen failed on the crate: {e}"));
        let path = out_dir("header_prototypes").join("generated_prototypes.h");
        bindings.write_to_file(&path);
        let names = bindings
            .dynamic_symbols_names()
            .map(str::to_owned)
            .collect();
        let text = std::fs::read_to_string(&path).expect("read the generated prototypes");
        Generated { path, text, names }
    })
}

/// Names of the functions a C prototype file declares: for each declaration (text up to a
/// `;`, preprocessor lines and comments removed), the identifier right before its first `(`.
fn declared_function_names(text: &str) -> Vec<String> {
    let mut code = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("unterminated comment") + start + 2;
        rest = &rest[end..];
    }
    code.push_str(rest);
    let code: String = code
        .lines()
        .filter(|line| !line.trim_start().starts_with('#') && !line.trim_start().starts_with("//"))
        .filter(|line| !matches!(line.trim(), "extern \"C\" {" | "}  // extern \"C\"" | "}"))
        .collect::<Vec<_>>()
        .join("\n");
    code.split(';')
        .filter_map(|decl| {
            let head = &decl[..decl.find('(')?];
            let name: String = head
                .chars()
                .rev()
                .skip_while(|c| c.is_whitespace())
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            Some(name)
        })
        .collect()
}

fn compile(compiler: &str, args: &[&str], object: &Path) {
    let generated = generated();
    let include = root().join("include");
    let generated_dir = generated
        .path
        .parent()
        .expect("generated file has a directory");
    let source = root().join("tests/c/prototypes_check.c");
    let mut command = Command::new(compiler);
    command
        .args(args)
        .arg("-I")
        .arg(&include)
        .arg("-I")
        .arg(generated_dir)
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(object);
    println!("running: {command:?}");
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{compiler}` (a C toolchain is required): {e}"));
    assert!(
        output.status.success(),
        "the Rust prototypes do not match include/hipfile.h ({compiler} {status}).\n\
         --- compiler output ---\n{stderr}{stdout}\n--- {path} ---\n{text}",
        status = output.status,
        stderr = String::from_utf8_lossy(&output.stderr),
        stdout = String::from_utf8_lossy(&output.stdout),
        path = generated.path.display(),
        text = generated.text,
    );
}

#[test]
fn exports_exactly_the_abi_functions() {
    let expected: BTreeSet<String> = expected_exports().iter().map(|s| s.to_string()).collect();
    assert_eq!(expected.len(), 39, "expected_exports() has a duplicate");
    let found = &generated().names;
    let missing: Vec<_> = expected.difference(found).collect();
    let extra: Vec<_> = found.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "exported extern \"C\" functions differ from the ABI.\nmissing: {missing:?}\nextra: {extra:?}"
    );
}

#[test]
fn generated_file_declares_each_function_once() {
    // What the compilers see: every expected name declared exactly once, nothing else, and
    // no declaration hidden behind a preprocessor condition (#if from a #[cfg]).
    let generated = generated();
    let mut declared = declared_function_names(&generated.text);
    declared.sort();
    let mut expected: Vec<String> = expected_exports().iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(
        declared,
        expected,
        "declarations in {}",
        generated.path.display()
    );
    let conditional: Vec<&str> = generated
        .text
        .lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with("#if")
                && *l != "#ifdef __cplusplus"
                && !l.contains("HIPFILE_GENERATED_PROTOTYPES_H")
        })
        .collect();
    assert!(
        conditional.is_empty(),
        "conditional declarations: {conditional:?}\n{}",
        generated.text
    );
}

#[test]
fn rust_prototypes_match_header_in_c() {
    let object = out_dir("header_prototypes").join("prototypes_check_c.o");
    compile(
        "gcc",
        &["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"],
        &object,
    );
}

#[test]
fn rust_prototypes_match_header_in_cxx() {
    let object = out_dir("header_prototypes").join("prototypes_check_cxx.o");
    compile(
        "g++",
        &["-x", "c++", "-std=c++17", "-Wall", "-Wextra", "-Werror"],
        &object,
    );
}

#[test]
fn name_parser_finds_declarations() {
    // Guards the text parser above against silently finding nothing.
    let text = "/* x; y( */\n#ifndef G\n#define G\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\
                const char *hipFileGetOpErrorString(hipFileOpError_t status);\n\
                hipFileError_t hipFileBatchIOGetStatus(hipFileBatchHandle_t batch_idp,\n    unsigned int min_nr);\n\
                void hipFileStatsCloseContext(hipFileStatsContext_t *context);\n\
                #ifdef __cplusplus\n}  // extern \"C\"\n#endif\n#endif\n";
    assert_eq!(
        declared_function_names(text),
        [
            "hipFileGetOpErrorString",
            "hipFileBatchIOGetStatus",
            "hipFileStatsCloseContext"
        ]
    );
}
