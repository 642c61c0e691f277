//! The per-thread default stream (handle 2: `CU_STREAM_PER_THREAD`, `hipStreamPerThread`): each
//! host thread has a stream of its own on each device, made on first use, blocking (it and the
//! legacy default stream wait for each other's earlier work), with an id of its own and a
//! hardware queue like a created stream's, destroyed when its thread exits (as a stream
//! destroyed with work pending: its work runs on, and then it is gone).
//!
//! Every use of handle 2 here is on a thread the test starts and joins, so that each test leaves
//! the `per_thread_streams_live` gauge and the stream workers as it found them (a thread's
//! per-thread streams are destroyed only when it exits; the test thread lives on until the
//! harness is done with it).

mod common;

use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use common::*;

/// `CU_STREAM_PER_THREAD`, `hipStreamPerThread`.
const PER_THREAD: Stream = 2 as Stream;
/// `CU_STREAM_LEGACY`, `hipStreamLegacy`.
const LEGACY: Stream = 1 as Stream;
/// The id of device 0's legacy default stream (device d's is d + 1).
const LEGACY_ID: u64 = 1;
/// The first id of a created (or per-thread) stream.
const FIRST_CREATED_ID: u64 = 17;
const NOT_READY: c_int = 600;
/// How long what must happen soon may take on a loaded machine.
const BOUND: Duration = Duration::from_secs(10);

fn settle() {
    std::thread::sleep(Duration::from_millis(50));
}

fn idle(s: &Sim, st: Stream) -> bool {
    // SAFETY: any handle may be asked about.
    unsafe { (s.hipStreamQuery)(st) == 0 }
}

fn sync(s: &Sim, st: Stream) -> c_int {
    // SAFETY: any handle may be synchronised.
    unsafe { (s.hipStreamSynchronize)(st) }
}

fn hip_id(s: &Sim, st: Stream) -> Result<u64, c_int> {
    let mut id = 0u64;
    // SAFETY: any handle may be asked about; a valid out-pointer.
    match unsafe { (s.hipStreamGetId)(st, &mut id) } {
        0 => Ok(id),
        rc => Err(rc),
    }
}

fn cu_id(s: &Sim, st: Stream) -> Result<u64, c_int> {
    let mut id = 0u64;
    // SAFETY: as above.
    match unsafe { (s.cuStreamGetId)(st, &mut id) } {
        0 => Ok(id),
        rc => Err(rc),
    }
}

fn queue_of(s: &Sim, st: Stream) -> i64 {
    // SAFETY: any handle may be asked about.
    unsafe { (s.hipsimStreamHwQueue)(st) }
}

fn live(s: &Sim) -> u64 {
    counter(s, "per_thread_streams_live")
}

/// Whether the per-thread stream gauge comes to `n` soon: an exited thread's idle stream goes
/// when its worker, told to end, gets there.
fn gauge_settles(s: &Sim, n: u64) -> bool {
    within(BOUND, || live(s) == n)
}

/// Makes device `dev`'s primary context current on the calling thread.
fn cuda(s: &Sim, dev: c_int) {
    let mut ctx = ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe {
        assert_eq!((s.cuInit)(0), 0);
        assert_eq!((s.cuDevicePrimaryCtxRetain)(&mut ctx, dev), 0);
        assert_eq!((s.cuCtxSetCurrent)(ctx), 0);
    }
}

fn hip_stream(s: &Sim, flags: u32) -> Stream {
    let mut st = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.hipStreamCreateWithFlags)(&mut st, flags) }, 0);
    st
}

/// Queues on `st` a copy of `src` to `dev` (device memory of at least its length).
fn copy_async(s: &Sim, dev: usize, src: &[u8], st: Stream) {
    // SAFETY: valid host and device memory; every caller synchronises (or joins the thread,
    // whose exit drains its per-thread stream) before `src` goes.
    assert_eq!(
        unsafe {
            (s.hipMemcpyHtoDAsync)(
                dev as *mut c_void,
                src.as_ptr().cast_mut().cast(),
                src.len(),
                st,
            )
        },
        0
    );
}

