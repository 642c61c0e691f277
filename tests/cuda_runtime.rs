//! The CUDA driver-API runtime, exercised on hipsim's CUDA side (`HIPFILE_PLATFORM=nvidia`,
//! `HIPFILE_CUDA_LIBRARY` pointing at hipsim): device memory from `cuMemAlloc`, context
//! handling (the caller's context state is the same after every call), memory types, error
//! translation and many threads. The same behaviours are proven on a real GPU by
//! `scripts/gpu/` (tests/c/suite.c with the CUDA runtime API).

mod common;
use common::*;

use std::ffi::c_void;

use common::cuda::cuda;

child_test!(
    nvidia_platform_is_chosen_and_described,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        assert_eq!(hipFileDriverOpen(), hipFileError_t::SUCCESS);
        let choice = hipfile::api::runtime_report();
        assert_eq!(choice.platform, hipfile::api::Platform::Nvidia);
        assert!(
            choice.description.starts_with("CUDA driver 13.0"),
            "{}",
            choice.description
        );
        assert!(choice.simulated);
        assert!(
            !choice.gpu_direct,
            "GPU-direct through the driver API alone is never claimed"
        );
        assert_eq!(choice.device_count, 1);
    }
);

child_test!(
    device_memory_round_trips_through_the_fallback,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        cuda().make_current();
        let len = 9 << 20;
        let dev = cuda().alloc(len);
        let data = pattern(len, 21);
        let file = TestFile::rw("cuda-rt", &data);
        let fh = file.fh;
        assert_eq!(hipFileBufRegister(dev, len, 0), hipFileError_t::SUCCESS);
        // SAFETY: a registered handle and buffer of `len` bytes.
        assert_eq!(unsafe { hipFileRead(fh, dev, len, 0, 0) }, len as isize);
        assert_eq!(cuda().download(dev, len), data);
        // Unaligned, at a buffer offset, into an interior (unregistered) pointer.
        let inner = (dev as usize + 4096) as *mut c_void;
        // SAFETY: 8 MiB from inner lies inside the allocation.
        assert_eq!(unsafe { hipFileRead(fh, inner, 1000, 3, 5) }, 1000);
        assert_eq!(
            cuda().download((inner as usize + 5) as *const c_void, 1000),
            &data[3..1003]
        );
        // Write from device memory, durable and byte-exact.
        let new = pattern(3 << 20, 22);
        cuda().upload(dev, &new);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileWrite(fh, dev, 3 << 20, 12345, 0) }, 3 << 20);
        let on_disk = file.contents();
        assert_eq!(&on_disk[12345..12345 + (3 << 20)], &new[..]);
        assert!(sim().counter("cuMemcpyHtoDAsync_v2") + sim().counter("cuMemcpyHtoD_v2") > 0);
        assert_eq!(
            sim().counter("hipMemcpy"),
            0,
            "the CUDA runtime never calls HIP"
        );
    }
);

/// `cuMemHostRegister` calls so far, and the bytes registered now.
fn registrations() -> (u64, u64) {
    (
        sim().counter("cuMemHostRegister_v2"),
        sim().counter("registered_bytes_live"),
    )
}

// A fresh process's first large read gets the bounce buffers it lacks as one registration
// (two per participant: four participants with four I/O threads), not one per buffer; a second
// read registers nothing.
child_test!(
    the_first_large_read_registers_its_bounce_buffers_at_once,
    [("HIPFILE_PLATFORM", "nvidia"), ("HIPFILE_IO_THREADS", "4")],
    {
        cuda().make_current();
        let len = 64 << 20;
        let dev = cuda().alloc(len);
        let data = pattern(len, 24);
        let f = TestFile::rw("cuda-fill", &data);
        let (calls, bytes) = registrations();
        // SAFETY: a registered handle and `len` bytes of device memory.
        assert_eq!(unsafe { hipFileRead(f.fh, dev, len, 0, 0) }, len as isize);
        assert_eq!(cuda().download(dev, len), data);
        assert_eq!(registrations(), (calls + 1, bytes + 8 * (4 << 20)));
        cuda().upload(dev, &vec![0; len]);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(f.fh, dev, len, 0, 0) }, len as isize);
        assert_eq!(cuda().download(dev, len), data);
        assert_eq!(registrations().0, calls + 1, "the second read reuses them");
        drop(f);
        assert_eq!(hipFileDriverClose(), hipFileError_t::SUCCESS);
        assert_eq!(registrations().1, bytes, "freed with the driver");
    }
);

