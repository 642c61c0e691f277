//! Build script: gives the shared library its SONAME so that programs linked against
//! `libhipfile.so` record `libhipfile.so.0`, as they do with AMD's library, and names AMD's
//! HIP runtime as an ELF auxiliary filter (`DT_AUXILIARY libamdhip64.so.7`).
//!
//! AMD's `libhipfile.so.0` links the HIP runtime, so programs that take HIP symbols through
//! libhipfile's dependencies (AMD's Python extension calls `hipPeekAtLastError` without
//! linking the runtime itself) resolve them there. The auxiliary filter does the same where
//! the runtime exists: the dynamic loader maps `libamdhip64.so.7` when it maps us and puts it
//! in front of us in the lookup scope. Where it does not exist (NVIDIA and GPU-less machines)
//! the loader skips the entry silently and nothing changes. It is not `DT_NEEDED`: the
//! library still loads everywhere, and the runtime is still chosen at run time. No symbol is
//! defined by both (ours are `hipFile*`), so the filter never replaces one of ours.

fn main() {
    // Only the cdylib is affected; the rlib used by the CLI and tests ignores link args.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhipfile.so.0");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--auxiliary,libamdhip64.so.7");
    println!("cargo:rerun-if-changed=build.rs");
}
