//! The hazards of a real GPU's streams that the simulator keeps: the legacy default stream
//! synchronises with blocking streams (and synchronous copies wait for both), host functions of
//! every stream run on one runtime thread, a stream waits on a word of pinned memory, and a new
//! stream may get a destroyed stream's handle (its id tells them apart).
//! An event and its stream complete together: one fence, seen the same from the host.

mod common;

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use common::*;

fn stream_with_flags(s: &Sim, flags: u32) -> Stream {
    let mut st = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.hipStreamCreateWithFlags)(&mut st, flags) }, 0);
    st
}

/// A zeroed word of pinned memory.
fn word(s: &Sim) -> *mut u32 {
    let mut p = ptr::null_mut();
    // SAFETY: valid out-pointer; 2 = hipHostMallocMapped.
    assert_eq!(unsafe { (s.hipHostMalloc)(&mut p, 64, 2) }, 0);
    let w = p.cast::<u32>();
    // SAFETY: 64 bytes we own.
    unsafe { w.write(0) };
    w
}

fn set(w: *mut u32, v: u32) {
    // SAFETY: a live pinned word, polled atomically by the simulator.
    unsafe { AtomicU32::from_ptr(w) }.store(v, Ordering::Release);
}

fn idle(s: &Sim, st: Stream) -> bool {
    // SAFETY: a live stream.
    unsafe { (s.hipStreamQuery)(st) == 0 }
}

fn settle() {
    std::thread::sleep(Duration::from_millis(50));
}

#[test]
fn a_stream_waits_on_a_word_until_it_has_the_value() {
    let (s, _g) = sim();
    let st = stream_with_flags(s, 1);
    let w = word(s);
    for (flags, value, release, hold) in [(1, 7, 7, 6), (0, 5, 9, 4)] {
        // SAFETY: a live stream and word; flags 1 = equal, 0 = greater or equal.
        assert_eq!(
            unsafe { (s.hipStreamWaitValue32)(st, w.cast(), value, flags, u32::MAX) },
            0
        );
        set(w, hold);
        settle();
        assert!(!idle(s, st), "held while the word is {hold}");
        set(w, release);
        // SAFETY: a live stream.
        assert_eq!(unsafe { (s.hipStreamSynchronize)(st) }, 0);
        set(w, 0);
    }
    // The CUDA face: CU_STREAM_WAIT_VALUE_EQ.
    // SAFETY: flags 0; then a live stream and word.
    assert_eq!(unsafe { (s.cuInit)(0) }, 0);
    // SAFETY: as above.
    assert_eq!(unsafe { (s.cuStreamWaitValue32_v2)(st, w as u64, 3, 1) }, 0);
    settle();
    assert!(!idle(s, st));
    set(w, 3);
    // SAFETY: a live stream.
    assert_eq!(unsafe { (s.hipStreamSynchronize)(st) }, 0);
    // Pageable memory cannot be waited on; a fault says "not supported".
    let mut pageable = 0u32;
    // SAFETY: the simulator refuses the address before queueing anything.
    assert_eq!(
        unsafe { (s.hipStreamWaitValue32)(st, (&raw mut pageable).cast(), 1, 1, u32::MAX) },
        1
    );
    set_fault(s, "no_wait_value", 1);
    // SAFETY: as above.
    assert_eq!(
        unsafe { (s.hipStreamWaitValue32)(st, w.cast(), 1, 1, u32::MAX) },
        801
    );
    set_fault(s, "no_wait_value", 0);
    // SAFETY: allocated above; the stream is idle.
    unsafe {
        (s.hipHostFree)(w.cast());
        (s.hipStreamDestroy)(st);
    }
}

