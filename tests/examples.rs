//! The C examples: built with the system C compiler against `include/hipfile.h` and linked
//! against our `libhipfile.so` as any application would be (`-lhipfile`), with the simulated
//! runtime (`libhipsim.so`) providing the HIP functions the examples call themselves.
//!
//! Cargo leaves the library as `target/<profile>/deps/libhipfile.so`; the SONAME recorded in
//! the program is `libhipfile.so.0`, so the test makes a directory with both names pointing
//! at that file and puts it on the program's run path (`-Wl,-rpath`), as an installation
//! would provide them.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("examples");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A directory with `libhipfile.so` and `libhipfile.so.0` naming the library under test.
fn lib_dir() -> PathBuf {
    let d = out_dir().join("lib");
    std::fs::create_dir_all(&d).unwrap();
    let target = libhipfile_path();
    for name in ["libhipfile.so", "libhipfile.so.0"] {
        let link = d.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
    }
    d
}

/// `examples/copy_file.c`, compiled and linked once per test process.
fn copy_file_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let libs = lib_dir();
        let deps = deps_dir();
        let _ = hipsim_path(); // asserts it was built
                               // Built under a private name, then renamed: concurrent test runs never see a partial file.
        let bin = out_dir().join("copy_file");
        let tmp = out_dir().join(format!("copy_file.{}.tmp", std::process::id()));
        let out = Command::new("cc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(root().join("include"))
            .arg(root().join("examples/copy_file.c"))
            .arg("-o")
            .arg(&tmp)
            .arg(format!("-L{}", libs.display()))
            .arg(format!("-L{}", deps.display()))
            .args(["-lhipfile", "-lhipsim"])
            .arg(format!("-Wl,-rpath,{}", libs.display()))
            .arg(format!("-Wl,-rpath,{}", deps.display()))
            .output()
            .expect("run the system C compiler `cc`");
        assert!(
            out.status.success(),
            "compiling examples/copy_file.c failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(&tmp, &bin).unwrap();
        bin
    })
}

/// Run `copy_file` with the library pointed at hipsim and its logging limited to errors
/// (the library warns once that it runs on the simulated runtime).
fn run_copy_file(args: &[&Path]) -> Output {
    let mut cmd = Command::new(copy_file_binary());
    cmd.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
            cmd.env_remove(&k);
        }
    }
    // Load the hipsim its rpath names, the one HIPFILE_HIP_LIBRARY names too (cargo's
    // LD_LIBRARY_PATH may lead to another copy in target/<profile>).
    cmd.env_remove("LD_LIBRARY_PATH")
        .env("HIPFILE_HIP_LIBRARY", hipsim_path())
        .env("HIPFILE_LOG", "error");
    cmd.output().expect("run copy_file")
}

fn random_bytes(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut v)
        .unwrap();
    v
}

fn assert_copies(tag: &str, contents: &[u8]) {
    let src = scratch_file(&format!("{tag}-src"));
    let dst = scratch_file(&format!("{tag}-dst"));
    std::fs::write(&src, contents).unwrap();
    // A stale, longer destination must be truncated.
    std::fs::write(&dst, vec![0xA5u8; contents.len() + 12345]).unwrap();
    let out = run_copy_file(&[&src, &dst]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "copy_file failed:\n{stdout}{stderr}"
    );
    assert!(
        stdout.is_empty() && stderr.is_empty(),
        "copy_file prints nothing on success:\n{stdout}{stderr}"
    );
    let copied = std::fs::read(&dst).unwrap();
    assert_eq!(copied.len(), contents.len(), "{tag}: size of the copy");
    assert!(
        copied == contents,
        "{tag}: the copy differs from the source"
    );
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&dst);
}

#[test]
fn copy_file_copies_a_64_mib_random_file() {
    assert_copies("copy64m", &random_bytes(64 << 20));
}

#[test]
fn copy_file_copies_in_several_rounds_and_odd_sizes() {
    // 64 MiB + 4097 bytes: two buffers, the second a short, unaligned one.
    assert_copies("copy64m-odd", &random_bytes((64 << 20) + 4097));
    assert_copies("copy-small", &random_bytes(12345));
    assert_copies("copy-empty", &[]);
}

#[test]
fn copy_file_reports_a_missing_source() {
    let src = scratch_file("missing-src");
    let dst = scratch_file("missing-dst");
    let out = run_copy_file(&[&src, &dst]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "exit status for a missing source; stderr:\n{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr.trim_end(),
        format!(
            "copy_file: cannot open {}: No such file or directory",
            src.display()
        )
    );
    assert!(
        !dst.exists(),
        "nothing is created when the source cannot be opened"
    );
}

#[test]
fn copy_file_reports_usage() {
    let out = run_copy_file(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "usage: copy_file SOURCE DEST"
    );
}

#[test]
fn copy_file_records_the_soname() {
    let out = Command::new("readelf")
        .arg("-d")
        .arg(copy_file_binary())
        .output()
        .expect("run readelf");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let needed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    assert!(
        needed.contains(&"libhipfile.so.0"),
        "NEEDED entries: {needed:?}"
    );
    assert!(
        !needed.contains(&"libhipfile.so"),
        "the unversioned name must not be recorded: {needed:?}"
    );
}