/// Whether the kernel answers `cachestat` (Linux 6.5): the engine asks it whether a read
/// starts in the page cache.
fn kernel_has_cachestat(fd: i32) -> bool {
    let range = [0u64, 4096];
    let mut stat = [0u64; 5];
    // SAFETY: cachestat(2) with a valid range and a 40-byte result.
    unsafe { libc::syscall(451, fd, range.as_ptr(), stat.as_mut_ptr(), 0) == 0 }
}

// A page-cache read that has the engine to itself and would give its four participants fewer
// than four 4 MiB chunks each goes in 1 MiB chunks: 16 MiB in sixteen copies, not four.
child_test!(
    a_read_alone_in_the_page_cache_is_cut_into_finer_chunks,
    [("HIPFILE_PLATFORM", "nvidia"), ("HIPFILE_IO_THREADS", "4")],
    {
        cuda().make_current();
        let len = 16 << 20;
        let dev = cuda().alloc(len);
        let data = pattern(len, 26);
        let f = TestFile::rw("cuda-fine", &data);
        let copies = || sim().counter("cuMemcpyHtoDAsync_v2") + sim().counter("cuMemcpyHtoD_v2");
        let before = copies();
        // SAFETY: a registered handle and `len` bytes of device memory.
        assert_eq!(unsafe { hipFileRead(f.fh, dev, len, 0, 0) }, len as isize);
        assert_eq!(cuda().download(dev, len), data);
        let want = if kernel_has_cachestat(f.fd) { 16 } else { 4 };
        assert_eq!(copies() - before, want);
    }
);

// Writes take no fill: their participants ask the pool for buffers one by one, so each buffer
// is registered on its own (one fill would be faulted in by the first of them alone).
child_test!(
    a_first_large_write_registers_its_buffers_one_by_one,
    [("HIPFILE_PLATFORM", "nvidia"), ("HIPFILE_IO_THREADS", "4")],
    {
        cuda().make_current();
        let len = 64 << 20;
        let dev = cuda().alloc(len);
        let data = pattern(len, 25);
        cuda().upload(dev, &data);
        let f = TestFile::rw("cuda-write-fill", &[]);
        let (calls, bytes) = registrations();
        // SAFETY: a registered handle and `len` bytes of device memory.
        assert_eq!(unsafe { hipFileWrite(f.fh, dev, len, 0, 0) }, len as isize);
        assert_eq!(f.contents(), data);
        let (now_calls, now_bytes) = registrations();
        let n = now_calls - calls;
        assert!(n >= 2, "{n} registrations");
        assert_eq!(
            now_bytes - bytes,
            n * (4 << 20),
            "one buffer per registration"
        );
    }
);

