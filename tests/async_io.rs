//! Stream-ordered I/O (`hipFileReadAsync` / `hipFileWriteAsync`) through the C ABI on the
//! simulated GPU runtime, whose streams keep a real GPU's hazards: the legacy default stream
//! synchronises with blocking streams (and synchronous copies wait for both), host functions of
//! every stream run on one runtime thread, and `hipStreamWaitValue32` holds a stream until a
//! word of pinned memory has a value. Every test runs in its own child process.
//!
//! A test pauses a stream by queueing, before the operation, a wait on a word of pinned memory
//! it owns (`hipStreamWaitValue32`), changes the parameters behind the caller's pointers, and
//! releases the stream by writing the word. Results are exact: `*bytes_p`, file and device
//! bytes, and hipsim's counters where they say which backend served a request.

mod common;

use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::async_ops::{read_async, write_async, Params, Stream};
use common::*;

const K4: usize = 4096;
/// `hipFileInvalidValue`.
const INVALID_VALUE: isize = 5022;

/// A word of pinned memory a stream waits on until the test releases it.
struct Pause {
    word: *mut u32,
}

// SAFETY: the word is only accessed atomically.
unsafe impl Send for Pause {}
// SAFETY: as above.
unsafe impl Sync for Pause {}

impl Pause {
    /// Hold `stream` from now until [`Pause::release`].
    fn hold(stream: &Stream) -> Pause {
        let mut p = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (sim().host_malloc)(&mut p, 64, 0x2) }, 0);
        let word = p.cast::<u32>();
        // SAFETY: 64 bytes of pinned memory we own.
        unsafe { word.write(0) };
        // SAFETY: a live stream, a word of pinned memory; flags 1: equal.
        assert_eq!(
            unsafe { (sim().stream_wait_value32)(stream.0, p, 1, 1, u32::MAX) },
            0
        );
        Pause { word }
    }

    fn release(&self) {
        // SAFETY: pinned memory alive until drop; the stream polls it atomically.
        unsafe { AtomicU32::from_ptr(self.word) }.store(1, Ordering::Release);
    }
}

impl Drop for Pause {
    fn drop(&mut self) {
        self.release();
        // SAFETY: allocated by hipHostMalloc above.
        unsafe { (sim().host_free)(self.word.cast()) };
    }
}

fn register_stream(s: &Stream, flags: c_uint) {
    assert_eq!(hipFileStreamRegister(s.0, flags), OK);
}

// ---- the FIXED-flag matrix ------------------------------------------------------------------

// Every combination of the four flags × read/write × the shapes of the issue: zero offsets
// with size−1, file offset 1 with size−1, buffer offset 1 with size−1, and size 0 (which
// overwrites a preset `*bytes_p` at submission and queues nothing).
child_test!(fixed_flag_matrix, {
    open_driver();
    let s = sim();
    let n = 192 * 1024 + 7;
    let data = pattern(n, 1);
    let dev = s.device_alloc(n);
    let f = TestFile::rw("async-matrix", &data);
    for flags in 0..16u32 {
        let stream = Stream::new();
        register_stream(&stream, flags);
        for (foff, boff, size) in [(0, 0, n - 1), (1, 0, n - 1), (0, 1, n - 1), (5, 9, 0)] {
            let want = if size == 0 { 0 } else { size };
            // Read: the file bytes land at the buffer offset.
            s.upload(dev.ptr, &vec![0xee; n]);
            let mut p = Params::new(size, foff as i64, boff as i64);
            assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
            stream.sync();
            assert_eq!(
                p.result(),
                want as isize,
                "read flags {flags} {foff}/{boff}/{size}"
            );
            let got = s.download(dev.ptr, n);
            assert_eq!(&got[boff..boff + size], &data[foff..foff + size]);
            assert!(got[..boff]
                .iter()
                .chain(&got[boff + size..])
                .all(|&b| b == 0xee));

            // Write: the buffer bytes land at the file offset.
            let fresh = pattern(n, 100 + u64::from(flags));
            s.upload(dev.ptr, &fresh);
            let mut p = Params::new(size, foff as i64, boff as i64);
            assert_eq!(write_async(f.fh, dev.ptr, &mut p, &stream), OK);
            stream.sync();
            assert_eq!(
                p.result(),
                want as isize,
                "write flags {flags} {foff}/{boff}/{size}"
            );
            let mut expect = data.clone();
            expect[foff..foff + size].copy_from_slice(&fresh[boff..boff + size]);
            assert_eq!(f.contents(), expect);
            std::fs::write(&f.path, &data).unwrap();
        }
        assert_eq!(hipFileStreamDeregister(stream.0), OK);
    }
});

// ---- ordering ---------------------------------------------------------------------------------

// A write then a read of the same bytes on one stream, queued back to back without a
// synchronisation between them: the read sees the write (and a later read on the stream sees a
// second write), so the operations ran in submission order.
child_test!(operations_on_one_stream_see_each_other, {
    open_driver();
    let s = sim();
    let n = 3 * 1024 * 1024 + 11;
    let f = TestFile::rw("async-order", &vec![0u8; n]);
    let a = s.device_alloc(n);
    let b = s.device_alloc(n);
    let c = s.device_alloc(n);
    let first = pattern(n, 2);
    let second = pattern(n, 3);
    s.upload(a.ptr, &first);
    s.upload(c.ptr, &second);
    let stream = Stream::new();
    let mut w1 = Params::new(n, 0, 0);
    let mut r1 = Params::new(n, 0, 0);
    let mut w2 = Params::new(n, 0, 0);
    let mut r2 = Params::new(n, 0, 0);
    assert_eq!(write_async(f.fh, a.ptr, &mut w1, &stream), OK);
    assert_eq!(read_async(f.fh, b.ptr, &mut r1, &stream), OK);
    assert_eq!(write_async(f.fh, c.ptr, &mut w2, &stream), OK);
    assert_eq!(read_async(f.fh, a.ptr, &mut r2, &stream), OK);
    stream.sync();
    for p in [&w1, &r1, &w2, &r2] {
        assert_eq!(p.result(), n as isize);
    }
    assert_eq!(
        s.download(b.ptr, n),
        first,
        "the first read saw the first write"
    );
    assert_eq!(
        s.download(a.ptr, n),
        second,
        "the second read saw the second write"
    );
    assert_eq!(f.contents(), second);
});

