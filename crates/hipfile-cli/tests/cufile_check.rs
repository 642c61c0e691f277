//! The cuFile lines of `hipfile check` on the simulator's CUDA side: NVIDIA's cuFile verdict
//! from this machine's nvidia-fs and udev state, and which `libcufile.so.0` is loaded.

mod common;
use common::{hipsim, run_hipfile, scratch, text};

use std::path::{Path, PathBuf};
use std::process::Output;

#[path = "../src/json.rs"]
#[allow(dead_code)]
mod json;

use json::parse::parse;
use json::Value;

fn check_json(preload: Option<&Path>) -> Value {
    let tmp = scratch("cufile-check");
    let sim = hipsim().display().to_string();
    let mut env = vec![
        ("HIPFILE_PLATFORM", "nvidia".to_string()),
        ("HIPFILE_CUDA_LIBRARY", sim),
    ];
    if let Some(p) = preload {
        env.push(("LD_PRELOAD", p.display().to_string()));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out: Output = run_hipfile(&tmp, false, &env, &["check", "--json"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let v = parse(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    std::fs::remove_dir_all(&tmp).unwrap();
    v
}

/// `libcufile.so` built next to the test executables (a dev-dependency of the workspace root;
/// built now when this crate's tests are built alone).
fn libcufile() -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let p = deps.join("libcufile.so");
    if !p.is_file() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", "hipfile-cufile"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(status.success());
        return deps.parent().unwrap().join("libcufile.so");
    }
    p
}

fn expected_verdict() -> (bool, &'static str) {
    let nvfs = Path::new("/proc/driver/nvidia-fs").exists();
    let udev = Path::new("/run/udev").is_dir();
    let prefix = match (nvfs, udev) {
        (true, _) => "would work",
        (false, false) => "refuses files",
        (false, true) => "compat mode only",
    };
    (nvfs || udev, prefix)
}

#[test]
fn nvidia_cufile_verdict_and_nothing_loaded() {
    let v = check_json(None);
    let c = v.get("cufile").expect("a cufile section on NVIDIA");
    let (works, prefix) = expected_verdict();
    assert_eq!(c.get("nvidia_cufile_works"), Some(&Value::Bool(works)));
    assert!(
        c.get("nvidia_cufile")
            .and_then(Value::as_str)
            .unwrap()
            .starts_with(prefix),
        "{c:?}"
    );
    assert_eq!(
        c.get("udev"),
        Some(&Value::Bool(Path::new("/run/udev").is_dir()))
    );
    assert_eq!(c.get("loaded"), Some(&Value::Null), "{c:?}");
}

#[test]
fn preloaded_hipfile_cufile_is_recognised() {
    let lib = libcufile();
    let v = check_json(Some(&lib));
    let loaded = v.get("cufile").unwrap().get("loaded").unwrap();
    assert_eq!(
        loaded.get("hipfile"),
        Some(&Value::Bool(true)),
        "{loaded:?}"
    );
    assert_eq!(
        loaded
            .get("path")
            .and_then(Value::as_str)
            .map(PathBuf::from),
        Some(lib)
    );
    // The engine did not take it as NVIDIA's GPU-direct path.
    assert!(v
        .get("runtime")
        .and_then(Value::as_str)
        .unwrap()
        .contains("libcufile.so.0 is hipfile's own cuFile library"));
}

#[test]
fn no_cufile_section_on_amd() {
    let tmp = scratch("cufile-check-amd");
    let out = run_hipfile(&tmp, true, &[], &["check", "--json"]);
    let v = parse(text(&out.stdout).trim()).unwrap();
    assert_eq!(v.get("cufile"), Some(&Value::Null));
    std::fs::remove_dir_all(&tmp).unwrap();
}
