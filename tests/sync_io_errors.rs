//! Synchronous I/O: the argument and state errors, in the order the library checks them
//! (closed driver, handles, buffers, offsets, bounds, runtime failures).
//!
//! Shared set-up and what the sync suites compare: `tests/common/sync_io.rs`.

mod common;

use std::ffi::c_void;

use common::sync_io::*;
use common::*;

// ---- errors, in the order they are checked ----------------------------------------

child_test!(closed_driver_is_minus_one_einval, {
    // Never opened: every argument may be garbage, the closed driver is reported first.
    assert_eq!(hipFileUseCount(), 0);
    let mut v = vec![0u8; 64];
    let bogus = 0x1234usize as hipFileHandle_t;
    assert_eq!(
        rd_e(bogus, v.as_mut_ptr().cast(), 64, 0, 0),
        (-1, libc::EINVAL)
    );
    assert_eq!(wr_e(bogus, v.as_ptr().cast(), 64, 0, 0), (-1, libc::EINVAL));
    assert_eq!(
        rd_e(std::ptr::null_mut(), std::ptr::null_mut(), 64, -1, -1),
        (-1, libc::EINVAL)
    );
    assert_eq!(
        wr_e(std::ptr::null_mut(), std::ptr::null(), 64, -1, -1),
        (-1, libc::EINVAL)
    );
    assert_eq!(hipFileUseCount(), 0, "read/write never open the driver");

    // Opened, a file registered, then closed to zero: the old handle reports the closed driver.
    let dev = sim().device_alloc(K4);
    let f = TestFile::rw("closed", &pattern(K4, 1));
    assert_eq!(hipFileUseCount(), 1);
    assert_eq!(rd(f.fh, dev.ptr, 100, 0, 0), 100);
    assert_eq!(hipFileDriverClose(), hipFileError_t::SUCCESS);
    assert_eq!(rd_e(f.fh, dev.ptr, 100, 0, 0), (-1, libc::EINVAL));
    assert_eq!(wr_e(f.fh, dev.ptr, 100, 0, 0), (-1, libc::EINVAL));
    assert_eq!(hipFileUseCount(), 0);
});

child_test!(unknown_null_and_stale_handles_are_5027, {
    open_driver();
    let dev = sim().device_alloc(K4);
    let f = TestFile::rw("handles", &pattern(K4, 2));
    for fh in [
        std::ptr::null_mut(),
        0xdead_beef_usize as hipFileHandle_t,
        usize::MAX as hipFileHandle_t,
    ] {
        assert_eq!(rd(fh, dev.ptr, 100, 0, 0), -5027, "read with handle {fh:?}");
        assert_eq!(
            wr(fh, dev.ptr, 100, 0, 0),
            -5027,
            "write with handle {fh:?}"
        );
        // The handle is looked up before the buffer and the offsets.
        assert_eq!(rd(fh, std::ptr::null_mut(), 100, 0, 0), -5027);
        assert_eq!(
            rd_e(fh, dev.ptr, 100, -1, 0),
            (-5027, 0),
            "bad handle + negative offset"
        );
        assert_eq!(
            wr_e(fh, dev.ptr, 100, 0, -1),
            (-5027, 0),
            "bad handle + negative buffer offset"
        );
    }
    // Stale: deregistered, and still stale after its slot is reused by a new registration.
    let stale = f.fh;
    hipFileHandleDeregister(stale);
    assert_eq!(rd(stale, dev.ptr, 100, 0, 0), -5027);
    assert_eq!(wr(stale, dev.ptr, 100, 0, 0), -5027);
    let fresh = register_fd(f.fd);
    assert_ne!(fresh, stale, "a new registration gets a new handle");
    assert_eq!(
        rd(stale, dev.ptr, 100, 0, 0),
        -5027,
        "old handle stays stale"
    );
    assert_eq!(rd(fresh, dev.ptr, 100, 0, 0), 100);
    hipFileHandleDeregister(fresh);
});

child_test!(null_buffer_is_5022, {
    open_driver();
    let f = TestFile::rw("nullbuf", &pattern(K4, 3));
    assert_eq!(rd(f.fh, std::ptr::null_mut(), 100, 0, 0), -5022);
    assert_eq!(wr(f.fh, std::ptr::null(), 100, 0, 0), -5022);
    assert_eq!(
        rd(f.fh, std::ptr::null_mut(), 0, 0, 0),
        -5022,
        "even for size 0"
    );
    // The buffer is resolved before the offsets are checked.
    assert_eq!(rd_e(f.fh, std::ptr::null_mut(), 100, -1, -1), (-5022, 0));
    assert_eq!(wr_e(f.fh, std::ptr::null(), 100, -1, -1), (-5022, 0));
});

