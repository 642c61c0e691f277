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

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use common::cc::CProgram;
use common::cprog::{suite_groups, suite_passed};
use common::{hipsim_path, out_dir, program, stderr, stdout};

/// Compiles the suite once per test process; returns the executable.
fn suite_exe() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        CProgram::new("tests/c/suite.c", out_dir("c_suite").join("suite"))
            .headers()
            .flags(["-D_GNU_SOURCE", "-O2", "-DSUITE_GPU_HIP"])
            .hipfile()
            .hipsim()
            .build()
    })
}

/// Runs the suite with `env` added to a clean hipfile environment; panics unless it passes.
fn run_suite(mode: &str, env: &[(&str, &str)]) {
    // The two runs move several GiB each: one at a time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());

    let exe = suite_exe();
    let scratch = out_dir("c_suite").join(format!("files-{mode}-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("create the scratch directory");

    // The copy of libhipsim.so the suite's run path names is the one HIPFILE_HIP_LIBRARY names
    // too, or it would see two simulated GPUs.
    let mut cmd = program(exe);
    cmd.arg(&scratch)
        .arg("--case-timeout=600")
        .env("HIPFILE_HIP_LIBRARY", hipsim_path())
        .env("HIPFILE_CUDA_LIBRARY", hipsim_path())
        .env("HIPFILE_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    println!("running ({mode}): {cmd:?}");
    let out = cmd.output().expect("run the suite");
    println!("--- suite output ({mode})\n{}", stdout(&out));
    if !out.stderr.is_empty() {
        println!("--- suite stderr ({mode})\n{}", stderr(&out));
    }
    suite_passed(
        &format!("the C suite in mode {mode}"),
        &out,
        &suite_groups(None, None),
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
