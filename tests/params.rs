//! Parameters and properties through the C API: get/set/stage/apply/reset
//! cycles, error cases, what each knob drives, and the driver properties.

mod common;
use common::*;

use std::ffi::{c_char, CStr, CString};

use hipfile::internals::config::{BOOL_PARAMS, SIZE_PARAMS};

fn set_string(p: i32, v: &CStr) -> hipFileError_t {
    // SAFETY: a NUL-terminated string.
    unsafe { hipFileSetParameterString(p, v.as_ptr()) }
}

fn get_size(p: i32) -> usize {
    let mut v = usize::MAX;
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { hipFileGetParameterSizeT(p, &mut v) },
        hipFileError_t::SUCCESS
    );
    v
}

fn get_bool(p: i32) -> bool {
    let mut v = false;
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { hipFileGetParameterBool(p, &mut v) },
        hipFileError_t::SUCCESS
    );
    v
}

fn get_string(p: i32) -> String {
    let mut buf = [0 as c_char; 256];
    // SAFETY: valid buffer of 256 bytes.
    assert_eq!(
        unsafe { hipFileGetParameterString(p, buf.as_mut_ptr(), 256) },
        hipFileError_t::SUCCESS
    );
    // SAFETY: the call wrote a NUL-terminated string.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_str()
        .unwrap()
        .to_string()
}

const fn op(e: i32) -> hipFileError_t {
    hipFileError_t::op(e)
}

child_test!(size_parameters_stage_apply_and_reset, {
    // Defaults while closed.
    assert_eq!(get_size(hipFileParamPropertiesPerBufferCacheSizeKB), 4096);
    assert_eq!(
        get_size(hipFileParamPropertiesMaxDeviceCacheSizeKB),
        256 << 10
    );
    assert_eq!(get_size(hipFileParamExecutionMinIOThresholdSizeKB), 1024);
    assert_eq!(get_size(hipFileParamPropertiesIOBatchsize), 128);
    assert_eq!(get_size(hipFileParamProfileStats), 1);
    // Every size parameter: stage a value, read it back while closed, apply at open, keep
    // while open, reset at close.
    let values: [usize; 12] = [2, 64, 3, 512, 2, 8192, 65536, 1024, 1 << 20, 64, 16, 250];
    for (p, v) in SIZE_PARAMS.iter().zip(values) {
        let p = *p as i32;
        assert_eq!(hipFileSetParameterSizeT(p, v), OK, "set {p}");
        assert_eq!(get_size(p), v, "staged {p}");
    }
    assert_eq!(hipFileDriverOpen(), OK);
    for (p, v) in SIZE_PARAMS.iter().zip(values) {
        assert_eq!(get_size(*p as i32), v, "live {p:?}");
    }
    // Setting while open is refused and changes nothing.
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamExecutionMaxIOThreads, 9),
        op(hipFileDriverAlreadyOpen)
    );
    assert_eq!(get_size(hipFileParamExecutionMaxIOThreads), 3);
    // The applied values drive the engine: properties report the chunk and budget.
    let mut props = hipFileDriverProps_t::default();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileDriverGetProperties(&mut props) }, OK);
    assert_eq!(props.per_buffer_cache_size, 1024);
    assert_eq!(props.max_device_cache_size, 65536);
    assert_eq!(props.max_batch_io_count, 64);
    assert_eq!(props.max_batch_io_timeout_msecs, 250);
    assert_eq!(props.nvfs.poll_thresh_size, 16);
    assert_eq!(props.nvfs.max_direct_io_size, 8192);
    assert_eq!(props.max_device_pinned_mem_size, 1 << 20);
    assert_eq!(hipFileDriverClose(), OK);
    // Closed to zero: staged values are gone.
    assert_eq!(get_size(hipFileParamPropertiesPerBufferCacheSizeKB), 4096);
    assert_eq!(get_size(hipFileParamPropertiesIOBatchsize), 128);
});

