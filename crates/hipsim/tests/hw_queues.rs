//! Hardware queues: a device runs its streams on a few in-order queues (streams round-robin in
//! creation order, `GPU_MAX_HW_QUEUES` / `CUDA_DEVICE_MAX_CONNECTIONS`), and an item waits for
//! every item submitted earlier to its queue by any stream. The hazard this reproduces: a stream
//! held on a word hangs the GPU once the copy that would release it is queued on another stream
//! that shares the held stream's queue; a hold released by host work alone never does.

mod common;

use std::ffi::c_void;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;

/// Streams of the hazard tests: many more than any number of queues tried.
const STREAMS: usize = 64;
/// Bytes each operation of the hazard tests moves.
const OP_BYTES: usize = 64 << 10;
/// How long a pattern may take before it counts as hung.
const BOUND: Duration = Duration::from_secs(2);

fn hip_stream(s: &Sim, flags: u32) -> Stream {
    let mut st = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.hipStreamCreateWithFlags)(&mut st, flags) }, 0);
    st
}

fn queue_of(s: &Sim, st: Stream) -> i64 {
    // SAFETY: any handle may be asked about.
    unsafe { (s.hipsimStreamHwQueue)(st) }
}

fn idle(s: &Sim, st: Stream) -> bool {
    // SAFETY: a live stream.
    unsafe { (s.hipStreamQuery)(st) == 0 }
}

fn destroy(s: &Sim, st: Stream) {
    // SAFETY: a live stream whose work may still run (destroy drains it).
    assert_eq!(unsafe { (s.hipStreamDestroy)(st) }, 0);
}

/// Pinned, device-mapped host memory.
fn pinned(s: &Sim, len: usize) -> *mut c_void {
    let mut p = ptr::null_mut();
    // SAFETY: valid out-pointer; 2 = hipHostMallocMapped.
    assert_eq!(unsafe { (s.hipHostMalloc)(&mut p, len, 2) }, 0);
    p
}

/// A zeroed word of pinned memory that the host posts and streams wait on.
struct Word(*mut u32);

// SAFETY: the word is pinned memory read and written only atomically.
unsafe impl Send for Word {}
// SAFETY: as above.
unsafe impl Sync for Word {}

impl Word {
    fn new(s: &Sim) -> Word {
        let w = Word(pinned(s, 4).cast());
        w.post(0);
        w
    }

    fn post(&self, v: u32) {
        // SAFETY: a live pinned word, polled atomically by the simulator.
        unsafe { AtomicU32::from_ptr(self.0) }.store(v, Ordering::Release);
    }

    /// Releases its holds and frees the word.
    fn free(self, s: &Sim) {
        self.post(1);
        // SAFETY: allocated in `new`; nothing waits on it any more.
        assert_eq!(unsafe { (s.hipHostFree)(self.0.cast()) }, 0);
        std::mem::forget(self);
    }

    /// Queues on `st` a wait until the word equals `v`.
    fn hold(&self, s: &Sim, st: Stream, v: u32) {
        // SAFETY: a live stream and pinned word; flags 1 = equal.
        assert_eq!(
            unsafe { (s.hipStreamWaitValue32)(st, self.0.cast(), v, 1, u32::MAX) },
            0
        );
    }
}

/// A test that fails with a hold in place releases it, so that the tests after it do not hang
/// (the word is then leaked).
impl Drop for Word {
    fn drop(&mut self) {
        self.post(1);
    }
}

fn settle() {
    std::thread::sleep(Duration::from_millis(50));
}

#[test]
fn streams_are_spread_round_robin_over_the_hardware_queues() {
    run_child(
        "mapping_child",
        &[
            ("GPU_MAX_HW_QUEUES", "3"),
            ("CUDA_DEVICE_MAX_CONNECTIONS", "5"),
            ("HIPSIM_DEVICE_COUNT", "2"),
        ],
        "mapping child ok",
    );
}

