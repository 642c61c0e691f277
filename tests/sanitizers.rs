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

use common::cc::CProgram;
use common::cprog::{suite_groups, suite_passed};
use common::*;

fn work_dir() -> PathBuf {
    out_dir("sanitizers")
}

const SANITIZE: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=undefined",
    "-fno-omit-frame-pointer",
    "-g",
    "-O1",
];

/// Compiles `src` into `name` with `flags`, linked against the library and the simulator.
fn build(src: &str, name: &str, flags: &[&str]) -> PathBuf {
    CProgram::new(src, work_dir().join(name))
        .headers()
        .flags(["-D_GNU_SOURCE", "-DSUITE_GPU_HIP"])
        .flags(flags)
        .hipfile()
        .hipsim()
        .build()
}

/// A command with a clean hipfile environment pointing at the simulator.
fn command(exe: &Path) -> Command {
    let mut cmd = program(exe);
    cmd.env("HIPFILE_HIP_LIBRARY", hipsim_path())
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
    let stderr = stderr(out);
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

#[test]
fn c_suite_under_address_and_undefined_sanitizers() {
    let exe = build("tests/c/suite.c", "suite-asan", SANITIZE);
    let scratch = work_dir().join(format!("suite-asan-files-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let out = command(&exe)
        .arg(&scratch)
        .arg("--case-timeout=900")
        .output()
        .unwrap();
    assert_no_report("C suite under ASan/UBSan", &out);
    let summary = suite_passed("C suite under ASan/UBSan", &out, &suite_groups(None, None));
    println!("C suite under ASan+UBSan: {summary}");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn c_examples_under_address_and_undefined_sanitizers() {
    let data = pattern((8 << 20) + 4097, 5);
    let src = scratch_file("asan-src");
    let dst = scratch_file("asan-dst");
    std::fs::write(&src, &data).unwrap();
    let copy = build("examples/copy_file.c", "copy_file-asan", SANITIZE);
    let out = command(&copy).arg(&src).arg(&dst).output().unwrap();
    assert_no_report("copy_file under ASan/UBSan", &out);
    assert!(out.status.success(), "copy_file failed: {out:?}");
    assert!(
        std::fs::read(&dst).unwrap() == data,
        "copy_file's copy differs"
    );
    let batch = build("examples/batch_read.c", "batch_read-asan", SANITIZE);
    let out = command(&batch).arg(&src).arg("65536").output().unwrap();
    assert_no_report("batch_read under ASan/UBSan", &out);
    assert!(out.status.success(), "batch_read failed: {out:?}");
    assert!(
        stdout(&out).contains(&format!("{} bytes in", data.len())),
        "batch_read output: {}",
        stdout(&out)
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
        skipped("valgrind memcheck of the C suite: valgrind is not installed");
        return;
    }
    let exe = build("tests/c/suite.c", "suite-plain", &["-g", "-O1"]);
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
        let stderr = stderr(&out);
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
        let summary = suite_passed(
            &format!("valgrind, group {group}"),
            &out,
            &suite_groups(Some(group), None),
        );
        lines.push(format!("{group}: {summary}"));
        let _ = std::fs::remove_dir_all(&scratch);
    }
    println!("C suite under valgrind memcheck: {}", lines.join("; "));
}