child_test!(
    memory_types_through_cuda,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        cuda().make_current();
        let mut managed = 0u64;
        // SAFETY: valid out-pointer; flags CU_MEM_ATTACH_GLOBAL.
        assert_eq!(
            unsafe { (cuda().mem_alloc_managed)(&mut managed, 4096, 1) },
            0
        );
        assert_eq!(
            hipFileBufRegister(managed as *const c_void, 4096, 0),
            hipFileError_t::op(hipFileHipMemoryTypeInvalid)
        );
        let mut pinned = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (cuda().mem_host_alloc)(&mut pinned, 8192, 1) }, 0);
        assert_eq!(hipFileBufRegister(pinned, 8192, 0), hipFileError_t::SUCCESS);
        assert_eq!(
            hipFileBufRegister((pinned as usize + 4096) as *const c_void, 8192, 0),
            hipFileError_t::op(hipFileHipPointerRangeError)
        );
        let mut pageable = vec![0u8; 4096];
        assert_eq!(
            hipFileBufRegister(pageable.as_mut_ptr().cast(), 4096, 0),
            hipFileError_t::SUCCESS
        );
        let dev = cuda().alloc(4096);
        assert_eq!(
            hipFileBufRegister(dev, 8192, 0),
            hipFileError_t::op(hipFileHipPointerRangeError)
        );
        // Host memory reads go straight into it (no CUDA copy).
        let data = pattern(8192, 23);
        let file = TestFile::with_flags("cuda-host", &data, libc::O_RDONLY);
        let fh = file.fh;
        sim().reset_counters();
        // SAFETY: 8192 bytes of pinned memory.
        assert_eq!(unsafe { hipFileRead(fh, pinned, 8192, 0, 0) }, 8192);
        // SAFETY: the read wrote 8192 bytes.
        assert_eq!(
            unsafe { std::slice::from_raw_parts(pinned as *const u8, 8192) },
            &data[..]
        );
        assert_eq!(sim().counter("h2d_bytes"), 0);
    }
);

child_test!(
    the_callers_context_state_is_kept,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        // Allocate with a context, then use the memory from threads in both context states.
        cuda().make_current();
        let len = 4 << 20;
        let dev = cuda().alloc(len) as usize;
        let data = pattern(len, 24);
        let file = TestFile::with_flags("cuda-ctx", &data, libc::O_RDONLY);
        let fh = file.fh as usize;
        // A thread that never touched CUDA: still no current context afterwards.
        std::thread::spawn(move || {
            assert!((cuda().current() == 0));
            // SAFETY: a registered handle and a device buffer of `len` bytes.
            assert_eq!(
                unsafe { hipFileRead(fh as hipFileHandle_t, dev as *mut c_void, len, 0, 0) },
                len as isize
            );
            assert!((cuda().current() == 0), "the library popped what it pushed");
        })
        .join()
        .unwrap();
        // A thread with the primary context current: the same one afterwards.
        std::thread::spawn(move || {
            cuda().make_current();
            let before = cuda().current();
            // SAFETY: as above.
            assert_eq!(
                unsafe { hipFileRead(fh as hipFileHandle_t, dev as *mut c_void, len, 0, 0) },
                len as isize
            );
            assert_eq!(cuda().current(), before);
        })
        .join()
        .unwrap();
        assert_eq!(cuda().download(dev as *const c_void, len), data);
    }
);

child_test!(
    sixteen_threads_without_contexts,
    [
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPFILE_CHUNK_SIZE", "256K")
    ],
    {
        cuda().make_current();
        let per = 2 << 20;
        let data = pattern(16 * per, 25);
        let file = TestFile::with_flags("cuda-16", &data, libc::O_RDONLY);
        let fh = file.fh as usize;
        let bufs: Vec<usize> = (0..16).map(|_| cuda().alloc(per) as usize).collect();
        let threads: Vec<_> = bufs
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                std::thread::spawn(move || {
                    for _ in 0..3 {
                        // SAFETY: a registered handle and a device buffer of `per` bytes.
                        let n = unsafe {
                            hipFileRead(
                                fh as hipFileHandle_t,
                                b as *mut c_void,
                                per,
                                (i * per) as i64,
                                0,
                            )
                        };
                        assert_eq!(n, per as isize);
                    }
                    assert!((cuda().current() == 0));
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        for (i, &b) in bufs.iter().enumerate() {
            assert_eq!(
                cuda().download(b as *const c_void, per),
                &data[i * per..(i + 1) * per]
            );
        }
    }
);

child_test!(
    cuda_errors_are_reported_in_hip_numbering,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        cuda().make_current();
        let dev = cuda().alloc(1 << 20);
        let file = TestFile::with_flags("cuda-err", &pattern(1 << 20, 26), libc::O_RDONLY);
        let fh = file.fh;
        // CUDA_ERROR_ILLEGAL_ADDRESS (700) has a HIP twin of the same number.
        sim().fault("fail_copy", 700);
        // SAFETY: a registered handle and a 1 MiB device buffer.
        assert_eq!(unsafe { hipFileRead(fh, dev, 1 << 20, 0, 0) }, -700);
        // CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221) has none: hipErrorUnknown.
        sim().fault("fail_copy", 221);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(fh, dev, 1 << 20, 0, 0) }, -999);
        // CUDA_ERROR_INVALID_VALUE (1) is -1 with errno EINVAL, as on HIP.
        sim().fault("fail_copy", 1);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(fh, dev, 1 << 20, 0, 0) }, -1);
        assert_eq!(errno(), libc::EINVAL);
        sim().fault("fail_copy", 0);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(fh, dev, 1 << 20, 0, 0) }, 1 << 20);
    }
);

