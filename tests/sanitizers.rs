//! The C programs under sanitizers, against the library as built for the tests:
//!
//! * `tests/c/suite.c` and the C examples compiled with gcc's `-fsanitize=address,undefined`
//!   (the library and the simulator are not instrumented; AddressSanitizer still checks every
//!   byte our library touches through the interposed `memcpy`/`memset`/`malloc` family, every
//!   access the C code makes to what the library returns, and LeakSanitizer every allocation at
//!   exit);
//! * a subset of the suite (handles, buffers, batch) under valgrind's memcheck, which also sees
//!   the library's own loads and stores.
//!
//! A sanitizer report fails the test. Without valgrind the memcheck test says so and passes
//! only outside CI (`CI` unset); `.ci/run` installs it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn work_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sanitizers");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `libhipfile.so.0` -> the library under test, for the programs' run path.
fn lib_dir() -> PathBuf {
    let d = work_dir().join("lib");
    std::fs::create_dir_all(&d).unwrap();
    for name in ["libhipfile.so", "libhipfile.so.0"] {
        let link = d.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(libhipfile_path(), &link).unwrap();
    }
    d
}

const SANITIZE: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=undefined",
    "-fno-omit-frame-pointer",
    "-g",
    "-O1",
];

/// Compiles `src` into `name` with `flags`, linked against the library and the simulator.
fn build(src: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let exe = work_dir().join(name);
    let tmp = work_dir().join(format!("{name}.{}.tmp", std::process::id()));
    let libs = lib_dir();
    let deps = deps_dir();
    let _ = hipsim_path();
    let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-std=c11",
            "-D_GNU_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-DSUITE_GPU_HIP",
        ])
        .args(flags)
        .arg("-I")
        .arg(root().join("include"))
        .arg(src)
        .arg("-o")
        .arg(&tmp)
        .arg(format!("-L{}", libs.display()))
        .arg(format!("-L{}", deps.display()))
        .args(["-lhipfile", "-lhipsim", "-pthread"])
        .arg(format!("-Wl,-rpath,{}", libs.display()))
        .arg(format!("-Wl,-rpath,{}", deps.display()))
        .output()
        .expect("run the C compiler");
    assert!(
        out.status.success(),
        "compiling {} with {flags:?} failed:\n{}{}",
        src.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&tmp, &exe).unwrap();
    exe
}

/// A command with a clean hipfile environment pointing at the simulator.
fn command(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars() {
        if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env_remove("LD_LIBRARY_PATH")
        .env("HIPFILE_HIP_LIBRARY", hipsim_path())
        .env("HIPFILE_CUDA_LIBRARY", hipsim_path())
        .env("HIPFILE_LOG", "error")
        // halt_on_error: the first report ends the program with a failure.
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86",
        )
        .env(
            "UBSAN_OPTIONS",
            "halt_on_error=1:print_stacktrace=1:exitcode=87",
        );
    cmd
}

/// Panics on any sanitizer report in `out`'s standard error.
fn assert_no_report(what: &str, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    for marker in [
        "ERROR: AddressSanitizer",
        "ERROR: LeakSanitizer",
        "runtime error:",
        "== ERROR",
    ] {
        assert!(
            !stderr.contains(marker),
            "{what}: sanitizer report ({marker}):\n{stderr}"
        );
    }
}

/// The suite's summary line, checked: every case passed.
fn assert_suite_passed(what: &str, out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("passed "))
        .unwrap_or("")
        .to_string();
    let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(
        out.status.success() && summary.contains(" / failed 0") && failures.is_empty(),
        "{what} ({}; {summary:?}):\n{}\n--- stderr\n{}",
        out.status,
        failures.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    summary
}

#[test]
fn c_suite_under_address_and_undefined_sanitizers() {
    let exe = build(&root().join("tests/c/suite.c"), "suite-asan", SANITIZE);
    let scratch = work_dir().join(format!("suite-asan-files-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let out = command(&exe)
        .arg(&scratch)
        .arg("--case-timeout=900")
        .output()
        .unwrap();
    assert_no_report("C suite under ASan/UBSan", &out);
    let summary = assert_suite_passed("C suite under ASan/UBSan", &out);
    println!("C suite under ASan+UBSan: {summary}");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn c_examples_under_address_and_undefined_sanitizers() {
    let data = pattern((8 << 20) + 4097, 5);
    let src = scratch_file("asan-src");
    let dst = scratch_file("asan-dst");
    std::fs::write(&src, &data).unwrap();
    let copy = build(
        &root().join("examples/copy_file.c"),
        "copy_file-asan",
        SANITIZE,
    );
    let out = command(&copy).arg(&src).arg(&dst).output().unwrap();
    assert_no_report("copy_file under ASan/UBSan", &out);
    assert!(out.status.success(), "copy_file failed: {out:?}");
    assert!(
        std::fs::read(&dst).unwrap() == data,
        "copy_file's copy differs"
    );
    let batch = build(
        &root().join("examples/batch_read.c"),
        "batch_read-asan",
        SANITIZE,
    );
    let out = command(&batch).arg(&src).arg("65536").output().unwrap();
    assert_no_report("batch_read under ASan/UBSan", &out);
    assert!(out.status.success(), "batch_read failed: {out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("{} bytes in", data.len())),
        "batch_read output: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&dst);
}

#[test]
fn c_suite_subset_under_valgrind_memcheck() {
    let valgrind = Command::new("valgrind").arg("--version").output();
    if !valgrind.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var_os("CI").is_none(),
            "valgrind is missing in CI (.ci/run installs it)"
        );
        println!("SKIP: valgrind is not installed");
        return;
    }
    let exe = build(
        &root().join("tests/c/suite.c"),
        "suite-plain",
        &["-g", "-O1"],
    );
    let mut lines = Vec::new();
    for group in ["handles", "buffers", "batch"] {
        let scratch = work_dir().join(format!("valgrind-{group}-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        let mut cmd = command(Path::new("valgrind"));
        cmd.args([
            "--tool=memcheck",
            "--error-exitcode=97",
            "--leak-check=full",
            "--show-leak-kinds=definite",
            "--errors-for-leak-kinds=definite",
            "--track-origins=no",
            "-q",
        ])
        .arg(&exe)
        .arg(&scratch)
        .arg(format!("--only={group}"))
        .arg("--case-timeout=900");
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        for marker in [
            "Invalid read",
            "Invalid write",
            "Invalid free",
            "Mismatched free",
            "uninitialised",
            "definitely lost",
            "overlap",
        ] {
            assert!(
                !stderr.contains(marker),
                "valgrind, group {group}: {marker}:\n{stderr}"
            );
        }
        assert_ne!(
            out.status.code(),
            Some(97),
            "valgrind errors in group {group}:\n{stderr}"
        );
        let summary = assert_suite_passed(&format!("valgrind, group {group}"), &out);
        lines.push(format!("{group}: {summary}"));
        let _ = std::fs::remove_dir_all(&scratch);
    }
    println!("C suite under valgrind memcheck: {}", lines.join("; "));
}
