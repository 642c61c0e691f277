//! Build script: gives the shared library its SONAME so that programs linked against
//! `libhipfile.so` record `libhipfile.so.0`, as they do with AMD's library.

fn main() {
    // Only the cdylib is affected; the rlib used by the CLI and tests ignores link args.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhipfile.so.0");
    println!("cargo:rerun-if-changed=build.rs");
}