/// Environment for the cuFile adapter tests: NVIDIA on hipsim, with hipsim's fake cuFile.
macro_rules! cufile_test {
    ($name:ident, [$(($k:expr, $v:expr)),* $(,)?], $body:block) => {
        child_test!($name, [("HIPFILE_PLATFORM", "nvidia"), ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true") $(, ($k, $v))*], {
            $body
        });
    };
}

/// A registered file of `len` pattern bytes, a device buffer, and those bytes;
/// `HIPFILE_CUFILE_LIBRARY` is set by the test harness below before the driver loads the runtime.
fn cufile_setup(tag: &str, len: usize) -> (TestFile, *mut c_void, Vec<u8>) {
    cuda().make_current();
    let data = pattern(len, 40);
    (TestFile::rw(tag, &data), cuda().alloc(len), data)
}

fn use_hipsim_cufile() {
    // Set before the first API call loads the runtime (the environment is read then).
    std::env::set_var("HIPFILE_CUFILE_LIBRARY", hipsim_path());
}

cufile_test!(cufile_in_compat_mode_only_is_declined, [], {
    use_hipsim_cufile();
    assert_eq!(hipFileDriverOpen(), hipFileError_t::SUCCESS);
    let rt = hipfile::api::runtime_report();
    assert!(!rt.gpu_direct);
    assert!(
        rt.description
            .contains("cuFile not used: cuFile reports no GPUDirect Storage path"),
        "{}",
        rt.description
    );
    let (file, dev, data) = cufile_setup("cufile-compat", 1 << 20);
    let fh = file.fh;
    // SAFETY: a registered handle and a 1 MiB device buffer.
    assert_eq!(unsafe { hipFileRead(fh, dev, 1 << 20, 0, 0) }, 1 << 20);
    assert_eq!(cuda().download(dev, 1 << 20), data);
    assert_eq!(sim().counter("cuFileRead"), 0);
    assert_eq!(sim().counter("cuFileHandleRegister"), 0);
});

