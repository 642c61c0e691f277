//! The `hipfile` tool never harms the user's files or scripts: it ends quietly when the reader
//! of its output goes away, and (further below) its scratch and temporary files are its own.

mod common;
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
