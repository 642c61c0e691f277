//! Small C programs of `tests/c/` compiled against our header and linked with our library and
//! the simulated runtime, run with a clean hipfile environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::deps_dir;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Compile `tests/c/<name>.c` (with `-Wall -Wextra -Werror`) into the test binary's temporary
/// directory, linked with our library and the simulated runtime (`-DWITH_SIM`); returns the
/// executable. `libhipfile.so.0` (the library's SONAME) resolves through a directory of links
/// put on the run path.
pub fn compile(name: &str) -> PathBuf {
    build(name, true)
}

/// [`compile`] without the simulated runtime: the program links our library only.
pub fn compile_without_sim(name: &str) -> PathBuf {
    build(name, false)
}

fn build(name: &str, with_sim: bool) -> PathBuf {
    let deps = deps_dir();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cprog");
    let lib_dir = work.join("lib");
    std::fs::create_dir_all(&lib_dir).unwrap();
    let link = lib_dir.join(format!("libhipfile.so.0.{}", std::process::id()));
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(deps.join("libhipfile.so"), &link).unwrap();
    let soname = lib_dir.join("libhipfile.so.0");
    // Replaced atomically: other test processes may be using the directory.
    std::fs::rename(&link, &soname).unwrap();
    let tag = if with_sim { "sim" } else { "nosim" };
    let exe = work.join(format!("{name}-{tag}-{}", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .args([
            "-std=c11",
            "-D_GNU_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O2",
        ])
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join(format!("tests/c/{name}.c")))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", deps.display()))
        .args(if with_sim {
            &["-DWITH_SIM", "-lhipfile", "-lhipsim", "-pthread"][..]
        } else {
            &["-lhipfile", "-pthread"][..]
        })
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg(format!("-Wl,-rpath,{}", deps.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc:?}: {e}"));
    assert!(
        out.status.success(),
        "compiling tests/c/{name}.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Run `exe` with `args` and `env` added to an environment without hipfile or hipsim
/// variables (the simulated runtime is found as the program links it).
pub fn run(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
            cmd.env_remove(&k);
        }
    }
    // The copy of libhipsim.so the run path names, not another one on cargo's library path.
    cmd.env_remove("LD_LIBRARY_PATH");
    cmd.env("HIPFILE_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the C program")
}
