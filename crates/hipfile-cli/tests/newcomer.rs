//! What a new user meets first, through the built `hipfile` tool: `cp` never pretends to use
//! a GPU it does not have, `cp` and `bench` clean up after themselves when they fail or are
//! interrupted, `bench` protects existing files and says which backend served it and the
//! latency percentiles, and sizes below 1 KiB are printed in bytes.

mod common;
use common::{hipfile_command, run_hipfile, scratch, text};

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

#[allow(dead_code)]
#[path = "../src/json.rs"]
mod json;

use json::parse::parse;
use json::Value;

fn hipfile(tmp: &Path, sim: bool, env: &[(&str, &str)], args: &[&str]) -> Output {
    run_hipfile(tmp, sim, env, args)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn random_file(path: &Path, len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(path, &data).unwrap();
    data
}

/// Wait until `cond` holds (at most 60 s).
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on the pid of our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Slow copies on the simulator: every host-device copy sleeps 50 ms, the engine (compat
/// mode) copies every piece twice, so a 4 MiB file in 64 KiB pieces takes about 6 s.
const SLOW: [(&str, &str); 2] = [
    ("HIPSIM_COPY_DELAY_US", "50000"),
    ("HIPFILE_FORCE_COMPAT_MODE", "true"),
];

#[test]
fn cp_without_a_gpu_warns_and_require_gpu_refuses() {
    let tmp = scratch("nogpu-cp");
    let (src, dst) = (tmp.join("src"), tmp.join("dst"));
    let data = random_file(&src, 100_000);
    let host = [("HIPFILE_PLATFORM", "host")];
    let out = hipfile(&tmp, false, &host, &["cp", s(&src), s(&dst)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "hipfile: warning: no GPU runtime is usable (HIPFILE_PLATFORM=host): copying through \
         host memory, not GPU memory\n"
    );
    assert_eq!(std::fs::read(&dst).unwrap(), data);

    let other = tmp.join("other");
    let out = hipfile(
        &tmp,
        false,
        &host,
        &["cp", "--require-gpu", s(&src), s(&other)],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "hipfile: no GPU runtime is usable (HIPFILE_PLATFORM=host): --require-gpu refuses to \
         copy through host memory\n"
    );
    assert!(!other.exists(), "nothing is created");

    // With a GPU runtime (the simulator): no warning, --require-gpu is satisfied.
    let out = hipfile(
        &tmp,
        true,
        &[],
        &["cp", "--require-gpu", s(&src), s(&other)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(std::fs::read(&other).unwrap(), data);
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Start a slow `cp`, wait until it has written its first piece, send `sig`.
fn interrupted_cp(tmp: &Path, src: &Path, dst: &Path, sig: i32) -> Output {
    let child = hipfile_command(
        tmp,
        true,
        &SLOW,
        &["cp", "--io-size", "64K", s(src), s(dst)],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for("the first piece", || {
        std::fs::metadata(dst).is_ok_and(|m| m.len() >= 64 << 10)
    });
    signal(&child, sig);
    child.wait_with_output().unwrap()
}

#[test]
fn cp_interrupted_removes_the_destination_it_created() {
    let tmp = scratch("cp-int");
    let (src, dst) = (tmp.join("src"), tmp.join("dst"));
    random_file(&src, 4 << 20);
    let out = interrupted_cp(&tmp, &src, &dst, libc::SIGINT);
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGINT),
        "ends by the signal"
    );
    assert_eq!(
        text(&out.stderr),
        format!(
            "hipfile: interrupted by SIGINT; removed the incomplete '{}'\n",
            dst.display()
        )
    );
    assert!(!dst.exists(), "the destination it created is gone");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn cp_interrupted_leaves_an_existing_destination_and_says_it_is_incomplete() {
    let tmp = scratch("cp-term");
    let (src, dst) = (tmp.join("src"), tmp.join("dst"));
    random_file(&src, 4 << 20);
    std::fs::write(&dst, b"old contents").unwrap();
    let out = interrupted_cp(&tmp, &src, &dst, libc::SIGTERM);
    assert_eq!(out.status.signal(), Some(libc::SIGTERM));
    assert_eq!(
        text(&out.stderr),
        format!(
            "hipfile: interrupted by SIGTERM; '{}' is incomplete\n",
            dst.display()
        )
    );
    let len = std::fs::metadata(&dst).unwrap().len();
    assert!(
        (64 << 10..4 << 20).contains(&len),
        "left as it was: {len} bytes"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn cp_failure_removes_the_destination_it_created() {
    let tmp = scratch("cp-fail");
    let (src, dst) = (tmp.join("src"), tmp.join("dst"));
    random_file(&src, 1 << 20);
    // Compat mode, the 5th host-device copy fails: the copy stops after a few pieces.
    let env = [
        ("HIPFILE_FORCE_COMPAT_MODE", "true"),
        ("HIPSIM_FAIL_COPY", "hipErrorInvalidValue"),
        ("HIPSIM_FAIL_COPY_AFTER", "4"),
    ];
    let out = hipfile(
        &tmp,
        true,
        &env,
        &["cp", "--io-size", "64K", s(&src), s(&dst)],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("hipfile: error ")
            && stderr.ends_with(&format!("; removed the incomplete '{}'\n", dst.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("hipErrorInvalidValue"),
        "the runtime error is named: {stderr}"
    );
    assert!(!dst.exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn bench_interrupted_removes_its_scratch_file() {
    let tmp = scratch("bench-int");
    // The scratch file: the one file in TMPDIR, once it holds --size bytes.
    let scratch_file = || {
        let files: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
        match files.as_slice() {
            [f] => f.metadata().is_ok_and(|m| m.len() == 4 << 20),
            _ => false,
        }
    };
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let child = hipfile_command(
            &tmp,
            true,
            &SLOW,
            &["bench", "--size", "4M", "--io-size", "64K", "--repeat", "3"],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        wait_for("the scratch file", scratch_file);
        // Well into the runs (each lasts about 6 s).
        std::thread::sleep(Duration::from_millis(1500));
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.signal(), Some(sig), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("interrupted by SIG"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "the scratch file is removed"
        );
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn bench_write_refuses_an_existing_file_without_force() {
    let tmp = scratch("bench-force");
    let file = tmp.join("precious");
    std::fs::write(&file, b"do not overwrite me").unwrap();
    // Not only regular files: a device too (a block device would be a whole disk; /dev/null is
    // the one every machine has, and writing it harms nothing if the check were missing).
    for (target, mode) in [
        (s(&file), "write"),
        (s(&file), "randwrite"),
        ("/dev/null", "write"),
    ] {
        let out = hipfile(
            &tmp,
            true,
            &[],
            &[
                "bench",
                "--mode",
                mode,
                "--file",
                target,
                "--size",
                "1M",
                "--io-size",
                "64K",
            ],
        );
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            text(&out.stderr),
            format!(
                "hipfile: '{target}' exists and --mode {mode} would overwrite it: give --force, \
                 or a --file that does not exist\n"
            )
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"do not overwrite me");
    let out = hipfile(
        &tmp,
        true,
        &[],
        &[
            "bench",
            "--mode",
            "write",
            "--file",
            s(&file),
            "--size",
            "1M",
            "--io-size",
            "64K",
            "--repeat",
            "1",
            "--force",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20);
    // A file that does not exist yet needs no --force.
    let fresh = tmp.join("fresh");
    let out = hipfile(
        &tmp,
        true,
        &[],
        &[
            "bench",
            "--mode",
            "write",
            "--file",
            s(&fresh),
            "--size",
            "1M",
            "--io-size",
            "64K",
            "--repeat",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&tmp).unwrap();
}

fn bench_lines(tmp: &Path, env: &[(&str, &str)], args: &[&str]) -> Vec<String> {
    let mut all = vec!["bench", "--repeat", "1"];
    all.extend_from_slice(args);
    let out = hipfile(tmp, true, env, &all);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_string).collect()
}

#[test]
fn bench_text_names_the_backend_and_the_percentiles() {
    let tmp = scratch("bench-backend");
    let file = tmp.join("data");
    let f = s(&file);
    let compat = [("HIPFILE_FORCE_COMPAT_MODE", "true")];
    let lines = bench_lines(
        &tmp,
        &compat,
        &["--file", f, "--size", "4M", "--io-size", "1M"],
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[1].contains(" usecs p50_Latency: ") && lines[1].contains(" usecs p99_Latency: "),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        "HIPFILE served by: fallback backend (100% of the bytes)"
    );
    let lines = bench_lines(
        &tmp,
        &[],
        &[
            "--file",
            f,
            "--size",
            "4M",
            "--io-size",
            "1M",
            "--mem",
            "host",
        ],
    );
    assert_eq!(
        lines[2],
        "HIPFILE served by: host backend (100% of the bytes)"
    );
    let lines = bench_lines(
        &tmp,
        &[("HIPFILE_STATS_LEVEL", "0")],
        &["--file", f, "--size", "4M", "--io-size", "1M"],
    );
    assert_eq!(
        lines[2],
        "HIPFILE served by: unknown (statistics off: HIPFILE_STATS_LEVEL=0)"
    );
    // The same in JSON: bytes per backend.
    let out = hipfile(
        &tmp,
        true,
        &compat,
        &[
            "bench",
            "--repeat",
            "2",
            "--file",
            f,
            "--size",
            "4M",
            "--io-size",
            "1M",
            "--json",
        ],
    );
    let v = parse(text(&out.stdout).trim()).unwrap();
    let b = v.get("backend_bytes").unwrap();
    let n = |k: &str| b.get(k).and_then(Value::as_f64).unwrap();
    assert_eq!(
        (n("fastpath"), n("fallback"), n("host")),
        (0.0, 8.0 * 1048576.0, 0.0)
    );
    let m = v.get("hipfile").unwrap();
    let lat = |k: &str| m.get(k).and_then(Value::as_f64).unwrap();
    assert!(lat("p50_latency_us") > 0.0 && lat("p99_latency_us") >= lat("p50_latency_us"));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn bench_sizes_below_a_kib_are_in_bytes() {
    let tmp = scratch("bench-units");
    let (a, b, c) = (tmp.join("a"), tmp.join("b"), tmp.join("c"));
    let lines = bench_lines(
        &tmp,
        &[],
        &["--file", s(&a), "--size", "12K", "--io-size", "3"],
    );
    assert!(
        lines[1].starts_with(
            "IoType: READ XferType: HIPFILE Threads: 1 DataSetSize: 12/12(KiB) IOSize: 3(B) "
        ),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains(" ops: 4096 "), "{}", lines[1]);
    let lines = bench_lines(
        &tmp,
        &[],
        &["--file", s(&b), "--size", "1M", "--io-size", "3000"],
    );
    assert!(
        lines[1].contains(" DataSetSize: 1024/1024(KiB) IOSize: 3000(B) ")
            && lines[1].contains(" ops: 350 "),
        "{}",
        lines[1]
    );
    let lines = bench_lines(
        &tmp,
        &[],
        &["--file", s(&c), "--size", "1000", "--io-size", "100"],
    );
    assert!(
        lines[1].contains(" DataSetSize: 1000/1000(B) IOSize: 100(B) "),
        "{}",
        lines[1]
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn slow_request_sizes_are_warned_about() {
    let tmp = scratch("slow");
    let (src, dst) = (tmp.join("src"), tmp.join("dst"));
    let data = random_file(&src, 8 << 10);
    // 2048 writes of 4 bytes; without the per-write fdatasync so that the test is quick.
    let out = hipfile(
        &tmp,
        true,
        &[("HIPFILE_FALLBACK_SYNC_WRITES", "false")],
        &["cp", "--io-size", "4", s(&src), s(&dst)],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        "hipfile: warning: --io-size 4 means 2048 requests for 8 KiB: each write is a separate \
         library call and a separate fdatasync, so this will be very slow; a larger --io-size \
         (1M or more) is much faster\n"
    );
    assert_eq!(std::fs::read(&dst).unwrap(), data);
    let out = hipfile(
        &tmp,
        true,
        &[],
        &["cp", "--io-size", "1M", s(&src), s(&dst)],
    );
    assert_eq!(text(&out.stderr), "", "no warning for sensible sizes");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn bench_duration_verify_and_device() {
    let tmp = scratch("bench-more");
    let file = tmp.join("data");
    let f = s(&file);
    // --duration: every run lasts about that long, repeating the 4 operations.
    let out = hipfile(
        &tmp,
        true,
        &[],
        &[
            "bench",
            "--file",
            f,
            "--size",
            "4M",
            "--io-size",
            "1M",
            "--repeat",
            "1",
            "--duration",
            "0.5",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = parse(text(&out.stdout).trim()).unwrap();
    let m = v.get("hipfile").unwrap();
    let t = m.get("total_time_s").and_then(Value::as_f64).unwrap();
    let ops = m.get("ops").and_then(Value::as_f64).unwrap();
    // At least the duration; the upper bound only catches a run that never stops (a loaded
    // machine may stretch the last operations).
    assert!((0.5..60.0).contains(&t), "ran {t} s");
    assert!(ops > 4.0, "the operations repeat: {ops}");
    assert_eq!(
        m.get("dataset_bytes").and_then(Value::as_f64),
        Some(ops * 1048576.0)
    );

    // --verify: reads compared with the file.
    let lines = bench_lines(
        &tmp,
        &[],
        &["--file", f, "--size", "4M", "--io-size", "1M", "--verify"],
    );
    assert_eq!(
        lines.last().unwrap(),
        "verify: 4 MiB read again through hipfile, identical to the file"
    );
    let lines = bench_lines(
        &tmp,
        &[],
        &[
            "--file",
            f,
            "--size",
            "4M",
            "--io-size",
            "1M",
            "--verify",
            "--api",
            "batch",
            "--mode",
            "randread",
        ],
    );
    assert_eq!(
        lines.last().unwrap(),
        "verify: 4 MiB read again through hipfile, identical to the file"
    );
    let out = hipfile(
        &tmp,
        true,
        &[],
        &[
            "bench", "--file", f, "--mode", "write", "--verify", "--force",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "hipfile: --verify checks what reads bring: use it with --mode read or randread\n"
    );

    // --device: the second of two simulated devices; a third does not exist.
    let two = [("HIPSIM_DEVICE_COUNT", "2")];
    let out = hipfile(
        &tmp,
        true,
        &two,
        &[
            "bench",
            "--file",
            f,
            "--size",
            "4M",
            "--io-size",
            "1M",
            "--repeat",
            "1",
            "-d",
            "1",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = parse(text(&out.stdout).trim()).unwrap();
    assert_eq!(
        v.get("config")
            .unwrap()
            .get("device")
            .and_then(Value::as_f64),
        Some(1.0)
    );
    let out = hipfile(
        &tmp,
        true,
        &two,
        &["bench", "--file", f, "--size", "4M", "--device", "2"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "hipfile: --device 2: the GPU runtime has 2 device(s)\n"
    );
    let (src, dst) = (file.clone(), tmp.join("copy"));
    let out = hipfile(&tmp, true, &two, &["cp", "--device", "1", s(&src), s(&dst)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&dst).unwrap(), std::fs::read(&src).unwrap());
    let out = hipfile(
        &tmp,
        true,
        &two,
        &["cp", "--device", "7", s(&src), s(&tmp.join("c2"))],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "hipfile: --device 7: the GPU runtime has 2 device(s)\n"
    );
    assert!(!tmp.join("c2").exists(), "refused before creating anything");
    std::fs::remove_dir_all(&tmp).unwrap();
}