/// In a process of its own, so that creation ordinals start from the first stream.
#[test]
fn mapping_child() {
    if !in_child() {
        return;
    }
    let s = sim_raw();
    assert_eq!(fault(s, "hip_hw_queues"), 3);
    assert_eq!(fault(s, "cuda_hw_queues"), 5);
    // The default stream is stream 0 of its device: queue 0. Created streams k = 1, 2, ...
    assert_eq!(queue_of(s, ptr::null_mut()), 0);
    let hip: Vec<Stream> = (0..7).map(|i| hip_stream(s, i % 2)).collect();
    let queues: Vec<i64> = hip.iter().map(|&st| queue_of(s, st)).collect();
    assert_eq!(queues, [1, 2, 0, 1, 2, 0, 1]);
    // CUDA streams of the same device continue the count, over CUDA's number of queues.
    // SAFETY: plain calls with valid out-pointers.
    let cuda: Vec<Stream> = unsafe {
        assert_eq!((s.cuInit)(0), 0);
        let mut ctx = ptr::null_mut();
        assert_eq!((s.cuDevicePrimaryCtxRetain)(&mut ctx, 0), 0);
        assert_eq!((s.cuCtxSetCurrent)(ctx), 0);
        (0..3)
            .map(|_| {
                let mut st = ptr::null_mut();
                assert_eq!((s.cuStreamCreate)(&mut st, 1), 0);
                st
            })
            .collect()
    };
    let queues: Vec<i64> = cuda.iter().map(|&st| queue_of(s, st)).collect();
    assert_eq!(queues, [8 % 5, 9 % 5, 10 % 5]);
    // Each device counts its own streams.
    // SAFETY: device 1 exists.
    assert_eq!(unsafe { (s.hipSetDevice)(1) }, 0);
    assert_eq!(queue_of(s, ptr::null_mut()), 0);
    let other = hip_stream(s, 1);
    assert_eq!(queue_of(s, other), 1);
    // SAFETY: device 0 exists.
    assert_eq!(unsafe { (s.hipSetDevice)(0) }, 0);
    // The setting counts when a stream is created; 0 gives a stream a queue of its own.
    set_fault(s, "hip_hw_queues", 0);
    let own = hip_stream(s, 1);
    assert_eq!(queue_of(s, own), -2);
    set_fault(s, "hip_hw_queues", 2);
    let two = hip_stream(s, 1);
    assert_eq!(queue_of(s, two), 12 % 2);
    assert_eq!(queue_of(s, hip[0]), 1, "placed streams stay where they are");
    for st in hip.into_iter().chain(cuda).chain([other, own, two]) {
        destroy(s, st);
    }
    assert_eq!(queue_of(s, own), -1, "a destroyed stream is unknown");
    assert_eq!(queue_of(s, 0x1234 as Stream), -1);
    println!("mapping child ok");
}

/// Three consecutive streams over two queues: the first and the third share one.
fn three_streams_on_two_queues(s: &Sim) -> [Stream; 3] {
    let st = [hip_stream(s, 1), hip_stream(s, 1), hip_stream(s, 1)];
    let q: Vec<i64> = st.iter().map(|&x| queue_of(s, x)).collect();
    assert_eq!(q[0], q[2]);
    assert_eq!(q[1], (q[0] + 1) % 2);
    st
}

#[test]
fn an_item_waits_for_earlier_items_of_its_hardware_queue_only() {
    let (s, _g) = sim();
    set_fault(s, "hip_hw_queues", 2);
    let [held, other_queue, same_queue] = three_streams_on_two_queues(s);
    let w = Word::new(s);
    let dev = dmalloc(s, 4096);
    let src = pattern(4096, 9);
    let copy = |st: Stream| {
        // SAFETY: valid host and device memory; `src` outlives the synchronisations below.
        assert_eq!(
            unsafe { (s.hipMemcpyHtoDAsync)(dev, src.as_ptr().cast_mut().cast(), 4096, st) },
            0
        );
    };
    // Submitted before the hold: not held up by it.
    copy(same_queue);
    w.hold(s, held, 1);
    copy(same_queue);
    copy(other_queue);
    assert!(
        within(BOUND, || idle(s, other_queue)),
        "another queue's stream runs on"
    );
    assert!(
        !idle(s, same_queue),
        "an item submitted after the hold to the same queue waits for it"
    );
    assert!(!idle(s, held));
    w.post(1);
    // SAFETY: live streams.
    unsafe {
        assert_eq!((s.hipStreamSynchronize)(same_queue), 0);
        assert_eq!((s.hipStreamSynchronize)(held), 0);
    }
    assert_eq!(d2h(s, dev, 4096), src);

    // With a queue per stream, nothing is shared: the same submissions do not wait.
    set_fault(s, "hip_hw_queues", 0);
    let (free_held, free_other) = (hip_stream(s, 1), hip_stream(s, 1));
    w.post(0);
    w.hold(s, free_held, 1);
    copy(free_other);
    assert!(within(BOUND, || idle(s, free_other)));
    assert!(!idle(s, free_held));
    w.post(1);
    // SAFETY: a live stream.
    assert_eq!(unsafe { (s.hipStreamSynchronize)(free_held) }, 0);
    set_fault(s, "hip_hw_queues", 4);
    for st in [held, other_queue, same_queue, free_held, free_other] {
        destroy(s, st);
    }
    // SAFETY: allocated above; nothing queued uses it any more.
    assert_eq!(unsafe { (s.hipFree)(dev) }, 0);
    w.free(s);
}