// ---- a paused stream --------------------------------------------------------------------------

// The stream is held before the operation; the parameters change behind the caller's pointers,
// then the stream is released. `*bytes_p` is 0 from the submission until the operation ran.
child_test!(paused_stream_reads_the_parameters_when_it_runs, {
    open_driver();
    let s = sim();
    let n = 256 * 1024;
    let data = pattern(n, 4);
    let f = TestFile::rw("async-paused", &data);
    let dev = s.device_alloc(n);
    let stream = Stream::new();
    let run = |change: &dyn Fn(&mut Params), submitted: (usize, i64, i64)| -> (isize, Vec<u8>) {
        s.upload(dev.ptr, &vec![0u8; n]);
        let pause = Pause::hold(&stream);
        let mut p = Params::new(submitted.0, submitted.1, submitted.2);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(p.result(), 0, "*bytes_p is 0 until the operation ran");
        change(&mut p);
        pause.release();
        stream.sync();
        (p.result(), s.download(dev.ptr, n))
    };
    // A smaller size works.
    let (r, got) = run(&|p| p.set_size(1000), (n, 0, 0));
    assert_eq!(r, 1000);
    assert_eq!(&got[..1000], &data[..1000]);
    assert!(got[1000..].iter().all(|&b| b == 0));
    // A larger size than at submission: -hipFileInvalidValue, nothing moved.
    let (r, got) = run(&|p| p.set_size(2000), (1000, 0, 0));
    assert_eq!(r, -INVALID_VALUE);
    assert!(got.iter().all(|&b| b == 0));
    // A buffer offset past the end of the buffer: -hipFileInvalidValue.
    let (r, _) = run(&|p| p.set_offsets(0, n as i64), (K4, 0, 0));
    assert_eq!(r, -INVALID_VALUE);
    // A buffer offset that leaves too little room for the size: -hipFileInvalidValue.
    let (r, _) = run(&|p| p.set_offsets(0, (n - 10) as i64), (K4, 0, 0));
    assert_eq!(r, -INVALID_VALUE);
    // A negative file offset at run time: -hipFileInvalidValue.
    let (r, _) = run(&|p| p.set_offsets(-1, 0), (K4, 0, 0));
    assert_eq!(r, -INVALID_VALUE);
    // Moved file and buffer offsets are honoured.
    let (r, got) = run(&|p| p.set_offsets(12345, 777), (K4, 0, 0));
    assert_eq!(r, K4 as isize);
    assert_eq!(&got[777..777 + K4], &data[12345..12345 + K4]);
    assert!(got[..777].iter().chain(&got[777 + K4..]).all(|&b| b == 0));
});

// With all three FIXED flags the values of the submission are used, whatever the pointers hold
// when the operation runs.
child_test!(fixed_flags_freeze_the_parameters_at_submission, {
    open_driver();
    let s = sim();
    let n = 64 * 1024;
    let data = pattern(n, 5);
    let f = TestFile::rw("async-fixed", &data);
    let dev = s.device_alloc(n);
    for (flags, want_size, want_foff, want_boff) in [
        (1 | 2 | 4, 5000, 100, 10),
        (4, 5000, 300, 30),
        (2, 4000, 100, 30),
        (1, 4000, 300, 10),
    ] {
        let stream = Stream::new();
        register_stream(&stream, flags);
        s.upload(dev.ptr, &vec![0u8; n]);
        let pause = Pause::hold(&stream);
        let mut p = Params::new(5000, 100, 10);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
        p.set_size(4000);
        p.set_offsets(300, 30);
        pause.release();
        stream.sync();
        assert_eq!(p.result(), want_size as isize, "flags {flags}");
        let got = s.download(dev.ptr, n);
        assert_eq!(
            &got[want_boff..want_boff + want_size],
            &data[want_foff..want_foff + want_size],
            "flags {flags}"
        );
        assert_eq!(hipFileStreamDeregister(stream.0), OK);
    }
});

// ---- results --------------------------------------------------------------------------------

// A read past the end of the file returns the bytes up to it; one at the end returns 0.
child_test!(read_past_the_end_of_file_returns_the_bytes_up_to_it, {
    open_driver();
    let s = sim();
    let n = 1 << 20;
    let data = pattern(n, 6);
    let f = TestFile::rw("async-eof", &data);
    let dev = s.device_alloc(n);
    let stream = Stream::new();
    let mut p = Params::new(n, K4 as i64, 0);
    assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
    let mut q = Params::new(K4, n as i64, 0);
    assert_eq!(read_async(f.fh, dev.ptr, &mut q, &stream), OK);
    stream.sync();
    assert_eq!(p.result(), (n - K4) as isize);
    assert_eq!(q.result(), 0);
    assert_eq!(&s.download(dev.ptr, n - K4)[..], &data[K4..]);
});

