//! The dynamic symbol table of the built `libhipfile.so`: exactly the 39 C
//! entry points are exported (no Rust-mangled or helper symbol leaks), the SONAME is
//! `libhipfile.so.0`, nothing of a GPU vendor's runtime is linked in, and AMD's HIP runtime is named
//! only as an auxiliary filter (`DT_AUXILIARY libamdhip64.so.7`) that shares no name with us.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use common::*;

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
    // Runtimes are loaded at run time, never linked.
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

/// The names `file` exports (`nm -D --defined-only`), without symbol versions.
fn defined_names(file: &std::path::Path) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("run nm: {e}"));
    assert!(out.status.success(), "nm {}", file.display());
    nm_entries(&String::from_utf8(out.stdout).unwrap())
        .into_iter()
        .map(|(_, n)| n.split('@').next().unwrap().to_string())
        .collect()
}

#[test]
fn hip_runtime_is_an_auxiliary_filter_only() {
    // Programs that take HIP symbols through libhipfile's dependencies (AMD's Python package
    // does) find them where AMD's HIP runtime exists; elsewhere the loader skips the entry.
    let dynamic = tool("readelf", &["-d"]);
    let entries = |tag: &str| -> Vec<String> {
        dynamic
            .lines()
            .filter(|l| l.contains(tag))
            .filter_map(|l| Some(l.split('[').nth(1)?.split(']').next()?.to_string()))
            .collect()
    };
    assert_eq!(entries("(AUXILIARY)"), ["libamdhip64.so.7"], "{dynamic}");
    assert_eq!(entries("(FILTER)"), Vec::<String>::new(), "{dynamic}");

    // A filtee's definition wins over ours for a name both define: there must be none.
    let ours = defined_names(&libhipfile_path());
    let mut runtimes = vec![hipsim_path()];
    let debian = std::path::Path::new("/usr/lib/x86_64-linux-gnu/libamdhip64.so");
    if debian.exists() {
        runtimes.push(debian.to_path_buf());
    }
    for rt in runtimes {
        let theirs = defined_names(&rt);
        assert!(
            theirs.len() > 50,
            "{} exports {} names",
            rt.display(),
            theirs.len()
        );
        let both: Vec<_> = ours.intersection(&theirs).collect();
        assert!(both.is_empty(), "{} also defines {both:?}", rt.display());
    }
}