#[test]
fn a_hold_blocks_the_streams_of_its_queue_also_through_the_default_stream() {
    let (s, _g) = sim();
    set_fault(s, "hip_hw_queues", 1);
    // One queue: the default stream and every created stream share it.
    let st = hip_stream(s, 1);
    assert_eq!(queue_of(s, st), 0);
    let w = Word::new(s);
    w.hold(s, ptr::null_mut(), 1);
    let ev = {
        let mut e = ptr::null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (s.hipEventCreate)(&mut e) }, 0);
        e
    };
    // SAFETY: live event and stream.
    assert_eq!(unsafe { (s.hipEventRecord)(ev, st) }, 0);
    settle();
    // SAFETY: a live event.
    assert_eq!(
        unsafe { (s.hipEventQuery)(ev) },
        600,
        "an event marker of a non-blocking stream waits behind the hold on its queue"
    );
    w.post(1);
    // SAFETY: a live event.
    assert_eq!(unsafe { (s.hipEventSynchronize)(ev) }, 0);
    // SAFETY: live handles.
    unsafe {
        assert_eq!((s.hipEventDestroy)(ev), 0);
        assert_eq!((s.hipStreamSynchronize)(ptr::null_mut()), 0);
    }
    w.free(s);
    destroy(s, st);
    set_fault(s, "hip_hw_queues", 4);
}

#[test]
fn cuda_streams_use_cuda_s_number_of_queues() {
    let (s, _g) = sim();
    set_fault(s, "hip_hw_queues", 2);
    set_fault(s, "cuda_hw_queues", 3);
    // SAFETY: plain calls with valid out-pointers.
    let cuda: Vec<Stream> = unsafe {
        assert_eq!((s.cuInit)(0), 0);
        let mut ctx = ptr::null_mut();
        assert_eq!((s.cuDevicePrimaryCtxRetain)(&mut ctx, 0), 0);
        assert_eq!((s.cuCtxSetCurrent)(ctx), 0);
        (0..4)
            .map(|_| {
                let mut st = ptr::null_mut();
                assert_eq!((s.cuStreamCreate)(&mut st, 1), 0);
                st
            })
            .collect()
    };
    let q: Vec<i64> = cuda.iter().map(|&st| queue_of(s, st)).collect();
    let first = q[0];
    assert_eq!(
        q,
        [first, (first + 1) % 3, (first + 2) % 3, first],
        "consecutive CUDA streams cycle over 3 queues"
    );
    for st in cuda {
        // SAFETY: a live stream.
        assert_eq!(unsafe { (s.cuStreamDestroy_v2)(st) }, 0);
    }
    set_fault(s, "hip_hw_queues", 4);
    set_fault(s, "cuda_hw_queues", 8);
}

/// Device buffers, pinned staging and a word for each of `STREAMS` operations.
struct Ops {
    app: Vec<Stream>,
    words: Vec<Arc<Word>>,
    staging: Vec<usize>,
    dev: Vec<usize>,
}

impl Ops {
    fn new(s: &Sim) -> Ops {
        Ops {
            // Application streams: plain (blocking) streams.
            app: (0..STREAMS).map(|_| hip_stream(s, 0)).collect(),
            words: (0..STREAMS).map(|_| Arc::new(Word::new(s))).collect(),
            staging: (0..STREAMS).map(|_| pinned(s, OP_BYTES) as usize).collect(),
            dev: (0..STREAMS)
                .map(|_| dmalloc(s, OP_BYTES) as usize)
                .collect(),
        }
    }

    fn release_all(&self) {
        for w in &self.words {
            w.post(1);
        }
    }

    fn free(self, s: &Sim) {
        for st in self.app {
            destroy(s, st);
        }
        // SAFETY: allocated in `new`; every stream that used them was destroyed (drained).
        unsafe {
            for p in self.staging {
                assert_eq!((s.hipHostFree)(p as *mut c_void), 0);
            }
            for p in self.dev {
                assert_eq!((s.hipFree)(p as *mut c_void), 0);
            }
        }
        for w in self.words {
            Arc::into_inner(w)
                .expect("no worker holds the word")
                .free(s);
        }
    }
}

