//! Regression tests for defects found by running the library as outsiders would: bad batch
//! input that used to crash or abort, registration that used to hang, thread cancellation that
//! used to abort the process, partial writes that used to report nothing, a reused descriptor
//! number that used to reach the wrong file, and statistics reports into a closed pipe. Each
//! test drives the exported C functions on the simulated runtime, in its own process.

mod common;

use std::ffi::{c_int, c_uint, c_void};
use std::ptr::null_mut;

use common::*;

fn read_entry(fh: hipFileHandle_t, base: *mut c_void, off: i64) -> hipFileIOParams_t {
    batch_params(fh, hipFileBatchRead, base, off, off, 4096, 0)
}

/// Two pages whose second one is inaccessible: `n` entries are placed so that they end exactly
/// where the inaccessible page begins, so reading entry `n` (one past them) faults.
struct GuardedEntries {
    map: *mut c_void,
    page: usize,
}

impl GuardedEntries {
    fn new() -> GuardedEntries {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        // SAFETY: an anonymous private mapping; checked below.
        let map = unsafe {
            libc::mmap(
                null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        // SAFETY: the second page of our own mapping.
        let r =
            unsafe { libc::mprotect((map as usize + page) as *mut c_void, page, libc::PROT_NONE) };
        assert_eq!(r, 0);
        GuardedEntries { map, page }
    }

    /// Copy `entries` to the end of the accessible page; returns the pointer to the first.
    fn place(&self, entries: &[hipFileIOParams_t]) -> *mut hipFileIOParams_t {
        let bytes = std::mem::size_of_val(entries);
        let at = (self.map as usize + self.page - bytes) as *mut hipFileIOParams_t;
        // SAFETY: `bytes` fit in the accessible page, which we own; entries are plain data.
        unsafe { std::ptr::copy_nonoverlapping(entries.as_ptr(), at, entries.len()) };
        at
    }
}

impl Drop for GuardedEntries {
    fn drop(&mut self) {
        // SAFETY: our mapping.
        unsafe { libc::munmap(self.map, 2 * self.page) };
    }
}

// Item 1: the handle and the room are checked before any entry is read, and nothing is
// allocated in proportion to an unchecked `nr`.
child_test!(
    batch_submit_reads_no_entry_before_checking_handle_and_room,
    {
        let path = scratch_file("guarded-batch");
        make_file(&path, &pattern(1 << 16, 1));
        let fd = open_fd(&path, libc::O_RDWR);
        let fh = register_fd(fd);
        let dev = sim().device_alloc(1 << 16);
        let guard = GuardedEntries::new();
        let entries: Vec<_> = (0..4).map(|i| read_entry(fh, dev.ptr, i * 4096)).collect();
        let four = guard.place(&entries);
        let h = batch_setup(4);
        // SAFETY: the pointers are as described; the calls must not read past 4 entries.
        unsafe {
            assert_eq!(hipFileBatchIOSubmit(h, 5, four, 0), code(hipFileBatchFull));
            assert_eq!(
                hipFileBatchIOSubmit(h, c_uint::MAX, four, 0),
                code(hipFileBatchFull)
            );
            let one = guard.place(&entries[..1]);
            let forged = 0x5eed_0000_0001usize as hipFileBatchHandle_t;
            assert_eq!(
                hipFileBatchIOSubmit(forged, 2, one, 0),
                code(hipFileInvalidValue)
            );
            assert_eq!(
                hipFileBatchIOSubmit(forged, c_uint::MAX, one, 0),
                code(hipFileInvalidValue)
            );
            // The room is what it was: all four entries still go in.
            let four = guard.place(&entries);
            assert_eq!(hipFileBatchIOSubmit(h, 4, four, 0), OK);
        }
        hipFileBatchIODestroy(h);
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);

// Item 10: zero-size I/O with valid arguments returns 0 whatever the backends would say, here
// a fastpath-only configuration at an offset the fastpath refuses.
child_test!(
    zero_size_io_returns_zero_on_any_backend,
    [("HIPFILE_ALLOW_COMPAT_MODE", "false")],
    {
        let path = scratch_file("zero-size");
        make_file(&path, &pattern(8192, 2));
        let fd = open_fd(&path, libc::O_RDWR);
        let fh = register_fd(fd);
        let dev = sim().device_alloc(8192);
        // SAFETY: registered handle and device memory.
        unsafe {
            assert_eq!(hipFileRead(fh, dev.ptr, 0, 512, 0), 0);
            assert_eq!(hipFileWrite(fh, dev.ptr, 0, 512, 3), 0);
            assert_eq!(hipFileRead(fh, dev.ptr, 0, 1 << 40, 0), 0, "past the end");
            // Invalid arguments are still refused.
            assert_eq!(hipFileRead(fh, dev.ptr, 0, -1, 0), -1);
            assert_eq!(errno(), libc::EINVAL);
            assert_eq!(
                hipFileRead(fh, dev.ptr, 0, 0, 8192),
                -(hipFileInvalidValue as isize),
                "buffer offset at the end of the buffer"
            );
            assert_eq!(
                hipFileRead(null_mut(), dev.ptr, 0, 0, 0),
                -(hipFileHandleNotRegistered as isize)
            );
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            pattern(8192, 2),
            "nothing written"
        );
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);

/// Register `fd`, returning the result code and the handle.
fn try_register(fd: c_int) -> (hipFileError_t, hipFileHandle_t) {
    let mut fh: hipFileHandle_t = null_mut();
    let mut d = descr(fd);
    // SAFETY: valid pointers.
    let r = unsafe { hipFileHandleRegister(&mut fh, &mut d) };
    (r, fh)
}

// Item 2: registering a FIFO opened read-only with no writer returns at once (it used to
// block forever re-opening the FIFO through /proc/self/fd).
child_test!(fifo_registration_returns_promptly, {
    let path = scratch_file("fifo");
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // A read-only descriptor in blocking mode whose writer has gone: the application opened
    // it while a writer existed (here: opened non-blocking, a writer came and went, and the
    // descriptor was switched back to blocking mode).
    let fd = open_fd(&path, libc::O_RDONLY | libc::O_NONBLOCK);
    let writer = open_fd(&path, libc::O_WRONLY);
    // SAFETY: plain calls on our descriptors.
    unsafe {
        assert_eq!(libc::fcntl(fd, libc::F_SETFL, 0), 0);
        libc::close(writer);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (r, fh) = try_register(fd);
        tx.send((r, fh as usize)).unwrap();
    });
    let (r, fh) = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("hipFileHandleRegister of a FIFO did not return within 10 s");
    assert_eq!(r, OK, "pipes register; their I/O fails with ESPIPE");
    let dev = sim().device_alloc(4096);
    // SAFETY: a registered handle and device memory.
    assert_eq!(
        unsafe { hipFileRead(fh as hipFileHandle_t, dev.ptr, 4096, 0, 0) },
        -1
    );
    assert_eq!(errno(), libc::ESPIPE);
    hipFileHandleDeregister(fh as hipFileHandle_t);
    // SAFETY: our descriptor.
    unsafe { libc::close(fd) };
    let _ = std::fs::remove_file(&path);
});

// Item 6: the library keeps its own descriptor of a registered file. After the application
// closes its descriptor and the number is reused for another file, I/O through the old handle
// (aligned, which may take the fastpath, and unaligned) reaches the old file, and registering
// the reused number for the new file succeeds.
child_test!(
    reused_descriptor_number_never_reaches_another_file,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        const LEN: usize = 64 << 10;
        let (pa, pb) = (scratch_file("reuse-a"), scratch_file("reuse-b"));
        let (a, b) = (pattern(LEN, 31), pattern(LEN, 32));
        make_file(&pa, &a);
        make_file(&pb, &b);
        let fd = open_fd(&pa, libc::O_RDWR);
        let old = register_fd(fd);
        // The application closes its descriptor; another file gets the same number.
        // SAFETY: our descriptors; dup2 puts file B at the number file A had.
        unsafe {
            libc::close(fd);
            let fb = open_fd(&pb, libc::O_RDWR);
            if fb != fd {
                assert_eq!(libc::dup2(fb, fd), fd);
                libc::close(fb);
            }
        }
        let dev = sim().device_alloc(LEN);
        // SAFETY: registered handles and device memory below.
        unsafe {
            assert_eq!(hipFileRead(old, dev.ptr, 4096, 0, 0), 4096);
            assert_eq!(
                sim().download(dev.ptr, 4096),
                a[..4096],
                "aligned read: file A"
            );
            assert_eq!(hipFileRead(old, dev.ptr, 100, 1, 0), 100);
            assert_eq!(
                sim().download(dev.ptr, 100),
                a[1..101],
                "unaligned read: file A"
            );
        }
        let (r, new) = try_register(fd);
        assert_eq!(r, OK, "the reused number registers for the new file");
        assert_ne!(new, old);
        assert_eq!(try_register(fd).0, code(hipFileHandleAlreadyRegistered));
        let data = pattern(8192, 33);
        sim().upload(dev.ptr, &data);
        // SAFETY: as above.
        unsafe {
            assert_eq!(hipFileRead(new, dev.ptr, 4096, 4096, 8192), 4096);
            assert_eq!(sim().download(dev.at(8192), 4096), b[4096..8192], "file B");
            assert_eq!(hipFileWrite(old, dev.ptr, 8192, 0, 0), 8192);
            assert_eq!(hipFileWrite(old, dev.ptr, 10, 8193, 1), 10);
        }
        let on_a = std::fs::read(&pa).unwrap();
        assert_eq!(on_a[..8192], data[..], "aligned write: file A");
        assert_eq!(on_a[8193..8203], data[1..11], "unaligned write: file A");
        assert_eq!(std::fs::read(&pb).unwrap(), b, "file B untouched");
        // Both handles deregister independently; the number registers again afterwards.
        hipFileHandleDeregister(old);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(new, dev.ptr, 16, 0, 0) }, 16);
        hipFileHandleDeregister(new);
        let again = register_fd(fd);
        hipFileHandleDeregister(again);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);

// Item 6: writes to a character device succeed (fdatasync's EINVAL there is no I/O failure).
child_test!(writes_to_dev_null_succeed, {
    let fd = open_fd(std::path::Path::new("/dev/null"), libc::O_WRONLY);
    let fh = register_fd(fd);
    let dev = sim().device_alloc(1 << 20);
    let host = vec![7u8; 4096];
    // SAFETY: a registered handle; device memory and a host buffer of the sizes given.
    unsafe {
        assert_eq!(hipFileWrite(fh, dev.ptr, 1 << 20, 0, 0), 1 << 20);
        assert_eq!(hipFileWrite(fh, dev.ptr, 100, 3, 5), 100);
        assert_eq!(hipFileWrite(fh, host.as_ptr().cast(), 4096, 0, 0), 4096);
    }
    hipFileHandleDeregister(fh);
    // SAFETY: our descriptor.
    unsafe { libc::close(fd) };
});

/// Limit this process's file size to `bytes` (writes past it fail with `EFBIG`, as a full
/// file system fails them with `ENOSPC`), ignoring the signal that would kill the process.
fn limit_file_size(bytes: u64) {
    // SAFETY: plain calls with valid arguments; the test child owns its process.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let lim = libc::rlimit {
            rlim_cur: bytes,
            rlim_max: libc::RLIM_INFINITY,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
}

// Item 5: a write that fails part-way returns the contiguous prefix that reached the file, as
// pwrite does, on the parallel chunk path, the one-chunk path and host memory; a batch event
// is Failed with the error instead.
child_test!(
    partial_write_returns_the_prefix_that_reached_the_file,
    [
        ("HIPFILE_FORCE_COMPAT_MODE", "true"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_CHUNK_SIZE", "1M"),
        ("HIPFILE_INLINE_THRESHOLD", "64K"),
        // Through the page cache, so that the chunk the limit cuts writes its part (an O_DIRECT
        // write clipped to an unaligned length fails whole, which ends the prefix at the
        // chunk's start instead).
        ("HIPFILE_DIRECT_IO", "false")
    ],
    {
        const OLD: usize = 1 << 20;
        const LIMIT: usize = 9 * (1 << 20) + 12345;
        const OFF: usize = 512 << 10;
        let path = scratch_file("partial-write");
        let old = pattern(OLD, 41);
        make_file(&path, &old);
        let fd = open_fd(&path, libc::O_RDWR);
        let fh = register_fd(fd);
        let data = pattern(16 << 20, 42);
        let dev = sim().device_alloc(16 << 20);
        sim().upload(dev.ptr, &data);
        limit_file_size(LIMIT as u64);
        // 16 chunks in parallel; the limit falls inside the ninth.
        // SAFETY: a registered handle and device memory of the size given.
        let n = unsafe { hipFileWrite(fh, dev.ptr, 16 << 20, OFF as i64, 0) };
        assert_eq!(
            n,
            (LIMIT - OFF) as isize,
            "the contiguous prefix up to the limit"
        );
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(on_disk.len(), LIMIT);
        assert_eq!(on_disk[..OFF], old[..OFF]);
        assert_eq!(on_disk[OFF..], data[..LIMIT - OFF]);
        // One chunk on the calling thread, and host memory, cut by the limit too.
        let host = pattern(300 << 10, 43);
        // SAFETY: as above; the host buffer is valid for its length.
        unsafe {
            assert_eq!(
                hipFileWrite(fh, dev.ptr, 200 << 10, (LIMIT - 1000) as i64, 0),
                1000
            );
            assert_eq!(
                hipFileWrite(fh, host.as_ptr().cast(), 300 << 10, (LIMIT - 7) as i64, 0),
                7
            );
            // Nothing reached the file: -1 with the errno.
            assert_eq!(hipFileWrite(fh, dev.ptr, 4096, LIMIT as i64, 0), -1);
            assert_eq!(errno(), libc::EFBIG);
        }
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(on_disk.len(), LIMIT);
        assert_eq!(on_disk[LIMIT - 1000..LIMIT - 7], data[..993]);
        assert_eq!(on_disk[LIMIT - 7..], host[..7]);
        // Batch: the operation is Failed with the error (upstream's rule for batch events).
        let h = batch_setup(1);
        let mut op = read_entry(fh, dev.ptr, 0);
        op.opcode = hipFileBatchWrite;
        // SAFETY: the union's batch member is the one in use.
        unsafe {
            op.u.batch.file_offset = (LIMIT - 4096) as i64;
            op.u.batch.size = 2 << 20;
            assert_eq!(hipFileBatchIOSubmit(h, 1, &mut op, 0), OK);
        }
        let mut ev = [hipFileIOEvents_t {
            cookie: null_mut(),
            status: 0,
            ret: 0,
        }];
        let mut nr: c_uint = 1;
        // SAFETY: valid pointers; no timeout.
        let r = unsafe { hipFileBatchIOGetStatus(h, 1, &mut nr, ev.as_mut_ptr(), null_mut()) };
        assert_eq!((r, nr), (OK, 1));
        assert_eq!(
            (ev[0].status, ev[0].ret),
            (hipFileFailed, (-(libc::EFBIG as isize)) as usize)
        );
        hipFileBatchIODestroy(h);
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);

// Item 5: when an early chunk fails and later ones were written (parallel chunks), what lies
// past the reported prefix and past the old end of the file is cut back: no holes, no growth.
child_test!(
    failed_chunks_leave_no_holes_past_the_reported_prefix,
    [
        ("HIPFILE_FORCE_COMPAT_MODE", "true"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_CHUNK_SIZE", "64K"),
        ("HIPFILE_INLINE_THRESHOLD", "64K")
    ],
    {
        const CHUNK: usize = 64 << 10;
        let path = scratch_file("partial-holes");
        make_file(&path, &[]);
        let fd = open_fd(&path, libc::O_RDWR);
        let fh = register_fd(fd);
        let data = pattern(32 * CHUNK, 44);
        let dev = sim().device_alloc(32 * CHUNK);
        sim().upload(dev.ptr, &data);
        for after in [0i64, 1, 3, 8, 20] {
            assert_eq!(
                // SAFETY: plain call.
                unsafe { libc::ftruncate(fd, 0) },
                0
            );
            // The copies out of device memory fail after the first `after` of them.
            sim().fault("fail_copy", 999);
            sim().fault("fail_copy_after", after);
            // SAFETY: a registered handle and device memory of the size given.
            let n = unsafe { hipFileWrite(fh, dev.ptr, 32 * CHUNK, 0, 0) };
            sim().fault("fail_copy", 0);
            let on_disk = std::fs::read(&path).unwrap();
            if n < 0 {
                // Nothing reached the file in order (always so when no copy succeeded; with
                // parallel chunks also when the first chunk's copy was one that failed).
                assert_eq!(n, -999, "after {after}");
                assert!(
                    on_disk.is_empty(),
                    "nothing reported: no growth (after {after})"
                );
                continue;
            }
            assert_ne!(after, 0, "no copy succeeded, yet {n} bytes reported");
            let n = n as usize;
            assert!(
                n <= after as usize * CHUNK && n % CHUNK == 0,
                "{n} after {after}"
            );
            assert_eq!(on_disk.len(), n, "cut back to the prefix (after {after})");
            assert_eq!(on_disk[..], data[..n]);
        }
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);

// Item 3: pthread_cancel of application threads inside writes, registrations and
// deregistrations; the process lives on, nothing is leaked or left locked (tests/c/cancel.c).
#[test]
fn cancelled_threads_never_abort_the_process() {
    let exe = cprog::compile("cancel");
    let scratch = scratch_dir();
    let hipsim = hipsim_path();
    let out = cprog::run(
        &exe,
        &[scratch.to_str().unwrap()],
        &[
            ("HIPFILE_HIP_LIBRARY", hipsim.to_str().unwrap()),
            ("HIPSIM_COPY_DELAY_US", "2000"),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("cancel: ok"),
        "{} ({}):\n{stdout}\n{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

// Item 7: a statistics report into a pipe without a reader fails with EPIPE; it used to kill
// the caller with SIGPIPE (the child restores SIGPIPE's default action, which Rust programs
// otherwise ignore).
child_test!(stats_report_to_a_closed_pipe_is_epipe_not_sigpipe, {
    // Reading the level creates this process's statistics block and starts its server.
    let _ = hipfile::api::stats::level();
    // SAFETY: plain calls; the test child owns its process.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let ctx = common::stats_ctx::Ctx::create(std::process::id() as c_int);
    assert_eq!(ctx.connect(), hipFileStatsSuccess);
    let mut fds = [0 as c_int; 2];
    // SAFETY: a valid array of two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: our descriptor: the pipe has no reader any more.
    unsafe { libc::close(fds[0]) };
    // SAFETY: a live context and a descriptor number.
    let r = unsafe { hipFileStatsGenerateReport(ctx.0, fds[1]) };
    assert_eq!(
        (r, errno()),
        (hipFileStatsReportGenerationFailed, libc::EPIPE)
    );
    // No SIGPIPE is left pending for the thread either.
    // SAFETY: sigset_t is plain data filled by sigpending.
    let pending = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut set);
        libc::sigismember(&set, libc::SIGPIPE)
    };
    assert_eq!(pending, 0);
    // SAFETY: our descriptor.
    unsafe { libc::close(fds[1]) };
});

// Item 7: out of descriptors, hipFileStatsCreateContext says the target is not accessible
// (errno EMFILE), not that it does not exist.
child_test!(
    stats_context_out_of_descriptors_is_not_accessible_with_emfile,
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: a valid rlimit to fill, then to set.
        unsafe {
            assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
            lim.rlim_cur = 64;
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
        }
        let mut filler = Vec::new();
        loop {
            // SAFETY: a valid path.
            let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            if fd < 0 {
                assert_eq!(errno(), libc::EMFILE);
                break;
            }
            filler.push(fd);
        }
        let mut ctx = null_mut();
        // SAFETY: a valid out-pointer.
        let r = unsafe { hipFileStatsCreateContext(&mut ctx, std::process::id() as c_int) };
        assert_eq!(
            (r, errno(), ctx.is_null()),
            (hipFileStatsTargetProcessNotAccessible, libc::EMFILE, true)
        );
        for fd in filler {
            // SAFETY: our descriptors.
            unsafe { libc::close(fd) };
        }
        // SAFETY: as above.
        let r = unsafe { hipFileStatsCreateContext(&mut ctx, std::process::id() as c_int) };
        assert_eq!(r, hipFileStatsSuccess);
        // SAFETY: the context just created.
        unsafe { hipFileStatsCloseContext(ctx) };
    }
);

// Item 4: an application linked with a GPU runtime under another file name (here the
// simulator, libhipsim.so) gets it without any HIPFILE_* variable: device memory works.
#[test]
fn a_runtime_in_the_process_is_found_by_its_symbols() {
    let exe = cprog::compile("runtime_detect");
    let scratch = scratch_dir();
    let out = cprog::run(&exe, &["device", scratch.to_str().unwrap()], &[]);
    let (stdout, stderr) = (stdout(&out), stderr(&out));
    assert!(
        out.status.success() && stdout.contains("detect: ok"),
        "{}:\n{stdout}\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("host-only"), "{stderr}");
}

// Item 4: host-only mode is never silent. A runtime that loads but cannot be used is named with
// its reason at the default log level (Debian 12's HIP 5.2, which lacks hipLaunchHostFunc, is no
// longer refused for that symbol the library never calls), and the first memory registration
// says that the library is host-only. With no runtime at all, only the latter.
#[test]
fn host_only_mode_is_announced() {
    let exe = cprog::compile_without_sim("runtime_detect");
    let scratch = scratch_dir();
    let run = |env: &[(&str, &str)]| {
        let out = cprog::run(&exe, &["host", scratch.to_str().unwrap()], env);
        let (stdout, stderr) = (stdout(&out), stderr(&out));
        assert!(
            out.status.success() && stdout.contains("detect: ok"),
            "{}:\n{stdout}\n{stderr}",
            out.status
        );
        stderr
    };
    let none = [
        ("HIPFILE_HIP_LIBRARY", "/nonexistent/libamdhip64.so"),
        ("HIPFILE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"),
    ];
    let stderr = run(&none);
    assert_eq!(
        stderr.matches("host-only mode").count(),
        1,
        "said once, at the first memory registration:\n{stderr}"
    );
    assert!(!stderr.contains("no usable GPU runtime"), "{stderr}");
    // A runtime found but rejected: the simulator with no device.
    let hipsim = hipsim_path();
    let stderr = run(&[
        ("HIPFILE_HIP_LIBRARY", hipsim.to_str().unwrap()),
        ("HIPFILE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"),
        ("HIPSIM_DEVICE_COUNT", "0"),
    ]);
    assert!(
        stderr.contains("no usable GPU runtime") && stderr.contains("reports no device"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("host-only mode").count(), 1, "{stderr}");
    let debian = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
    if std::path::Path::new(debian).exists() {
        let stderr = run(&[
            ("HIPFILE_HIP_LIBRARY", debian),
            ("HIPFILE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"),
        ]);
        assert!(
            stderr.contains("no usable GPU runtime") && stderr.contains(debian),
            "{stderr}"
        );
        assert!(!stderr.contains("hipLaunchHostFunc"), "{stderr}");
    } else {
        println!("{debian} is not installed: the check of Debian's HIP 5.2 did not run");
    }
}