// Submission checks, in upstream's order, answered by the call itself.
child_test!(submission_checks, [("HIPSIM_DEVICE_COUNT", "2")], {
    open_driver();
    let s = sim();
    let n = 64 * 1024;
    let f = TestFile::rw("async-checks", &pattern(n, 7));
    let dev = s.device_alloc(n);
    let stream = Stream::new();
    let call = |fh, buf, size, foff, boff| {
        let mut p = Params::new(size, foff, boff);
        let e = read_async(fh, buf, &mut p, &stream);
        (e.err, p.result())
    };
    // NULL arguments.
    let mut p = Params::new(n, 0, 0);
    // SAFETY: NULL pointers are checked before anything is read.
    let e = unsafe {
        hipFileReadAsync(
            f.fh,
            dev.ptr,
            std::ptr::null_mut(),
            &mut p.file_offset,
            &mut p.buffer_offset,
            &mut p.bytes,
            stream.0,
        )
    };
    assert_eq!(e.err, 5022);
    assert_eq!(p.result(), -77, "*bytes_p untouched by a refused call");
    // An unknown handle.
    assert_eq!(
        call(0xdead as hipFileHandle_t, dev.ptr, n, 0, 0),
        (5027, -77)
    );
    // Bounds with the current values: too big, offset past the end, negative offsets.
    assert_eq!(call(f.fh, dev.ptr, n + 1, 0, 0), (5022, -77));
    assert_eq!(call(f.fh, dev.ptr, 1, 0, n as i64), (5022, -77));
    assert_eq!(call(f.fh, dev.ptr, 1, -1, 0), (5022, -77));
    assert_eq!(call(f.fh, dev.ptr, 1, 0, -1), (5022, -77));
    // The buffer's device against the stream's.
    // SAFETY: device 1 exists (HIPSIM_DEVICE_COUNT=2).
    assert_eq!(unsafe { (s.set_device)(1) }, 0);
    let other = Stream::new();
    // SAFETY: back to device 0.
    assert_eq!(unsafe { (s.set_device)(0) }, 0);
    let mut p = Params::new(K4, 0, 0);
    assert_eq!(read_async(f.fh, dev.ptr, &mut p, &other).err, 5022);
    assert_eq!(p.result(), -77);
    // Size 0 overwrites *bytes_p at once and queues nothing.
    assert_eq!(call(f.fh, dev.ptr, 0, 0, 0), (0, 0));
    let before = s.counter("hipEventRecord");
    let mut p = Params::new(0, 3, 3);
    assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
    assert_eq!((p.result(), s.counter("hipEventRecord")), (0, before));
});

// ---- backends ---------------------------------------------------------------------------------

// A fastpath ENODEV on a stream is served by the fallback at the same position on the stream:
// the bytes are right and the caller sees only the byte count.
child_test!(
    fastpath_enodev_on_a_stream_is_served_by_the_fallback,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        open_driver();
        if !odirect_works() {
            eprintln!(
                "O_DIRECT does not work in {}; test skipped",
                scratch_dir().display()
            );
            return;
        }
        let s = sim();
        let n = 256 * 1024;
        let data = pattern(n, 8);
        let f = TestFile::rw("async-enodev", &data);
        let dev = s.device_alloc(n);
        let stream = Stream::new();
        // First without a fault: the fastpath serves it, no copy.
        let (fast, copied) = (s.counter("hipAmdFileRead"), s.counter("h2d_bytes"));
        let mut p = Params::new(n, 0, 0);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
        stream.sync();
        assert_eq!(p.result(), n as isize);
        assert_eq!(s.counter("hipAmdFileRead") - fast, 1);
        assert_eq!(
            s.counter("h2d_bytes") - copied,
            0,
            "GPU-direct: no bounce copy"
        );
        assert_eq!(s.download(dev.ptr, n), data);
        // Then ENODEV: tried on the fastpath, served by the fallback.
        s.upload(dev.ptr, &vec![0u8; n]);
        s.fault("fastpath_errno", i64::from(libc::ENODEV));
        let (fast, copied) = (s.counter("hipAmdFileRead"), s.counter("h2d_bytes"));
        let mut p = Params::new(n, 0, 0);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
        stream.sync();
        s.fault("fastpath_errno", 0);
        assert_eq!(p.result(), n as isize);
        assert_eq!(
            s.counter("hipAmdFileRead") - fast,
            1,
            "the fastpath was tried"
        );
        assert_eq!(
            s.counter("h2d_bytes") - copied,
            n as u64,
            "the fallback moved every byte"
        );
        assert_eq!(s.download(dev.ptr, n), data);
        // Visible in the statistics only: one retry, two async reads submitted.
        let ext = hipfile::api::stats::own_snapshot()
            .ext
            .expect("our extension block");
        assert_eq!((ext.fallback_retries, ext.async_ops), (1, [2, 0]));
        // EIO is not retried: -hipFileInternalError in *bytes_p, as upstream.
        s.fault("fastpath_errno", i64::from(libc::EIO));
        let mut p = Params::new(n, 0, 0);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
        stream.sync();
        s.fault("fastpath_errno", 0);
        assert_eq!(p.result(), -5030);
    }
);

// The NULL stream: the call returns at once, the operation runs on the default stream, in order
// with the application's own work there. Small requests too (one chunk), whose copies must not
// be synchronous: a synchronous copy waits for the default stream, which the operation holds.
child_test!(the_null_stream, {
    open_driver();
    let s = sim();
    let n = 96 * 1024 + 3;
    let data = pattern(n, 9);
    let f = TestFile::rw("async-null", &data);
    let dev = s.device_alloc(n);
    let null = Stream(std::ptr::null_mut());
    let mut small = Params::new(100, 5, 0);
    let mut large = Params::new(n - 200, 200, 200);
    assert_eq!(read_async(f.fh, dev.ptr, &mut small, &null), OK);
    assert_eq!(read_async(f.fh, dev.ptr, &mut large, &null), OK);
    null.sync();
    assert_eq!((small.result(), large.result()), (100, (n - 200) as isize));
    let got = s.download(dev.ptr, n);
    assert_eq!(&got[..100], &data[5..105]);
    assert_eq!(&got[200..], &data[200..]);
    // A write on the NULL stream, then a synchronous read sees it.
    let fresh = pattern(n, 10);
    s.upload(dev.ptr, &fresh);
    let mut w = Params::new(n, 0, 0);
    assert_eq!(write_async(f.fh, dev.ptr, &mut w, &null), OK);
    null.sync();
    assert_eq!(w.result(), n as isize);
    assert_eq!(f.contents(), fresh);
    std::mem::forget(null);
});

