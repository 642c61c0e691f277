//! The portable C test suite `tests/c/suite.c`, run against the simulated GPU runtime.
//!
//! Compiles the suite with the system C compiler (`$CC`, default `cc`) against `include/`
//! with `-DSUITE_GPU_HIP`, links it with `libhipsim.so` (the GPU runtime the suite's shim
//! calls) and our `libhipfile.so`, then runs it twice: with the default configuration (aligned
//! device I/O goes through hipsim's GPU-direct entry points, the rest through the fallback
//! engine) and with `HIPFILE_FORCE_COMPAT_MODE=true` (all device I/O through the fallback
//! engine, as on NVIDIA machines). The same source runs on a real GPU through
//! `scripts/gpu/build_suite.sh`.
//!
//! Cargo builds our library as `deps/libhipfile.so` only, while its SONAME (and so the
//! suite's `DT_NEEDED`) is `libhipfile.so.0`: a directory under `CARGO_TARGET_TMPDIR` holds a
//! `libhipfile.so.0` symlink and is put on the executable's run path.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// `target/<profile>/deps`, where cargo puts `libhipsim.so` and `libhipfile.so`.
fn deps_dir() -> PathBuf {
    std::env::current_exe()
        .expect("path of the test executable")
        .parent()
        .expect("deps directory")
        .to_path_buf()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_suite");
    std::fs::create_dir_all(&dir).expect("create the work directory");
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Compiles the suite once per test process; returns the executable.
fn suite_exe() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let deps = deps_dir();
        let hipsim = deps.join("libhipsim.so");
        let hipfile = deps.join("libhipfile.so");
        for lib in [&hipsim, &hipfile] {
            assert!(
                lib.exists(),
                "{} is missing (it is built with the tests)",
                lib.display()
            );
        }

        // libhipfile.so.0 -> deps/libhipfile.so, for the run-time loader.
        let lib_dir = work_dir().join("lib");
        std::fs::create_dir_all(&lib_dir).expect("create the library directory");
        let link = lib_dir.join("libhipfile.so.0");
        // A stale link from an earlier build is replaced.
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&hipfile, &link).expect("symlink libhipfile.so.0");

        let exe = work_dir().join("suite");
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let mut build = Command::new(&cc);
        build
            .args([
                "-std=c11",
                "-D_GNU_SOURCE",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-O2",
                "-DSUITE_GPU_HIP",
            ])
            .arg("-I")
            .arg(root().join("include"))
            .arg(root().join("tests/c/suite.c"))
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", deps.display()))
            .args(["-lhipfile", "-lhipsim", "-pthread"])
            .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
            .arg(format!("-Wl,-rpath,{}", deps.display()));
        println!("building: {build:?}");
        let out = build.output().unwrap_or_else(|e| {
            panic!("cannot run the C compiler {cc:?} (a C toolchain is required): {e}")
        });
        assert!(
            out.status.success(),
            "compiling tests/c/suite.c failed ({}):\n{}{}",
            out.status,
            text(&out.stdout),
            text(&out.stderr)
        );
        exe
    })
}

/// Runs the suite with `env` added to a clean hipfile environment; panics unless it passes.
fn run_suite(mode: &str, env: &[(&str, &str)]) {
    // The two runs move several GiB each: one at a time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());

    let exe = suite_exe();
    let scratch = work_dir().join(format!("files-{mode}-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("create the scratch directory");

    let hipsim = deps_dir().join("libhipsim.so");
    let mut cmd = Command::new(exe);
    cmd.arg(&scratch).arg("--case-timeout=600");
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
            cmd.env_remove(&k);
        }
    }
    // Cargo's LD_LIBRARY_PATH may name target/<profile>, where an older libhipsim.so from a
    // plain `cargo build` can sit: the suite must load the copy its rpath names, the one
    // HIPFILE_HIP_LIBRARY names too, or it would see two simulated GPUs.
    cmd.env_remove("LD_LIBRARY_PATH");
    cmd.env("HIPFILE_HIP_LIBRARY", &hipsim);
    cmd.env("HIPFILE_CUDA_LIBRARY", &hipsim);
    cmd.env("HIPFILE_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    println!("running ({mode}): {cmd:?}");
    let out = cmd.output().expect("run the suite");
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    println!("--- suite output ({mode})\n{stdout}");
    if !stderr.is_empty() {
        println!("--- suite stderr ({mode})\n{stderr}");
    }
    let summary = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("passed "))
        .unwrap_or("");
    let failed_zero = summary.split(" / ").nth(1) == Some("failed 0");
    let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(
        out.status.success() && failed_zero && failures.is_empty(),
        "the C suite failed in mode {mode} ({}; summary {summary:?}):\n{}",
        out.status,
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn c_suite_on_hipsim() {
    run_suite("default", &[]);
}

#[test]
fn c_suite_on_hipsim_force_compat_mode() {
    run_suite("compat", &[("HIPFILE_FORCE_COMPAT_MODE", "true")]);
}