child_test!(managed_memory_is_5013, {
    open_driver();
    let s = sim();
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointer; flags 1 = hipMemAttachGlobal.
    assert_eq!(unsafe { (s.malloc_managed)(&mut p, 64 * 1024, 1) }, 0);
    let f = TestFile::rw("managed", &pattern(64 * 1024, 4));
    assert_eq!(rd(f.fh, p, 4096, 0, 0), -5013);
    assert_eq!(wr(f.fh, p, 4096, 0, 0), -5013);
    assert_eq!(rd(f.fh, p, 100, 1, 1), -5013);
    assert_eq!(
        rd_e(f.fh, p, 100, -1, 0),
        (-5013, 0),
        "memory type before offsets"
    );
    assert_eq!(buf_register(p, 4096), hipFileError_t::op(5013));
    assert_eq!(f.contents(), pattern(64 * 1024, 4), "nothing written");
    // SAFETY: allocated above.
    unsafe { (s.free)(p) };
});

/// Negative offsets: `-1`/`EINVAL` (hipFile 0.4.0), for device (fastpath-aligned and not)
/// and host buffers, registered or not.
fn negative_offsets() {
    open_driver();
    let dev = sim().device_alloc(64 * 1024);
    let f = TestFile::rw("negative", &pattern(64 * 1024, 5));
    let mut host = vec![0u8; 64 * 1024];
    let hp: *mut c_void = host.as_mut_ptr().cast();
    let before = paths();
    for registered in [false, true] {
        if registered {
            assert_eq!(buf_register(dev.ptr, dev.len), hipFileError_t::SUCCESS);
            assert_eq!(buf_register(hp, host.len()), hipFileError_t::SUCCESS);
        }
        for p in [dev.ptr, hp] {
            for (foff, boff) in [
                (-1, 0),
                (0, -1),
                (-4096, 0),
                (0, -4096),
                (i64::MIN, 0),
                (0, i64::MIN),
                (-1, -1),
            ] {
                for size in [4096, 100, 0] {
                    assert_eq!(
                        rd_e(f.fh, p, size, foff, boff),
                        (-1, libc::EINVAL),
                        "read {foff} {boff} {size}"
                    );
                    assert_eq!(
                        wr_e(f.fh, p, size, foff, boff),
                        (-1, libc::EINVAL),
                        "write {foff} {boff} {size}"
                    );
                }
            }
        }
        if registered {
            assert_eq!(buf_deregister(dev.ptr), hipFileError_t::SUCCESS);
            assert_eq!(buf_deregister(hp), hipFileError_t::SUCCESS);
        }
    }
    assert_eq!(
        paths_since(before),
        Paths {
            fast_read: 0,
            fast_write: 0,
            copied: 0
        },
        "no I/O was attempted"
    );
    assert_eq!(f.contents(), pattern(64 * 1024, 5));
}

child_test!(
    negative_offsets_are_einval,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    { negative_offsets() }
);
child_test!(
    negative_offsets_are_einval_in_compat_mode,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    { negative_offsets() }
);

