//! The C examples (`copy_file.c`, `batch_read.c`, `async_read.c`): built with the system C compiler, `-Wall -Wextra -Werror`, against `include/hipfile.h` and linked
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
use std::sync::Mutex;

use common::cc::CProgram;
use common::*;

fn work_dir() -> PathBuf {
    out_dir("examples")
}

/// `examples/NAME.c`, compiled with `-Wall -Wextra -Werror` and linked once per test process.
fn example_binary(name: &str) -> PathBuf {
    static BINS: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let mut bins = BINS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, b)) = bins.iter().find(|(n, _)| n == name) {
        return b.clone();
    }
    let bin = CProgram::new(format!("examples/{name}.c"), work_dir().join(name))
        .headers()
        .hipfile()
        .hipsim()
        .build();
    bins.push((name.to_string(), bin.clone()));
    bin
}

fn copy_file_binary() -> PathBuf {
    example_binary("copy_file")
}

/// Run an example with the library pointed at hipsim and its logging limited to errors
/// (the library warns once that it runs on the simulated runtime).
fn run_example(name: &str, args: &[&Path]) -> Output {
    // The hipsim its rpath names is the one HIPFILE_HIP_LIBRARY names too.
    let mut cmd = program(example_binary(name));
    cmd.args(args)
        .env("HIPFILE_HIP_LIBRARY", hipsim_path())
        .env("HIPFILE_LOG", "error");
    cmd.output().expect("run the example")
}

fn run_copy_file(args: &[&Path]) -> Output {
    run_example("copy_file", args)
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

/// 64-bit FNV-1a, as `batch_read` prints it.
fn run_batch_read(file: &Path, block: Option<&str>) -> Output {
    let block = block.map(PathBuf::from);
    let mut args = vec![file];
    if let Some(b) = &block {
        args.push(b);
    }
    run_example("batch_read", &args)
}

#[test]
fn batch_read_reads_a_file_in_rounds_of_batch_operations() {
    // 3 MiB + 123 bytes in 256 KiB blocks: 13 operations, a full round of 16 is not reached;
    // 64 KiB blocks: 49 operations in 4 rounds (16, 16, 16, 1), the last one short.
    let data = random_bytes((3 << 20) + 123);
    let file = scratch_file("batch-read");
    std::fs::write(&file, &data).unwrap();
    for (block, ops, rounds) in [("262144", 13, 1), ("65536", 49, 4)] {
        let out = run_batch_read(&file, Some(block));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "batch_read failed:\n{stderr}");
        assert!(stderr.is_empty(), "{stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!(
                "{}: {} bytes in {ops} batch reads ({rounds} rounds), fnv1a64 0x{:016x}\n",
                file.display(),
                data.len(),
                fnv1a64(&data)
            )
        );
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn async_read_reads_a_file_on_two_streams() {
    // 3 MiB + 123 bytes in 256 KiB blocks: 13 reads alternating between the two streams;
    // in 1 MiB blocks: 4 reads, the last one short.
    let data = random_bytes((3 << 20) + 123);
    let file = scratch_file("async-read");
    std::fs::write(&file, &data).unwrap();
    for (block, ops) in [("262144", 13), ("1048576", 4)] {
        let block = PathBuf::from(block);
        let out = run_example("async_read", &[file.as_path(), block.as_path()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "async_read failed:\n{stderr}");
        assert!(stderr.is_empty(), "{stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!(
                "{}: {} bytes in {ops} async reads on 2 streams, fnv1a64 0x{:016x}\n",
                file.display(),
                data.len(),
                fnv1a64(&data)
            )
        );
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn batch_read_reports_a_missing_file_and_a_bad_block_size() {
    let file = scratch_file("batch-read-missing");
    let out = run_batch_read(&file, None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        format!(
            "batch_read: cannot open {}: No such file or directory",
            file.display()
        )
    );
    let out = run_batch_read(&file, Some("0"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "batch_read: BLOCK_BYTES must be a number from 1 to 1073741824"
    );
}

/// IS_HIPFILE_ERR and HIPFILE_ERRSTR on `int` and `ssize_t` arguments compile without a
/// warning under `-Wall -Wextra -Werror` and give the same answers for both types.
#[test]
fn error_macros_take_int_and_ssize_t_without_warnings() {
    let src = work_dir().join("macros.c");
    std::fs::write(
        &src,
        r#"#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <hipfile.h>
int main(void)
{
    const ssize_t s[] = {-5022, 5022, -5000, -1, 0, -1, -999};
    const int i[] = {-5022, 5022, -5000, -1, 0, -1, -999};
    for (unsigned k = 0; k < sizeof s / sizeof s[0]; k++) {
        printf("%d%d", IS_HIPFILE_ERR(s[k]) ? 1 : 0, IS_HIPFILE_ERR(i[k]) ? 1 : 0);
    }
    printf(" %s\n", HIPFILE_ERRSTR(s[0]) == HIPFILE_ERRSTR(i[1]) ? "same" : "different");
    return 0;
}
"#,
    )
    .unwrap();
    let bin = CProgram::new(
        &src,
        work_dir().join(format!("macros.{}", std::process::id())),
    )
    .headers()
    .hipfile()
    .build();
    let run = Command::new(&bin)
        .env("HIPFILE_PLATFORM", "host")
        .env("HIPFILE_LOG", "error")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "11110000000000 same\n"
    );
    let _ = std::fs::remove_file(&bin);
}
