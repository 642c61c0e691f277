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

/// The cases of each group of `tests/c/suite.c`, in the order it runs them (counted from a run:
/// several groups make one case per row of a table; to be updated with the suite). Passed and
/// skipped cases together must make exactly these: a case may be skipped where the machine
/// lacks something (managed memory, O_DIRECT in the scratch directory, a stream waiting on a
/// memory value), but a case that is not run at all, or a group that stops early, fails.
pub const SUITE_GROUPS: [(&str, usize); 12] = [
    ("setup", 1),
    ("basics", 4),
    ("handles", 7),
    ("buffers", 8),
    ("sync_io", 179),
    ("host", 16),
    ("open_flags", 3),
    ("large", 4),
    ("threads", 4),
    ("batch", 6),
    ("async", 7),
    ("closed_driver", 2),
];

/// The groups [`SUITE_GROUPS`] a run selects, as the suite selects them: `only` and `skip` are
/// its `--only=`/`--skip=` substrings; `setup`, `basics` and `closed_driver` always run.
pub fn suite_groups(only: Option<&str>, skip: Option<&str>) -> Vec<(&'static str, usize)> {
    SUITE_GROUPS
        .iter()
        .copied()
        .filter(|(name, _)| {
            matches!(*name, "setup" | "basics" | "closed_driver")
                || (only.is_none_or(|o| name.contains(o)) && skip.is_none_or(|s| !name.contains(s)))
        })
        .collect()
}

/// The summary line of `tests/c/suite.c` (`passed N / failed 0 / skipped K`), after asserting
/// that its run `what` passed: a success status, no failed case, and in its table of groups
/// exactly the groups `groups` with exactly their cases run (passed or skipped).
pub fn suite_passed(what: &str, out: &Output, groups: &[(&str, usize)]) -> String {
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
    // The table: "group passed failed skipped", one line per group, then "total".
    let table: Vec<(String, usize)> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("group "))
        .skip(1)
        .take_while(|l| !l.starts_with("total "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w.len(), 4, "{what}: a line of the summary table: {l:?}");
            let n = |i: usize| -> usize { w[i].parse().unwrap() };
            (w[0].to_string(), n(1) + n(3))
        })
        .collect();
    let want: Vec<(String, usize)> = groups.iter().map(|&(g, n)| (g.to_string(), n)).collect();
    assert_eq!(
        table, want,
        "{what}: cases run (passed + skipped) per group\n{stdout}"
    );
    summary
}