child_test!(size_parameter_errors, {
    let mut v = 0usize;
    // SAFETY: NULL is the case under test; then an invalid enum value.
    unsafe {
        assert_eq!(
            hipFileGetParameterSizeT(hipFileParamExecutionMaxIOThreads, std::ptr::null_mut()),
            op(hipFileInvalidValue)
        );
        assert_eq!(
            hipFileGetParameterSizeT(12, &mut v),
            op(hipFileInvalidValue)
        );
        assert_eq!(
            hipFileGetParameterSizeT(-1, &mut v),
            op(hipFileInvalidValue)
        );
    }
    assert_eq!(hipFileSetParameterSizeT(12, 1), op(hipFileInvalidValue));
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamExecutionMaxIOThreads, 0),
        op(hipFileInvalidValue)
    );
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamExecutionMaxIOThreads, 65),
        op(hipFileInvalidValue)
    );
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamPropertiesPerBufferCacheSizeKB, 6),
        op(hipFileInvalidValue)
    );
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamProfileStats, 4),
        op(hipFileInvalidValue)
    );
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamPropertiesIOBatchsize, 129),
        op(hipFileInvalidValue)
    );
    // A refused value leaves the previous one.
    assert_eq!(get_size(hipFileParamPropertiesPerBufferCacheSizeKB), 4096);
    // Implicit open through registration also blocks setters.
    let buf = sim().device_alloc(4096);
    assert_eq!(hipFileBufRegister(buf.ptr, 4096, 0), OK);
    assert_eq!(
        hipFileSetParameterBool(hipFileParamForceCompatMode, true),
        op(hipFileDriverAlreadyOpen)
    );
    assert_eq!(
        set_string(hipFileParamLogDir, c"/tmp"),
        op(hipFileDriverAlreadyOpen)
    );
});

child_test!(bool_parameters_stage_apply_and_reset, {
    assert!(get_bool(hipFileParamPropertiesAllowCompatMode));
    assert!(!get_bool(hipFileParamForceCompatMode));
    assert!(get_bool(hipFileParamExecutionParallelIO));
    assert!(get_bool(hipFileParamPropertiesAllowSystemMemory));
    assert!(!get_bool(hipFileParamUsePcip2pdma));
    for p in BOOL_PARAMS {
        let p = p as i32;
        let flipped = !get_bool(p);
        assert_eq!(hipFileSetParameterBool(p, flipped), OK);
        assert_eq!(get_bool(p), flipped, "staged {p}");
    }
    assert_eq!(hipFileDriverOpen(), OK);
    for p in BOOL_PARAMS {
        let p = p as i32;
        assert_eq!(
            hipFileSetParameterBool(p, true),
            op(hipFileDriverAlreadyOpen)
        );
    }
    assert!(!get_bool(hipFileParamPropertiesAllowCompatMode));
    assert!(get_bool(hipFileParamUsePcip2pdma));
    let mut props = hipFileDriverProps_t::default();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileDriverGetProperties(&mut props) }, OK);
    assert_eq!(
        props.nvfs.driver_control_flags & (1 << hipFileUsePollMode),
        1 << hipFileUsePollMode
    );
    assert_eq!(
        props.nvfs.driver_control_flags & (1 << hipFileAllowCompatMode),
        0
    );
    assert_eq!(hipFileDriverClose(), OK);
    assert!(get_bool(hipFileParamPropertiesAllowCompatMode));
    assert!(!get_bool(hipFileParamUsePcip2pdma));
    let mut v = false;
    // SAFETY: invalid arguments under test.
    unsafe {
        assert_eq!(hipFileGetParameterBool(12, &mut v), op(hipFileInvalidValue));
        assert_eq!(
            hipFileGetParameterBool(hipFileParamForceCompatMode, std::ptr::null_mut()),
            op(hipFileInvalidValue)
        );
    }
    assert_eq!(hipFileSetParameterBool(-3, true), op(hipFileInvalidValue));
});