// A staging kernel that faults (hipsim's `stage_dies`) breaks the device's context, which hipsim
// models as CUDA does (ROCm's own default is to abort the process): every kernel of the device
// stops, queued work never runs, later calls fail with hipErrorIllegalAddress (700). Every
// operation fails with -hipFileHipDriverError: the one whose kernel died (its worker sees the
// stream fail), the one behind it and the one on another stream whose kernels never started
// (the watch asks about their streams); a later submission is refused with the runtime's error,
// a synchronous read returns -700, and deregistering and closing return. (Without the fastpath,
// which would move the bytes without the kernel's segments.)
child_test!(
    a_kernel_fault_fails_every_operation_of_the_device,
    [
        ("HIPFILE_ASYNC_BUFFER_SIZE", "131072"),
        ("HIPSIM_STAGE_DIES", "2"),
        ("HIPSIM_NO_FASTPATH", "1")
    ],
    {
        common::sync_io::watchdog(60);
        open_driver();
        let s = sim();
        let n = 1 << 20;
        let f = TestFile::rw("async-dies", &pattern(n, 8));
        let dev = s.device_alloc(4 * n);
        let (stream, other) = (Stream::new(), Stream::new());
        register_stream(&stream, 0);
        // Both streams held, so that every operation is queued before the first kernel dies.
        let (held, held_other) = (Pause::hold(&stream), Pause::hold(&other));
        let started = Instant::now();
        let mut first = Params::new(n, 0, 0);
        let mut behind = Params::new(n, 0, n as i64);
        let mut beside = Params::new(n, 0, 2 * n as i64);
        assert_eq!(read_async(f.fh, dev.ptr, &mut first, &stream), OK);
        assert_eq!(read_async(f.fh, dev.ptr, &mut behind, &stream), OK);
        assert_eq!(read_async(f.fh, dev.ptr, &mut beside, &other), OK);
        held.release();
        // SAFETY: a live stream; hipErrorIllegalAddress is what the kernel left on it.
        assert_eq!(unsafe { (s.stream_synchronize)(stream.0) }, 700);
        let mut late = Params::new(n, 0, 3 * n as i64);
        let refused = read_async(f.fh, dev.ptr, &mut late, &other);
        assert_eq!((refused.err, refused.hip_drv_err), (5011, 700));
        let ops = [&first, &behind, &beside];
        while ops.iter().any(|p| p.result() == 0) && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let results = ops.map(|p| p.result());
        assert_eq!((results, late.result()), ([-5011; 3], 0));
        // SAFETY: live streams: the context's error, again.
        unsafe {
            assert_eq!((s.stream_synchronize)(stream.0), 700);
            assert_eq!((s.stream_synchronize)(other.0), 700);
        }
        // SAFETY: the file and the device memory are live; the HIP error comes back negated.
        assert_eq!(unsafe { hipFileRead(f.fh, dev.ptr, 4096, 0, 0) }, -700);
        assert_eq!(hipFileStreamDeregister(stream.0), OK);
        assert_eq!(hipFileDriverClose(), OK);
        assert!(started.elapsed() < Duration::from_secs(5));
        // The device memory, the pauses' words and the streams go with the process: freeing
        // them on a broken context reports 700.
        std::mem::forget((dev, held, held_other, stream, other));
    }
);

// An application may hold one stream on a word of its own while it waits for stream-ordered
// I/O on another stream: the streams are independent, on CUDA and on HIP. ROCm runs every
// cooperative launch of a device on one queue, in launch order (hipsim's `hip_coop_queue`), so
// a cooperative staging kernel queued on the held stream would hold the other stream's kernel
// behind it, and the application would wait forever. The staging kernel is a plain launch on
// HIP: the other stream's operation completes while the first stream is still held.
child_test!(a_held_stream_does_not_hold_another_streams_operations, {
    common::sync_io::watchdog(30);
    open_driver();
    let s = sim();
    let n = 256 * 1024 + 5;
    let data = pattern(n, 21);
    let f = TestFile::rw("async-held", &data);
    let dev = s.device_alloc(2 * n);
    let (a, b) = (Stream::new(), Stream::new());
    let held = Pause::hold(&a);
    let mut on_held = Params::new(n, 0, 0);
    let mut beside = Params::new(n, 0, n as i64);
    assert_eq!(read_async(f.fh, dev.ptr, &mut on_held, &a), OK);
    assert_eq!(read_async(f.fh, dev.ptr, &mut beside, &b), OK);
    b.sync();
    assert_eq!((on_held.result(), beside.result()), (0, n as isize));
    held.release();
    a.sync();
    assert_eq!(on_held.result(), n as isize);
    assert_eq!(s.download(dev.ptr, 2 * n), [data.clone(), data].concat());
});

