//! The driver's lifetime through the C API: use counting, implicit opening, what a close to zero
//! clears, and the functions that work (or fail in a defined way) with the driver closed.
//!
//! Upstream's rules and the cases of its system tests (`driver.cpp`, `version.cpp`) and unit
//! tests (`driver.cpp`); our platform choice. Every test
//! that touches the driver runs in its own process (`child_test!`), so it starts at use count 0.

mod common;

use std::collections::HashSet;
use std::ffi::{c_int, c_uint, c_void, CStr};
use std::path::PathBuf;
use std::ptr::{null, null_mut};
use std::sync::{Arc, Barrier};

use common::*;
use hipfile::api::Platform;

// ---- helpers --------------------------------------------------------------------------------

/// Close until the count is 0, then check that one more close reports "not initialised"
/// (the teardown of upstream's DriverInit fixture).
fn close_to_zero() {
    while use_count() > 0 {
        assert_eq!(hipFileDriverClose(), OK);
    }
    assert_eq!(use_count(), 0);
    assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
    assert_eq!(use_count(), 0);
}

/// `hipFileRead` into host memory.
fn read_host(fh: hipFileHandle_t, buf: &mut [u8], file_offset: i64, buffer_offset: i64) -> isize {
    // SAFETY: `buf` is valid for writes of its length; the library only writes inside
    // `buffer_offset..buffer_offset + size` of it.
    unsafe {
        hipFileRead(
            fh,
            buf.as_mut_ptr().cast(),
            buf.len() - buffer_offset as usize,
            file_offset,
            buffer_offset,
        )
    }
}

/// `hipFileWrite` from host memory.
fn write_host(fh: hipFileHandle_t, buf: &[u8], file_offset: i64) -> isize {
    // SAFETY: `buf` is valid for reads of its length.
    unsafe { hipFileWrite(fh, buf.as_ptr().cast(), buf.len(), file_offset, 0) }
}

/// A `&'static str` for a child's environment, computed in the parent.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn log_file_path() -> &'static str {
    leak(scratch_file("platform-log").to_string_lossy().into_owned())
}

// ---- use counting ----------------------------------------------------------

child_test!(driver_open_increments_use_count, {
    assert_eq!(use_count(), 0);
    for i in 1..=10 {
        assert_eq!(hipFileDriverOpen(), OK);
        assert_eq!(use_count(), i);
    }
    close_to_zero();
});

child_test!(driver_close_decrements_use_count, {
    for _ in 0..10 {
        assert_eq!(hipFileDriverOpen(), OK);
    }
    assert_eq!(use_count(), 10);
    for i in (0..10).rev() {
        assert_eq!(hipFileDriverClose(), OK);
        assert_eq!(use_count(), i);
    }
    assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
    assert_eq!(use_count(), 0);
});

child_test!(
    driver_close_at_zero_is_not_initialized_and_changes_nothing,
    {
        // Upstream's DriverNoInit fixture: count 0 and Close() == 5001, before and after.
        assert_eq!(use_count(), 0);
        assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
        assert_eq!(use_count(), 0);
        assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
        assert_eq!(use_count(), 0);
        // A full open/close cycle ends in the same state.
        assert_eq!(hipFileDriverOpen(), OK);
        assert_eq!(use_count(), 1);
        assert_eq!(hipFileDriverClose(), OK);
        assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
        assert_eq!(use_count(), 0);
    }
);

// ---- implicit open through file registration ------------------------------------------------

child_test!(handle_register_null_arguments_leave_the_driver_closed, {
    let f = TempFile::new("null-args", b"x", libc::O_RDWR);
    let mut d = descr(f.fd);
    let sentinel = 0x5a5a_5a5a_usize as hipFileHandle_t;
    let mut fh = sentinel;
    // SAFETY: NULL or valid pointers throughout.
    unsafe {
        assert_eq!(
            hipFileHandleRegister(null_mut(), &mut d),
            code(hipFileInvalidValue)
        );
        assert_eq!(use_count(), 0);
        assert_eq!(
            hipFileHandleRegister(&mut fh, null_mut()),
            code(hipFileInvalidValue)
        );
        assert_eq!(fh, sentinel, "*fh is written only on success");
        assert_eq!(use_count(), 0);
        assert_eq!(
            hipFileHandleRegister(null_mut(), null_mut()),
            code(hipFileInvalidValue)
        );
        assert_eq!(use_count(), 0);
    }
    assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
});