child_test!(string_parameters, [("HIPFILE_LOG", "info")], {
    assert_eq!(
        get_string(hipFileParamLoggingLevel),
        "info",
        "environment value"
    );
    assert_eq!(get_string(hipFileParamLogDir), "");
    let dir = CString::new(scratch_dir().to_str().unwrap()).unwrap();
    assert_eq!(set_string(hipFileParamLogDir, &dir), OK);
    assert_eq!(
        get_string(hipFileParamLogDir),
        scratch_dir().to_str().unwrap()
    );
    assert_eq!(
        set_string(hipFileParamLogDir, c"/no/such/dir/for/hipfile"),
        op(hipFileInvalidValue)
    );
    assert_eq!(
        get_string(hipFileParamLogDir),
        scratch_dir().to_str().unwrap(),
        "refused value keeps the old one"
    );
    assert_eq!(set_string(hipFileParamLoggingLevel, c"debug"), OK);
    // SAFETY: NULL string under test.
    assert_eq!(
        unsafe { hipFileSetParameterString(hipFileParamLoggingLevel, std::ptr::null()) },
        op(hipFileInvalidValue)
    );
    assert_eq!(set_string(3, c"x"), op(hipFileInvalidValue));
    // Output buffer too small (needs 6 bytes for "debug"), exactly large enough, NULL.
    let mut small = [0x55 as c_char; 5];
    // SAFETY: buffers of the given lengths; NULL under test.
    unsafe {
        assert_eq!(
            hipFileGetParameterString(hipFileParamLoggingLevel, small.as_mut_ptr(), 5),
            op(hipFileInvalidValue)
        );
        assert!(
            small.iter().all(|&c| c == 0x55),
            "nothing written on failure"
        );
        let mut exact = [0 as c_char; 6];
        assert_eq!(
            hipFileGetParameterString(hipFileParamLoggingLevel, exact.as_mut_ptr(), 6),
            OK
        );
        assert_eq!(CStr::from_ptr(exact.as_ptr()).to_str().unwrap(), "debug");
        assert_eq!(
            hipFileGetParameterString(hipFileParamLoggingLevel, std::ptr::null_mut(), 6),
            op(hipFileInvalidValue)
        );
        assert_eq!(
            hipFileGetParameterString(hipFileParamLoggingLevel, exact.as_mut_ptr(), 0),
            op(hipFileInvalidValue)
        );
    }
    assert_eq!(hipFileDriverOpen(), OK);
    assert_eq!(get_string(hipFileParamLoggingLevel), "debug");
    assert_eq!(hipFileDriverClose(), OK);
    assert_eq!(get_string(hipFileParamLoggingLevel), "info");
    assert_eq!(get_string(hipFileParamLogDir), "");
});

child_test!(
    environment_feeds_defaults_and_api_wins,
    [
        ("HIPFILE_IO_THREADS", "3"),
        ("HIPFILE_CHUNK_SIZE", "1M"),
        ("HIPFILE_ALLOW_COMPAT_MODE", "false")
    ],
    {
        assert_eq!(get_size(hipFileParamExecutionMaxIOThreads), 3);
        assert_eq!(get_size(hipFileParamPropertiesPerBufferCacheSizeKB), 1024);
        assert!(!get_bool(hipFileParamPropertiesAllowCompatMode));
        assert_eq!(
            hipFileSetParameterSizeT(hipFileParamExecutionMaxIOThreads, 5),
            OK
        );
        assert_eq!(
            hipFileSetParameterBool(hipFileParamPropertiesAllowCompatMode, true),
            OK
        );
        assert_eq!(hipFileDriverOpen(), OK);
        assert_eq!(get_size(hipFileParamExecutionMaxIOThreads), 5);
        assert!(get_bool(hipFileParamPropertiesAllowCompatMode));
        assert_eq!(hipFileDriverClose(), OK);
        assert_eq!(
            get_size(hipFileParamExecutionMaxIOThreads),
            3,
            "back to the environment"
        );
    }
);

