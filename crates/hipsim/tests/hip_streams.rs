//! HIP face: streams, async copies, host functions, events and async fault reporting.

mod common;

use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;

/// Log shared with host functions: each call appends its tag.
struct Log {
    entries: Mutex<Vec<(u32, std::thread::ThreadId)>>,
}

struct Tagged {
    log: *const Log,
    tag: u32,
}

unsafe extern "C" fn record(user: *mut c_void) {
    // SAFETY: `user` is a `Tagged` from `tagged`, passed to exactly one host function; its log
    // outlives the stream work.
    let t = unsafe { Box::from_raw(user.cast::<Tagged>()) };
    // SAFETY: as above.
    let log = unsafe { &*t.log };
    log.entries
        .lock()
        .unwrap()
        .push((t.tag, std::thread::current().id()));
}

fn tagged(log: &Log, tag: u32) -> *mut c_void {
    Box::into_raw(Box::new(Tagged { log, tag })).cast()
}

fn new_stream(s: &Sim) -> Stream {
    let mut st = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.hipStreamCreate)(&mut st) }, 0);
    assert!(!st.is_null());
    st
}

#[test]
fn async_copies_and_host_functions_run_in_order() {
    let (s, _g) = sim();
    let live0 = counter(s, "streams_live");
    let st = new_stream(s);
    assert_eq!(counter(s, "streams_live"), live0 + 1);
    let len = 1 << 20;
    let d = dmalloc(s, len);
    let src = pattern(len, 11);
    let mut dst = vec![0u8; len];
    let log = Log {
        entries: Mutex::new(Vec::new()),
    };
    set_fault(s, "copy_delay_us", 100_000);
    let t = Instant::now();
    // SAFETY: `src`, `dst` and `log` outlive the stream work (synchronised below).
    unsafe {
        assert_eq!((s.hipLaunchHostFunc)(st, Some(record), tagged(&log, 1)), 0);
        assert_eq!(
            (s.hipMemcpyHtoDAsync)(d, src.as_ptr().cast_mut().cast(), len, st),
            0
        );
        assert_eq!((s.hipLaunchHostFunc)(st, Some(record), tagged(&log, 2)), 0);
        assert_eq!(
            (s.hipMemcpyDtoHAsync)(dst.as_mut_ptr().cast(), d, len, st),
            0
        );
        assert_eq!((s.hipLaunchHostFunc)(st, Some(record), tagged(&log, 3)), 0);
        assert!(
            t.elapsed() < Duration::from_millis(100),
            "async calls return before the copies ran"
        );
        assert_eq!((s.hipStreamQuery)(st), 600);
        assert_eq!((s.hipGetLastError)(), 0, "not-ready is not an error");
        assert_eq!((s.hipStreamSynchronize)(st), 0);
        assert!(t.elapsed() >= Duration::from_millis(200));
        assert_eq!((s.hipStreamQuery)(st), 0);
    }
    assert_eq!(dst, src);
    let entries = log.entries.lock().unwrap().clone();
    assert_eq!(
        entries.iter().map(|e| e.0).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert!(
        entries.iter().all(|e| e.1 != std::thread::current().id()),
        "host functions run on the worker"
    );
    assert!(entries.iter().all(|e| e.1 == entries[0].1));
    // SAFETY: plain calls.
    unsafe {
        assert_eq!((s.hipLaunchHostFunc)(st, None, ptr::null_mut()), 1);
        assert_eq!((s.hipStreamDestroy)(st), 0);
        assert_eq!((s.hipStreamDestroy)(st), 400);
        assert_eq!((s.hipStreamSynchronize)(st), 400);
        assert_eq!((s.hipStreamDestroy)(ptr::null_mut()), 400);
        assert_eq!((s.hipFree)(d), 0);
    }
    assert_eq!(counter(s, "streams_live"), live0);
}

#[test]
fn generic_async_copy_and_null_stream() {
    let (s, _g) = sim();
    // This test's own calls (the counters are shared with the binary's other tests).
    let (generic0, htod0) = (
        counter(s, "hipMemcpyAsync"),
        counter(s, "hipMemcpyHtoDAsync"),
    );
    let d = dmalloc(s, 8192);
    let src = pattern(8192, 5);
    let mut dst = vec![0u8; 8192];
    // SAFETY: buffers outlive the synchronisation.
    unsafe {
        assert_eq!(
            (s.hipMemcpyAsync)(d, src.as_ptr().cast(), 8192, 1, ptr::null_mut()),
            0
        );
        assert_eq!(
            (s.hipMemcpyAsync)(dst.as_mut_ptr().cast(), d, 8192, 2, ptr::null_mut()),
            0
        );
        assert_eq!((s.hipStreamSynchronize)(ptr::null_mut()), 0);
        let mut dev = -1;
        assert_eq!((s.hipStreamGetDevice)(ptr::null_mut(), &mut dev), 0);
        assert_eq!(dev, 0);
        // Bad operands are reported by the enqueueing call.
        assert_eq!(
            (s.hipMemcpyAsync)(d, src.as_ptr().cast(), 8193, 1, ptr::null_mut()),
            1
        );
        assert_eq!(
            (s.hipMemcpyHtoDAsync)(dst.as_mut_ptr().cast(), d, 10, ptr::null_mut()),
            1
        );
        assert_eq!(
            (s.hipMemcpyAsync)(d, src.as_ptr().cast(), 10, 1, 0x1234_5678 as Stream),
            400
        );
        assert_eq!((s.hipFree)(d), 0);
    }
    assert_eq!(dst, src);
    // Two copies, and two refused (a size past the allocation, an unknown stream); one
    // refused hipMemcpyHtoDAsync. Refused calls count too.
    assert_eq!(counter(s, "hipMemcpyAsync"), generic0 + 4);
    assert_eq!(counter(s, "hipMemcpyHtoDAsync"), htod0 + 1);
}

#[test]
fn async_copy_failure_is_reported_by_the_next_synchronize() {
    let (s, _g) = sim();
    let st = new_stream(s);
    let d = dmalloc(s, 4096);
    let src = [7u8; 4096];
    set_fault(s, "fail_copy", 999);
    // SAFETY: buffers outlive the synchronisation.
    unsafe {
        assert_eq!(
            (s.hipMemcpyHtoDAsync)(d, src.as_ptr().cast_mut().cast(), 4096, st),
            0
        );
        assert_eq!((s.hipGetLastError)(), 0);
        assert_eq!((s.hipStreamSynchronize)(st), 999);
        assert_eq!((s.hipGetLastError)(), 999);
        assert_eq!((s.hipStreamSynchronize)(st), 0, "reported once");
        // Fail "a chunk in the middle".
        set_fault(s, "fail_copy_after", 1);
        assert_eq!(
            (s.hipMemcpyHtoDAsync)(d, src.as_ptr().cast_mut().cast(), 4096, st),
            0
        );
        assert_eq!(
            (s.hipMemcpyHtoDAsync)(d, src.as_ptr().cast_mut().cast(), 4096, st),
            0
        );
        assert_eq!((s.hipStreamSynchronize)(st), 999);
        set_fault(s, "fail_copy", 0);
        set_fault(s, "fail_copy_after", 0);
        assert_eq!((s.hipStreamDestroy)(st), 0);
        assert_eq!((s.hipFree)(d), 0);
    }
}

#[test]
fn events_mark_stream_progress() {
    let (s, _g) = sim();
    let st = new_stream(s);
    let d = dmalloc(s, 4096);
    let src = [1u8; 4096];
    let mut ev = ptr::null_mut();
    let mut ev2 = ptr::null_mut();
    // SAFETY: valid handles and buffers.
    unsafe {
        assert_eq!((s.hipEventCreate)(&mut ev), 0);
        assert_eq!((s.hipEventCreateWithFlags)(&mut ev2, 2), 0);
        assert_eq!((s.hipEventSynchronize)(ev), 0, "never recorded: complete");
        assert_eq!((s.hipEventQuery)(ev), 0);
        set_fault(s, "copy_delay_us", 100_000);
        let t = Instant::now();
        assert_eq!(
            (s.hipMemcpyHtoDAsync)(d, src.as_ptr().cast_mut().cast(), 4096, st),
            0
        );
        assert_eq!((s.hipEventRecord)(ev, st), 0);
        assert_eq!((s.hipEventQuery)(ev), 600);
        assert_eq!((s.hipEventSynchronize)(ev), 0);
        assert!(t.elapsed() >= Duration::from_millis(100));
        assert_eq!((s.hipEventQuery)(ev), 0);
        set_fault(s, "copy_delay_us", 0);
        assert_eq!((s.hipEventRecord)(ev2, ptr::null_mut()), 0);
        assert_eq!((s.hipEventSynchronize)(ev2), 0);
        assert_eq!((s.hipEventRecord)(ev, 0x999 as Stream), 400);
        assert_eq!((s.hipEventDestroy)(ev), 0);
        assert_eq!((s.hipEventDestroy)(ev), 400);
        assert_eq!((s.hipEventSynchronize)(ev), 400);
        assert_eq!((s.hipEventDestroy)(ev2), 0);
        assert_eq!((s.hipEventCreate)(ptr::null_mut()), 1);
        assert_eq!((s.hipStreamDestroy)(st), 0);
        assert_eq!((s.hipFree)(d), 0);
    }
}

#[test]
fn streams_remember_their_device_and_device_synchronize_waits() {
    let (s, _g) = sim();
    set_fault(s, "device_count", 2);
    // SAFETY: valid handles and buffers.
    unsafe {
        assert_eq!((s.hipSetDevice)(1), 0);
        let mut st = ptr::null_mut();
        assert_eq!((s.hipStreamCreateWithFlags)(&mut st, 1), 0);
        assert_eq!((s.hipStreamCreateWithFlags)(&mut st, 7), 1);
        let st1 = st;
        let d = dmalloc(s, 4096);
        assert_eq!((s.hipSetDevice)(0), 0);
        let mut dev = -1;
        assert_eq!((s.hipStreamGetDevice)(st1, &mut dev), 0);
        assert_eq!(dev, 1);
        assert_eq!((s.hipStreamGetDevice)(ptr::null_mut(), &mut dev), 0);
        assert_eq!(dev, 0);

        let src = [3u8; 4096];
        set_fault(s, "copy_delay_us", 30_000);
        let t = Instant::now();
        assert_eq!(
            (s.hipMemcpyHtoDAsync)(d, src.as_ptr().cast_mut().cast(), 4096, st1),
            0
        );
        assert_eq!((s.hipSetDevice)(1), 0);
        assert_eq!((s.hipDeviceSynchronize)(), 0);
        assert!(t.elapsed() >= Duration::from_millis(30));
        assert_eq!((s.hipStreamQuery)(st1), 0);
        set_fault(s, "copy_delay_us", 0);
        assert_eq!((s.hipStreamDestroy)(st1), 0);
        assert_eq!((s.hipFree)(d), 0);
        assert_eq!((s.hipSetDevice)(0), 0);
    }
}

#[test]
fn many_streams_in_parallel() {
    let (s, _g) = sim();
    let threads: Vec<_> = (0..6u8)
        .map(|t| {
            std::thread::spawn(move || {
                let st = new_stream(s);
                let len = 64 * 1024;
                let d = dmalloc(s, len);
                for i in 0..20u8 {
                    let src = pattern(len, t ^ i);
                    let mut dst = vec![0u8; len];
                    // SAFETY: buffers outlive the synchronisation.
                    unsafe {
                        assert_eq!((s.hipMemcpyAsync)(d, src.as_ptr().cast(), len, 1, st), 0);
                        assert_eq!(
                            (s.hipMemcpyAsync)(dst.as_mut_ptr().cast(), d, len, 2, st),
                            0
                        );
                        assert_eq!((s.hipStreamSynchronize)(st), 0);
                    }
                    assert_eq!(dst, src);
                }
                // SAFETY: plain calls.
                unsafe {
                    assert_eq!((s.hipStreamDestroy)(st), 0);
                    assert_eq!((s.hipFree)(d), 0);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// Releases a held stream's word when dropped: a failing test must not leave a stream held for
/// the binary's next tests.
struct Release(*mut c_void);

impl Drop for Release {
    fn drop(&mut self) {
        // SAFETY: pinned memory alive until the test freed it, after the release; the stream
        // polls it atomically.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(self.0.cast()) }
            .store(1, std::sync::atomic::Ordering::Release);
    }
}

// ROCm's hipStreamQuery(NULL) queues a marker on the NULL stream behind every busy blocking
// stream, and work queued afterwards on a blocking stream waits for that marker: asking about
// the NULL stream ties blocking streams together. A non-blocking stream is not tied; asking
// about a created stream queues nothing. (Each stream has a hardware queue of its own here:
// sharing one would tie them anyway.)
#[test]
fn asking_about_the_null_stream_ties_the_blocking_streams() {
    let (s, _g) = sim();
    let mut word = ptr::null_mut();
    // SAFETY: valid out-pointer; 2 = hipHostMallocMapped.
    assert_eq!(unsafe { (s.hipHostMalloc)(&mut word, 64, 2) }, 0);
    // SAFETY: 64 bytes of pinned memory the test owns.
    unsafe { word.cast::<u32>().write(0) };
    set_fault(s, "hip_hw_queues", 0);
    let (held, blocking) = (new_stream(s), new_stream(s));
    let mut free = ptr::null_mut();
    // SAFETY: valid out-pointer; 1 = hipStreamNonBlocking.
    assert_eq!(unsafe { (s.hipStreamCreateWithFlags)(&mut free, 1) }, 0);
    set_fault(s, "hip_hw_queues", 4);
    let release = Release(word);
    let d = dmalloc(s, 4096);
    let src = pattern(4096, 3);
    let query = |st: Stream| {
        // SAFETY: a live stream (or NULL).
        unsafe { (s.hipStreamQuery)(st) }
    };
    // SAFETY: live streams and a mapped word; then buffers that outlive the synchronisation.
    unsafe {
        // flags 1: wait until the word equals 1.
        assert_eq!((s.hipStreamWaitValue32)(held, word, 1, 1, u32::MAX), 0);
        // Asking about a created stream ties nothing: a copy on another blocking stream runs.
        assert_eq!(query(held), 600);
        assert_eq!(
            (s.hipMemcpyAsync)(d, src.as_ptr().cast(), 4096, 1, blocking),
            0
        );
        assert!(within(Duration::from_secs(10), || query(blocking) == 0));
        // Asking about the NULL stream: its marker waits for the held stream, and the next copy
        // on a blocking stream waits for the marker; one on a non-blocking stream does not.
        assert_eq!(query(ptr::null_mut()), 600);
        assert_eq!(
            (s.hipMemcpyAsync)(d, src.as_ptr().cast(), 4096, 1, blocking),
            0
        );
        assert_eq!((s.hipMemcpyAsync)(d, src.as_ptr().cast(), 4096, 1, free), 0);
        assert!(within(Duration::from_secs(10), || query(free) == 0));
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(query(blocking), 600, "tied to the held stream");
        drop(release);
        assert_eq!((s.hipStreamSynchronize)(blocking), 0);
        // Each question queues a marker of its own, which runs at once now.
        assert!(within(Duration::from_secs(10), || query(ptr::null_mut()) == 0));
        for st in [held, blocking, free] {
            assert_eq!((s.hipStreamDestroy)(st), 0);
        }
        assert_eq!((s.hipFree)(d), 0);
        assert_eq!((s.hipHostFree)(word), 0);
    }
}