#[test]
fn the_legacy_default_stream_and_blocking_streams_wait_for_each_other() {
    let (s, _g) = sim();
    // Hardware queues of their own: a stream sharing the default stream's queue would wait for
    // it whatever its flags (which stream shares it depends on the streams the binary's tests
    // made before).
    set_fault(s, "hip_hw_queues", 0);
    let blocking = stream_with_flags(s, 0);
    let non_blocking = stream_with_flags(s, 1);
    set_fault(s, "hip_hw_queues", 4);
    let w = word(s);
    let dev = dmalloc(s, 4096);
    // Hold the NULL stream: later work on a blocking stream waits for it, a non-blocking
    // stream's does not.
    // SAFETY: NULL is the default stream; the word is pinned.
    assert_eq!(
        unsafe { (s.hipStreamWaitValue32)(ptr::null_mut(), w.cast(), 1, 1, u32::MAX) },
        0
    );
    let src = pattern(4096, 3);
    for st in [blocking, non_blocking] {
        // SAFETY: valid host and device memory; the host memory outlives the synchronisation.
        assert_eq!(
            unsafe { (s.hipMemcpyHtoDAsync)(dev, src.as_ptr() as *mut c_void, 4096, st) },
            0
        );
    }
    // The non-blocking stream's copy runs soon (polled, so a loaded machine does not fail it);
    // the blocking stream's, held behind the default stream, must not have run by then.
    assert!(
        within(Duration::from_secs(10), || idle(s, non_blocking)),
        "a non-blocking stream is independent"
    );
    assert!(
        !idle(s, blocking),
        "a blocking stream waits for the default stream"
    );
    set(w, 1);
    // SAFETY: a live stream.
    assert_eq!(unsafe { (s.hipStreamSynchronize)(blocking) }, 0);
    set(w, 0);
    // Hold a blocking stream: work queued on the NULL stream after it waits, and a synchronous
    // copy (which runs on the NULL stream) does not return until it is released.
    // SAFETY: as above.
    assert_eq!(
        unsafe { (s.hipStreamWaitValue32)(blocking, w.cast(), 1, 1, u32::MAX) },
        0
    );
    let copied = std::sync::Arc::new(AtomicBool::new(false));
    let c = copied.clone();
    let dev_addr = dev as usize;
    let t = std::thread::spawn(move || {
        let s = sim_raw();
        let host = [0u8; 16];
        // SAFETY: valid host and device memory.
        assert_eq!(
            unsafe { (s.hipMemcpy)(dev_addr as *mut c_void, host.as_ptr().cast(), 16, 1) },
            0
        );
        c.store(true, Ordering::SeqCst);
    });
    settle();
    assert!(
        !copied.load(Ordering::SeqCst),
        "the synchronous copy waits for the blocking stream"
    );
    set(w, 1);
    t.join().unwrap();
    assert!(copied.load(Ordering::SeqCst));
    // SAFETY: the streams are idle; allocated above.
    unsafe {
        (s.hipStreamSynchronize)(ptr::null_mut());
        (s.hipHostFree)(w.cast());
        (s.hipFree)(dev);
        (s.hipStreamDestroy)(blocking);
        (s.hipStreamDestroy)(non_blocking);
    }
}

static RELEASED: AtomicBool = AtomicBool::new(false);
static SECOND_RAN: AtomicBool = AtomicBool::new(false);