// Two threads' per-thread default streams (hipStreamPerThread) are independent: an operation on
// one thread's held stream does not hold the other thread's. The library's threads must not ask
// ROCm about the NULL stream for the held operation: that question queues a marker on the NULL
// stream behind every busy blocking stream (the held per-thread stream included), and the other
// thread's later work, on a blocking stream, would wait for the marker (hipsim models the
// marker). The held operation has waited well past the 10 ms after which its stream is looked
// at, before the other thread queues its own.
child_test!(two_threads_per_thread_streams_are_independent, {
    common::sync_io::watchdog(30);
    open_driver();
    let s = sim();
    let n = 128 * 1024 + 3;
    let data = pattern(n, 31);
    let f = TestFile::rw("async-per-thread", &data);
    let dev = s.device_alloc(2 * n);
    let (fh, at) = (f.fh as usize, dev.ptr as usize);
    let (queued_tx, queued_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|sc| {
        let held_thread = sc.spawn(move || {
            let per_thread = Stream(2 as *mut c_void);
            let held = Pause::hold(&per_thread);
            let mut p = Params::new(n, 0, 0);
            let fh = fh as hipFileHandle_t;
            assert_eq!(read_async(fh, at as *mut c_void, &mut p, &per_thread), OK);
            queued_tx.send(()).unwrap();
            release_rx.recv().unwrap();
            held.release();
            per_thread.sync();
            let result = p.result();
            std::mem::forget(per_thread);
            result
        });
        queued_rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let per_thread = Stream(2 as *mut c_void);
        let mut p = Params::new(n, 0, n as i64);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &per_thread), OK);
        per_thread.sync();
        assert_eq!(
            p.result(),
            n as isize,
            "while the other thread's stream is held"
        );
        std::mem::forget(per_thread);
        release_tx.send(()).unwrap();
        assert_eq!(held_thread.join().unwrap(), n as isize);
    });
    assert_eq!(s.download(dev.ptr, 2 * n), [data.clone(), data].concat());
});

// Host memory (which upstream's async path refuses) is served by the host backend.
child_test!(host_memory, {
    open_driver();
    let n = 300 * 1024 + 1;
    let data = pattern(n, 11);
    let f = TestFile::rw("async-host", &data);
    let mut host = vec![0u8; n];
    let stream = Stream::new();
    let mut p = Params::new(n - 1, 1, 0);
    assert_eq!(
        read_async(f.fh, host.as_mut_ptr().cast(), &mut p, &stream),
        OK
    );
    stream.sync();
    assert_eq!(p.result(), (n - 1) as isize);
    assert_eq!(&host[..n - 1], &data[1..]);
    let fresh = pattern(n, 12);
    host.copy_from_slice(&fresh);
    let mut w = Params::new(n, 0, 0);
    assert_eq!(
        write_async(f.fh, host.as_mut_ptr().cast(), &mut w, &stream),
        OK
    );
    stream.sync();
    assert_eq!(w.result(), n as isize);
    assert_eq!(f.contents(), fresh);
});

// ---- many streams -------------------------------------------------------------------------------