child_test!(handle_register_opens_the_driver_once, {
    let a = TempFile::new("implicit-a", b"a", libc::O_RDWR);
    let b = TempFile::new("implicit-b", b"b", libc::O_RDWR);
    assert_eq!(use_count(), 0);
    let fa = register_fd(a.fd);
    assert_eq!(use_count(), 1);
    // The implicit open sets the count to 1 only when it is 0; it never increments.
    let fb = register_fd(b.fd);
    assert_eq!(use_count(), 1);
    // hipFileDriverOpenAfterHandleRegisterIncrementsUseCount.
    assert_eq!(hipFileDriverOpen(), OK);
    assert_eq!(use_count(), 2);
    // Deregistration never changes the count.
    hipFileHandleDeregister(fa);
    hipFileHandleDeregister(fb);
    assert_eq!(use_count(), 2);
    assert_eq!(hipFileDriverClose(), OK);
    assert_eq!(use_count(), 1);
    close_to_zero();
});

child_test!(threaded_handle_register_opens_the_driver_exactly_once, {
    const N: usize = 64;
    let files: Vec<TempFile> = (0..N)
        .map(|i| TempFile::new("threaded", &[i as u8; 16], libc::O_RDWR))
        .collect();
    let barrier = Arc::new(Barrier::new(N));
    let results: Vec<(hipFileError_t, usize)> = std::thread::scope(|s| {
        let joins: Vec<_> = files
            .iter()
            .map(|f| {
                let fd = f.fd;
                let barrier = barrier.clone();
                s.spawn(move || {
                    let mut fh: hipFileHandle_t = null_mut();
                    let mut d = descr(fd);
                    barrier.wait();
                    // SAFETY: valid pointers.
                    let r = unsafe { hipFileHandleRegister(&mut fh, &mut d) };
                    (r, fh as usize)
                })
            })
            .collect();
        joins.into_iter().map(|j| j.join().unwrap()).collect()
    });
    for (r, _) in &results {
        assert_eq!(*r, OK);
    }
    assert_eq!(
        use_count(),
        1,
        "64 concurrent implicit opens from 0 end at exactly 1"
    );
    let distinct: HashSet<usize> = results.iter().map(|&(_, h)| h).collect();
    assert_eq!(distinct.len(), N, "every registration gets its own handle");
    assert!(!distinct.contains(&0), "no handle is NULL");
    // Each handle reaches its own file.
    for (i, &(_, h)) in results.iter().enumerate() {
        let mut buf = [0xffu8; 16];
        assert_eq!(read_host(h as hipFileHandle_t, &mut buf, 0, 0), 16);
        assert_eq!(buf, [i as u8; 16]);
    }
    close_to_zero();
});

child_test!(driver_close_deregisters_handles, {
    let f = TempFile::new("close-dereg", &pattern(4096, 1), libc::O_RDWR);
    let fh = register_fd(f.fd);
    assert_eq!(use_count(), 1);
    let sentinel = 0x1234_usize as hipFileHandle_t;
    let mut again = sentinel;
    let mut d = descr(f.fd);
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { hipFileHandleRegister(&mut again, &mut d) },
        code(hipFileHandleAlreadyRegistered)
    );
    assert_eq!(again, sentinel);
    assert_eq!(use_count(), 1);
    assert_eq!(hipFileDriverClose(), OK);
    assert_eq!(use_count(), 0);
    // The registration is gone: the same descriptor registers again.
    let fh2 = register_fd(f.fd);
    assert_eq!(use_count(), 1);
    // The handle of the earlier open is stale; the new one works; the client fd stayed open.
    let mut buf = vec![0u8; 4096];
    assert_eq!(
        read_host(fh, &mut buf, 0, 0),
        -(hipFileHandleNotRegistered as isize)
    );
    assert_eq!(read_host(fh2, &mut buf, 0, 0), 4096);
    assert_eq!(buf, pattern(4096, 1));
    close_to_zero();
});

// ---- implicit open through buffer registration ----------------------------------------------

child_test!(buf_register_null_opens_the_driver, {
    // hipFileBufRegisterNullptrInitsDriver: the count is bumped before validation.
    assert_eq!(
        hipFileBufRegister(null(), 4096, 0),
        code(hipFileInvalidValue)
    );
    assert_eq!(use_count(), 1);
    assert_eq!(
        hipFileBufRegister(null(), 4096, 0),
        code(hipFileInvalidValue)
    );
    assert_eq!(use_count(), 1);
    close_to_zero();
});