/// Upstream's bounds on unregistered, registered and interior pointers.
fn buffer_bounds() {
    open_driver();
    let len = 16 * K4;
    let dev = sim().device_alloc(len);
    let f = TestFile::rw("bounds", &pattern(64 * K4, 6));
    let p = dev.ptr;
    let b = len as i64;
    // Unregistered: the usable length runs to the end of the allocation.
    for (size, boff) in [
        (0, b),
        (1, b),
        (K4, b),
        (len + 1, 0),
        (len, 1),
        (K4 + 1, b - K4 as i64),
        (0, b + 1),
        (1, 1 << 40),
    ] {
        assert_eq!(
            rd(f.fh, p, size, 0, boff),
            -5022,
            "read size {size} at buffer offset {boff}"
        );
        assert_eq!(
            wr(f.fh, p, size, 0, boff),
            -5022,
            "write size {size} at buffer offset {boff}"
        );
    }
    assert_eq!(
        rd(f.fh, p, len, 0, 0),
        len as isize,
        "the whole allocation fits"
    );
    assert_eq!(
        rd(f.fh, p, K4, 0, b - K4 as i64),
        K4 as isize,
        "the last page fits"
    );
    assert_eq!(rd(f.fh, p, 1, 0, b - 1), 1, "the last byte fits");
    // An interior pointer: length = from it to the end of the allocation.
    let inner = dev.at(K4);
    assert_eq!(rd(f.fh, inner, len - K4, 0, 0), (len - K4) as isize);
    assert_eq!(rd(f.fh, inner, len - K4 + 1, 0, 0), -5022);
    assert_eq!(rd(f.fh, inner, 0, 0, (len - K4) as i64), -5022);
    // Registered with a shorter length: the registered length bounds the I/O.
    assert_eq!(buf_register(p, 8 * K4), hipFileError_t::SUCCESS);
    assert_eq!(rd(f.fh, p, 8 * K4, 0, 0), (8 * K4) as isize);
    assert_eq!(
        rd(f.fh, p, 8 * K4, 0, K4 as i64),
        -5022,
        "beyond the registered length"
    );
    assert_eq!(wr(f.fh, p, 8 * K4 + 1, 0, 0), -5022);
    assert_eq!(
        rd(f.fh, p, 0, 0, 8 * K4 as i64),
        -5022,
        "buffer offset == registered length"
    );
    assert_eq!(rd(f.fh, p, 0, 0, 8 * K4 as i64 - 1), 0);
    assert_eq!(buf_deregister(p), hipFileError_t::SUCCESS);
    // Registered with length 0: every I/O on it is refused.
    assert_eq!(buf_register(p, 0), hipFileError_t::SUCCESS);
    assert_eq!(rd(f.fh, p, 0, 0, 0), -5022);
    assert_eq!(wr(f.fh, p, 1, 0, 0), -5022);
    assert_eq!(buf_deregister(p), hipFileError_t::SUCCESS);
}

child_test!(
    buffer_bounds_are_5022,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    { buffer_bounds() }
);
child_test!(
    buffer_bounds_are_5022_in_compat_mode,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    { buffer_bounds() }
);

/// Upstream `amd/io.cpp`: 1 MiB file and unregistered 1 MiB device buffer.
fn upstream_vectors(fastpath: bool) {
    open_driver();
    let data = pattern(MIB, 7);
    let f = TestFile::rw("upstream", &data);
    let dev = device_filled(MIB, 0xEE);
    let before = paths();
    assert_eq!(
        rd(f.fh, dev.ptr, MIB - K4, 0, K4 as i64),
        (MIB - K4) as isize
    );
    assert_eq!(
        rd(f.fh, dev.ptr, MIB, 0, K4 as i64),
        -5022,
        "overflow of the buffer"
    );
    let d = paths_since(before);
    if fastpath {
        assert_fastpath(d, "aligned upstream read");
    } else {
        // The read of MIB - K4 bytes is copied; the overflowing one fails before any copy.
        assert_fallback(d, "forced-compat upstream read", MIB - K4);
    }
    let back = sim().download(dev.ptr, MIB);
    assert!(
        back[..K4].iter().all(|&b| b == 0xEE),
        "bytes before the buffer offset untouched"
    );
    assert_eq!(back[K4..], data[..MIB - K4]);
    // The same vectors for writes.
    let out = TestFile::rw("upstream-out", &[]);
    assert_eq!(
        wr(out.fh, dev.ptr, MIB - K4, 0, K4 as i64),
        (MIB - K4) as isize
    );
    assert_eq!(wr(out.fh, dev.ptr, MIB, 0, K4 as i64), -5022);
    assert_eq!(out.contents(), data[..MIB - K4]);

    // Upstream `HipFileIoHipInit.spawnedThread{Read,Write}`: 1 MiB I/O from a thread that
    // never touched HIP. Before its first fastpath call a thread runs hipInit(0) once.
    let out2 = TestFile::rw("upstream-thread", &[]);
    let (fh, fh2, p) = (f.fh as usize, out2.fh as usize, dev.ptr as usize);
    let inits = sim().counter("hipInit");
    let before = paths();
    std::thread::spawn(move || {
        for _ in 0..2 {
            assert_eq!(
                rd(fh as hipFileHandle_t, p as *mut c_void, MIB, 0, 0),
                MIB as isize
            );
        }
        assert_eq!(
            wr(fh2 as hipFileHandle_t, p as *const c_void, MIB, 0, 0),
            MIB as isize
        );
    })
    .join()
    .expect("I/O from a new thread");
    let d = paths_since(before);
    if fastpath {
        assert_eq!((d.fast_read, d.fast_write, d.copied), (2, 1, 0));
        assert_eq!(
            sim().counter("hipInit") - inits,
            1,
            "one hipInit(0) for the new thread"
        );
    } else {
        assert_eq!((d.fast_read, d.fast_write), (0, 0));
    }
    assert!(out2.contents() == data, "the new thread's write");
}