unsafe extern "C" fn block(_: *mut c_void) {
    while !RELEASED.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

unsafe extern "C" fn mark(_: *mut c_void) {
    SECOND_RAN.store(true, Ordering::Release);
}

#[test]
fn host_functions_of_all_streams_run_on_one_thread() {
    let (s, _g) = sim();
    let (a, b) = (stream_with_flags(s, 1), stream_with_flags(s, 1));
    // SAFETY: plain functions without data.
    unsafe {
        assert_eq!((s.hipLaunchHostFunc)(a, Some(block), ptr::null_mut()), 0);
        settle();
        assert_eq!((s.hipLaunchHostFunc)(b, Some(mark), ptr::null_mut()), 0);
    }
    settle();
    assert!(
        !SECOND_RAN.load(Ordering::Acquire),
        "another stream's host function waits for the blocked callback thread"
    );
    RELEASED.store(true, Ordering::Release);
    // SAFETY: live streams.
    unsafe {
        assert_eq!((s.hipStreamSynchronize)(b), 0);
        assert_eq!((s.hipStreamSynchronize)(a), 0);
    }
    assert!(SECOND_RAN.load(Ordering::Acquire));
    // SAFETY: idle streams.
    unsafe {
        (s.hipStreamDestroy)(a);
        (s.hipStreamDestroy)(b);
    }
}

fn hip_id(s: &Sim, st: Stream) -> Result<u64, i32> {
    let mut id = 0u64;
    // SAFETY: any handle may be asked about; a valid out-pointer.
    match unsafe { (s.hipStreamGetId)(st, &mut id) } {
        0 => Ok(id),
        rc => Err(rc),
    }
}

fn cu_id(s: &Sim, st: Stream) -> Result<u64, i32> {
    let mut id = 0u64;
    // SAFETY: as above.
    match unsafe { (s.cuStreamGetId)(st, &mut id) } {
        0 => Ok(id),
        rc => Err(rc),
    }
}

#[test]
fn a_new_stream_may_get_a_destroyed_stream_s_handle_but_never_its_id() {
    let (s, _g) = sim();
    let mut seen = Vec::new();
    let mut previous: Option<Stream> = None;
    for round in 0..8 {
        let st = stream_with_flags(s, round % 2);
        if let Some(old) = previous {
            assert_eq!(
                st, old,
                "round {round}: the destroyed stream's handle is given again"
            );
        }
        let id = hip_id(s, st).unwrap();
        assert!(!seen.contains(&id), "round {round}: id {id} given twice");
        seen.push(id);
        // SAFETY: a live, idle stream.
        assert_eq!(unsafe { (s.hipStreamDestroy)(st) }, 0);
        // Destroyed, and not yet handed out again: the handle is unknown.
        assert_eq!(hip_id(s, st), Err(400), "round {round}");
        previous = Some(st);
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "ids grow: {seen:?}");
    // The handle destroyed last is given first.
    let (a, b) = (stream_with_flags(s, 1), stream_with_flags(s, 1));
    // SAFETY: live, idle streams.
    unsafe {
        assert_eq!((s.hipStreamDestroy)(a), 0);
        assert_eq!((s.hipStreamDestroy)(b), 0);
    }
    let (c, d) = (stream_with_flags(s, 1), stream_with_flags(s, 1));
    assert_eq!((c, d), (b, a));
    // SAFETY: live, idle streams.
    unsafe {
        assert_eq!((s.hipStreamDestroy)(c), 0);
        assert_eq!((s.hipStreamDestroy)(d), 0);
    }
    // A NULL out-pointer is refused first, whatever the handle.
    // SAFETY: the simulator checks the pointer before using it.
    unsafe {
        assert_eq!((s.hipStreamGetId)(ptr::null_mut(), ptr::null_mut()), 1);
        assert_eq!((s.hipStreamGetId)(0x1234 as Stream, ptr::null_mut()), 1);
    }
    assert_eq!(hip_id(s, 0x1234 as Stream), Err(400));
}

#[test]
fn the_default_stream_has_a_fixed_id_and_both_faces_agree() {
    let (s, _g) = sim();
    set_fault(s, "device_count", 2);
    // NULL and legacy (1) name the legacy default stream of HIP's current device (the
    // per-thread handle names the thread's own stream: per_thread_streams.rs).
    for handle in [0usize, 1] {
        assert_eq!(hip_id(s, handle as Stream), Ok(1), "handle {handle}");
    }
    // SAFETY: device 1 exists.
    assert_eq!(unsafe { (s.hipSetDevice)(1) }, 0);
    assert_eq!(hip_id(s, ptr::null_mut()), Ok(2));
    let on_one = stream_with_flags(s, 1);
    assert!(hip_id(s, on_one).unwrap() >= 17);
    // SAFETY: device 0 exists.
    assert_eq!(unsafe { (s.hipSetDevice)(0) }, 0);

    // SAFETY: plain calls with valid out-pointers.
    unsafe {
        assert_eq!((s.cuInit)(0), 0);
        assert_eq!((s.cuCtxSetCurrent)(ptr::null_mut()), 0);
    }
    assert_eq!(
        cu_id(s, on_one),
        hip_id(s, on_one),
        "a created stream needs no context"
    );
    assert_eq!(
        cu_id(s, ptr::null_mut()),
        Err(201),
        "the NULL stream needs a context"
    );
    let mut ctx = ptr::null_mut();
    // SAFETY: valid out-pointer; device 1 exists.
    unsafe {
        assert_eq!((s.cuDevicePrimaryCtxRetain)(&mut ctx, 1), 0);
        assert_eq!((s.cuCtxSetCurrent)(ctx), 0);
    }
    for handle in [0usize, 1] {
        assert_eq!(cu_id(s, handle as Stream), Ok(2), "handle {handle}");
    }
    let mut cu = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.cuStreamCreate)(&mut cu, 1) }, 0);
    let id = cu_id(s, cu).unwrap();
    assert!(id > hip_id(s, on_one).unwrap());
    assert_eq!(hip_id(s, cu), Ok(id));
    // SAFETY: live streams; then a NULL out-pointer, refused before the handle is looked at.
    unsafe {
        assert_eq!((s.cuStreamDestroy_v2)(cu), 0);
        assert_eq!((s.hipStreamDestroy)(on_one), 0);
        assert_eq!((s.cuStreamGetId)(ptr::null_mut(), ptr::null_mut()), 1);
        assert_eq!((s.cuCtxSetCurrent)(ptr::null_mut()), 0);
    }
    assert_eq!(cu_id(s, cu), Err(400));
    set_fault(s, "device_count", 1);
}