child_test!(buf_register_opens_the_driver, {
    let b = sim().device_alloc(1 << 20);
    assert_eq!(hipFileBufRegister(b.ptr, b.len, 0), OK);
    assert_eq!(use_count(), 1);
    let c = sim().device_alloc(4096);
    assert_eq!(hipFileBufRegister(c.ptr, c.len, 0), OK);
    assert_eq!(use_count(), 1, "later registrations do not increment");
    assert_eq!(hipFileBufDeregister(b.ptr), OK);
    assert_eq!(hipFileBufDeregister(c.ptr), OK);
    assert_eq!(use_count(), 1, "deregistration never changes the count");
    close_to_zero();
});

child_test!(threaded_buf_register_opens_the_driver_exactly_once, {
    const THREADS: usize = 16;
    const PER_THREAD: usize = 4;
    let bufs: Vec<DeviceBuf> = (0..THREADS * PER_THREAD)
        .map(|i| sim().device_alloc(4096 * (1 + i % 3)))
        .collect();
    let addrs: Vec<(usize, usize)> = bufs.iter().map(|b| (b.ptr as usize, b.len)).collect();
    let barrier = Arc::new(Barrier::new(THREADS));
    let register_all = |f: fn(usize, usize) -> hipFileError_t| -> Vec<hipFileError_t> {
        std::thread::scope(|s| {
            let joins: Vec<_> = addrs
                .chunks(PER_THREAD)
                .map(|mine| {
                    let barrier = barrier.clone();
                    s.spawn(move || {
                        barrier.wait();
                        mine.iter().map(|&(p, len)| f(p, len)).collect::<Vec<_>>()
                    })
                })
                .collect();
            joins.into_iter().flat_map(|j| j.join().unwrap()).collect()
        })
    };
    let reg = register_all(|p, len| hipFileBufRegister(p as *const c_void, len, 0));
    assert!(reg.iter().all(|&r| r == OK), "{reg:?}");
    assert_eq!(use_count(), 1);
    let dereg = register_all(|p, _| hipFileBufDeregister(p as *const c_void));
    assert!(dereg.iter().all(|&r| r == OK), "{dereg:?}");
    let again = register_all(|p, _| hipFileBufDeregister(p as *const c_void));
    assert!(
        again.iter().all(|&r| r == code(hipFileMemoryNotRegistered)),
        "{again:?}"
    );
    assert_eq!(use_count(), 1);
    close_to_zero();
    drop(bufs);
});

child_test!(driver_close_deregisters_buffers, {
    let b = sim().device_alloc(8192);
    assert_eq!(hipFileBufRegister(b.ptr, 8192, 0), OK);
    assert_eq!(
        hipFileBufRegister(b.ptr, 8192, 0),
        code(hipFileMemoryAlreadyRegistered)
    );
    assert_eq!(use_count(), 1);
    assert_eq!(hipFileDriverClose(), OK);
    assert_eq!(use_count(), 0);
    assert_eq!(hipFileBufDeregister(b.ptr), code(hipFileDriverClosing));
    assert_eq!(
        hipFileBufRegister(b.ptr, 8192, 0),
        OK,
        "close cleared the buffer map"
    );
    assert_eq!(use_count(), 1);
    assert_eq!(hipFileBufDeregister(b.ptr), OK);
    close_to_zero();
});

// ---- async calls on a closed driver (upstream's "ReadAsyncInitsDriver") ------------------

type AsyncFn = unsafe extern "C" fn(
    hipFileHandle_t,
    *mut c_void,
    *mut usize,
    *mut hoff_t,
    *mut hoff_t,
    *mut libc::ssize_t,
    hipStream_t,
) -> hipFileError_t;

fn async_all_null(f: AsyncFn) -> hipFileError_t {
    // SAFETY: all-NULL arguments are part of the contract (refused).
    unsafe {
        f(
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
        )
    }
}