child_test!(
    compat_parameters_drive_backend_choice,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        if !odirect_works() {
            println!(
                "skipping: O_DIRECT does not work in {}",
                scratch_dir().display()
            );
            return;
        }
        let path = scratch_file("param-compat");
        let data = pattern(1 << 20, 7);
        make_file(&path, &data);
        let buf = sim().device_alloc(1 << 20);
        // Staged force-compat: an aligned read goes through the fallback, not the fastpath.
        assert_eq!(
            hipFileSetParameterBool(hipFileParamForceCompatMode, true),
            OK
        );
        let fd = open_fd(&path, libc::O_RDONLY);
        let fh = register_fd(fd);
        sim().reset_counters();
        // SAFETY: a registered handle and a device buffer of 1 MiB.
        assert_eq!(unsafe { hipFileRead(fh, buf.ptr, 1 << 20, 0, 0) }, 1 << 20);
        assert_eq!(sim().counter("hipAmdFileRead"), 0);
        assert_eq!(sim().download(buf.ptr, 1 << 20), data);
        hipFileHandleDeregister(fh);
        assert_eq!(hipFileDriverClose(), OK);
        // Reset at close: the same read now uses the fastpath.
        let fh = register_fd(fd);
        sim().reset_counters();
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(fh, buf.ptr, 1 << 20, 0, 0) }, 1 << 20);
        assert_eq!(sim().counter("hipAmdFileRead"), 1);
        hipFileHandleDeregister(fh);
        assert_eq!(hipFileDriverClose(), OK);
        // Compat disallowed through the API: an unaligned read has no backend.
        assert_eq!(
            hipFileSetParameterBool(hipFileParamPropertiesAllowCompatMode, false),
            OK
        );
        let fh = register_fd(fd);
        // SAFETY: as above.
        assert_eq!(
            unsafe { hipFileRead(fh, buf.ptr, 100, 1, 0) },
            -(hipFileInternalError as isize)
        );
        hipFileHandleDeregister(fh);
        assert_eq!(hipFileDriverClose(), OK);
        // Host memory refused when system memory is not allowed.
        assert_eq!(
            hipFileSetParameterBool(hipFileParamPropertiesAllowSystemMemory, false),
            OK
        );
        let fh = register_fd(fd);
        let mut host = vec![0u8; 4096];
        // SAFETY: a host buffer of 4096 bytes.
        assert_eq!(
            unsafe { hipFileRead(fh, host.as_mut_ptr().cast(), 4096, 0, 0) },
            -(hipFileHipMemoryTypeInvalid as isize)
        );
        hipFileHandleDeregister(fh);
        assert_eq!(hipFileDriverClose(), OK);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
        let _ = std::fs::remove_file(&path);
    }
);

