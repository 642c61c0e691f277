//! `include/hipfile.h` declares exactly the hipFile 0.5 ABI, in C and in C++.
//!
//! Compiles `tests/c/abi_asserts.c` (static assertions on every macro, enum value, struct
//! size, offset and member type, and every function type) with the
//! system compilers and runs it:
//! - C11, `-Wall -Wextra -Werror -pedantic`, with the header's own stand-in HIP types;
//! - C11 and C++17 with `-D__HIP_PLATFORM_AMD__`, so that the real `<hip/hip_runtime_api.h>`
//!   (Debian package `libamdhip64-dev`) is included. Skipped with a message when that header
//!   is not installed, unless `HIPFILE_REQUIRE_HIP_HEADERS=1` (CI sets it);
//! - C11 with `IS_HIP_DRV_ERR`/`HIP_DRV_ERR` predefined (the header must keep them);
//! - C++17 (`extern "C"`, `[[nodiscard]]`), plus a check that discarding a `hipFileError_t`
//!   is diagnosed in C++17 and not in C++14;
//! - the headers alone in C99 and C++98 (syntax only).
//!
//! Also checks that the version macros in the header equal `hipfile::ffi::abi`.

mod common;

use common::cc::{out_dir, root, run, text};
use common::header_define;
use std::path::Path;
use std::process::{Command, Output};

const C_FLAGS: &[&str] = &[
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-Wundef",
    "-Wstrict-prototypes",
];
const CXX_FLAGS: &[&str] = &[
    "-x",
    "c++",
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-Wundef",
];
const REAL_HIP_HEADER: &str = "/usr/include/hip/hip_runtime_api.h";

/// Builds `tests/c/abi_asserts.c` with `compiler` and `flags` into `exe`, runs it and
/// expects exactly "abi ok".
fn build_and_run(compiler: &str, flags: &[&str], exe: &str) {
    let exe = out_dir("abi_header").join(exe);
    let mut build = Command::new(compiler);
    build
        .args(flags)
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join("tests/c/abi_asserts.c"))
        .arg("-o")
        .arg(&exe);
    common::cc::build_and_run(build, "tests/c/abi_asserts.c", &exe, "abi ok\n");
}

#[test]
fn c11_with_stand_in_hip_types() {
    build_and_run("gcc", C_FLAGS, "abi_asserts_c11");
}

#[test]
fn c11_and_cxx17_with_real_hip_headers() {
    if !Path::new(REAL_HIP_HEADER).exists() {
        assert!(
            std::env::var("HIPFILE_REQUIRE_HIP_HEADERS").as_deref() != Ok("1"),
            "{REAL_HIP_HEADER} is missing but HIPFILE_REQUIRE_HIP_HEADERS=1: install libamdhip64-dev"
        );
        println!("skipping: libamdhip64-dev not installed ({REAL_HIP_HEADER} is missing)");
        return;
    }
    let real_hip = ["-D__HIP_PLATFORM_AMD__", "-DHIPFILE_EXPECT_REAL_HIP"];
    build_and_run("gcc", &[C_FLAGS, &real_hip].concat(), "abi_asserts_c11_hip");
    build_and_run(
        "g++",
        &[CXX_FLAGS, &real_hip].concat(),
        "abi_asserts_cxx17_hip",
    );
}

#[test]
fn c11_keeps_predefined_drv_err_macros() {
    let predefined = [
        "-DHIPFILE_PREDEFINE_DRV_MACROS",
        "-DIS_HIP_DRV_ERR(e)=4242",
        "-DHIP_DRV_ERR(e)=4343",
    ];
    build_and_run(
        "gcc",
        &[C_FLAGS, &predefined].concat(),
        "abi_asserts_c11_predefined",
    );
}

#[test]
fn cxx17_with_stand_in_hip_types() {
    build_and_run("g++", CXX_FLAGS, "abi_asserts_cxx17");
}

/// Compiles (syntax only) a C++ snippet that ignores a `hipFileError_t` result.
fn compile_discarding_snippet(std: &str) -> Output {
    let source =
        out_dir("abi_header").join(format!("discard_{}.cpp", std.trim_start_matches("-std=")));
    std::fs::write(
        &source,
        "#include \"hipfile.h\"\nvoid f(void);\nvoid f(void) { hipFileDriverOpen(); }\n",
    )
    .expect("write the C++ snippet");
    let mut command = Command::new("g++");
    command
        .args([std, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
        .arg(root().join("include"))
        .arg(&source);
    run(command)
}

#[test]
fn cxx17_marks_hipfile_error_nodiscard() {
    let cxx17 = compile_discarding_snippet("-std=c++17");
    let diagnostics = text(&cxx17);
    assert!(
        !cxx17.status.success() && diagnostics.contains("nodiscard"),
        "discarding a hipFileError_t in C++17 must be diagnosed ([[nodiscard]]):\n{diagnostics}"
    );
    let cxx14 = compile_discarding_snippet("-std=c++14");
    assert!(
        cxx14.status.success(),
        "C++14 has no [[nodiscard]]; the header must not use it there:\n{}",
        text(&cxx14)
    );
}

#[test]
fn headers_compile_in_older_language_modes() {
    // The header must not need C11 or C++11 (hipFile's own builds and users vary).
    let source = out_dir("abi_header").join("older_modes.c");
    std::fs::write(
        &source,
        "#include \"hipfile.h\"\n#include \"hipfile-stats.h\"\n\
         typedef hipFileError_t older_modes_unit;\n",
    )
    .expect("write the snippet");
    for (compiler, std) in [("gcc", "-std=c99"), ("g++", "-std=c++98")] {
        let mut command = Command::new(compiler);
        command
            .args(["-x", if compiler == "gcc" { "c" } else { "c++" }, std])
            .args([
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-Wundef",
                "-fsyntax-only",
                "-I",
            ])
            .arg(root().join("include"))
            .arg(&source);
        let output = run(command);
        assert!(
            output.status.success(),
            "the headers do not compile with {compiler} {std}:\n{}",
            text(&output)
        );
    }
}

#[test]
fn version_macros_match_abi_rs() {
    use hipfile::ffi::abi;
    assert_eq!(
        header_define("HIPFILE_VERSION_MAJOR"),
        abi::HIPFILE_VERSION_MAJOR
    );
    assert_eq!(
        header_define("HIPFILE_VERSION_MINOR"),
        abi::HIPFILE_VERSION_MINOR
    );
    assert_eq!(
        header_define("HIPFILE_VERSION_PATCH"),
        abi::HIPFILE_VERSION_PATCH
    );
    // API level 0.5.0.
    assert_eq!(
        (
            abi::HIPFILE_VERSION_MAJOR,
            abi::HIPFILE_VERSION_MINOR,
            abi::HIPFILE_VERSION_PATCH
        ),
        (0, 5, 0)
    );
}