child_test!(async_io_on_a_closed_driver_opens_it_and_fails, {
    for (name, f) in [
        ("read", hipFileReadAsync as AsyncFn),
        ("write", hipFileWriteAsync as AsyncFn),
    ] {
        assert_eq!(use_count(), 0, "{name}");
        assert_eq!(
            async_all_null(f),
            code(hipFileInvalidValue),
            "{name} with the driver closed"
        );
        assert_eq!(use_count(), 1, "{name} opened the driver");
        // With the driver open, NULL arguments are refused and the count does not move.
        assert_eq!(
            async_all_null(f),
            code(hipFileInvalidValue),
            "{name} with the driver open"
        );
        assert_eq!(use_count(), 1);
        close_to_zero();
    }
    // Whatever the arguments: with the driver closed nothing else happens.
    let b = sim().device_alloc(4096);
    let (mut size, mut foff, mut boff, mut bytes) =
        (4096usize, 0 as hoff_t, 0 as hoff_t, 7 as libc::ssize_t);
    // SAFETY: valid pointers; the bogus handle is never dereferenced.
    let r = unsafe {
        hipFileReadAsync(
            0x1000 as hipFileHandle_t,
            b.ptr,
            &mut size,
            &mut foff,
            &mut boff,
            &mut bytes,
            null_mut(),
        )
    };
    assert_eq!(r, code(hipFileInvalidValue));
    assert_eq!(use_count(), 1);
    assert_eq!(
        (size, foff, boff, bytes),
        (4096, 0, 0, 7),
        "nothing was read or written"
    );
    close_to_zero();
});

// ---- APIs that work with the driver closed --------------------------------------------------

child_test!(get_version_works_with_the_driver_closed, {
    let (mut major, mut minor, mut patch) = (99, 99, 99);
    // SAFETY: valid or NULL pointers throughout.
    unsafe {
        assert_eq!(hipFileGetVersion(&mut major, &mut minor, &mut patch), OK);
        assert_eq!((major, minor, patch), (0, 5, 0));
        assert_eq!(
            (major, minor, patch),
            (
                HIPFILE_VERSION_MAJOR,
                HIPFILE_VERSION_MINOR,
                HIPFILE_VERSION_PATCH
            )
        );
        assert_eq!(
            (major, minor, patch),
            (
                header_define("HIPFILE_VERSION_MAJOR"),
                header_define("HIPFILE_VERSION_MINOR"),
                header_define("HIPFILE_VERSION_PATCH")
            )
        );
        assert_eq!(hipFileGetVersion(null_mut(), null_mut(), null_mut()), OK);
        let mut only = 99;
        assert_eq!(hipFileGetVersion(null_mut(), &mut only, null_mut()), OK);
        assert_eq!(only, 5);
        only = 99;
        assert_eq!(hipFileGetVersion(&mut only, null_mut(), null_mut()), OK);
        assert_eq!(only, 0);
        only = 99;
        assert_eq!(hipFileGetVersion(null_mut(), null_mut(), &mut only), OK);
        assert_eq!(only, 0);
    }
    assert_eq!(use_count(), 0, "GetVersion never touches the driver");
    assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
});

child_test!(buf_deregister_with_the_driver_closed_is_driver_closing, {
    assert_eq!(
        hipFileBufDeregister(std::ptr::dangling::<c_void>()),
        code(hipFileDriverClosing)
    );
    assert_eq!(use_count(), 0);
    assert_eq!(hipFileBufDeregister(null()), code(hipFileDriverClosing));
    assert_eq!(use_count(), 0);
    let b = sim().device_alloc(4096);
    assert_eq!(hipFileBufDeregister(b.ptr), code(hipFileDriverClosing));
    assert_eq!(use_count(), 0);
});

child_test!(handle_deregister_with_the_driver_closed_is_silent, {
    for bogus in [0xdead_beef_usize, usize::MAX, 1, 0] {
        hipFileHandleDeregister(bogus as hipFileHandle_t);
        assert_eq!(use_count(), 0);
    }
    // A handle of an earlier open, deregistered after the close: nothing happens either.
    let f = TempFile::new("closed-dereg", b"x", libc::O_RDWR);
    let fh = register_fd(f.fd);
    assert_eq!(hipFileDriverClose(), OK);
    hipFileHandleDeregister(fh);
    assert_eq!(use_count(), 0);
    assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
});

