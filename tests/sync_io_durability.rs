//! Synchronous I/O: durable writes (one `fdatasync` per write call, counted with `strace`).
//!
//! Shared set-up and what the sync suites compare: `tests/common/sync_io.rs`.

mod common;

use std::process::Command;

use common::sync_io::*;
use common::*;

// ---- durability ------------------------------------------------------------------

/// Body of [`durable_writes_one_fdatasync_per_call`], run in a child under `strace`.
#[test]
fn durable_writes_body() {
    if !in_child() {
        return;
    }
    open_driver();
    let s = sim();
    let size = MIB + 1; // above the inline threshold: parallel chunks
    let a = TestFile::rw("durable-fallback", &[]);
    let dev = sim().device_alloc(2 * MIB);
    let data = pattern(size, 29);
    s.upload(dev.ptr, &data);
    for i in 0..3 {
        assert_eq!(
            wr(a.fh, dev.ptr, size, (i * size) as i64 + 1, 0),
            size as isize
        );
    }
    for i in 0..2 {
        assert_eq!(
            rd(a.fh, dev.ptr, size, (i * size) as i64 + 1, 0),
            size as isize
        );
    }
    let b = TestFile::rw("durable-host", &[]);
    let v = pattern(size, 30);
    for i in 0..2 {
        assert_eq!(
            wr(b.fh, v.as_ptr().cast(), size, (i * size) as i64, 0),
            size as isize
        );
    }
    let mut expect = vec![0u8; 1];
    for _ in 0..3 {
        expect.extend_from_slice(&data);
    }
    assert_eq!(a.contents(), expect);
    assert_eq!(b.contents(), [v.clone(), v].concat());
    // By path: the library syncs its own descriptors of the files, not the test's.
    println!(
        "DURABLE fallback_path={} host_path={}",
        a.path.display(),
        b.path.display()
    );
}

fn strace_usable() -> bool {
    Command::new("strace")
        .args(["-qq", "-o", "/dev/null", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn durable_writes_one_fdatasync_per_call() {
    if in_child() {
        return;
    }
    if !strace_usable() {
        // A skip where strace is missing or may not trace (no ptrace in a container); CI
        // installs it and sets HIPFILE_REQUIRE_STRACE=1, so there the check cannot be lost.
        assert!(
            std::env::var("HIPFILE_REQUIRE_STRACE").as_deref() != Ok("1"),
            "strace cannot trace here but HIPFILE_REQUIRE_STRACE=1: install strace (and allow ptrace)"
        );
        eprintln!("durable_writes_one_fdatasync_per_call: strace cannot trace here; durability not checked");
        return;
    }
    for (sync, per_call) in [("true", 1usize), ("false", 0)] {
        let trace = scratch_file("strace");
        let child = child_command(
            "durable_writes_body",
            &[
                ("HIPFILE_CHUNK_SIZE", "65536"),
                ("HIPFILE_IO_THREADS", "4"),
                ("HIPFILE_FALLBACK_SYNC_WRITES", sync),
            ],
        );
        let mut cmd = Command::new("strace");
        cmd.args(["-f", "-qq", "-y", "-e", "trace=fdatasync", "-o"])
            .arg(&trace)
            .arg(child.get_program())
            .args(child.get_args());
        for (k, v) in child.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "traced child failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("DURABLE ").map(|(_, rest)| rest))
            .expect("the child reports its descriptors");
        let fd_of = |key: &str| -> String {
            line.split(' ')
                .find_map(|w| w.strip_prefix(key))
                .unwrap()
                .to_string()
        };
        let (fa, fb) = (fd_of("fallback_path="), fd_of("host_path="));
        let log = std::fs::read_to_string(&trace).unwrap();
        // strace -y writes each descriptor with its path: `fdatasync(7</path/to/file>)`.
        let count = |path: &str| {
            log.lines()
                .filter(|l| l.contains("fdatasync(") && l.contains(&format!("<{path}>)")))
                .count()
        };
        eprintln!(
            "HIPFILE_FALLBACK_SYNC_WRITES={sync}: fdatasync on the fallback file {}, host file {}",
            count(&fa),
            count(&fb)
        );
        assert_eq!(
            count(&fa),
            3 * per_call,
            "fallback: 3 writes (2 reads), sync={sync}\n{log}"
        );
        assert_eq!(
            count(&fb),
            2 * per_call,
            "host: 2 writes, sync={sync}\n{log}"
        );
        let _ = std::fs::remove_file(&trace);
    }
}
