//! Logs: one line when the platform is chosen, one line per distinct reason the
//! fastpath lost requests to the fallback, a file only when `HIPFILE_LOG_FILE` names one (new
//! files readable by their owner only, never through a planted symbolic link), and nothing
//! written into the working directory.

mod common;
use common::*;

use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;

/// Send this process's standard error to a new file at `path` (for a child test that must
/// read what the library printed there).
fn capture_stderr(path: &std::path::Path) {
    let f = std::fs::File::create(path).unwrap();
    // SAFETY: dup2 of a descriptor we own onto 2; `f` may close afterwards.
    assert_eq!(unsafe { libc::dup2(f.as_raw_fd(), 2) }, 2);
}

child_test!(
    platform_and_fallback_reasons_are_logged_once,
    [
        ("HIPFILE_LOG", "info"),
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")
    ],
    {
        // The working directory must stay empty: run from a fresh one.
        let cwd = scratch_dir().join(format!("cwd-{}", std::process::id()));
        std::fs::create_dir_all(&cwd).unwrap();
        std::env::set_current_dir(&cwd).unwrap();
        let log = scratch_file("log");
        std::env::set_var("HIPFILE_LOG_FILE", &log);
        let file = TestFile::with_flags("logged-io", &pattern(1 << 20, 9), libc::O_RDONLY);
        let fh = file.fh;
        let buf = sim().device_alloc(1 << 20);
        for i in 0..3 {
            // Unaligned offset, then unaligned size: two distinct reasons, three requests each.
            // SAFETY: a registered handle and a 1 MiB device buffer.
            unsafe {
                assert_eq!(hipFileRead(fh, buf.ptr, 4096, 1 + i, 0), 4096);
                assert_eq!(hipFileRead(fh, buf.ptr, 100, 0, 0), 100);
                assert_eq!(
                    hipFileRead(fh, buf.ptr, 4096, 0, 0),
                    4096,
                    "aligned: fastpath, nothing logged"
                );
            }
        }
        drop(file);
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.matches("platform amd: HIP 7.2.0").count(), 1, "{text}");
        assert_eq!(
            text.matches("fastpath not used: the file offset is not aligned for direct I/O")
                .count(),
            1,
            "{text}"
        );
        assert_eq!(
            text.matches("fastpath not used: the size is not aligned for direct I/O")
                .count(),
            1,
            "{text}"
        );
        assert_eq!(text.matches("fastpath not used").count(), 2, "{text}");
        assert_eq!(
            std::fs::read_dir(&cwd).unwrap().count(),
            0,
            "nothing in the working directory"
        );
        let _ = std::fs::remove_file(&log);
    }
);

child_test!(default_level_is_quiet_about_normal_fallbacks, {
    // Default filter `warn`: a fallback is normal and costs no line; only the simulator warning.
    let log = scratch_file("quiet-log");
    std::env::set_var("HIPFILE_LOG_FILE", &log);
    let file = TestFile::with_flags("quiet-io", &pattern(8192, 10), libc::O_RDONLY);
    let fh = file.fh;
    let buf = sim().device_alloc(8192);
    // SAFETY: a registered handle and an 8 KiB device buffer.
    assert_eq!(unsafe { hipFileRead(fh, buf.ptr, 100, 1, 0) }, 100);
    drop(file);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("WARN") && text.contains("SIMULATED GPU runtime"),
        "{text}"
    );
    let _ = std::fs::remove_file(&log);
});

/// What the library logs to a new `HIPFILE_LOG_FILE` while the driver opens and closes.
fn log_of_open_and_close(tag: &str) -> String {
    let log = scratch_file(tag);
    std::env::set_var("HIPFILE_LOG_FILE", &log);
    open_driver();
    assert_eq!(hipFileDriverClose(), OK);
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    text
}

child_test!(an_empty_filter_is_the_default, [("HIPFILE_LOG", "")], {
    // Empty is unset (it used to build a filter that silenced every line, errors included).
    let text = log_of_open_and_close("empty-filter-log");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("WARN") && text.contains("SIMULATED GPU runtime"),
        "{text}"
    );
});

child_test!(
    an_unknown_filter_says_so_and_logs_warnings,
    [("HIPFILE_LOG", "loud")],
    {
        let text = log_of_open_and_close("unknown-filter-log");
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(
            text.contains(
                "HIPFILE_LOG=\"loud\" is neither a level (error, warn, info, debug, trace, off) \
                 nor a filter (target=level): logging at warn"
            ),
            "{text}"
        );
        assert!(text.contains("SIMULATED GPU runtime"), "{text}");
    }
);

child_test!(a_new_log_file_is_readable_by_its_owner_only, {
    // SAFETY: umask has no preconditions.
    unsafe { libc::umask(0o022) };
    let log = scratch_file("private-log");
    std::env::set_var("HIPFILE_LOG_FILE", &log);
    open_driver();
    assert_eq!(hipFileDriverClose(), OK);
    let meta = std::fs::metadata(&log).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("SIMULATED GPU runtime"));
    let _ = std::fs::remove_file(&log);
});

child_test!(
    a_planted_symlink_is_not_followed,
    [("HIPFILE_LOG", "info")],
    {
        let victim = scratch_file("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let link = scratch_file("planted-log");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        std::env::set_var("HIPFILE_LOG_FILE", &link);
        let err = scratch_file("stderr");
        capture_stderr(&err);
        open_driver();
        assert_eq!(hipFileDriverClose(), OK);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        let text = std::fs::read_to_string(&err).unwrap();
        let refusal = format!(
        "HIPFILE_LOG_FILE={:?} is not used: it is a symbolic link, which is never followed; logging to standard error",
        link.as_os_str()
    );
        assert_eq!(text.matches(&refusal).count(), 1, "{text}");
        assert!(text.contains("WARN"), "{text}");
        // The log itself went to standard error.
        assert_eq!(text.matches("platform amd: HIP 7.2.0").count(), 1, "{text}");
        for p in [&victim, &link, &err] {
            let _ = std::fs::remove_file(p);
        }
    }
);