// 8 threads, each with its own stream, queue 100 reads of different sizes and offsets each
// without synchronising in between; every byte of every read is checked.
child_test!(eight_streams_of_a_hundred_operations_from_eight_threads, {
    open_driver();
    let file_len = 8 << 20;
    let data = Arc::new(pattern(file_len, 13));
    let f = Arc::new(TestFile::rw("async-many", &data));
    const OPS: usize = 100;
    const SLOT: usize = 64 * 1024;
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (f, data) = (f.clone(), data.clone());
            std::thread::spawn(move || {
                let s = sim();
                let dev = s.device_alloc(OPS * SLOT);
                let stream = Stream::new();
                let mut params = Vec::new();
                for i in 0..OPS {
                    let k = t * OPS + i;
                    let size = 1 + (k * 7919) % (SLOT - 1);
                    let foff = (k * 104_729) % (file_len - size);
                    let mut p = Params::new(size, foff as i64, (i * SLOT) as i64);
                    assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
                    params.push(p);
                }
                stream.sync();
                let got = s.download(dev.ptr, OPS * SLOT);
                for (i, p) in params.iter().enumerate() {
                    let (size, foff) = (p.size, p.file_offset as usize);
                    assert_eq!(p.result(), size as isize, "thread {t} op {i}");
                    assert_eq!(
                        &got[i * SLOT..i * SLOT + size],
                        &data[foff..foff + size],
                        "thread {t} op {i}"
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
});

// ---- deregistration and close -------------------------------------------------------------------

/// Start `f` on a thread; after 100 ms it must still be running (it waits for the paused
/// operation); release the pause; it returns and the operation's result is already final.
fn waits_for_the_paused_operation(what: &str, f: impl FnOnce() + Send + 'static) {
    open_driver();
    let s = sim();
    let n = 128 * 1024;
    let data = pattern(n, 14);
    let file = TestFile::rw("async-wait", &data);
    let dev = s.device_alloc(n);
    let stream = Stream::new();
    register_stream(&stream, 0);
    let pause = Pause::hold(&stream);
    let mut p = Params::new(n, 0, 0);
    assert_eq!(read_async(file.fh, dev.ptr, &mut p, &stream), OK);
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let t = std::thread::spawn(move || {
        f();
        d.store(true, Ordering::SeqCst);
    });
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        !done.load(Ordering::SeqCst),
        "{what} returned while an operation was queued"
    );
    assert_eq!(p.result(), 0);
    pause.release();
    t.join().unwrap();
    assert_eq!(
        p.result(),
        n as isize,
        "{what} returned after the operation finished"
    );
    stream.sync();
    assert_eq!(s.download(dev.ptr, n), data);
    std::mem::forget(file);
}

// Deregistering a stream with work queued waits for that work.
child_test!(deregistering_a_stream_waits_for_its_queued_operations, {
    open_driver();
    let s = sim();
    let n = 128 * 1024;
    let data = pattern(n, 15);
    let f = TestFile::rw("async-dereg", &data);
    let dev = s.device_alloc(n);
    let stream = Arc::new(Stream::new());
    register_stream(&stream, 0);
    let pause = Pause::hold(&stream);
    let mut p = Params::new(n, 0, 0);
    assert_eq!(read_async(f.fh, dev.ptr, &mut p, &*stream), OK);
    let done = Arc::new(AtomicBool::new(false));
    let (d, st) = (done.clone(), stream.clone());
    let t = std::thread::spawn(move || {
        assert_eq!(hipFileStreamDeregister(st.0), OK);
        d.store(true, Ordering::SeqCst);
    });
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        !done.load(Ordering::SeqCst),
        "deregistration returned with an operation queued"
    );
    assert_eq!(p.result(), 0);
    pause.release();
    t.join().unwrap();
    assert_eq!(
        p.result(),
        n as isize,
        "the operation finished before deregistration returned"
    );
    stream.sync();
    assert_eq!(s.download(dev.ptr, n), data);
    assert_eq!(
        hipFileStreamDeregister(stream.0).err,
        5022,
        "deregistered once"
    );
});

// Closing the driver with work queued waits for that work.
child_test!(driver_close_waits_for_queued_operations, {
    waits_for_the_paused_operation("hipFileDriverClose", || {
        assert_eq!(hipFileDriverClose(), OK);
    });
    assert_eq!(hipFileUseCount(), 0);
});

// ---- the runtime's callback thread ----------------------------------------------------------

struct Blocker(AtomicBool);

unsafe extern "C" fn block_until_released(data: *mut c_void) {
    // SAFETY: a leaked `Blocker`.
    let b = unsafe { &*(data as *const Blocker) };
    while !b.0.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// An application host function that blocks the runtime's one callback thread (on another
/// stream), then a read on `stream`. Returns the blocker (release it!) and the parameters.
fn read_behind_a_blocked_callback(
    f: &TestFile,
    dev: *mut c_void,
    n: usize,
    other: &Stream,
    stream: &Stream,
) -> (&'static Blocker, Box<Params>) {
    let blocker: &'static Blocker = Box::leak(Box::new(Blocker(AtomicBool::new(false))));
    // SAFETY: the data outlives the call (leaked).
    assert_eq!(
        unsafe {
            (sim().launch_host_func)(
                other.0,
                block_until_released,
                blocker as *const _ as *mut c_void,
            )
        },
        0
    );
    std::thread::sleep(Duration::from_millis(20));
    let mut p = Params::new(n, 0, 0);
    assert_eq!(read_async(f.fh, dev, &mut p, stream), OK);
    (blocker, p)
}

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within 20 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

// An application host function blocking the runtime's callback thread does not hold up our
// operation or the release of its stream: the staging kernel holds it, no host function.
child_test!(a_blocked_callback_thread_does_not_hold_up_stream_io, {
    open_driver();
    let s = sim();
    let n = 64 * 1024;
    let data = pattern(n, 16);
    let f = TestFile::rw("async-cb", &data);
    let dev = s.device_alloc(n);
    let (other, stream) = (Stream::new(), Stream::new());
    let launches = s.counter("stage_launches");
    let (blocker, p) = read_behind_a_blocked_callback(&f, dev.ptr, n, &other, &stream);
    wait_until("the stream's release", || stream.idle());
    assert_eq!(p.result(), n as isize);
    assert_eq!(
        s.counter("stage_launches") - launches,
        1,
        "held by the staging kernel"
    );
    assert!(!other.idle(), "the application's callback still blocks");
    blocker.0.store(true, Ordering::Release);
    other.sync();
    assert_eq!(s.download(dev.ptr, n), data);
});

// Where the staging kernel cannot be loaded (HIPSIM_NO_KERNELS), an operation runs at its
// submission, after the work queued before it on the stream: the call returns once it is done,
// with its result stored, and nothing holds the stream afterwards.
child_test!(
    without_the_staging_kernel_operations_run_at_submission,
    [("HIPSIM_NO_KERNELS", "1")],
    {
        open_driver();
        let s = sim();
        let n = 64 * 1024;
        let data = pattern(n, 17);
        let f = TestFile::rw("async-nokernel", &data);
        let dev = s.device_alloc(n);
        let stream = Stream::new();
        let launches = s.counter("stage_launches");
        let pause = Pause::hold(&stream);
        let submitted = AtomicBool::new(false);
        let (fh, ptr) = (f.fh as usize, dev.ptr as usize);
        let result = std::thread::scope(|scope| {
            let submitter = scope.spawn(|| {
                let mut p = Params::new(n, 0, 0);
                let (fh, ptr) = (fh as hipFileHandle_t, ptr as *mut c_void);
                assert_eq!(read_async(fh, ptr, &mut p, &stream), OK);
                submitted.store(true, Ordering::Release);
                p.result()
            });
            std::thread::sleep(Duration::from_millis(100));
            assert!(
                !submitted.load(Ordering::Acquire),
                "the submission waits for the stream's earlier work"
            );
            pause.release();
            submitter.join().unwrap()
        });
        assert_eq!(result, n as isize, "done when the call returned");
        assert!(stream.idle());
        assert_eq!(s.download(dev.ptr, n), data);
        assert_eq!(s.counter("stage_launches"), launches, "no launch");
    }
);

// ---- registration ---------------------------------------------------------------------------

// A stream registered on an open driver makes its device's stages now, as upstream allocates
// at registration: HIPFILE_ASYNC_CONCURRENCY stages of HIPFILE_ASYNC_BUFFER_SIZE (8 MiB: eight
// slots of 1 MiB, each with a page of slack, and a control block of 256 + 256 x 32 bytes) and
// 4096 mailboxes of 64 bytes. They belong to the device, not to the stream: deregistering
// keeps them, another stream adds nothing, the close frees them. Registrations survive a
// driver close: the flags still apply after the next open.
child_test!(
    registration_makes_the_device_stages_and_survives_close,
    [
        ("HIPFILE_ASYNC_BUFFER_SIZE", "8388608"),
        ("HIPFILE_ASYNC_CONCURRENCY", "2")
    ],
    {
        open_driver();
        let s = sim();
        let stream = Stream::new();
        let live = s.counter("pinned_bytes_live");
        register_stream(&stream, 4);
        let stage = 256 + 256 * 32 + 8 * ((1 << 20) + 4096);
        let device_set = 2 * stage + 4096 * 64;
        assert_eq!(
            s.counter("pinned_bytes_live") - live,
            device_set,
            "two stages and the mailboxes"
        );
        let other = Stream::new();
        register_stream(&other, 0);
        assert_eq!(hipFileStreamDeregister(other.0), OK);
        assert_eq!(hipFileStreamDeregister(stream.0), OK);
        assert_eq!(
            s.counter("pinned_bytes_live") - live,
            device_set,
            "kept for the device's other streams"
        );

        register_stream(&stream, 4);
        assert_eq!(hipFileDriverClose(), OK);
        assert_eq!(s.counter("pinned_bytes_live"), live, "freed at close");
        assert_eq!(
            hipFileStreamRegister(stream.0, 0).err,
            5022,
            "still registered"
        );
        open_driver();
        let n = 64 * 1024;
        let data = pattern(n, 18);
        let f = TestFile::rw("async-survive", &data);
        let dev = s.device_alloc(n);
        let pause = Pause::hold(&stream);
        let mut p = Params::new(1000, 0, 0);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
        p.set_size(500);
        pause.release();
        stream.sync();
        assert_eq!(
            p.result(),
            1000,
            "FIXED_FILE_SIZE still in force after the reopen"
        );
        assert_eq!(hipFileStreamDeregister(stream.0), OK);
    }
);

// The HIP side of `a_full_launch_queue_does_not_hang_the_stream` (tests/async_cuda.rs): with a
// launch queue of four items the submitting thread waits inside the runtime, holding the
// stream's submission lock, until the stream drains; the stream's word is set by the worker,
// which must not need that lock. Forty reads from one thread complete, every byte in place.
child_test!(
    a_full_launch_queue_does_not_hang_the_stream,
    [("HIPSIM_LAUNCH_QUEUE", "4")],
    {
        common::sync_io::watchdog(60);
        open_driver();
        let s = sim();
        const OPS: usize = 40;
        const LEN: usize = 4096 + 7;
        let data = pattern(OPS * LEN, 9);
        let f = TestFile::rw("async-queue", &data);
        let dev = s.device_alloc(OPS * LEN);
        let stream = Stream::new();
        let mut ps: Vec<Box<Params>> = (0..OPS)
            .map(|i| Params::new(LEN, (i * LEN) as i64, (i * LEN) as i64))
            .collect();
        for p in &mut ps {
            assert_eq!(read_async(f.fh, dev.ptr, p, &stream), OK);
        }
        stream.sync();
        assert!(ps.iter().all(|p| p.result() == LEN as isize));
        assert_eq!(s.download(dev.ptr, OPS * LEN), data);
    }
);

// ---- what a stream costs, and for how long ---------------------------------------------------

/// Threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// Pinned host memory the simulator holds for anyone (allocated or registered).
fn pinned_bytes(s: &Sim) -> u64 {
    s.counter("pinned_bytes_live") + s.counter("registered_bytes_live")
}

// A server that makes a stream per request: 1,000 streams, each created, used for one read and
// destroyed, with the driver open throughout. Nothing is kept per stream: the threads and pinned
// bytes after the run are those after the first 10 streams (the first bring the workers and the
// device's stages). With a queue, a thread and 16 MiB of pinned memory per stream ever used,
// the first design ended with 1,010 threads and 16 GiB pinned.
child_test!(a_thousand_streams_used_once_cost_what_ten_do, {
    open_driver();
    let s = sim();
    let n = 8192 + 5;
    let data = pattern(n, 31);
    let f = TestFile::rw("async-thousand", &data);
    let dev = s.device_alloc(n);
    let one = |i: usize| {
        let stream = Stream::new();
        let mut p = Params::new(n - i % 7, (i % 7) as i64, 0);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
        stream.sync();
        assert_eq!(p.result(), (n - i % 7) as isize, "stream {i}");
    };
    (0..10).for_each(one);
    let after_ten = (threads(), pinned_bytes(s));
    (10..1000).for_each(one);
    assert_eq!((threads(), pinned_bytes(s)), after_ten);
    assert_eq!(s.download(dev.ptr, n - 999 % 7), data[999 % 7..]);
});

// A stream destroyed and re-created at the same address on another device (the runtime gives
// the address out again): the new stream's device is asked at its submission, so a read into
// the new device's memory is served, and one into the old device's memory is refused
// (hipFileInvalidValue: the buffer is not on the stream's device). The first design kept the
// stream's device from its first use and answered the other way round.
child_test!(
    a_stream_recreated_at_the_same_address_on_another_device,
    [("HIPSIM_DEVICE_COUNT", "2")],
    {
        open_driver();
        let s = sim();
        let n = 64 * 1024;
        let data = pattern(n, 32);
        let f = TestFile::rw("async-readdress", &data);
        let on = |d| {
            // SAFETY: a device ordinal the simulator has.
            assert_eq!(unsafe { (s.set_device)(d) }, 0);
        };
        on(0);
        let dev0 = s.device_alloc(n);
        on(1);
        let dev1 = s.device_alloc(n);
        on(0);
        let first = Stream::new();
        let mut p = Params::new(n, 0, 0);
        assert_eq!(read_async(f.fh, dev0.ptr, &mut p, &first), OK);
        first.sync();
        assert_eq!(p.result(), n as isize);
        let address = first.0;
        drop(first);
        on(1);
        let again = (0..64)
            .map(|_| Stream::new())
            .find(|st| st.0 == address)
            .expect("the runtime gives the address out again");
        let mut p = Params::new(n, 0, 0);
        assert_eq!(read_async(f.fh, dev1.ptr, &mut p, &again), OK);
        again.sync();
        assert_eq!(p.result(), n as isize);
        assert_eq!(s.download(dev1.ptr, n), data);
        let mut p = Params::new(n, 0, 0);
        assert_eq!(read_async(f.fh, dev0.ptr, &mut p, &again).err, 5022);
        on(0);
    }
);

// hipFileHandleDeregister with an operation queued on the handle: the handle goes at once (a
// later submission with it gets hipFileHandleNotRegistered (5027), and the descriptor registers again),
// and the call returns only once the queued operation finished, which it does with the right
// bytes. The first design ignored the deregistration: later submissions succeeded and
// registering the descriptor again gave hipFileHandleAlreadyRegistered (5028).
child_test!(deregistering_a_handle_waits_for_its_queued_operations, {
    open_driver();
    let s = sim();
    let n = 128 * 1024;
    let data = pattern(n, 33);
    let f = TestFile::rw("async-dereg", &data);
    let dev = s.device_alloc(n);
    let stream = Stream::new();
    let pause = Pause::hold(&stream);
    let mut p = Params::new(n, 0, 0);
    assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
    let fh = f.fh as usize;
    let returned = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            hipFileHandleDeregister(fh as hipFileHandle_t);
            returned.store(true, Ordering::Release);
        });
        // Wait until the handle is gone: a synchronous read of 0 bytes looks the handle up
        // and moves nothing (0 while registered, -hipFileHandleNotRegistered once gone).
        // Polled with a deadline, not a fixed sleep, so a slow start of the thread on a
        // loaded machine is no failure.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            // SAFETY: a size of 0 touches no memory.
            let r = unsafe { hipFileRead(f.fh, dev.ptr, 0, 0, 0) };
            if r == -5027 {
                break;
            }
            assert_eq!(r, 0, "a read of nothing on a registered handle");
            assert!(
                Instant::now() < deadline,
                "the handle was never deregistered"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        // The handle is gone but the operation queued on it is held by the paused stream,
        // so the deregistration must still be waiting.
        assert!(
            !returned.load(Ordering::Acquire),
            "waits for the queued operation"
        );
        let mut q = Params::new(n, 0, 0);
        assert_eq!(
            read_async(f.fh, dev.ptr, &mut q, &stream).err,
            5027,
            "the handle is already gone (hipFileHandleNotRegistered)"
        );
        pause.release();
    });
    assert!(returned.load(Ordering::Acquire));
    assert_eq!(p.result(), n as isize);
    assert_eq!(s.download(dev.ptr, n), data);
    hipFileHandleDeregister(register_fd(f.fd));
});

