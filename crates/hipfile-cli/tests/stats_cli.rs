//! `hipfile stats`: reports of a real target, the `hipfile` tool itself running a benchmark on
//! the simulated GPU runtime (`--sim=PATH` to libhipsim.so), and its failures.

mod common;
use common::{hipsim, scratch, text};

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use std::time::{Duration, Instant};

// The tool's JSON writer and, under cfg(test), its small parser: used here to read the output.
#[allow(dead_code)]
#[path = "../src/json.rs"]
mod json;

use json::parse::parse;
use json::Value;

const HIPFILE: &str = env!("CARGO_BIN_EXE_hipfile");

/// `hipfile ARGS` with a clean hipfile environment (statistics level 1 by default) and
/// TMPDIR=`tmp`.
fn tool(tmp: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(HIPFILE);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("HIPFILE_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env("TMPDIR", tmp)
        .env("HIPFILE_LOG", "error")
        .args(args)
        .stdin(Stdio::null());
    cmd
}

/// `hipfile --sim=<hipsim> bench ARGS` on a 64 MiB file of 4 MiB reads.
fn bench_args(extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        HIPFILE,
        &format!("--sim={}", hipsim().display()),
        "bench",
        "--size",
        "64M",
        "--io-size",
        "4M",
        "--mode",
        "read",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn stats(tmp: &Path, args: &[&str]) -> Output {
    tool(tmp, &[&["stats"], args].concat())
        .output()
        .expect("running hipfile stats")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "hipfile stats failed ({}): {}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The value of the report line `key: value` (the first one), as a number.
fn field(report: &str, key: &str) -> u64 {
    let prefix = format!("{key}: ");
    let line = report
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no line '{key}: ' in:\n{report}"));
    line[prefix.len()..]
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {line}"))
}

/// Check one text report (from its first line on) of a finished read benchmark that read
/// `read_bytes` through hipfile. The benchmark registers its one file and its one thread's
/// device buffer once, whatever the repeat count, and its warm-up reads with plain `pread`
/// (not counted), so the figures are exact.
fn check_report(report: &str, read_bytes: u64) {
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], "AIS-STATS Version: 1", "{report}");
    assert_eq!(lines[1], "HipFile Stats Level: 1", "{report}");
    assert!(
        lines[2].starts_with("File Handle Registrations: "),
        "{report}"
    );
    assert_eq!(field(report, "File Handle Registrations"), 1, "{report}");
    assert_eq!(field(report, "Buffer Registrations"), 1, "{report}");
    let read = field(report, "Total Fastpath Read Size (B)")
        + field(report, "Total Fallback Read Size (B)");
    assert_eq!(read, read_bytes, "bytes read in:\n{report}");
    assert!(report.contains("\nGPU 0:\nIO Size Histogram\n"), "{report}");
    assert!(
        report.contains("\nExtended Stats (hipfile extension, version "),
        "{report}"
    );
    assert!(report.ends_with('\n'));
}

fn num(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for k in path {
        x = x
            .get(k)
            .unwrap_or_else(|| panic!("no {k} of {path:?} in {v:?}"));
    }
    x.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number in {v:?}"))
}

#[test]
fn command_text_report_after_the_command_exits() {
    let tmp = scratch("cmd-text");
    let bench = bench_args(&["--repeat", "1"]);
    let mut args = vec!["--"];
    args.extend(bench.iter().map(String::as_str));
    let out = ok(&stats(&tmp, &args));
    // The command's own output (inherited stdout) comes first, then the report.
    let at = out
        .find("AIS-STATS Version: 1\n")
        .unwrap_or_else(|| panic!("no report in:\n{out}"));
    assert!(
        out[..at].contains("IoType: READ XferType: HIPFILE"),
        "the benchmark's output first:\n{out}"
    );
    let report = &out[at..];
    // 64 MiB read once (--repeat 1, one thread, no --compare).
    check_report(report, 64 << 20);
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn command_json_report() {
    let tmp = scratch("cmd-json");
    let bench = bench_args(&["--repeat", "1", "--json"]);
    let mut args = vec!["--json", "--"];
    args.extend(bench.iter().map(String::as_str));
    let out = ok(&stats(&tmp, &args));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "the benchmark's object, then ours:\n{out}");
    parse(lines[0]).unwrap_or_else(|e| panic!("benchmark output ({e}): {}", lines[0]));
    let v = parse(lines[1]).unwrap_or_else(|e| panic!("not one JSON object ({e}): {}", lines[1]));
    assert_eq!(v.get("layout").and_then(Value::as_str), Some("v1"));
    assert_eq!(num(&v, &["version"]), 1.0);
    assert_eq!(num(&v, &["level"]), 1.0);
    // One file and one buffer registered, 64 MiB read once (as in the text report's test).
    assert_eq!(num(&v, &["file_registrations"]), 1.0);
    assert_eq!(num(&v, &["buffer_registrations"]), 1.0);
    let read = num(&v, &["backends", "fastpath", "read", "bytes"])
        + num(&v, &["backends", "fallback", "read", "bytes"]);
    assert_eq!(read, (64u64 << 20) as f64, "{v:?}");
    assert!(
        matches!(v.get("extension"), Some(Value::Obj(_))),
        "our extension is present: {v:?}"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn command_status_passes_through() {
    let tmp = scratch("cmd-status");
    let out = stats(&tmp, &["--", "sh", "-c", "echo hello; exit 3"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hello\n", "no report");
    assert_eq!(
        text(&out.stderr),
        "hipfile: no hipfile statistics: the command never started the hipfile library\n"
    );

    let out = stats(&tmp, &["true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("never started the hipfile library"));

    // Killed by a signal: 128 + N, like a shell.
    let out = stats(&tmp, &["--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(out.status.code(), Some(128 + 9), "{}", text(&out.stderr));

    let missing = tmp.join("no-such-program");
    let out = stats(&tmp, &["--", missing.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(127),
        "not found: 127, as a shell says"
    );
    assert_eq!(
        text(&out.stderr),
        format!(
            "hipfile: Failed to start '{}': No such file or directory\n",
            missing.display()
        )
    );
    // Found but not executable: 126.
    let plain = tmp.join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    let out = stats(&tmp, &["--", plain.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(126), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "hipfile: Failed to start '{}': Permission denied\n",
            plain.display()
        )
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn nonexistent_pid_fails_clearly() {
    let tmp = scratch("no-pid");
    assert!(!Path::new("/proc/999999").exists(), "pid 999999 is in use");
    let out = stats(&tmp, &["-p", "999999"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "hipfile: Failed to create context for target process 999999: no such process\n"
    );
    assert!(out.stdout.is_empty());

    for bad in ["0", "-3"] {
        let out = stats(&tmp, &["-p", bad]);
        assert_eq!(out.status.code(), Some(2), "a usage error");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!(
                "invalid value '{bad}' for '--pid <PID>': a process id must be a positive number"
            )),
            "{err}"
        );
    }
    let out = stats(&tmp, &[]);
    assert_eq!(out.status.code(), Some(2), "a target is required");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Kills and reaps the child when dropped (also when the test fails).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn process_without_hipfile_times_out_cleanly() {
    let tmp = scratch("no-server");
    let sleeper = Reaped(
        Command::new("sleep")
            .arg("30")
            .stdin(Stdio::null())
            .spawn()
            .expect("running sleep"),
    );
    let pid = sleeper.0.id().to_string();
    let t0 = Instant::now();
    let out = stats(&tmp, &["-p", &pid, "--timeout", "0.5"]);
    let took = t0.elapsed();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "hipfile: Failed to connect to target process {pid}: its statistics server did not answer within 0.5 s"
        )),
        "{err}"
    );
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert!(out.stdout.is_empty());
    drop(sleeper);
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn attach_to_a_live_process_and_watch_it() {
    let tmp = scratch("watch");
    let bench = bench_args(&["--repeat", "8"]);
    let bench: Vec<&str> = bench.iter().map(String::as_str).collect();
    let mut target = Reaped(
        tool(&tmp, &bench[1..])
            .stdout(Stdio::null())
            .spawn()
            .expect("running the benchmark"),
    );
    let pid = target.0.id().to_string();

    // One report now (connecting waits for the library to start in the target).
    let out = ok(&stats(&tmp, &["-p", &pid]));
    assert!(
        out.starts_with("AIS-STATS Version: 1\nHipFile Stats Level: 1\n"),
        "{out}"
    );
    assert_eq!(out.matches("AIS-STATS Version: ").count(), 1, "{out}");
    let v = ok(&stats(&tmp, &["-p", &pid, "--json"]));
    let v = parse(v.trim()).unwrap_or_else(|e| panic!("{e}: {v}"));
    assert_eq!(v.get("layout").and_then(Value::as_str), Some("v1"));

    // Reports every 0.2 s until it exits, then the final one.
    let out = ok(&stats(&tmp, &["-p", &pid, "--watch", "0.2"]));
    let starts: Vec<usize> = out
        .match_indices("AIS-STATS Version: 1\n")
        .map(|(i, _)| i)
        .collect();
    assert!(starts.len() >= 2, "several reports:\n{out}");
    assert_eq!(starts[0], 0);
    for &s in &starts[1..] {
        assert!(
            out[..s].ends_with("\n\n") && !out[..s].ends_with("\n\n\n"),
            "one blank line between reports:\n{out}"
        );
    }
    let last = &out[*starts.last().unwrap()..];
    let target_status = target.0.wait().unwrap();
    assert!(target_status.success(), "the benchmark failed");
    // The final report is that of the finished benchmark: 8 runs of 64 MiB.
    check_report(last, 8 * (64 << 20));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn ctrl_c_ends_a_watch_with_the_final_report() {
    use std::io::{BufRead, BufReader, Read};
    let tmp = scratch("watch-interrupted");
    // Long enough for the watch, short enough that a Ctrl-C the watch misses fails the test
    // (the watch then ends with the target) rather than hangs it.
    let bench = bench_args(&["--duration", "30"]);
    let bench: Vec<&str> = bench.iter().map(String::as_str).collect();
    let _target = Reaped(
        tool(&tmp, &bench[1..])
            .stdout(Stdio::null())
            .spawn()
            .expect("running the benchmark"),
    );
    let pid = _target.0.id().to_string();
    // Serving statistics by now (connecting waits for the library to start in the target).
    ok(&stats(&tmp, &["-p", &pid]));

    // A report every minute: only Ctrl-C ends the watch early.
    let start = Instant::now();
    let mut watcher = Reaped(
        tool(&tmp, &["stats", "-p", &pid, "--watch", "60"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running hipfile stats --watch"),
    );
    let mut stdout = BufReader::new(watcher.0.stdout.take().unwrap());
    let mut out = String::new();
    // The first report's first line: SIGINT is caught from before it on.
    stdout.read_line(&mut out).unwrap();
    assert_eq!(out, "AIS-STATS Version: 1\n");
    // SAFETY: a plain system call on our child's pid.
    assert_eq!(
        unsafe { libc::kill(watcher.0.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    stdout.read_to_string(&mut out).unwrap();
    let status = watcher.0.wait().unwrap();
    let took = start.elapsed();
    let mut stderr = String::new();
    watcher
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(stderr, "");
    assert!(took < Duration::from_secs(20), "{took:?}");
    // The report before the interrupt, then the final one.
    assert_eq!(out.matches("AIS-STATS Version: 1\n").count(), 2, "{out}");
    let final_report = &out[out.rfind("AIS-STATS Version: 1\n").unwrap()..];
    assert!(
        out[..out.len() - final_report.len()].ends_with("\n\n"),
        "{out}"
    );
    assert!(
        final_report.starts_with("AIS-STATS Version: 1\nHipFile Stats Level: 1\n")
            && final_report.contains("\nExtended Stats (hipfile extension, version ")
            && final_report.ends_with('\n'),
        "{final_report}"
    );
    drop(_target);
    std::fs::remove_dir_all(&tmp).unwrap();
}
