//! Build script: the identity of `libcufile.so.0`.
//!
//! - SONAME `libcufile.so.0`, so that `DT_NEEDED libcufile.so.0` of consumers (torch,
//!   DeepSpeed, fio) and `dlopen("libcufile.so.0")` (KvikIO, DALI, fastsafetensors) find us;
//! - `-z nodelete`: consumers `dlclose` the handle right after `dlsym` and keep the pointers;
//! - a version script generated from `tests/cufile-exported-symbols.txt` (the one list of our
//!   exports): exactly the cuFile functions are global and unversioned, everything else
//!   (Rust's own symbols included) is local.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let list = manifest.join("../../tests/cufile-exported-symbols.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(&list).expect("tests/cufile-exported-symbols.txt");
    let mut script = String::from("{\n  global:\n");
    for name in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        script.push_str(&format!("    {name};\n"));
    }
    script.push_str("  local: *;\n};\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("cufile.map");
    std::fs::write(&out, script).unwrap();
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcufile.so.0");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        out.display()
    );
}