/// A word of pinned memory that streams wait on; its address crosses threads as a `usize`.
struct Word(usize);

impl Word {
    fn new(s: &Sim) -> Word {
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointer; 2 = hipHostMallocMapped.
        assert_eq!(unsafe { (s.hipHostMalloc)(&mut p, 64, 2) }, 0);
        let w = Word(p as usize);
        w.post(0);
        w
    }

    fn post(&self, v: u32) {
        // SAFETY: a live pinned word, polled atomically by the simulator.
        unsafe { AtomicU32::from_ptr(self.0 as *mut u32) }.store(v, Ordering::Release);
    }

    /// Queues on `st` (HIP face) a wait until the word is at least `v`.
    fn hold(&self, s: &Sim, st: Stream, v: u32) {
        // SAFETY: a live pinned word; flags 0 = greater or equal.
        assert_eq!(
            unsafe { (s.hipStreamWaitValue32)(st, self.0 as *mut c_void, v, 0, u32::MAX) },
            0
        );
    }

    /// Frees the word once nothing waits on it.
    fn free(self, s: &Sim) {
        // SAFETY: allocated in `new`; every stream that waited on it was synchronised.
        assert_eq!(unsafe { (s.hipHostFree)(self.0 as *mut c_void) }, 0);
    }
}

/// Releases every hold on the word when dropped (the holds wait for "at least"): a test that
/// fails while a stream is held (in a scope, whose threads are joined before the failure
/// propagates) lets the threads' exits, which drain their per-thread streams, and the tests
/// after it go on.
struct Release<'a>(&'a Word);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.post(1000);
    }
}

