//! What a stream-ordered operation reports in `*bytes_p` when it fails, against upstream's
//! answers: the GPU-direct attempt failing with an error the fallback does not take over (EIO)
//! is `-hipFileInternalError` (5030); an operating-system error of the POSIX path is `-1`; a
//! write that fails part-way reports the failure, not the prefix. The synchronous calls keep
//! `-1` with `errno` and the prefix. Every test runs in its own child process on the simulated
//! runtime (its fault injection makes the fastpath fail).

mod common;

use common::async_ops::{read_async, write_async, Params, Stream};
use common::*;

const N: usize = 64 << 10;
/// `hipFileInternalError`.
const INTERNAL_ERROR: isize = 5030;

/// Whether the fastpath can serve the scratch directory (it needs `O_DIRECT`).
fn fastpath_possible() -> bool {
    let ok = odirect_works();
    if !ok {
        eprintln!(
            "O_DIRECT does not work in {}; test skipped",
            scratch_dir().display()
        );
    }
    ok
}

// The GPU-direct attempt fails with EIO (not eligible for the fallback): upstream's
// -hipFileInternalError in *bytes_p, for a read and a write; the write left the file as it was.
// A synchronous call with the same fault is -1 with errno EIO.
child_test!(
    a_fastpath_eio_on_a_stream_is_an_internal_error,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        open_driver();
        if !fastpath_possible() {
            return;
        }
        let s = sim();
        let old = pattern(N, 1);
        let f = TestFile::rw("async-eio", &old);
        let dev = s.device_alloc(N);
        s.upload(dev.ptr, &pattern(N, 2));
        let stream = Stream::new();
        let fast = s.counter("hipAmdFileRead") + s.counter("hipAmdFileWrite");
        s.fault("fastpath_errno", i64::from(libc::EIO));
        let mut r = Params::new(N, 0, 0);
        let mut w = Params::new(N, 0, 0);
        assert_eq!(read_async(f.fh, dev.ptr, &mut r, &stream), OK);
        assert_eq!(write_async(f.fh, dev.ptr, &mut w, &stream), OK);
        stream.sync();
        // SAFETY: a registered handle and device memory of N bytes.
        let sync_write = unsafe { hipFileWrite(f.fh, dev.ptr, N, 0, 0) };
        let sync_errno = errno();
        s.fault("fastpath_errno", 0);
        assert_eq!(
            s.counter("hipAmdFileRead") + s.counter("hipAmdFileWrite") - fast,
            3,
            "every call went to the fastpath"
        );
        assert_eq!((r.result(), w.result()), (-INTERNAL_ERROR, -INTERNAL_ERROR));
        assert_eq!((sync_write, sync_errno), (-1, libc::EIO));
        assert_eq!(f.contents(), old, "the failed writes changed nothing");
        // Without the fault the same operations move every byte.
        let mut w = Params::new(N, 0, 0);
        assert_eq!(write_async(f.fh, dev.ptr, &mut w, &stream), OK);
        stream.sync();
        assert_eq!(w.result(), N as isize);
        assert_eq!(f.contents(), pattern(N, 2));
    }
);

// ENODEV is eligible: the fallback serves the operation and *bytes_p is the byte count.
child_test!(
    a_fastpath_enodev_on_a_stream_still_completes,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        open_driver();
        if !fastpath_possible() {
            return;
        }
        let s = sim();
        let data = pattern(N, 3);
        let f = TestFile::rw("async-enodev-result", &data);
        let dev = s.device_alloc(N);
        let stream = Stream::new();
        s.fault("fastpath_errno", i64::from(libc::ENODEV));
        let mut r = Params::new(N, 0, 0);
        let before = common::sync_io::paths();
        assert_eq!(read_async(f.fh, dev.ptr, &mut r, &stream), OK);
        stream.sync();
        let d = common::sync_io::paths_since(before);
        s.fault("fastpath_errno", 0);
        assert_eq!(r.result(), N as isize);
        // The fastpath was tried once and refused with ENODEV; the fallback's retry copied
        // exactly the request's bytes to the device (the download below comes after).
        assert_eq!(
            d,
            common::sync_io::Paths {
                fast_read: 1,
                fast_write: 0,
                copied: N as u64
            }
        );
        assert_eq!(s.download(dev.ptr, N), data);
    }
);

// A stream-ordered write that runs into the file size limit after part of it reached the file
// reports the failure (upstream's rule for results that consumers check as a status), not the
// short count a synchronous hipFileWrite returns for the same write: -1, upstream's answer for
// an operating-system error of the POSIX path.
child_test!(
    a_stream_ordered_write_that_fails_part_way_reports_the_failure,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        open_driver();
        const LIMIT: usize = 1 << 20;
        let s = sim();
        let old = pattern(LIMIT - 1, 4);
        let f = TestFile::rw("async-efbig", &old);
        let dev = s.device_alloc(N);
        let data = pattern(N, 5);
        s.upload(dev.ptr, &data);
        // SAFETY: plain calls; the test child owns its process. Writes past LIMIT fail with
        // EFBIG instead of raising SIGXFSZ.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: LIMIT as u64,
                rlim_max: libc::RLIM_INFINITY,
            };
            assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
        }
        let stream = Stream::new();
        let mut w = Params::new(N, (LIMIT - 1) as i64, 0);
        assert_eq!(write_async(f.fh, dev.ptr, &mut w, &stream), OK);
        stream.sync();
        assert_eq!(w.result(), -1);
        let on_disk = f.contents();
        assert_eq!(on_disk.len(), LIMIT, "the byte that reached the file stays");
        assert_eq!(
            (&on_disk[..LIMIT - 1], on_disk[LIMIT - 1]),
            (&old[..], data[0])
        );
        // SAFETY: a registered handle and device memory of N bytes.
        let n = unsafe { hipFileWrite(f.fh, dev.ptr, N, (LIMIT - 1) as i64, 0) };
        assert_eq!(n, 1, "hipFileWrite reports the prefix");
    }
);