#[test]
fn created_streams_are_numbered_from_17() {
    run_child("ids_child", &[], "ids child ok");
}

#[test]
fn ids_child() {
    if !in_child() {
        return;
    }
    let s = sim_raw();
    let (a, b) = (stream_with_flags(s, 0), stream_with_flags(s, 1));
    assert_eq!((hip_id(s, a), hip_id(s, b)), (Ok(17), Ok(18)));
    // SAFETY: live, idle streams.
    unsafe {
        assert_eq!((s.hipStreamDestroy)(a), 0);
    }
    let c = stream_with_flags(s, 0);
    assert_eq!(hip_id(s, c), Ok(19));
    // SAFETY: live, idle streams.
    unsafe {
        assert_eq!((s.hipStreamDestroy)(b), 0);
        assert_eq!((s.hipStreamDestroy)(c), 0);
    }
    println!("ids child ok");
}

#[test]
fn an_event_and_its_stream_complete_together() {
    // On a GPU the event's marker and the stream's progress are one fence: a host that saw the
    // last recorded event complete finds the stream idle, and a host that saw the stream idle
    // finds the event complete. The stream is held on a word, so the marker runs when released;
    // threads that keep the cores busy make the worker lose its core between the two, which is
    // when a simulator that completes them apart is caught.
    let (s, _g) = sim();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let burners: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let st = stream_with_flags(s, 1);
    let w = word(s);
    let mut ev = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.hipEventCreate)(&mut ev) }, 0);
    for round in 0..2000u32 {
        // SAFETY: a live stream, word and event; flags 1 = equal.
        unsafe {
            assert_eq!(
                (s.hipStreamWaitValue32)(st, w.cast(), round + 1, 1, u32::MAX),
                0
            );
            assert_eq!((s.hipEventRecord)(ev, st), 0);
        }
        set(w, round + 1);
        if round % 2 == 0 {
            // SAFETY: a live event.
            assert_eq!(unsafe { (s.hipEventSynchronize)(ev) }, 0);
            assert!(
                idle(s, st),
                "round {round}: the event completed, the stream is busy"
            );
        } else {
            // SAFETY: a live stream.
            assert_eq!(unsafe { (s.hipStreamSynchronize)(st) }, 0);
            // SAFETY: a live event.
            assert_eq!(
                unsafe { (s.hipEventQuery)(ev) },
                0,
                "round {round}: the stream is idle, the event not complete"
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    for b in burners {
        b.join().unwrap();
    }
}
