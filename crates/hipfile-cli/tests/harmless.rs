//! The `hipfile` tool never harms the user's files or scripts: it ends quietly when the reader
//! of its output goes away, and (further below) its scratch and temporary files are its own.

mod common;

// The tool's JSON writer and, under cfg(test), its small parser: used here to read the output.
#[allow(dead_code)]
#[path = "../src/json.rs"]
mod json;
use common::{hipfile_command, scratch, text};

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Output, Stdio};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What is left in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The write end of a pipe whose read end is already closed: every write gets `EPIPE`.
fn pipe_without_reader() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: a valid array of two descriptors for pipe2 to fill.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just created and are owned here, each once.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    write
}

/// `hipfile --sim ARGS` whose standard output is a pipe nobody reads any more (as in
/// `hipfile ... | head -1` once `head` has exited), TMPDIR=`tmp`.
fn with_stdout_closed(tmp: &Path, args: &[&str]) -> Output {
    hipfile_command(tmp, true, &[], args)
        .stdout(Stdio::from(pipe_without_reader()))
        .stderr(Stdio::piped())
        .output()
        .expect("running hipfile")
}

/// Ended as a program in a pipeline ends when its reader has gone: by SIGPIPE (the shell's
/// 141), nothing on standard error (no panic, no backtrace).
fn assert_ended_by_sigpipe(out: &Output, what: &str) {
    assert_eq!(
        (out.status.signal(), out.status.code()),
        (Some(libc::SIGPIPE), None),
        "{what}: {}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stderr), "", "{what}");
}

#[test]
fn check_ends_quietly_when_its_reader_has_gone() {
    let tmp = scratch("pipe-check");
    for args in [&["check"][..], &["check", "--json"]] {
        let out = with_stdout_closed(&tmp, args);
        assert_ended_by_sigpipe(&out, &args.join(" "));
        assert_eq!(
            entries(&tmp),
            Vec::<String>::new(),
            "self-test file removed"
        );
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn bench_ends_quietly_and_removes_its_scratch_file_when_its_reader_has_gone() {
    let tmp = scratch("pipe-bench");
    let run = ["bench", "--size", "4M", "--io-size", "1M", "--repeat", "1"];
    for json in [false, true] {
        let args = [&run[..], if json { &["--json"] } else { &[] }].concat();
        let out = with_stdout_closed(&tmp, &args);
        assert_ended_by_sigpipe(&out, &args.join(" "));
        assert_eq!(entries(&tmp), Vec::<String>::new(), "scratch file removed");
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn cp_verbose_ends_quietly_and_keeps_the_finished_copy() {
    let tmp = scratch("pipe-cp");
    let (src, dst) = (tmp.join("src"), tmp.join("dst"));
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&src, &data).unwrap();
    let out = with_stdout_closed(&tmp, &["cp", "-v", s(&src), s(&dst)]);
    assert_ended_by_sigpipe(&out, "cp -v");
    assert_eq!(std::fs::read(&dst).unwrap(), data, "the copy was complete");
    std::fs::remove_dir_all(&tmp).unwrap();
}

// ---- bench's scratch file ---------------------------------------------------------------------

/// The name `bench` used for its scratch file in TMPDIR before it made one of its own.
const OLD_SCRATCH: &str = "hipfile-bench.dat";

fn bench_args<'a>(mode: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "bench",
        "--size",
        "4M",
        "--io-size",
        "1M",
        "--repeat",
        "1",
        "--mode",
        mode,
        "--json",
    ];
    v.extend_from_slice(extra);
    v
}

/// `hipfile --sim bench ...`, which must succeed; its JSON report.
fn bench_json(tmp: &Path, args: &[&str]) -> json::Value {
    let out = common::run_hipfile(tmp, true, &[], args);
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    json::parse::parse(text(&out.stdout).trim()).unwrap()
}

fn config_file(v: &json::Value) -> String {
    v.get("config")
        .and_then(|c| c.get("file"))
        .and_then(json::Value::as_str)
        .expect("config.file")
        .to_string()
}

#[test]
fn bench_leaves_a_file_at_the_old_scratch_name_untouched() {
    let tmp = scratch("bench-old");
    let old = tmp.join(OLD_SCRATCH);
    let data: Vec<u8> = (0..(4u32 << 20)).map(|i| (i % 253) as u8 + 1).collect();
    std::fs::write(&old, &data).unwrap();
    for mode in ["read", "write", "randwrite"] {
        let v = bench_json(&tmp, &bench_args(mode, &[]));
        assert_ne!(config_file(&v), s(&old), "{mode}: a file of its own");
        assert_eq!(
            std::fs::read(&old).unwrap(),
            data,
            "{mode}: the existing file is neither overwritten nor removed"
        );
        assert_eq!(entries(&tmp), [OLD_SCRATCH], "{mode}: its own file is gone");
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn bench_never_follows_a_link_planted_at_the_scratch_name() {
    let tmp = scratch("bench-link");
    let victim_dir = scratch("bench-link-victim");
    let victim = victim_dir.join("precious");
    std::fs::write(&victim, b"precious").unwrap();
    let link = tmp.join(OLD_SCRATCH);
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    for mode in ["write", "read"] {
        bench_json(&tmp, &bench_args(mode, &[]));
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "{mode}");
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            victim,
            "{mode}: link kept"
        );
        assert_eq!(entries(&tmp), [OLD_SCRATCH], "{mode}");
    }
    std::fs::remove_dir_all(&tmp).unwrap();
    std::fs::remove_dir_all(&victim_dir).unwrap();
}

#[test]
fn two_benches_at_once_use_two_files() {
    let tmp = scratch("bench-two");
    // Each run lasts a second after its file is ready: the two overlap.
    let args = bench_args("write", &["--duration", "1"]);
    let children: Vec<_> = (0..2)
        .map(|_| {
            hipfile_command(&tmp, true, &[], &args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let files: Vec<String> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
            config_file(&json::parse::parse(text(&out.stdout).trim()).unwrap())
        })
        .collect();
    assert_ne!(files[0], files[1]);
    for f in &files {
        assert_eq!(Path::new(f).parent(), Some(tmp.as_path()), "in TMPDIR: {f}");
    }
    assert_eq!(entries(&tmp), Vec::<String>::new(), "both removed");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn bench_keep_keeps_an_owner_only_scratch_file_it_names() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = scratch("bench-keep");
    let v = bench_json(&tmp, &bench_args("read", &["--keep"]));
    let kept = config_file(&v);
    assert_eq!(entries(&tmp).len(), 1, "kept");
    let meta = std::fs::metadata(&kept).unwrap();
    assert_eq!(meta.len(), 4 << 20);
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "owner-only");
    std::fs::remove_dir_all(&tmp).unwrap();
}

// ---- cp to a character device -----------------------------------------------------------------

/// `/dev/null` takes the bytes and has nothing to make durable (`fdatasync` says `EINVAL`):
/// the copy succeeds, as the library's own writes there do.
#[test]
fn cp_to_dev_null_succeeds() {
    let tmp = scratch("cp-null");
    let src = tmp.join("src");
    std::fs::write(&src, vec![0x5au8; 300_000]).unwrap();
    for sim in [true, false] {
        let out = common::run_hipfile(&tmp, sim, &[], &["cp", s(&src), "/dev/null"]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "sim {sim}: {stderr}");
        // Without a GPU runtime, only the warning that the copy goes through host memory.
        assert!(
            stderr.is_empty() || (!sim && stderr.starts_with("hipfile: warning: no GPU runtime")),
            "sim {sim}: {stderr}"
        );
    }
    let out = common::run_hipfile(&tmp, true, &[], &["cp", "-v", s(&src), "/dev/null"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(&format!("'{}' -> '/dev/null': 293.0 KiB in ", s(&src))),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(entries(&tmp), ["src"]);
    std::fs::remove_dir_all(&tmp).unwrap();
}

// ---- cp's copy is as private as its source -----------------------------------------------------

/// A new copy gets its source's permission bits (less the umask), as `cp` gives them: copying a
/// private file into a shared directory does not publish it.
#[test]
fn cp_gives_a_new_copy_its_source_s_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = scratch("cp-mode");
    let src = tmp.join("private");
    std::fs::write(&src, vec![0x33u8; 70_000]).unwrap();
    std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o600)).unwrap();
    let dst = tmp.join("copy");
    let out = common::run_hipfile(&tmp, true, &[], &["cp", s(&src), s(&dst)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mode = std::fs::metadata(&dst).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the copy's mode is {mode:o}");
    assert_eq!(std::fs::read(&dst).unwrap(), vec![0x33u8; 70_000]);
    std::fs::remove_dir_all(&tmp).unwrap();
}