// ---- hardware queues ----------------------------------------------------------------------

/// 64 streams, each with two stream-ordered reads of its own part of a file, then every part
/// checked: with the simulator's hardware-queue model (streams round-robin on
/// `GPU_MAX_HW_QUEUES` in-order queues, a held stream blocking its queue), the operations
/// complete for any number of queues. The first HIP design (streams held on a word while the
/// worker copied on the library's own streams) hung here with 1, 2 and 4 queues, as it did on
/// the H200 (benches/gpu/2026-12-04-h200-hip-suite-baseline.txt).
fn sixty_four_streams() {
    common::sync_io::watchdog(120);
    open_driver();
    let s = sim();
    const STREAMS: usize = 64;
    let part = 96 * 1024 + 3;
    let data = pattern(STREAMS * part, 41);
    let f = TestFile::rw("async-queues", &data);
    let dev = s.device_alloc(STREAMS * part);
    let streams: Vec<Stream> = (0..STREAMS).map(|_| Stream::new()).collect();
    let mut ps = Vec::new();
    for (i, st) in streams.iter().enumerate() {
        let half = part / 2;
        for (off, len) in [(0, half), (half, part - half)] {
            let at = i * part + off;
            let mut p = Params::new(len, at as i64, at as i64);
            assert_eq!(read_async(f.fh, dev.ptr, &mut p, st), OK);
            ps.push((p, len));
        }
    }
    for st in &streams {
        st.sync();
    }
    for (p, len) in &ps {
        assert_eq!(p.result(), *len as isize);
    }
    assert_eq!(s.download(dev.ptr, STREAMS * part), data);
}