child_test!(
    upstream_vectors_fastpath,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        if fastpath_possible("upstream_vectors_fastpath") {
            upstream_vectors(true);
        }
    }
);

child_test!(
    upstream_vectors_fallback,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_FORCE_COMPAT_MODE", "true")
    ],
    {
        upstream_vectors(false);
    }
);

child_test!(runtime_copy_failures, {
    open_driver();
    let s = sim();
    let data = pattern(100_000, 8);
    let f = TestFile::rw("copyfail", &data);
    let dev = sim().device_alloc(256 * 1024);
    s.upload(dev.ptr, &pattern(100_000, 9));
    let mut host = vec![0u8; 100_000];
    for (code, expect) in [
        (HIP_ERROR_UNKNOWN, (-999, 0)),
        (HIP_ERROR_INVALID_VALUE, (-1, libc::EINVAL)),
    ] {
        s.fault("fail_copy", code);
        // Unaligned: the fallback, whose copies fail.
        assert_eq!(
            rd_e(f.fh, dev.ptr, 100_000, 0, 0),
            expect,
            "read with fail_copy={code}"
        );
        assert_eq!(rd_e(f.fh, dev.ptr, 5000, 1, 3), expect);
        assert_eq!(
            wr_e(f.fh, dev.ptr, 100_000, 0, 0),
            expect,
            "write with fail_copy={code}"
        );
        // Host memory needs no GPU copy and still works.
        assert_eq!(rd(f.fh, host.as_mut_ptr().cast(), 100_000, 0, 0), 100_000);
        s.fault("fail_copy", 0);
    }
    assert_eq!(host, data);
    assert_eq!(f.contents(), data, "the failed writes wrote nothing");
    // Cleared: works again.
    assert_eq!(rd(f.fh, dev.ptr, 100_000, 0, 0), 100_000);
    assert_eq!(s.download(dev.ptr, 100_000), data);
});

// OS failures are `-1` with `errno`: reading a write-only file, writing a read-only one.
child_test!(
    os_failures_set_errno,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        open_driver();
        let data = pattern(64 * 1024, 10);
        let wo = TestFile::with_flags("wronly", &data, libc::O_WRONLY);
        let ro = TestFile::with_flags("rdonly", &data, libc::O_RDONLY);
        let dev = sim().device_alloc(64 * 1024);
        let mut host = vec![0u8; 64 * 1024];
        let hp: *mut c_void = host.as_mut_ptr().cast();
        // Fallback (unaligned) and host.
        assert_eq!(rd_e(wo.fh, dev.ptr, 1000, 1, 0), (-1, libc::EBADF));
        assert_eq!(rd_e(wo.fh, hp, 1000, 1, 0), (-1, libc::EBADF));
        assert_eq!(wr_e(ro.fh, dev.ptr, 1000, 1, 0), (-1, libc::EBADF));
        assert_eq!(wr_e(ro.fh, hp, 1000, 1, 0), (-1, libc::EBADF));
        if fastpath_possible("os_failures_set_errno") {
            // Fastpath (aligned): the kernel path's EBADF is not retried on the fallback.
            let before = paths();
            assert_eq!(rd_e(wo.fh, dev.ptr, 8192, 0, 0), (-1, libc::EBADF));
            assert_eq!(wr_e(ro.fh, dev.ptr, 8192, 0, 0), (-1, libc::EBADF));
            assert_eq!(
                paths_since(before),
                Paths {
                    fast_read: 1,
                    fast_write: 1,
                    copied: 0
                }
            );
        }
        assert_eq!(wo.contents(), data);
        assert_eq!(ro.contents(), data);
    }
);