child_test!(read_write_with_the_driver_closed_fail_with_einval, {
    let mut v = vec![0u8; 4096];
    let cases: [(usize, bool); 3] = [(0xbad_f00d, true), (0, true), (0xbad_f00d, false)];
    for (h, with_buffer) in cases {
        let fh = h as hipFileHandle_t;
        let buf: *mut c_void = if with_buffer {
            v.as_mut_ptr().cast()
        } else {
            null_mut()
        };
        set_errno(0);
        // SAFETY: `v` is valid for 4096 bytes (or the pointer is NULL); the driver is closed.
        assert_eq!(unsafe { hipFileRead(fh, buf, 4096, 0, 0) }, -1);
        assert_eq!(errno(), libc::EINVAL);
        set_errno(0);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileWrite(fh, buf, 4096, 0, 0) }, -1);
        assert_eq!(errno(), libc::EINVAL);
        assert_eq!(use_count(), 0, "Read/Write never open the driver");
    }
    // A handle of an earlier open is no different.
    let f = TempFile::new("closed-io", &pattern(4096, 2), libc::O_RDWR);
    let fh = register_fd(f.fd);
    assert_eq!(hipFileDriverClose(), OK);
    set_errno(0);
    assert_eq!(read_host(fh, &mut v, 0, 0), -1);
    assert_eq!(errno(), libc::EINVAL);
    assert_eq!(use_count(), 0);
});

child_test!(property_parameter_and_batch_calls_never_open_the_driver, {
    // Upstream's "APIs that never touch the count" (upstream DriverNotReallyNoInit and
    // DriverNoInit.hipFileBatchIOSetUp). Their result codes are tested
    // elsewhere; here only the use count is checked.
    // SAFETY: all-zero is a valid value of this plain C struct.
    let mut props: hipFileDriverProps_t = unsafe { std::mem::zeroed() };
    // SAFETY: NULL or valid pointers throughout.
    unsafe {
        let _ = hipFileDriverGetProperties(null_mut());
        assert_eq!(use_count(), 0);
        let _ = hipFileDriverGetProperties(&mut props);
        assert_eq!(use_count(), 0);
    }
    let _ = hipFileDriverSetPollMode(true, 4096);
    let _ = hipFileDriverSetMaxDirectIOSize(16384);
    let _ = hipFileDriverSetMaxCacheSize(16384);
    let _ = hipFileDriverSetMaxPinnedMemSize(32768);
    assert_eq!(use_count(), 0);
    let mut size = 0usize;
    let mut flag = false;
    let mut text = [0 as std::ffi::c_char; 256];
    // SAFETY: valid pointers and lengths.
    unsafe {
        let _ = hipFileGetParameterSizeT(hipFileParamExecutionMaxIOThreads, &mut size);
        let _ = hipFileGetParameterBool(hipFileParamPropertiesUsePollMode, &mut flag);
        let _ =
            hipFileGetParameterString(hipFileParamLogDir, text.as_mut_ptr(), text.len() as c_int);
    }
    let _ = hipFileSetParameterSizeT(hipFileParamExecutionMaxIOThreads, 4);
    let _ = hipFileSetParameterBool(hipFileParamUsePcip2pdma, false);
    // SAFETY: a valid NUL-terminated string.
    let _ = unsafe { hipFileSetParameterString(hipFileParamLogDir, c"".as_ptr()) };
    assert_eq!(use_count(), 0);
    let mut batch: hipFileBatchHandle_t = null_mut();
    // SAFETY: valid out-pointer.
    let r = unsafe { hipFileBatchIOSetUp(&mut batch, 16) };
    assert_eq!(
        use_count(),
        0,
        "BatchIOSetUp works with the driver closed and leaves the count"
    );
    if r == OK && !batch.is_null() {
        hipFileBatchIODestroy(batch);
    }
    hipFileBatchIODestroy(null_mut());
    assert_eq!(use_count(), 0);
    assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
});

// ---- streams --------------------------------------------------------------

fn new_stream() -> hipStream_t {
    let mut s: *mut c_void = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (sim().stream_create)(&mut s) }, 0);
    s
}

fn destroy_stream(s: hipStream_t) {
    // SAFETY: created by new_stream.
    assert_eq!(unsafe { (sim().stream_destroy)(s) }, 0);
}