child_test!(
    sixty_four_streams_on_one_hardware_queue,
    [("GPU_MAX_HW_QUEUES", "1")],
    { sixty_four_streams() }
);

child_test!(
    sixty_four_streams_on_two_hardware_queues,
    [("GPU_MAX_HW_QUEUES", "2")],
    { sixty_four_streams() }
);

child_test!(
    sixty_four_streams_on_four_hardware_queues,
    [("GPU_MAX_HW_QUEUES", "4")],
    { sixty_four_streams() }
);

// The staging kernel comes from the code object built for the device's architecture: another
// AMD GPU (here gfx1100) loads its own and runs stream-ordered I/O as gfx942 does; a GPU the
// library carries no code object for (gfx950) runs the operations at submission instead.
child_test!(
    the_code_object_of_the_devices_architecture_is_used,
    [("HIPSIM_GCN_ARCH", "gfx1100")],
    {
        open_driver();
        let s = sim();
        let n = 64 * 1024;
        let data = pattern(n, 42);
        let f = TestFile::rw("async-gfx1100", &data);
        let dev = s.device_alloc(n);
        let stream = Stream::new();
        let launches = s.counter("stage_launches");
        let mut p = Params::new(n, 0, 0);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
        stream.sync();
        assert_eq!(p.result(), n as isize);
        assert_eq!(s.download(dev.ptr, n), data);
        assert_eq!(s.counter("stage_launches") - launches, 1);
    }
);

child_test!(
    a_gpu_without_a_code_object_runs_operations_at_submission,
    [("HIPSIM_GCN_ARCH", "gfx950")],
    {
        open_driver();
        let s = sim();
        let n = 64 * 1024;
        let data = pattern(n, 43);
        let f = TestFile::rw("async-gfx950", &data);
        let dev = s.device_alloc(n);
        let stream = Stream::new();
        let launches = s.counter("stage_launches");
        let mut p = Params::new(n, 0, 0);
        assert_eq!(read_async(f.fh, dev.ptr, &mut p, &stream), OK);
        assert_eq!(p.result(), n as isize, "done when the call returned");
        assert_eq!(s.download(dev.ptr, n), data);
        assert_eq!(s.counter("stage_launches"), launches);
    }
);
