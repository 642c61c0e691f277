//! The dynamic symbol table of the built `libhipfile.so` (contract §1–2): exactly the 39 C
//! entry points are exported (no Rust-mangled or helper symbol leaks), the SONAME is
//! `libhipfile.so.0`, and nothing of a GPU vendor's runtime is linked in.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use common::*;

/// Every symbol `libhipfile.so.0` exports: the committed list `tests/exported-symbols.txt`.
fn expected_exports() -> Vec<&'static str> {
    include_str!("exported-symbols.txt")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

fn tool(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .arg(libhipfile_path())
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `(type letter, name)` of each line of `nm -D` output (`ADDR T name` or `  U name`).
fn nm_entries(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, t, name] | [t, name] => {
                    Some((t.to_string(), name.split('@').next().unwrap().to_string()))
                }
                _ => None,
            }
        })
        .collect()
}

#[test]
fn exports_exactly_the_c_api() {
    let defined = nm_entries(&tool("nm", &["-D", "--defined-only"]));
    let names: BTreeSet<&str> = defined.iter().map(|(_, n)| n.as_str()).collect();
    let expected: BTreeSet<&str> = expected_exports().iter().copied().collect();
    assert_eq!(expected.len(), 39, "the expected list has no duplicates");
    let missing: Vec<_> = expected.difference(&names).collect();
    let extra: Vec<_> = names.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing exports: {missing:?}\nunexpected exports: {extra:?}"
    );
    assert_eq!(defined.len(), 39, "each name exported once: {defined:?}");
    for (t, name) in &defined {
        assert_eq!(
            t, "T",
            "{name} is exported as a function in the text section"
        );
    }
}

#[test]
fn soname_is_libhipfile_so_0() {
    let dynamic = tool("readelf", &["-d"]);
    let sonames: Vec<&str> = dynamic
        .lines()
        .filter(|l| l.contains("(SONAME)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    assert_eq!(sonames, ["libhipfile.so.0"], "dynamic section:\n{dynamic}");
}

#[test]
fn no_gpu_runtime_is_linked() {
    // Contract §2: runtimes are loaded at run time, never linked.
    let dynamic = tool("readelf", &["-d"]);
    let needed: Vec<&str> = dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    for lib in &needed {
        let l = lib.to_ascii_lowercase();
        assert!(
            !l.contains("hip") && !l.contains("cuda") && !l.contains("cufile"),
            "links {lib}: {needed:?}"
        );
    }
    let undefined = nm_entries(&tool("nm", &["-D", "--undefined-only"]));
    for (_, name) in &undefined {
        assert!(
            !name.starts_with("hip") && !name.starts_with("cu"),
            "undefined reference to {name}: GPU runtimes must be loaded at run time"
        );
    }
}
