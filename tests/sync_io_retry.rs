//! Synchronous I/O: fastpath failures and their retry on the fallback.
//!
//! Shared set-up and what the sync suites compare: `tests/common/sync_io.rs`.

mod common;

use common::sync_io::*;
use common::*;

// ---- fastpath failures and the retry on the fallback ----------------------------------

child_test!(
    fastpath_errors_and_retries,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        open_driver();
        if !fastpath_possible("fastpath_errors_and_retries") {
            return;
        }
        let s = sim();
        let len = 64 * 1024;
        let data = pattern(len, 26);
        let f = TestFile::rw("fpfault", &data);
        let dev = device_filled(len, 0);

        // ENODEV and EREMOTEIO: retried on the fallback, which serves the whole request.
        for errno_value in [libc::ENODEV, libc::EREMOTEIO] {
            fill(dev.ptr, 0, len);
            s.fault("fastpath_errno", i64::from(errno_value));
            let before = paths();
            assert_eq!(
                rd(f.fh, dev.ptr, len, 0, 0),
                len as isize,
                "read retried after errno {errno_value}"
            );
            let d = paths_since(before);
            assert_eq!(d.fast_read, 1, "the fastpath was tried first");
            assert_eq!(
                d.copied, len as u64,
                "the fallback served the retry: the whole request copied once"
            );
            let fresh = pattern(len, 27 + errno_value as u64);
            s.fault("fastpath_errno", 0);
            assert_eq!(s.download(dev.ptr, len), data);
            s.upload(dev.ptr, &fresh);
            s.fault("fastpath_errno", i64::from(errno_value));
            let before = paths();
            assert_eq!(
                wr(f.fh, dev.ptr, len, 0, 0),
                len as isize,
                "write retried after errno {errno_value}"
            );
            let d = paths_since(before);
            assert_eq!(d.fast_write, 1);
            assert_eq!(
                d.copied, len as u64,
                "the retry copied the whole request once"
            );
            s.fault("fastpath_errno", 0);
            assert_eq!(f.contents(), fresh);
            // Put the original contents back for the next round.
            std::fs::write(&f.path, &data).unwrap();
        }

        // EIO: not retried.
        s.fault("fastpath_errno", i64::from(libc::EIO));
        let before = paths();
        assert_eq!(rd_e(f.fh, dev.ptr, len, 0, 0), (-1, libc::EIO));
        assert_eq!(wr_e(f.fh, dev.ptr, len, 0, 0), (-1, libc::EIO));
        assert_eq!(
            paths_since(before),
            Paths {
                fast_read: 1,
                fast_write: 1,
                copied: 0
            }
        );
        s.fault("fastpath_errno", 0);

        // A HIP error from the entry point: -(error), not retried; hipErrorInvalidValue is -1/EINVAL.
        for (code, expect) in [
            (HIP_ERROR_UNKNOWN, (-999, 0)),
            (HIP_ERROR_INVALID_VALUE, (-1, libc::EINVAL)),
        ] {
            s.fault("fastpath_hip_error", code);
            let before = paths();
            assert_eq!(
                rd_e(f.fh, dev.ptr, len, 0, 0),
                expect,
                "fastpath_hip_error={code}"
            );
            assert_eq!(
                wr_e(f.fh, dev.ptr, len, 0, 0),
                expect,
                "fastpath_hip_error={code}"
            );
            assert_eq!(
                paths_since(before),
                Paths {
                    fast_read: 1,
                    fast_write: 1,
                    copied: 0
                }
            );
            s.fault("fastpath_hip_error", 0);
        }
        assert_eq!(f.contents(), data, "failed writes changed nothing");

        // A short transfer is returned as is.
        s.fault("short_transfer", 8192);
        fill(dev.ptr, 0xCC, len);
        assert_eq!(rd(f.fh, dev.ptr, len, 0, 0), 8192);
        s.fault("short_transfer", 0);
        let back = s.download(dev.ptr, len);
        assert_eq!(back[..8192], data[..8192]);
        assert!(back[8192..].iter().all(|&b| b == 0xCC));
        let fresh = pattern(len, 40);
        s.upload(dev.ptr, &fresh);
        s.fault("short_transfer", 8192);
        assert_eq!(wr(f.fh, dev.ptr, len, 0, 0), 8192);
        s.fault("short_transfer", 0);
        let mut expect = data.clone();
        expect[..8192].copy_from_slice(&fresh[..8192]);
        assert_eq!(f.contents(), expect);
    }
);

child_test!(
    fastpath_enodev_without_compat_mode_is_not_retried,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_ALLOW_COMPAT_MODE", "false"),
    ],
    {
        open_driver();
        if !fastpath_possible("fastpath_enodev_without_compat_mode_is_not_retried") {
            return;
        }
        let s = sim();
        let data = pattern(64 * 1024, 28);
        let f = TestFile::rw("enodev-nocompat", &data);
        let dev = device_filled(64 * 1024, 0);
        for errno_value in [libc::ENODEV, libc::EREMOTEIO] {
            s.fault("fastpath_errno", i64::from(errno_value));
            let before = paths();
            assert_eq!(rd_e(f.fh, dev.ptr, 64 * 1024, 0, 0), (-1, errno_value));
            assert_eq!(wr_e(f.fh, dev.ptr, 64 * 1024, 0, 0), (-1, errno_value));
            assert_eq!(
                paths_since(before),
                Paths {
                    fast_read: 1,
                    fast_write: 1,
                    copied: 0
                }
            );
        }
        s.fault("fastpath_errno", 0);
        assert_eq!(f.contents(), data);
    }
);
