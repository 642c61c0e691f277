//! What the tool's integration tests share: the simulated runtime, scratch directories, output
//! text.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `libhipsim.so`: built next to the test executable (it is a dev-dependency), or else built
/// now with `cargo build -p hipsim` (this crate's tests may be built alone).
pub fn hipsim() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let deps = exe.parent().unwrap().to_path_buf(); // target/<profile>/deps
        let profile_dir = deps.parent().unwrap().to_path_buf();
        let find = || {
            [deps.join("libhipsim.so"), profile_dir.join("libhipsim.so")]
                .into_iter()
                .find(|p| p.is_file())
        };
        if let Some(p) = find() {
            return p;
        }
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev".to_string(),
            Some(other) => other.to_string(),
        };
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "hipsim", "--profile", &profile])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("running cargo build -p hipsim");
        assert!(status.success(), "cargo build -p hipsim failed");
        find().unwrap_or_else(|| {
            panic!(
                "libhipsim.so not found in {} after building it",
                deps.display()
            )
        })
    })
}

/// A scratch directory of its own for each test.
pub fn scratch(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hipfile-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `hipfile [--sim=<hipsim>] ARGS` with no hipfile or hipsim variable from this process, `env`
/// added, and TMPDIR=`tmp`. Cargo's LD_LIBRARY_PATH names target/ folders: nothing there should
/// be found by the library's automatic runtime choice.
pub fn hipfile_command(tmp: &Path, sim: bool, env: &[(&str, &str)], args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hipfile"));
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
            cmd.env_remove(&*k);
        }
    }
    cmd.env_remove("LD_LIBRARY_PATH");
    cmd.env("TMPDIR", tmp).env("HIPFILE_LOG", "error");
    for (k, v) in env {
        cmd.env(k, v);
    }
    if sim {
        cmd.arg(format!("--sim={}", hipsim().display()));
    }
    cmd.args(args);
    cmd
}

/// [`hipfile_command`], run to completion.
pub fn run_hipfile(tmp: &Path, sim: bool, env: &[(&str, &str)], args: &[&str]) -> Output {
    hipfile_command(tmp, sim, env, args)
        .output()
        .expect("running hipfile")
}