/// The first design (today's HIP path): each application stream waits on its word; a host
/// worker copies the operation's bytes on the library's own stream, waits for that copy, and
/// only then posts the word. Returns how many words the workers posted within `BOUND`; the
/// test then releases every word itself so that everything drains.
fn word_design(s: &'static Sim, queues: i64) -> usize {
    set_fault(s, "hip_hw_queues", queues);
    let ops = Ops::new(s);
    // The library's own lane: a non-blocking stream created after the application's.
    let lane = hip_stream(s, 1) as usize;
    for (st, w) in ops.app.iter().zip(&ops.words) {
        w.hold(s, *st, 1);
    }
    let posted = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..STREAMS)
        .map(|i| {
            let (w, posted) = (Arc::clone(&ops.words[i]), Arc::clone(&posted));
            let (src, dst) = (ops.staging[i], ops.dev[i]);
            std::thread::spawn(move || {
                let s = sim_raw();
                let lane = lane as Stream;
                // SAFETY: pinned source and device destination of OP_BYTES; live stream.
                unsafe {
                    assert_eq!(
                        (s.hipMemcpyHtoDAsync)(
                            dst as *mut c_void,
                            src as *mut c_void,
                            OP_BYTES,
                            lane
                        ),
                        0
                    );
                    assert_eq!((s.hipStreamSynchronize)(lane), 0);
                }
                w.post(1);
                posted.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    within(BOUND, || posted.load(Ordering::SeqCst) == STREAMS);
    let done = posted.load(Ordering::SeqCst);
    // Release every hold ourselves: the copies then run and the workers end.
    ops.release_all();
    for t in workers {
        t.join().unwrap();
    }
    destroy(s, lane as Stream);
    ops.free(s);
    set_fault(s, "hip_hw_queues", 4);
    done
}

#[test]
fn the_word_design_hangs_once_streams_outnumber_hardware_queues() {
    let (s, _g) = sim();
    for queues in [1, 2, 4] {
        assert_eq!(
            word_design(s, queues),
            0,
            "{queues} queue(s), {STREAMS} streams: every queue has a held stream at its head, \
             so no copy on the lane runs and no word is posted"
        );
    }
    // The control: with a queue per stream the same program completes.
    assert_eq!(word_design(s, 0), STREAMS);
}

/// The host-post pattern: each application stream waits on its word and then copies the
/// staged bytes into device memory itself (a copy queued at submission); the word is posted
/// by a host worker after it `pread` the operation's bytes into the staging memory, with no GPU
/// work of any other stream needed first. Returns whether every stream finished within `BOUND`
/// (releasing everything if not, so that the process ends).
fn host_post(s: &'static Sim, queues: i64, file: &File, bytes: &[u8]) -> bool {
    set_fault(s, "hip_hw_queues", queues);
    let ops = Ops::new(s);
    for i in 0..STREAMS {
        ops.words[i].hold(s, ops.app[i], 1);
        // SAFETY: pinned source and device destination of OP_BYTES; a live stream.
        assert_eq!(
            unsafe {
                (s.hipMemcpyHtoDAsync)(
                    ops.dev[i] as *mut c_void,
                    ops.staging[i] as *mut c_void,
                    OP_BYTES,
                    ops.app[i],
                )
            },
            0
        );
    }
    std::thread::scope(|scope| {
        for i in 0..STREAMS {
            let (w, staging) = (&ops.words[i], ops.staging[i]);
            scope.spawn(move || {
                // SAFETY: OP_BYTES of pinned memory that only this worker writes, before it
                // posts the word the stream's copy waits for.
                let buf = unsafe { std::slice::from_raw_parts_mut(staging as *mut u8, OP_BYTES) };
                file.read_exact_at(buf, (i * OP_BYTES) as u64).unwrap();
                w.post(1);
            });
        }
    });
    let finished = within(BOUND, || ops.app.iter().all(|&st| idle(s, st)));
    if !finished {
        ops.release_all();
    }
    for i in 0..STREAMS {
        let got = d2h(s, ops.dev[i] as *const c_void, OP_BYTES);
        assert!(
            got == bytes[i * OP_BYTES..(i + 1) * OP_BYTES],
            "operation {i}: wrong bytes"
        );
    }
    ops.free(s);
    set_fault(s, "hip_hw_queues", 4);
    finished
}

#[test]
fn the_host_post_pattern_completes_on_any_number_of_hardware_queues() {
    let (s, _g) = sim();
    let path = std::env::temp_dir().join(format!("hipsim-hwq-{}", std::process::id()));
    // A different pattern for each operation, so that bytes landing in another operation's
    // buffer are seen.
    let bytes: Vec<u8> = (0..STREAMS)
        .flat_map(|i| pattern(OP_BYTES, i as u8))
        .collect();
    File::create(&path).unwrap().write_all(&bytes).unwrap();
    let file = File::open(&path).unwrap();
    for queues in [1, 2, 4] {
        assert!(
            host_post(s, queues, &file, &bytes),
            "{queues} queue(s), {STREAMS} streams: the holds wait only for host work"
        );
    }
    std::fs::remove_file(&path).unwrap();
}