child_test!(stream_registration_rules_with_the_driver_closed, {
    let s = new_stream();
    // A real stream: register + deregister, the count stays 0.
    assert_eq!(hipFileStreamRegister(s, 0), OK);
    assert_eq!(use_count(), 0);
    assert_eq!(hipFileStreamDeregister(s), OK);
    assert_eq!(use_count(), 0);
    // The NULL (default) stream can be registered and deregistered.
    assert_eq!(hipFileStreamRegister(null_mut(), 0), OK);
    assert_eq!(hipFileStreamDeregister(null_mut()), OK);
    assert_eq!(
        hipFileStreamDeregister(null_mut()),
        code(hipFileInvalidValue),
        "NULL is no longer registered"
    );
    // Every combination of the four flags (mask 0xF) is accepted.
    for flags in 0..=HIPFILE_STREAM_FLAGS_MASK {
        assert_eq!(hipFileStreamRegister(s, flags), OK, "flags {flags:#x}");
        assert_eq!(hipFileStreamDeregister(s), OK);
    }
    // Any bit outside the mask is refused, and nothing is registered.
    for flags in [0x10, 0x1f, 0x100, 0x8000_0000, c_uint::MAX] {
        assert_eq!(
            hipFileStreamRegister(s, flags),
            code(hipFileInvalidValue),
            "flags {flags:#x}"
        );
        assert_eq!(hipFileStreamDeregister(s), code(hipFileInvalidValue));
    }
    // Twice → InvalidValue; deregister twice → InvalidValue.
    assert_eq!(hipFileStreamRegister(s, 0xf), OK);
    assert_eq!(hipFileStreamRegister(s, 0xf), code(hipFileInvalidValue));
    assert_eq!(hipFileStreamRegister(s, 0), code(hipFileInvalidValue));
    assert_eq!(hipFileStreamDeregister(s), OK);
    assert_eq!(hipFileStreamDeregister(s), code(hipFileInvalidValue));
    // A stream value never registered.
    assert_eq!(
        hipFileStreamDeregister(1 as hipStream_t),
        code(hipFileInvalidValue)
    );
    // A stream the runtime does not know: its device cannot be found → H(hipErrorInvalidHandle).
    let bogus = 0xbad_000 as hipStream_t;
    assert_eq!(
        hipFileStreamRegister(bogus, 0),
        hipFileError_t {
            err: hipFileHipDriverError,
            hip_drv_err: 400
        }
    );
    assert_eq!(
        hipFileStreamDeregister(bogus),
        code(hipFileInvalidValue),
        "nothing was registered"
    );
    assert_eq!(use_count(), 0, "streams never touch the use count");
    assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
    destroy_stream(s);
});

child_test!(stream_registration_survives_driver_close, {
    let s = new_stream();
    assert_eq!(hipFileDriverOpen(), OK);
    assert_eq!(
        hipFileStreamRegister(s, HIPFILE_STREAM_FIXED_BUF_OFFSET),
        OK
    );
    assert_eq!(hipFileDriverClose(), OK);
    assert_eq!(use_count(), 0);
    // Still registered after the close to 0.
    assert_eq!(hipFileStreamRegister(s, 0), code(hipFileInvalidValue));
    // Registered while closed, then an open/close cycle: still registered.
    assert_eq!(hipFileStreamRegister(null_mut(), 0), OK);
    assert_eq!(hipFileDriverOpen(), OK);
    assert_eq!(hipFileDriverClose(), OK);
    assert_eq!(hipFileStreamDeregister(null_mut()), OK);
    assert_eq!(hipFileStreamDeregister(s), OK);
    assert_eq!(hipFileStreamDeregister(s), code(hipFileInvalidValue));
    assert_eq!(use_count(), 0);
    destroy_stream(s);
});

// ---- error strings ---------------------------------------------------

