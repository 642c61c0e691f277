//! Running other programs from a test: a clean environment, what they printed, the `hipfile`
//! tool of this build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use super::deps_dir;

/// Remove every `HIPFILE_*` and `HIPSIM_*` variable of this process from `cmd`'s environment:
/// the program sees only the settings the test gives it.
pub fn without_settings(cmd: &mut Command) -> &mut Command {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
            cmd.env_remove(&*k);
        }
    }
    cmd
}

/// A command for `program` with no hipfile or hipsim setting and no `LD_LIBRARY_PATH`: cargo's
/// names `target/` folders, where another copy of `libhipsim.so` or `libhipfile.so` can sit;
/// the program loads exactly the libraries its run path (or the test) names.
pub fn program(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    without_settings(&mut cmd).env_remove("LD_LIBRARY_PATH");
    cmd
}

/// What a program wrote on its standard output.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a program wrote on its standard error.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What a program printed, standard output then standard error.
pub fn text(out: &Output) -> String {
    stdout(out) + &stderr(out)
}

/// A program's exit status and both streams, for a failed assertion's message.
pub fn report(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        stdout(out),
        stderr(out)
    )
}

/// `out`'s standard output, after asserting that `what` succeeded (else both streams).
pub fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}",
        out.status,
        text(out)
    );
    stdout(out)
}

/// The `hipfile` tool of this test's profile (`target/<profile>/hipfile`), built first, once
/// per test process: it links the library, so a binary older than the library would test old
/// code (the build is a no-op when it is up to date).
pub fn hipfile_tool() -> &'static Path {
    static TOOL: OnceLock<PathBuf> = OnceLock::new();
    TOOL.get_or_init(|| {
        let profile_dir = deps_dir().parent().unwrap().to_path_buf();
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "-q", "-p", "hipfile-cli"]);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build -p hipfile-cli");
        assert!(status.success(), "cargo build -p hipfile-cli: {status}");
        let exe = profile_dir.join("hipfile");
        assert!(exe.is_file(), "{} is missing", exe.display());
        exe
    })
}