child_test!(properties_and_driver_setters, {
    let mut props = hipFileDriverProps_t::default();
    // SAFETY: NULL and valid out-pointers under test.
    unsafe {
        assert_eq!(
            hipFileDriverGetProperties(std::ptr::null_mut()),
            op(hipFileInvalidValue)
        );
        // Closed: success, as cuFile; the properties describe what the next open uses.
        assert_eq!(hipFileDriverGetProperties(&mut props), OK);
    }
    assert_eq!((props.nvfs.major_version, props.nvfs.minor_version), (0, 5));
    assert_eq!(props.nvfs.poll_thresh_size, 4);
    assert_eq!(props.max_device_cache_size, 256 << 10);
    // Closed: the setters succeed and stage their value for the next open.
    assert_eq!(hipFileDriverSetPollMode(true, 8), OK);
    assert_eq!(hipFileDriverSetMaxCacheSize(1024), OK);
    assert_eq!(hipFileDriverSetMaxDirectIOSize(1024), OK);
    assert_eq!(hipFileDriverSetMaxPinnedMemSize(1024), OK);
    assert_eq!(hipFileDriverSetMaxCacheSize(0), op(hipFileInvalidValue));
    assert_eq!(hipFileDriverSetMaxDirectIOSize(0), op(hipFileInvalidValue));
    assert_eq!(hipFileUseCount(), 0, "setters do not open the driver");
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileDriverGetProperties(&mut props) }, OK);
    assert_eq!(
        (
            props.nvfs.poll_thresh_size,
            props.max_device_cache_size,
            props.nvfs.max_direct_io_size,
            props.max_device_pinned_mem_size
        ),
        (8, 1024, 1024, 1024),
        "staged values"
    );
    assert_eq!(hipFileUseCount(), 0, "properties do not open the driver");
    assert_eq!(hipFileDriverOpen(), OK);
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileDriverGetProperties(&mut props) }, OK);
    assert_eq!((props.nvfs.major_version, props.nvfs.minor_version), (0, 5));
    assert_eq!(props.nvfs.poll_thresh_size, 8, "applied at the open");
    assert_eq!(props.max_device_cache_size, 1024, "applied at the open");
    assert_eq!(
        get_size(hipFileParamPropertiesMaxDeviceCacheSizeKB),
        1024,
        "the staged budget is live"
    );
    assert_eq!(props.per_buffer_cache_size, 4096);
    assert_eq!(props.max_batch_io_count, 128);
    assert_eq!(
        props.feature_flags,
        (1 << hipFileParallelIOSupported)
            | (1 << hipFileBatchIOSupported)
            | (1 << hipFileStreamsSupported)
    );
    // hipsim exports the GPU-direct entry points: NVMe support is reported.
    assert_eq!(props.nvfs.driver_status_flags, 1 << hipFileNVMeSupported);
    assert_eq!(
        props.nvfs.driver_control_flags,
        (1 << hipFileAllowCompatMode) | (1 << hipFileUsePollMode)
    );
    assert_eq!(hipFileDriverSetPollMode(true, 64), OK);
    assert_eq!(hipFileDriverSetMaxCacheSize(8192), OK);
    assert_eq!(hipFileDriverSetMaxDirectIOSize(2048), OK);
    assert_eq!(hipFileDriverSetMaxPinnedMemSize(4096), OK);
    assert_eq!(hipFileDriverSetMaxCacheSize(0), op(hipFileInvalidValue));
    assert_eq!(hipFileDriverSetMaxDirectIOSize(0), op(hipFileInvalidValue));
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileDriverGetProperties(&mut props) }, OK);
    assert_eq!(props.nvfs.poll_thresh_size, 64);
    assert_eq!(
        props.nvfs.driver_control_flags,
        (1 << hipFileAllowCompatMode) | (1 << hipFileUsePollMode)
    );
    assert_eq!(props.max_device_cache_size, 8192);
    assert_eq!(props.nvfs.max_direct_io_size, 2048);
    assert_eq!(props.max_device_pinned_mem_size, 4096);
    assert_eq!(
        get_size(hipFileParamPropertiesMaxDeviceCacheSizeKB),
        8192,
        "live value"
    );
    assert!(get_bool(hipFileParamPropertiesUsePollMode));
    assert_eq!(hipFileDriverClose(), OK);
    assert!(
        !get_bool(hipFileParamPropertiesUsePollMode),
        "reset at close"
    );
});

child_test!(
    bounce_budget_bounds_pinned_memory,
    [
        ("HIPFILE_FORCE_COMPAT_MODE", "true"),
        ("HIPFILE_CHUNK_SIZE", "64K"),
        ("HIPFILE_IO_THREADS", "4")
    ],
    {
        let path = scratch_file("param-budget");
        let data = pattern(8 << 20, 11);
        make_file(&path, &data);
        assert_eq!(
            hipFileSetParameterSizeT(hipFileParamPropertiesMaxDeviceCacheSizeKB, 128),
            OK
        );
        let fd = open_fd(&path, libc::O_RDONLY);
        let fh = register_fd(fd);
        let buf = sim().device_alloc(8 << 20);
        for _ in 0..4 {
            // SAFETY: a registered handle and a device buffer of 8 MiB.
            assert_eq!(unsafe { hipFileRead(fh, buf.ptr, 8 << 20, 0, 0) }, 8 << 20);
            assert!(
                sim().counter("pinned_bytes_live") <= 128 << 10,
                "{} bytes pinned",
                sim().counter("pinned_bytes_live")
            );
        }
        assert!(sim().counter("pinned_bytes_peak") <= 128 << 10);
        assert_eq!(sim().download(buf.ptr, 8 << 20), data);
        // Lowering the budget while open frees what is above it.
        assert_eq!(hipFileDriverSetMaxCacheSize(64), OK);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(fh, buf.ptr, 8 << 20, 0, 0) }, 8 << 20);
        assert!(sim().counter("pinned_bytes_live") <= 64 << 10);
        hipFileHandleDeregister(fh);
        assert_eq!(hipFileDriverClose(), OK);
        assert_eq!(
            sim().counter("pinned_bytes_live"),
            0,
            "the engine frees its buffers at close"
        );
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
        let _ = std::fs::remove_file(&path);
    }
);