const ERROR_STRINGS: &[(hipFileOpError_t, &str)] = &[
    (hipFileSuccess, "hipFile success"),
    (hipFileDriverNotInitialized, "GPU IO driver is not loaded"),
    (
        hipFileDriverInvalidProps,
        "Invalid GPU IO driver property provided",
    ),
    (
        hipFileDriverUnsupportedLimit,
        "GPU IO Driver property value is unsupported",
    ),
    (
        hipFileDriverVersionMismatch,
        "hipFile version does not match GPU IO driver version",
    ),
    (
        hipFileDriverVersionReadError,
        "Unable to read the GPU IO driver version",
    ),
    (
        hipFileDriverClosing,
        "GPU IO driver is closing and not accepting new requests",
    ),
    (
        hipFilePlatformNotSupported,
        "hipFile is not supported on the current platform",
    ),
    (
        hipFileIONotSupported,
        "hipFile is not supported on the selected file",
    ),
    (
        hipFileDeviceNotSupported,
        "The selected GPU does not support hipFile",
    ),
    (hipFileDriverError, "GPU IO driver error"),
    (
        hipFileHipDriverError,
        "GPU driver error: Inspect hip_drv_err for additional information",
    ),
    (hipFileHipPointerInvalid, "Invalid GPU pointer"),
    (
        hipFileHipMemoryTypeInvalid,
        "Memory type backing pointer is incompatible with hipFile",
    ),
    (
        hipFileHipPointerRangeError,
        "Pointer range exceeds allocated memory region",
    ),
    (hipFileHipContextMismatch, "GPU driver context mismatch"),
    (
        hipFileInvalidMappingSize,
        "Accessing memory beyond pinned memory buffer",
    ),
    (
        hipFileInvalidMappingRange,
        "Accessing memory beyond mapped memory region",
    ),
    (hipFileInvalidFileType, "Unsupported file type"),
    (hipFileInvalidFileOpenFlag, "Unsupported file open flags"),
    (hipFileDIONotSet, "O_DIRECT flag not set"),
    (
        hipFileInvalidValue,
        "One or more arguments have an invalid value",
    ),
    (
        hipFileMemoryAlreadyRegistered,
        "Device pointer is already registered",
    ),
    (
        hipFileMemoryNotRegistered,
        "Device pointer is not registered",
    ),
    (
        hipFilePermissionDenied,
        "Permission error on device or file access",
    ),
    (hipFileDriverAlreadyOpen, "GPU IO driver is already open"),
    (
        hipFileHandleNotRegistered,
        "File handle for GPU IO is not registered",
    ),
    (
        hipFileHandleAlreadyRegistered,
        "File handle for GPU IO is already registered",
    ),
    (hipFileDeviceNotFound, "Selected device not found"),
    (hipFileInternalError, "Internal GPU IO library error"),
    (
        hipFileGetNewFDFailed,
        "Unable to obtain a new file descriptor",
    ),
    (
        hipFileDriverSetupError,
        "GPU IO Driver initialization error",
    ),
    (
        hipFileIODisabled,
        "GPU IO config file prohibits GPU IO on specified file",
    ),
    (
        hipFileBatchSubmitFailed,
        "Failed to submit request for batch operation",
    ),
    (
        hipFileGPUMemoryPinningFailed,
        "Failed to allocated pinned device memory",
    ),
    (hipFileBatchFull, "Batch operation queue is full"),
    (
        hipFileAsyncNotSupported,
        "hipFile async IO is not supported",
    ),
    (
        hipFileIOMaxError,
        "Internal flag to mark largest hipFile error code",
    ),
];

fn error_string(status: hipFileOpError_t) -> &'static CStr {
    let p = hipFileGetOpErrorString(status);
    assert!(!p.is_null(), "GetOpErrorString({status}) returned NULL");
    // SAFETY: a static NUL-terminated string.
    unsafe { CStr::from_ptr(p) }
}

#[test]
fn op_error_strings_are_exact() {
    // Every value of the enum, in order, with its exact string.
    let codes: Vec<i32> = ERROR_STRINGS.iter().map(|&(c, _)| c).collect();
    let expected: Vec<i32> = std::iter::once(0)
        .chain((5001..=5039).filter(|c| *c != 5021 && *c != 5032))
        .collect();
    assert_eq!(
        codes, expected,
        "the table covers every hipFileOpError_t value"
    );
    for &(status, text) in ERROR_STRINGS {
        assert_eq!(
            error_string(status).to_str().unwrap(),
            text,
            "string of {status}"
        );
        // The same static string every time.
        assert_eq!(
            hipFileGetOpErrorString(status),
            hipFileGetOpErrorString(status)
        );
    }
}

#[test]
fn op_error_string_of_unknown_values() {
    for status in [
        5021,
        5032,
        -5022,
        42,
        -1,
        1,
        5000,
        5040,
        4999,
        -5001,
        i32::MIN,
        i32::MAX,
    ] {
        assert_eq!(
            error_string(status).to_str().unwrap(),
            "Unknown hipFile error",
            "string of {status}"
        );
    }
}

// ---- platform choice: no device, forced host, unknown value ------------------