cufile_test!(
    cufile_with_gds_serves_aligned_requests,
    [("HIPSIM_CUFILE_GDS", "1")],
    {
        use_hipsim_cufile();
        assert_eq!(hipFileDriverOpen(), hipFileError_t::SUCCESS);
        let rt = hipfile::api::runtime_report();
        assert!(rt.gpu_direct);
        assert!(
            rt.description
                .contains("GPUDirect Storage through cuFile (nvidia-fs 2.17)"),
            "{}",
            rt.description
        );
        let (file, dev, data) = cufile_setup("cufile-gds", 2 << 20);
        let fh = file.fh;
        // SAFETY: a registered handle and a 2 MiB device buffer.
        assert_eq!(unsafe { hipFileRead(fh, dev, 2 << 20, 0, 0) }, 2 << 20);
        assert_eq!(cuda().download(dev, 2 << 20), data);
        assert_eq!(sim().counter("cuFileRead"), 1);
        assert_eq!(sim().counter("cufile_read_bytes"), 2 << 20);
        assert_eq!(sim().counter("cuFileHandleRegister"), 1);
        // A second request reuses the registration; an unaligned one takes our fallback.
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(fh, dev, 4096, 8192, 0) }, 4096);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(fh, dev, 1000, 3, 0) }, 1000);
        assert_eq!(cuda().download(dev, 1000), &data[3..1003]);
        assert_eq!(sim().counter("cuFileRead"), 2);
        assert_eq!(sim().counter("cuFileHandleRegister"), 1);
        // Writes through cuFile too.
        let new = pattern(1 << 20, 41);
        cuda().upload(dev, &new);
        // SAFETY: as above.
        assert_eq!(
            unsafe { hipFileWrite(fh, dev, 1 << 20, 1 << 20, 0) },
            1 << 20
        );
        assert_eq!(sim().counter("cuFileWrite"), 1);
        assert_eq!(&file.contents()[1 << 20..2 << 20], &new[..]);
        // Deregistering the file releases its cuFile handle.
        assert_eq!(sim().counter("cufile_handles_live"), 1);
        drop(file);
        assert_eq!(sim().counter("cufile_handles_live"), 0);
    }
);

cufile_test!(
    a_file_cufile_refuses_is_served_by_the_fallback,
    [
        ("HIPSIM_CUFILE_GDS", "1"),
        ("HIPSIM_CUFILE_REGISTER_ERROR", "5027")
    ],
    {
        // What real cuFile does on the project's GPU machine (udev lacks ID_FS_USAGE): refuse the
        // file with 5027. The library declines cuFile for that file and serves it itself.
        use_hipsim_cufile();
        let log = scratch_file("cufile-log");
        std::env::set_var("HIPFILE_LOG_FILE", &log);
        assert_eq!(hipFileDriverOpen(), hipFileError_t::SUCCESS);
        let (file, dev, data) = cufile_setup("cufile-refused", 1 << 20);
        let fh = file.fh;
        for _ in 0..3 {
            // SAFETY: a registered handle and a 1 MiB device buffer.
            assert_eq!(unsafe { hipFileRead(fh, dev, 1 << 20, 0, 0) }, 1 << 20);
        }
        assert_eq!(cuda().download(dev, 1 << 20), data);
        assert_eq!(
            sim().counter("cuFileHandleRegister"),
            1,
            "the refusal is remembered"
        );
        assert_eq!(sim().counter("cuFileRead"), 0);
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            text.matches("cuFile cannot register descriptor").count(),
            1,
            "one logged reason: {text}"
        );
        assert!(text.contains("(error 5027)"), "{text}");
        let _ = std::fs::remove_file(&log);
    }
);

cufile_test!(cufile_io_failures, [("HIPSIM_CUFILE_GDS", "1")], {
    use_hipsim_cufile();
    assert_eq!(hipFileDriverOpen(), hipFileError_t::SUCCESS);
    let (file, dev, data) = cufile_setup("cufile-io", 1 << 20);
    let fh = file.fh;
    // An OS error from cuFile is the request's error.
    sim().fault("cufile_io_errno", libc::EIO as i64);
    // SAFETY: a registered handle and a 1 MiB device buffer.
    assert_eq!(unsafe { hipFileRead(fh, dev, 1 << 20, 0, 0) }, -1);
    assert_eq!(errno(), libc::EIO);
    sim().fault("cufile_io_errno", 0);
    // cuFile's own failure: retried on our fallback.
    sim().fault("cufile_io_error", 5030);
    // SAFETY: as above.
    assert_eq!(unsafe { hipFileRead(fh, dev, 1 << 20, 0, 0) }, 1 << 20);
    assert_eq!(cuda().download(dev, 1 << 20), data);
    sim().fault("cufile_io_error", 0);
});
