//! What the header tests (C and C++ compiled against `include/`) share: the repository, an
//! output directory of their own, running a compiler and showing what it printed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `CARGO_TARGET_TMPDIR/<name>`, created.
pub fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).expect("create the output directory");
    dir
}

/// Run `command` (printing it), panicking only when it cannot be started.
pub fn run(mut command: Command) -> Output {
    println!("running: {command:?}");
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?} (a C/C++ toolchain is required): {e}"))
}

/// What a command printed, standard output then standard error.
pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Build `source` (a path under the repository) with `build`, which writes `exe`; run `exe`
/// and expect it to succeed printing exactly `expected`.
pub fn build_and_run(build: Command, source: &str, exe: &Path, expected: &str) {
    let built = run(build);
    assert!(
        built.status.success(),
        "{source} does not compile ({}):\n{}",
        built.status,
        text(&built)
    );
    let ran = run(Command::new(exe));
    assert!(
        ran.status.success(),
        "{} failed ({}):\n{}",
        exe.display(),
        ran.status,
        text(&ran)
    );
    assert_eq!(String::from_utf8_lossy(&ran.stdout), expected);
}
