//! Logs: one line when the platform is chosen, one line per distinct reason the
//! fastpath lost requests to the fallback, a file only when `HIPFILE_LOG_FILE` names one, and
//! nothing written into the working directory.

mod common;
use common::*;

use std::os::fd::AsRawFd;

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
        let path = scratch_file("logged-io");
        make_file(&path, &pattern(1 << 20, 9));
        let file = std::fs::File::open(&path).unwrap();
        let fh = register_fd(file.as_raw_fd());
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
        hipFileHandleDeregister(fh);
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
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&log);
    }
);

child_test!(default_level_is_quiet_about_normal_fallbacks, {
    // Default filter `warn`: a fallback is normal and costs no line; only the simulator warning.
    let log = scratch_file("quiet-log");
    std::env::set_var("HIPFILE_LOG_FILE", &log);
    let path = scratch_file("quiet-io");
    make_file(&path, &pattern(8192, 10));
    let file = std::fs::File::open(&path).unwrap();
    let fh = register_fd(file.as_raw_fd());
    let buf = sim().device_alloc(8192);
    // SAFETY: a registered handle and an 8 KiB device buffer.
    assert_eq!(unsafe { hipFileRead(fh, buf.ptr, 100, 1, 0) }, 100);
    hipFileHandleDeregister(fh);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("WARN") && text.contains("SIMULATED GPU runtime"),
        "{text}"
    );
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&log);
});