#[test]
fn each_thread_has_a_per_thread_stream_of_its_own() {
    let (s, _g) = sim();
    let w = Word::new(s);
    let dev = dmalloc(s, 8192) as usize;
    let src = pattern(4096, 21);
    let live0 = live(s);
    // A queue of its own for each stream: this test is about which stream handle 2 names (two
    // threads' streams sharing a hardware queue hold each other, as hw_queues.rs shows).
    set_fault(s, "hip_hw_queues", 0);
    set_fault(s, "cuda_hw_queues", 0);
    let (held_tx, held_rx) = mpsc::channel();
    let copied = AtomicBool::new(false);
    let hip_synced = AtomicBool::new(false);
    let cu_synced = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let _release = Release(&w);
        // Thread A holds its per-thread stream (through the CUDA face) and waits for it.
        let holder = sc.spawn(|| {
            cuda(s, 0);
            // SAFETY: a live pinned word; flags 0 = greater or equal.
            assert_eq!(
                unsafe { (s.cuStreamWaitValue32_v2)(PER_THREAD, w.0 as u64, 1, 0) },
                0
            );
            held_tx.send(cu_id(s, PER_THREAD)).unwrap();
            assert_eq!(
                // SAFETY: the per-thread handle is always valid with a context.
                unsafe { (s.cuStreamSynchronize)(PER_THREAD) },
                0,
                "released by the word"
            );
        });
        let a_id = held_rx.recv().unwrap().unwrap();

        // Thread B's per-thread stream is another stream: its copy runs, and synchronising
        // the handle from B waits for B's stream only.
        let (b_ran, b_id) = sc
            .spawn(|| {
                copy_async(s, dev, &src, PER_THREAD);
                let ran = within(BOUND, || idle(s, PER_THREAD));
                // Only once it ran: synchronising a stream held by A would hang the test.
                if ran {
                    assert_eq!(sync(s, PER_THREAD), 0);
                }
                (ran, hip_id(s, PER_THREAD).unwrap())
            })
            .join()
            .unwrap();
        assert!(b_ran, "A's held per-thread stream holds B's");
        assert_ne!(a_id, b_id);
        assert!(
            a_id >= FIRST_CREATED_ID && b_id >= FIRST_CREATED_ID,
            "not the legacy stream's id: {a_id}, {b_id}"
        );
        // B exited with nothing queued: its stream goes; A's lives.
        assert!(
            gauge_settles(s, live0 + 1),
            "{} per-thread streams",
            live(s)
        );

        // A synchronous copy (legacy default stream) and both device-wide synchronisations
        // wait for A's per-thread stream, from any thread.
        let waiters = [
            sc.spawn(|| {
                let bytes = [9u8; 16];
                // SAFETY: valid host and device memory.
                let rc = unsafe {
                    (s.hipMemcpy)((dev + 4096) as *mut c_void, bytes.as_ptr().cast(), 16, 1)
                };
                copied.store(true, Ordering::SeqCst);
                rc
            }),
            sc.spawn(|| {
                // SAFETY: a plain call.
                let rc = unsafe { (s.hipDeviceSynchronize)() };
                hip_synced.store(true, Ordering::SeqCst);
                rc
            }),
            sc.spawn(|| {
                cuda(s, 0);
                // SAFETY: a plain call with a current context.
                let rc = unsafe { (s.cuCtxSynchronize)() };
                cu_synced.store(true, Ordering::SeqCst);
                rc
            }),
        ];
        settle();
        assert!(
            !copied.load(Ordering::SeqCst),
            "a synchronous copy waits for every thread's per-thread stream"
        );
        assert!(
            !hip_synced.load(Ordering::SeqCst),
            "hipDeviceSynchronize waits for every thread's per-thread stream"
        );
        assert!(
            !cu_synced.load(Ordering::SeqCst),
            "cuCtxSynchronize waits for every thread's per-thread stream"
        );
        w.post(1);
        for t in waiters {
            assert_eq!(t.join().unwrap(), 0);
        }
        holder.join().unwrap();
    });
    set_fault(s, "hip_hw_queues", 4);
    set_fault(s, "cuda_hw_queues", 8);
    assert!(
        gauge_settles(s, live0),
        "both threads exited: their streams go ({} left, was {live0})",
        live(s)
    );
    assert_eq!(d2h(s, dev as *const c_void, 4096), src);
    assert_eq!(d2h(s, (dev + 4096) as *const c_void, 16), [9u8; 16]);
    // SAFETY: allocated above; nothing queued uses it any more.
    assert_eq!(unsafe { (s.hipFree)(dev as *mut c_void) }, 0);
    w.free(s);
}

#[test]
fn the_per_thread_stream_and_the_legacy_stream_wait_for_each_other() {
    let (s, _g) = sim();
    let w = Word::new(s);
    let dev = dmalloc(s, 4096) as usize;
    let src = pattern(4096, 33);
    let live0 = live(s);
    std::thread::scope(|sc| {
        let _release = Release(&w);
        sc.spawn(|| {
            // Legacy work queued after per-thread work waits for it.
            w.hold(s, PER_THREAD, 1);
            copy_async(s, dev, &src, ptr::null_mut());
            settle();
            assert!(
                !idle(s, ptr::null_mut()),
                "the legacy stream waits for the per-thread stream's earlier work"
            );
            w.post(1);
            assert_eq!(sync(s, ptr::null_mut()), 0);
            assert!(idle(s, PER_THREAD));

            // Per-thread work queued after legacy work waits for it (handle 1 names the
            // legacy stream too).
            w.hold(s, LEGACY, 2);
            copy_async(s, dev, &src, PER_THREAD);
            settle();
            assert!(
                !idle(s, PER_THREAD),
                "the per-thread stream waits for the legacy stream's earlier work"
            );
            w.post(2);
            assert_eq!(sync(s, PER_THREAD), 0);
            assert!(idle(s, LEGACY));

            // They are two streams: per-thread work queued before a held legacy stream's work
            // completes, and synchronising the per-thread stream does not wait for the legacy
            // stream ...
            copy_async(s, dev, &src, PER_THREAD);
            w.hold(s, ptr::null_mut(), 3);
            assert!(
                within(BOUND, || idle(s, PER_THREAD)),
                "the per-thread stream is not the held legacy stream"
            );
            assert_eq!(sync(s, PER_THREAD), 0);
            assert_eq!(
                // SAFETY: any handle may be asked about.
                unsafe { (s.hipStreamQuery)(ptr::null_mut()) },
                NOT_READY
            );
            w.post(3);
            assert_eq!(sync(s, ptr::null_mut()), 0);
            // ... nor the legacy stream, with nothing queued, for a held per-thread stream (asked
            // through handle 1: asked about NULL, ROCm queues a marker there, which waits for
            // every blocking stream, the held per-thread stream included).
            w.hold(s, PER_THREAD, 4);
            settle();
            assert!(
                idle(s, LEGACY),
                "the legacy stream is not the held per-thread stream"
            );
            assert!(!idle(s, ptr::null_mut()), "ROCm's marker waits for it");
            assert!(!idle(s, PER_THREAD));
            w.post(4);
            assert_eq!(sync(s, PER_THREAD), 0);
        })
        .join()
        .unwrap();
    });
    assert!(gauge_settles(s, live0), "{} per-thread streams", live(s));
    assert_eq!(d2h(s, dev as *const c_void, 4096), src);
    // SAFETY: allocated above; nothing queued uses it any more.
    assert_eq!(unsafe { (s.hipFree)(dev as *mut c_void) }, 0);
    w.free(s);
}

