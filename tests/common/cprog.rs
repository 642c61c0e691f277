//! Small C programs of `tests/c/` compiled against our header and linked with our library and
//! the simulated runtime, run with a clean hipfile environment.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::cc::CProgram;
use super::{out_dir, program, stderr, stdout};

/// Compile `tests/c/<name>.c` (`-D_GNU_SOURCE -O2`) into the test binary's temporary directory,
/// linked with our library and the simulated runtime (`-DWITH_SIM`); returns the executable.
pub fn compile(name: &str) -> PathBuf {
    build(name, true)
}

/// [`compile`] without the simulated runtime: the program links our library only.
pub fn compile_without_sim(name: &str) -> PathBuf {
    build(name, false)
}

fn build(name: &str, with_sim: bool) -> PathBuf {
    let tag = if with_sim { "sim" } else { "nosim" };
    let exe = out_dir("cprog").join(format!("{name}-{tag}"));
    let c = CProgram::new(format!("tests/c/{name}.c"), exe)
        .headers()
        .flags(["-D_GNU_SOURCE", "-O2"])
        .hipfile();
    if with_sim {
        c.flags(["-DWITH_SIM"]).hipsim().build()
    } else {
        c.link(["-pthread"]).build()
    }
}

/// Run `exe` with `args` and `env` added to an environment without hipfile or hipsim
/// variables (the simulated runtime is found as the program links it).
pub fn run(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = program(exe);
    cmd.args(args).env("HIPFILE_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the C program")
}

/// The summary line of `tests/c/suite.c` (`passed N / failed 0 / skipped K`), after asserting
/// that its run `what` passed: a success status, no failed case.
pub fn suite_passed(what: &str, out: &Output) -> String {
    let stdout = stdout(out);
    let summary = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("passed "))
        .unwrap_or("")
        .to_string();
    let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(
        out.status.success()
            && summary.split(" / ").nth(1) == Some("failed 0")
            && failures.is_empty(),
        "{what} failed ({}; summary {summary:?}):\n{}\n--- stderr\n{}",
        out.status,
        failures.join("\n"),
        stderr(out)
    );
    summary
}
