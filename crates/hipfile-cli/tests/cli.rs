//! Runs the built `hipfile` tool on the simulated GPU runtime (`--sim=PATH` to libhipsim.so).

mod common;
use common::{run_hipfile, scratch, text};

use std::path::Path;
use std::process::{Command, Output};

// The tool's JSON writer and, under cfg(test), its small parser: used here to read the output.
#[allow(dead_code)]
#[path = "../src/json.rs"]
mod json;

use json::parse::parse;
use json::Value;

/// Run `hipfile --sim=<hipsim> ARGS` with a clean hipfile environment and TMPDIR=`tmp`.
fn hipfile(tmp: &Path, args: &[&str]) -> Output {
    run_hipfile(tmp, true, &[], args)
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "hipfile failed ({}): {}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// `hipfile bench --json` of 8 MiB in 256 KiB operations from two threads on `file`, with the
/// API's own arguments `api`.
fn bench_api_json(tmp: &Path, file: &str, mode: &str, api: &[&str]) -> Value {
    let common = [
        "bench",
        "--file",
        file,
        "--size",
        "8M",
        "--io-size",
        "256K",
        "--threads",
        "2",
        "--mode",
        mode,
        "--force",
        "--repeat",
        "1",
        "--json",
    ];
    parse(ok(&hipfile(tmp, &[&common[..], api].concat())).trim()).unwrap()
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{key} is not a number in {v:?}"))
}

/// One measurement of a read over the 64 MiB file: its labels, and the figures whose values
/// the run's shape fixes (`threads`, `ops`, bytes) exactly; the timings only as positive.
fn check_measurement(m: &Value, xfer: &str, io_size: u64, threads: u64, ops: u64) {
    assert_eq!(m.get("io_type").and_then(Value::as_str), Some("READ"));
    assert_eq!(m.get("xfer_type").and_then(Value::as_str), Some(xfer));
    for key in [
        "gib_per_s",
        "avg_latency_us",
        "p50_latency_us",
        "p99_latency_us",
        "total_time_s",
    ] {
        assert!(
            num(m, key) > 0.0,
            "{xfer}: {key} should be positive in {m:?}"
        );
    }
    assert_eq!(num(m, "threads"), threads as f64, "{xfer}: threads");
    assert_eq!(num(m, "ops"), ops as f64, "{xfer}: ops");
    assert_eq!(num(m, "dataset_bytes"), (64u64 << 20) as f64, "{xfer}");
    assert_eq!(num(m, "io_size_bytes"), io_size as f64, "{xfer}");
    assert!(num(m, "p99_latency_us") >= num(m, "p50_latency_us"));
}

/// A file of pseudo-random bytes.
fn random_file(path: &Path, len: usize) -> Vec<u8> {
    let mut x = 0x1234_5678_9abc_def1u64;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    std::fs::write(path, &data).unwrap();
    data
}

#[test]
fn bench_json_with_compare() {
    let tmp = scratch("bench-json");
    // 12 engine threads: the page-rounded share of 64 MiB per thread (5,591,040 bytes) is
    // below the io-size, so the N-thread baseline's pieces are neither io-size nor a divisor
    // of it, whatever this host's default thread count would be.
    let out = ok(&run_hipfile(
        &tmp,
        true,
        &[("HIPFILE_IO_THREADS", "12")],
        &[
            "bench",
            "--size",
            "64M",
            "--io-size",
            "8M",
            "--json",
            "--compare",
        ],
    ));
    let v = parse(out.trim()).unwrap_or_else(|e| panic!("not one JSON object ({e}): {out}"));
    const SIZE: u64 = 64 << 20;
    const IO: u64 = 8 << 20;
    // One application thread (the default) issues SIZE / IO reads; PREAD_1T does the same ops.
    check_measurement(
        v.get("hipfile").expect("hipfile"),
        "HIPFILE",
        IO,
        1,
        SIZE / IO,
    );
    let baselines = v.get("baselines").expect("baselines with --compare");
    check_measurement(
        baselines.get("pread_1t").expect("pread_1t"),
        "PREAD_1T",
        IO,
        1,
        SIZE / IO,
    );
    // PREAD_NT, as bench.rs's header specifies it: as many threads as the engine has (or
    // --threads, 1 here, if larger), each with pieces of io-size, at most 16 MiB, cut to the
    // page-rounded share of the file each thread gets so all of them have work. The engine's
    // thread count is the environment's.
    assert_eq!(
        num(v.get("config").expect("config"), "engine_threads"),
        12.0
    );
    let nt_threads: u64 = 12;
    let share = (SIZE / nt_threads) / 4096 * 4096;
    let piece = IO.min(16 << 20).min(share.max(4096));
    // Each io-size op is cut into pieces (the last one of an op shorter when piece does not
    // divide it).
    let nt_ops = (SIZE / IO) * IO.div_ceil(piece);
    check_measurement(
        baselines.get("pread_nt").expect("pread_nt"),
        "PREAD_NT",
        piece,
        nt_threads,
        nt_ops,
    );
    let config = v.get("config").expect("config");
    assert_eq!(config.get("simulated"), Some(&Value::Bool(true)));
    assert_eq!(config.get("platform").and_then(Value::as_str), Some("amd"));
    assert!(config
        .get("runtime")
        .and_then(Value::as_str)
        .unwrap()
        .contains("libhipsim.so"));
    assert_eq!(num(config, "baseline_threads"), nt_threads as f64);
    assert_eq!(num(config, "baseline_piece"), piece as f64);
    assert!(num(config, "chunk_size") >= 4096.0);
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the default file is deleted at the end"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn bench_text_lines_and_modes() {
    let tmp = scratch("bench-text");
    let file = tmp.join("data");
    let f = file.to_str().unwrap();
    let out = ok(&hipfile(
        &tmp,
        &[
            "bench",
            "--file",
            f,
            "--size",
            "16M",
            "--io-size",
            "4M",
            "--compare",
            "--repeat",
            "1",
        ],
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    assert!(
        lines[0].contains("SIMULATED GPU runtime") && lines[0].contains("engine"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("IoType: READ XferType: HIPFILE Threads: 1 DataSetSize: 16384/16384(KiB) IOSize: 4096(KiB) Throughput: "),
        "{}",
        lines[1]
    );
    assert!(lines[2].starts_with("HIPFILE served by: "), "{}", lines[2]);
    for (line, xfer) in [
        (lines[1], "HIPFILE"),
        (lines[3], "PREAD_1T"),
        (lines[4], "PREAD_NT"),
    ] {
        assert!(line.contains(&format!("XferType: {xfer} ")), "{line}");
        assert!(
            line.contains(" GiB/sec, Avg_Latency: ")
                && line.ends_with(" secs")
                && line.contains(" ops: "),
            "{line}"
        );
    }
    assert!(
        lines[5].starts_with("hipfile/pread_nt = ") && lines[5].contains("x, hipfile/pread_1t = "),
        "{}",
        lines[5]
    );
    assert!(file.exists(), "a --file is kept");

    for mode in ["write", "randread", "randwrite"] {
        let out = ok(&hipfile(
            &tmp,
            &[
                "bench",
                "--file",
                f,
                "--size",
                "8M",
                "--io-size",
                "1M",
                "--threads",
                "2",
                "--mode",
                mode,
                "--force",
                "--repeat",
                "1",
                "--json",
            ],
        ));
        let v = parse(out.trim()).unwrap();
        let m = v.get("hipfile").unwrap();
        assert_eq!(
            m.get("io_type").and_then(Value::as_str),
            Some(mode.to_uppercase().as_str())
        );
        assert_eq!(num(m, "ops"), 8.0);
        assert!(
            v.get("baselines").is_none(),
            "no baselines without --compare"
        );
    }
    let out = ok(&hipfile(
        &tmp,
        &[
            "bench",
            "--file",
            f,
            "--size",
            "8M",
            "--io-size",
            "1M",
            "--mem",
            "host",
            "--compare",
            "--repeat",
            "1",
        ],
    ));
    assert!(
        out.contains("XferType: HIPFILE") && out.contains("XferType: PREAD_NT"),
        "{out}"
    );

    // The batch API: reads and writes through hipFileBatchIO*, a few operations in flight.
    for mode in ["read", "randwrite"] {
        let v = bench_api_json(&tmp, f, mode, &["--api", "batch", "--batch-depth", "4"]);
        let m = v.get("hipfile").unwrap();
        assert_eq!(num(m, "ops"), 32.0, "{mode}");
        assert!(num(m, "gib_per_s") > 0.0, "{mode}");
        let cfg = v.get("config").unwrap();
        assert_eq!(cfg.get("api").and_then(Value::as_str), Some("batch"));
        assert_eq!(num(cfg, "batch_depth"), 4.0);
    }
    let refused = hipfile(&tmp, &["bench", "--api", "batch", "--mem", "host"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("use --mem device"),
        "{}",
        text(&refused.stderr)
    );
    // The async API: reads and writes queued on GPU streams, in rounds and kept in flight.
    for (mode, streams, depth, keep) in [
        ("read", "2", "3", false),
        ("write", "1", "4", false),
        ("read", "3", "2", true),
        ("write", "2", "1", true),
    ] {
        let api = ["--api", "async", "--streams", streams, "--depth", depth];
        let keep_arg: &[&str] = if keep { &["--keep-in-flight"] } else { &[] };
        let v = bench_api_json(&tmp, f, mode, &[&api[..], keep_arg].concat());
        let m = v.get("hipfile").unwrap();
        assert_eq!(num(m, "ops"), 32.0, "{mode}");
        let cfg = v.get("config").unwrap();
        assert_eq!(cfg.get("api").and_then(Value::as_str), Some("async"));
        assert_eq!(num(cfg, "streams"), streams.parse::<f64>().unwrap());
        assert_eq!(num(cfg, "depth"), depth.parse::<f64>().unwrap());
        assert!(
            matches!(cfg.get("keep_in_flight"), Some(Value::Bool(k)) if *k == keep),
            "{mode}"
        );
        assert!(num(cfg, "submit_us") > 0.0, "{mode}");
    }
    let refused = hipfile(&tmp, &["bench", "--api", "async", "--mem", "host"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("use --mem device"),
        "{}",
        text(&refused.stderr)
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn cp_is_byte_exact() {
    let tmp = scratch("cp");
    let (src, dst) = (tmp.join("src.bin"), tmp.join("dst.bin"));
    let data = random_file(&src, 20 << 20);
    let out = hipfile(
        &tmp,
        &[
            "cp",
            "--verify",
            "--io-size",
            "3M",
            src.to_str().unwrap(),
            dst.to_str().unwrap(),
        ],
    );
    assert_eq!(ok(&out), "", "nothing printed on success");
    assert!(std::fs::read(&dst).unwrap() == data, "copy differs");

    // Into a directory, with a summary.
    let sub = tmp.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = ok(&hipfile(
        &tmp,
        &["cp", "-v", src.to_str().unwrap(), sub.to_str().unwrap()],
    ));
    assert!(out.contains("GiB/s") && out.contains("SIMULATED"), "{out}");
    assert!(std::fs::read(sub.join("src.bin")).unwrap() == data);
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn cp_failures_exit_1_with_cp_messages() {
    let tmp = scratch("cp-fail");
    let missing = tmp.join("missing");
    let out = hipfile(
        &tmp,
        &[
            "cp",
            missing.to_str().unwrap(),
            tmp.join("x").to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "hipfile: cannot stat '{}': No such file or directory",
            missing.display()
        )),
        "{err}"
    );

    let out = hipfile(
        &tmp,
        &["cp", tmp.to_str().unwrap(), tmp.join("y").to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("hipfile: '{}' is a directory", tmp.display())),
        "{err}"
    );

    let src = tmp.join("s");
    std::fs::write(&src, b"abc").unwrap();
    let out = hipfile(
        &tmp,
        &[
            "cp",
            src.to_str().unwrap(),
            tmp.join("no/such/dir/d").to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("hipfile: cannot create regular file"),
        "{}",
        text(&out.stderr)
    );
    assert!(!tmp.join("y").exists() && !tmp.join("x").exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn check_json_says_simulated() {
    let tmp = scratch("check");
    let out = ok(&hipfile(&tmp, &["check", "--json"]));
    let v = parse(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v.get("simulated"), Some(&Value::Bool(true)));
    assert_eq!(v.get("platform").and_then(Value::as_str), Some("amd"));
    assert_eq!(v.get("gpu_direct_entry_points"), Some(&Value::Bool(true)));
    assert!(num(v.get("config").unwrap(), "io_threads") >= 1.0);
    let out = ok(&hipfile(&tmp, &["check"]));
    assert!(out.contains("SIMULATED GPU runtime"), "{out}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// doc/man/ (what both installers install) is what the tool generates from its command line
/// now: run `target/debug/hipfile manpages doc/man` after changing an option.
#[test]
fn man_pages_in_doc_man_are_current() {
    let tmp = scratch("man");
    let out = Command::new(env!("CARGO_BIN_EXE_hipfile"))
        .arg("manpages")
        .arg(&tmp)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../doc/man");
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(&tmp),
        [
            "hipfile-bench.1",
            "hipfile-check.1",
            "hipfile-cp.1",
            "hipfile-stats.1",
            "hipfile.1"
        ]
    );
    assert_eq!(names(&tmp), names(&committed));
    for n in names(&tmp) {
        assert!(
            std::fs::read(tmp.join(&n)).unwrap() == std::fs::read(committed.join(&n)).unwrap(),
            "doc/man/{n} is stale: run `hipfile manpages doc/man`"
        );
    }
    let page = std::fs::read_to_string(tmp.join("hipfile-cp.1")).unwrap();
    assert!(page.contains("\\-\\-require\\-gpu"), "{page}");
    std::fs::remove_dir_all(&tmp).unwrap();
}