#[test]
fn per_thread_streams_have_ids_of_their_own() {
    let (s, _g) = sim();
    set_fault(s, "device_count", 2);
    let live0 = live(s);
    let (on0, on1) = std::thread::spawn(move || {
        let on0 = hip_id(s, PER_THREAD).unwrap();
        assert!(on0 >= FIRST_CREATED_ID, "not a legacy stream's id: {on0}");
        assert_eq!(hip_id(s, PER_THREAD), Ok(on0), "the same stream each time");
        assert_eq!(hip_id(s, ptr::null_mut()), Ok(LEGACY_ID));
        assert_eq!(hip_id(s, LEGACY), Ok(LEGACY_ID));
        // A stream of its own on each device.
        // SAFETY: device 1 exists.
        assert_eq!(unsafe { (s.hipSetDevice)(1) }, 0);
        let on1 = hip_id(s, PER_THREAD).unwrap();
        assert!(on1 > on0, "{on1} after {on0}");
        let mut dev = -1;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (s.hipStreamGetDevice)(PER_THREAD, &mut dev) }, 0);
        assert_eq!(dev, 1);
        // SAFETY: device 0 exists.
        assert_eq!(unsafe { (s.hipSetDevice)(0) }, 0);
        assert_eq!(hip_id(s, PER_THREAD), Ok(on0));
        // The CUDA face names the same stream of the context's device; it needs a context.
        // SAFETY: a plain call.
        assert_eq!(unsafe { (s.cuInit)(0) }, 0);
        assert_eq!(cu_id(s, PER_THREAD), Err(201));
        cuda(s, 1);
        assert_eq!(cu_id(s, PER_THREAD), Ok(on1));
        cuda(s, 0);
        assert_eq!(cu_id(s, PER_THREAD), Ok(on0));
        // Neither face destroys it.
        // SAFETY: default handles are refused before anything is looked up.
        unsafe {
            assert_eq!((s.hipStreamDestroy)(PER_THREAD), 400);
            assert_eq!((s.cuStreamDestroy_v2)(PER_THREAD), 400);
        }
        assert_eq!(hip_id(s, PER_THREAD), Ok(on0));
        assert_eq!(live(s), live0 + 2);
        (on0, on1)
    })
    .join()
    .unwrap();
    assert!(
        gauge_settles(s, live0),
        "the thread exited: both its streams go ({} left, was {live0})",
        live(s)
    );
    // Another thread, later: another stream, with a new id (ids are never reused).
    let other = std::thread::spawn(|| hip_id(s, PER_THREAD).unwrap())
        .join()
        .unwrap();
    assert!(other > on1, "{other} after {on0} and {on1}");
    assert!(gauge_settles(s, live0), "{} per-thread streams", live(s));
    set_fault(s, "device_count", 1);
}