/// The library runs host-only: the driver opens, a registered file reads and writes pageable
/// host memory byte-exact, and host buffers register.
fn host_only_io_works() {
    assert_eq!(hipFileDriverOpen(), OK);
    assert_eq!(use_count(), 1);
    assert_eq!(hipfile::api::runtime_report().platform, Platform::Host);
    let data = pattern(3 << 20, 11);
    let f = TempFile::new("host-only", &data, libc::O_RDWR);
    let fh = register_fd(f.fd);

    // Whole file into pageable memory (large enough for the parallel path).
    let mut buf = vec![0u8; data.len()];
    assert_eq!(read_host(fh, &mut buf, 0, 0), data.len() as isize);
    assert!(buf == data, "read bytes differ");
    // A piece at an offset, into the middle of a buffer.
    let mut piece = vec![0xeeu8; 10_000];
    assert_eq!(read_host(fh, &mut piece, 12_345, 1_000), 9_000);
    assert_eq!(
        &piece[..1_000],
        &[0xee; 1_000][..],
        "bytes before buffer_offset untouched"
    );
    assert_eq!(&piece[1_000..], &data[12_345..12_345 + 9_000]);
    // Short read at the end of the file.
    let mut tail = vec![0u8; 8192];
    assert_eq!(read_host(fh, &mut tail, data.len() as i64 - 100, 0), 100);
    assert_eq!(&tail[..100], &data[data.len() - 100..]);

    // Writes.
    let w = pattern(100_000, 12);
    assert_eq!(write_host(fh, &w, 4096), w.len() as isize);
    let on_disk = std::fs::read(&f.path).unwrap();
    assert_eq!(&on_disk[4096..4096 + w.len()], &w[..]);
    assert_eq!(&on_disk[..4096], &data[..4096]);
    assert_eq!(&on_disk[4096 + w.len()..], &data[4096 + w.len()..]);

    // A host buffer registers, serves I/O, deregisters.
    let mut reg = vec![0u8; 64 << 10];
    assert_eq!(hipFileBufRegister(reg.as_ptr().cast(), reg.len(), 0), OK);
    assert_eq!(
        hipFileBufRegister(reg.as_ptr().cast(), reg.len(), 0),
        code(hipFileMemoryAlreadyRegistered)
    );
    // SAFETY: `reg` is valid for its length; the read stays inside it.
    let n = unsafe { hipFileRead(fh, reg.as_mut_ptr().cast(), 8192, 0, 4096) };
    assert_eq!(n, 8192);
    assert_eq!(&reg[4096..4096 + 8192], &on_disk[..8192]);
    assert_eq!(hipFileBufDeregister(reg.as_ptr().cast()), OK);
    assert_eq!(
        hipFileBufDeregister(reg.as_ptr().cast()),
        code(hipFileMemoryNotRegistered)
    );

    hipFileHandleDeregister(fh);
    close_to_zero();
}

child_test!(
    zero_devices_runs_host_only,
    [("HIPSIM_DEVICE_COUNT", "0")],
    {
        host_only_io_works();
        // The runtime without a device was not used for any memory query or copy.
        assert_eq!(sim().counter("hipPointerGetAttributes"), 0);
        assert_eq!(sim().counter("hipMemcpy"), 0);
        assert_eq!(sim().counter("hipAmdFileRead"), 0);
    }
);

child_test!(
    platform_host_runs_host_only_even_with_devices,
    [("HIPFILE_PLATFORM", "host")],
    {
        host_only_io_works();
        assert_eq!(sim().counter("hipPointerGetAttributes"), 0);
        assert_eq!(sim().counter("hipMemcpy"), 0);
        assert_eq!(sim().counter("hipAmdFileRead"), 0);
    }
);

child_test!(
    unknown_platform_warns_and_chooses_automatically,
    [
        ("HIPFILE_PLATFORM", "bogus"),
        ("HIPFILE_HOST", "false"),
        ("HIPFILE_LOG_FILE", log_file_path())
    ],
    {
        let log = PathBuf::from(std::env::var("HIPFILE_LOG_FILE").unwrap());
        assert_eq!(hipFileDriverOpen(), OK);
        // Automatic choice: hipsim (AMD face, one device).
        assert_eq!(hipfile::api::runtime_report().platform, Platform::Amd);
        // A hipMalloc pointer registers as device memory: with the host backend off, only
        // device memory is accepted, and host memory is refused.
        let b = sim().device_alloc(8192);
        assert_eq!(hipFileBufRegister(b.ptr, 8192, 0), OK);
        assert_eq!(hipFileBufDeregister(b.ptr), OK);
        let v = vec![0u8; 4096];
        assert_eq!(
            hipFileBufRegister(v.as_ptr().cast(), v.len(), 0),
            code(hipFileHipMemoryTypeInvalid)
        );
        assert!(sim().counter("hipPointerGetAttributes") >= 2);
        close_to_zero();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        assert!(
            text.lines().any(|l| l.contains("WARN")
                && l.contains("HIPFILE_PLATFORM")
                && l.contains("bogus")),
            "no warning about HIPFILE_PLATFORM=bogus in the log:\n{text}"
        );
    }
);