#[test]
fn an_exited_thread_s_per_thread_stream_drains_and_then_is_gone() {
    let (s, _g) = sim();
    let w = Word::new(s);
    let dev = dmalloc(s, 4096) as usize;
    let src = pattern(4096, 45);
    let live0 = live(s);
    let joined = AtomicBool::new(false);
    let synced = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let _release = Release(&w);
        // The thread leaves a copy queued behind a hold on its per-thread stream and exits.
        let t = sc.spawn(|| {
            w.hold(s, PER_THREAD, 1);
            copy_async(s, dev, &src, PER_THREAD);
        });
        sc.spawn(|| {
            t.join().unwrap();
            joined.store(true, Ordering::SeqCst);
        });
        assert!(
            within(BOUND, || joined.load(Ordering::SeqCst)),
            "the thread's exit does not wait for its held stream"
        );
        assert_eq!(
            live(s),
            live0 + 1,
            "the exited thread's stream is there until it drained"
        );
        // A device-wide synchronisation still waits for it.
        let syncer = sc.spawn(|| {
            // SAFETY: a plain call.
            let rc = unsafe { (s.hipDeviceSynchronize)() };
            synced.store(true, Ordering::SeqCst);
            rc
        });
        settle();
        assert!(
            !synced.load(Ordering::SeqCst),
            "hipDeviceSynchronize waits for an exited thread's stream that has work left"
        );
        w.post(1);
        assert_eq!(syncer.join().unwrap(), 0);
    });
    // Drained: the worker ends and takes the stream with it (the gauge falls as the worker
    // leaves its loop, the last thing it does).
    assert!(
        gauge_settles(s, live0),
        "gone once drained: {} per-thread streams, was {live0}",
        live(s)
    );
    assert_eq!(
        d2h(s, dev as *const c_void, 4096),
        src,
        "the copy queued before the thread exited ran"
    );
    // SAFETY: allocated above; nothing queued uses it any more.
    assert_eq!(unsafe { (s.hipFree)(dev as *mut c_void) }, 0);
    w.free(s);
}

#[test]
fn a_per_thread_stream_takes_a_hardware_queue_of_the_api_that_made_it() {
    run_child(
        "hw_queue_child",
        &[
            ("GPU_MAX_HW_QUEUES", "3"),
            ("CUDA_DEVICE_MAX_CONNECTIONS", "5"),
        ],
        "hw queue child ok",
    );
}

/// In a process of its own, so that creation ordinals start from the first stream.
#[test]
fn hw_queue_child() {
    if !in_child() {
        return;
    }
    let s = sim_raw();
    // The legacy stream is stream 0 of device 0; created stream 1 goes to queue 1 of 3.
    assert_eq!(queue_of(s, ptr::null_mut()), 0);
    let first = hip_stream(s, 1);
    assert_eq!(queue_of(s, first), 1);
    // Made by a HIP call: the device's stream 2, on queue 2 of HIP's 3.
    let hip_made = std::thread::spawn(|| {
        hip_id(s, PER_THREAD).unwrap();
        queue_of(s, PER_THREAD)
    })
    .join()
    .unwrap();
    assert_eq!(hip_made, 2);
    // Made by a CUDA call: stream 3, on queue 3 of CUDA's 5, kept when HIP asks later.
    let cuda_made = std::thread::spawn(|| {
        cuda(s, 0);
        cu_id(s, PER_THREAD).unwrap();
        queue_of(s, PER_THREAD)
    })
    .join()
    .unwrap();
    assert_eq!(cuda_made, 3);
    // The next created stream continues the count: stream 4, queue 4 mod 3.
    let next = hip_stream(s, 1);
    assert_eq!(queue_of(s, next), 1);
    for st in [first, next] {
        // SAFETY: live, idle streams.
        assert_eq!(unsafe { (s.hipStreamDestroy)(st) }, 0);
    }
    println!("hw queue child ok");
}
