//! Stream-ordered I/O on CUDA, through the staging kernel (`src/runtime/stage/stage.cu`, host side
//! in `src/engine/lend/stage.rs`), on hipsim's CUDA side (`HIPFILE_PLATFORM=nvidia`), which
//! runs the kernel's protocol on its stream threads with the same hazards: the kernel holds its
//! stream until the operation's last segment, and work queued after it waits.
//!
//! Results are exact: `*bytes_p`, file and device bytes (neighbours untouched), and hipsim's
//! counters, which say that the kernel (not the word-and-lanes path) moved the bytes.

mod common;

use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use common::async_ops::{read_async, write_async, Params, RawStream};
use common::cuda::cuda;
use common::*;

/// `hipFileInvalidValue`.
const INVALID_VALUE: isize = 5022;

type CuStream = *mut c_void;

/// hipsim's CUDA stream calls the tests make themselves.
struct Streams {
    create: unsafe extern "C" fn(*mut CuStream, c_uint) -> c_int,
    destroy: unsafe extern "C" fn(CuStream) -> c_int,
    synchronize: unsafe extern "C" fn(CuStream) -> c_int,
    wait_value32: unsafe extern "C" fn(CuStream, u64, u32, c_uint) -> c_int,
}

// SAFETY: plain function pointers into a thread-safe library.
unsafe impl Sync for Streams {}
// SAFETY: as above.
unsafe impl Send for Streams {}

fn streams() -> &'static Streams {
    static S: OnceLock<Streams> = OnceLock::new();
    S.get_or_init(|| {
        // SAFETY: our simulator; the symbols have these C signatures.
        let lib = unsafe { libloading::Library::new(hipsim_path()) }.unwrap();
        macro_rules! f {
            ($n:literal) => {
                // SAFETY: see above.
                *unsafe { lib.get(concat!($n, "\0").as_bytes()) }.unwrap()
            };
        }
        let s = Streams {
            create: f!("cuStreamCreate"),
            destroy: f!("cuStreamDestroy_v2"),
            synchronize: f!("cuStreamSynchronize"),
            wait_value32: f!("cuStreamWaitValue32_v2"),
        };
        std::mem::forget(lib);
        s
    })
}

/// An application stream made with `cuStreamCreate` (flags 0: blocking), destroyed on drop.
struct Stream(CuStream);

// SAFETY: a stream handle may be used from any thread.
unsafe impl Send for Stream {}

impl RawStream for Stream {
    fn raw(&self) -> *mut c_void {
        self.0
    }
}

impl Stream {
    fn new() -> Stream {
        let mut s = std::ptr::null_mut();
        // SAFETY: valid out-pointer; a context is current.
        assert_eq!(unsafe { (streams().create)(&mut s, 0) }, 0);
        Stream(s)
    }

    fn sync(&self) {
        // SAFETY: a live stream.
        assert_eq!(unsafe { (streams().synchronize)(self.0) }, 0);
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created by cuStreamCreate.
        unsafe { (streams().destroy)(self.0) };
    }
}

/// Launches of the staging kernel so far.
fn launches() -> u64 {
    sim().counter("stage_launches")
}

/// A zeroed word of mapped pinned memory (of the current context) that streams wait on until it
/// is released; it lives until the process ends.
#[derive(Clone, Copy)]
struct Word(*mut u32);

// SAFETY: the word is only read and written atomically, by the stream that waits and the test.
unsafe impl Send for Word {}
// SAFETY: as above.
unsafe impl Sync for Word {}

impl Word {
    fn new() -> Word {
        let mut p = std::ptr::null_mut();
        // SAFETY: valid out-pointer; CU_MEMHOSTALLOC_DEVICEMAP.
        assert_eq!(unsafe { (cuda().mem_host_alloc)(&mut p, 64, 0x2) }, 0);
        let word = p.cast::<u32>();
        // SAFETY: 64 bytes we own.
        unsafe { word.write(0) };
        Word(word)
    }

    /// Hold `stream` until the word is released (`cuStreamWaitValue32`, equal to 1).
    fn hold(self, stream: CuStream) {
        // SAFETY: a live stream (or a special handle) and a mapped word (hipsim: the same
        // address); 1 = equal.
        assert_eq!(
            unsafe { (streams().wait_value32)(stream, self.0 as u64, 1, 1) },
            0
        );
    }

    fn release(self) {
        // SAFETY: the word is alive until the process ends; streams poll it atomically.
        unsafe { AtomicU32::from_ptr(self.0) }.store(1, Ordering::Release);
    }
}

/// Waits until every operation of `ops` has its result, 5 s at most.
fn wait_for_results(ops: &[&Params]) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while ops.iter().any(|p| p.result() == 0) && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

// Reads and writes at the shapes of the flag matrix (zero offsets, file offset 1, buffer offset
// 1, both odd), across several segments (the default 16 MiB buffer makes 2 MiB segments), with
// no flags and with all FIXED flags: exact bytes, neighbours untouched, one launch per operation.
child_test!(
    staged_reads_and_writes_are_byte_exact,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        cuda().make_current();
        open_driver();
        let n = (5 << 20) + 13;
        let data = pattern(n, 1);
        let f = TestFile::rw("stage-exact", &data);
        let dev = cuda().alloc(n);
        let before = launches();
        let mut ops = 0;
        for flags in [0u32, 7] {
            let stream = Stream::new();
            assert_eq!(hipFileStreamRegister(stream.0, flags), OK);
            for (foff, boff, size) in [(0, 0, n - 1), (1, 0, n - 1), (0, 1, n - 1), (3, 5, n - 8)] {
                cuda().upload(dev, &vec![0xee; n]);
                let mut p = Params::new(size, foff as i64, boff as i64);
                assert_eq!(read_async(f.fh, dev, &mut p, &stream), OK);
                stream.sync();
                assert_eq!(p.result(), size as isize, "read {flags} {foff}/{boff}");
                let got = cuda().download(dev, n);
                assert_eq!(&got[boff..boff + size], &data[foff..foff + size]);
                assert!(got[..boff]
                    .iter()
                    .chain(&got[boff + size..])
                    .all(|&b| b == 0xee));

                let fresh = pattern(n, 50 + foff as u64);
                cuda().upload(dev, &fresh);
                let mut p = Params::new(size, foff as i64, boff as i64);
                assert_eq!(write_async(f.fh, dev, &mut p, &stream), OK);
                stream.sync();
                assert_eq!(p.result(), size as isize, "write {flags} {foff}/{boff}");
                let mut expect = data.clone();
                expect[foff..foff + size].copy_from_slice(&fresh[boff..boff + size]);
                assert_eq!(f.contents(), expect);
                std::fs::write(&f.path, &data).unwrap();
                ops += 2;
            }
            assert_eq!(hipFileStreamDeregister(stream.0), OK);
        }
        assert_eq!(launches() - before, ops);
    }
);

// The stages' slots are huge-page memory registered with the driver's device mapping (the
// kernel reads them over PCIe): registering a stream on an open driver makes its device's
// stages, and the registration grows by exactly their rings, eight 2 MiB slots with their
// 4 KiB of slack each per stage (HIPFILE_ASYNC_CONCURRENCY of them); they stay for the device's
// streams after the deregistration and go with the close.
child_test!(
    the_stage_slots_are_registered_memory,
    [
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPFILE_ASYNC_CONCURRENCY", "3")
    ],
    {
        cuda().make_current();
        open_driver();
        let registered = || sim().counter("registered_bytes_live");
        let before = registered();
        let stream = Stream::new();
        assert_eq!(hipFileStreamRegister(stream.0, 0), OK);
        assert_eq!(registered() - before, 3 * 8 * ((2 << 20) + 4096));
        assert_eq!(hipFileStreamDeregister(stream.0), OK);
        assert_eq!(registered() - before, 3 * 8 * ((2 << 20) + 4096));
        assert_eq!(hipFileDriverClose(), OK);
        assert_eq!(registered(), before);
    }
);

// A read past the end of the file returns the bytes up to it and leaves the rest of the buffer
// as it was, although the operation's segments were planned for the whole size.
child_test!(
    read_past_the_end_leaves_the_rest_untouched,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        cuda().make_current();
        open_driver();
        let n = (3 << 20) + 100;
        let data = pattern(n, 2);
        let f = TestFile::rw("stage-eof", &data);
        let len = 8 << 20;
        let dev = cuda().alloc(len);
        cuda().upload(dev, &vec![0x11; len]);
        let stream = Stream::new();
        let from = 1000;
        let mut p = Params::new(len - 7, from as i64, 7);
        assert_eq!(read_async(f.fh, dev, &mut p, &stream), OK);
        stream.sync();
        assert_eq!(p.result(), (n - from) as isize);
        let got = cuda().download(dev, len);
        assert_eq!(&got[7..7 + n - from], &data[from..]);
        assert!(got[..7]
            .iter()
            .chain(&got[7 + n - from..])
            .all(|&b| b == 0x11));
    }
);

// A write, a read of the same bytes, a second write and a read, queued back to back on one
// stream without a synchronisation: each read sees the write before it.
child_test!(
    operations_on_one_stream_see_each_other,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        cuda().make_current();
        open_driver();
        let n = (3 << 20) + 11;
        let f = TestFile::rw("stage-order", &vec![0u8; n]);
        let [a, b, c, d] = [0; 4].map(|_| cuda().alloc(n));
        let (first, second) = (pattern(n, 3), pattern(n, 4));
        cuda().upload(a, &first);
        cuda().upload(c, &second);
        let stream = Stream::new();
        let mut ps: Vec<Box<Params>> = (0..4).map(|_| Params::new(n, 0, 0)).collect();
        assert_eq!(write_async(f.fh, a, &mut ps[0], &stream), OK);
        assert_eq!(read_async(f.fh, b, &mut ps[1], &stream), OK);
        assert_eq!(write_async(f.fh, c, &mut ps[2], &stream), OK);
        assert_eq!(read_async(f.fh, d, &mut ps[3], &stream), OK);
        stream.sync();
        assert!(ps.iter().all(|p| p.result() == n as isize));
        assert_eq!(cuda().download(b, n), first);
        assert_eq!(cuda().download(d, n), second);
    }
);

// A stream paused (by a wait on a word the test owns) before the operation; the parameters
// change before the release: a smaller size and moved offsets are honoured; a size larger than
// at submission gives -hipFileInvalidValue and leaves the buffer untouched.
child_test!(
    parameters_changed_while_paused,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        cuda().make_current();
        open_driver();
        let n = 6 << 20;
        let data = pattern(n, 5);
        let f = TestFile::rw("stage-pause", &data);
        let dev = cuda().alloc(n);
        cuda().upload(dev, &vec![0x22; n]);
        let word = Word::new();
        let stream = Stream::new();
        word.hold(stream.0);
        let mut smaller = Params::new(4 << 20, 0, 0);
        let mut larger = Params::new(1 << 20, 0, 0);
        assert_eq!(read_async(f.fh, dev, &mut smaller, &stream), OK);
        assert_eq!(read_async(f.fh, dev, &mut larger, &stream), OK);
        // SAFETY: the library reads these when the operations start, after the release below.
        unsafe {
            std::ptr::write_volatile(&mut smaller.size, (1 << 20) + 3);
            std::ptr::write_volatile(&mut smaller.file_offset, 77);
            std::ptr::write_volatile(&mut smaller.buffer_offset, (2 << 20) + 1);
            std::ptr::write_volatile(&mut larger.size, (1 << 20) + 1);
        }
        word.release();
        stream.sync();
        assert_eq!(smaller.result(), (1 << 20) + 3);
        assert_eq!(larger.result(), -INVALID_VALUE);
        let got = cuda().download(dev, n);
        let at = (2 << 20) + 1;
        assert_eq!(&got[at..at + (1 << 20) + 3], &data[77..77 + (1 << 20) + 3]);
        assert!(got[..at]
            .iter()
            .chain(&got[at + (1 << 20) + 3..])
            .all(|&b| b == 0x22));
    }
);

// Eight threads, each with its own stream, each queueing 25 reads of odd sizes at odd offsets
// before synchronising: every byte checked. A small async buffer (two 64 KiB slots) makes the
// slots turn over many times per operation.
child_test!(
    eight_streams_from_eight_threads,
    [
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPFILE_ASYNC_BUFFER_SIZE", "131072")
    ],
    {
        cuda().make_current();
        open_driver();
        let n = 4 << 20;
        let data = std::sync::Arc::new(pattern(n, 6));
        let f = std::sync::Arc::new(TestFile::rw("stage-threads", &data));
        let threads: Vec<_> = (0..8)
            .map(|t: usize| {
                let (data, f) = (data.clone(), f.clone());
                let fh = f.fh as usize;
                std::thread::spawn(move || {
                    cuda().make_current();
                    let stream = Stream::new();
                    let sizes: Vec<usize> = (0..25).map(|i| (300 << 10) + i * 4099 + t).collect();
                    let bufs: Vec<*mut c_void> = sizes.iter().map(|&s| cuda().alloc(s)).collect();
                    let mut ps: Vec<Box<Params>> = sizes
                        .iter()
                        .enumerate()
                        .map(|(i, &s)| Params::new(s, (i * 7919 + t * 131) as i64, 0))
                        .collect();
                    for (p, &b) in ps.iter_mut().zip(&bufs) {
                        assert_eq!(read_async(fh as hipFileHandle_t, b, p, &stream), OK);
                    }
                    stream.sync();
                    for (i, (p, &b)) in ps.iter().zip(&bufs).enumerate() {
                        let off = i * 7919 + t * 131;
                        assert_eq!(p.result(), sizes[i] as isize);
                        assert_eq!(
                            cuda().download(b, sizes[i]),
                            &data[off..off + sizes[i]],
                            "thread {t} op {i}"
                        );
                    }
                    drop(stream);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
);

// Where the kernel cannot be loaded (hipsim's `no_kernels`), an operation runs at submission,
// after the stream's earlier work: its result is stored when the call returns, the bytes
// arrive, and no launch happens.
child_test!(
    without_the_kernel_operations_run_at_submission,
    [("HIPFILE_PLATFORM", "nvidia"), ("HIPSIM_NO_KERNELS", "1")],
    {
        cuda().make_current();
        open_driver();
        let n = (2 << 20) + 5;
        let data = pattern(n, 7);
        let f = TestFile::rw("stage-none", &data);
        let dev = cuda().alloc(n);
        let stream = Stream::new();
        let mut p = Params::new(n, 0, 0);
        assert_eq!(read_async(f.fh, dev, &mut p, &stream), OK);
        assert_eq!(p.result(), n as isize);
        assert_eq!(cuda().download(dev, n), data);
        assert_eq!(launches(), 0);
    }
);

// A kernel that faults part-way (hipsim's `stage_dies`) breaks the device's context, as
// CUDA_ERROR_ILLEGAL_ADDRESS does on a GPU: that kernel and every other kernel of the device
// stop where they are, work queued behind them never runs, and every later call that does work
// on the device fails with 700, again and again. The library must fail every operation and
// hang nowhere:
// - the operation whose kernel died: its worker notices the stream failed (it looks about
//   every 10 ms while it waits) and stores -hipFileHipDriverError;
// - the operation queued behind it on the same stream, and one on another stream whose kernel
//   never started: the watch asks about their streams and fails them the same way;
// - a synchronous read afterwards returns the CUDA error (-700), and nothing hangs;
// - deregistering the streams and closing the driver return.
child_test!(
    a_kernel_that_dies_fails_the_operation_instead_of_hanging,
    [
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPFILE_ASYNC_BUFFER_SIZE", "131072"),
        ("HIPSIM_STAGE_DIES", "2")
    ],
    {
        common::sync_io::watchdog(60);
        cuda().make_current();
        open_driver();
        let n = 1 << 20;
        let f = TestFile::rw("stage-dies", &pattern(n, 8));
        let dev = cuda().alloc(4 * n);
        let (word, never) = (Word::new(), Word::new());
        let (stream, other) = (Stream::new(), Stream::new());
        assert_eq!(hipFileStreamRegister(stream.0, 0), OK);
        // Both streams held by a wait on a word, so that every operation is queued before the
        // first kernel dies; `other`'s word is never released: its kernel never starts.
        word.hold(stream.0);
        never.hold(other.0);
        let started = std::time::Instant::now();
        let mut first = Params::new(n, 0, 0);
        let mut behind = Params::new(n, 0, n as i64);
        let mut beside = Params::new(n, 0, 2 * n as i64);
        assert_eq!(read_async(f.fh, dev, &mut first, &stream), OK);
        assert_eq!(read_async(f.fh, dev, &mut behind, &stream), OK);
        assert_eq!(read_async(f.fh, dev, &mut beside, &other), OK);
        // Only `stream` goes on; `other` stays held (its wait stops when the context breaks).
        word.release();
        // SAFETY: a live stream; CUDA_ERROR_ILLEGAL_ADDRESS is what the kernel left on it.
        assert_eq!(unsafe { (streams().synchronize)(stream.0) }, 700);
        // Submitted after the context broke: the launch itself fails.
        let mut late = Params::new(n, 0, 3 * n as i64);
        let refused = read_async(f.fh, dev, &mut late, &other);
        assert_eq!((refused.err, refused.hip_drv_err), (5011, 700));
        let ops: [&Params; 3] = [&first, &behind, &beside];
        wait_for_results(&ops);
        // -hipFileHipDriverError: the operation whose kernel died, the one behind it, and the
        // one on the other stream, whose kernels never started.
        let results = ops.map(|p| p.result());
        assert_eq!((results, late.result()), ([-5011; 3], 0));
        // SAFETY: live streams: the context's error, again.
        unsafe {
            assert_eq!((streams().synchronize)(stream.0), 700);
            assert_eq!((streams().synchronize)(other.0), 700);
        }
        // SAFETY: the file and the device memory are live; the CUDA error comes back negated.
        assert_eq!(unsafe { hipFileRead(f.fh, dev, 4096, 0, 0) }, -700);
        assert_eq!(hipFileStreamDeregister(stream.0), OK);
        assert_eq!(hipFileDriverClose(), OK);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
);

// The same fault on a second device, on its NULL stream: the watch must ask about device 1's
// NULL stream with device 1's context current. Asked from device 0, the NULL handle names
// device 0's idle NULL stream, and the operation behind the dead kernel would wait forever.
// Device 0 keeps working.
child_test!(
    a_fault_on_a_second_device_fails_its_null_stream_operations,
    [
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPFILE_ASYNC_BUFFER_SIZE", "131072"),
        ("HIPSIM_STAGE_DIES", "2"),
        ("HIPSIM_DEVICE_COUNT", "2")
    ],
    {
        common::sync_io::watchdog(60);
        let n = 1 << 20;
        let dev1 = cuda().alloc_on(1, 2 * n) as *mut c_void;
        cuda().make_current();
        open_driver();
        let data = pattern(n, 12);
        let f = TestFile::rw("stage-dies-1", &data);
        let dev0 = cuda().alloc(n);
        let null = Stream(std::ptr::null_mut());
        let (mut first, mut behind) = (Params::new(n, 0, 0), Params::new(n, 0, n as i64));
        let word = cuda().with_ctx(1, || {
            // Device 1's NULL stream, held.
            let word = Word::new();
            word.hold(null.0);
            assert_eq!(read_async(f.fh, dev1, &mut first, &null), OK);
            assert_eq!(read_async(f.fh, dev1, &mut behind, &null), OK);
            word
        });
        word.release();
        wait_for_results(&[&first, &behind]);
        assert_eq!((first.result(), behind.result()), (-5011, -5011));
        // Device 0's context is whole: a synchronous read there moves the bytes.
        // SAFETY: the file and device 0's memory are live.
        assert_eq!(unsafe { hipFileRead(f.fh, dev0, n, 0, 0) }, n as isize);
        assert_eq!(cuda().download(dev0, n), data);
        assert_eq!(hipFileDriverClose(), OK);
        std::mem::forget(null);
    }
);

// The same fault under operations on the per-thread default stream (CU_STREAM_PER_THREAD). The
// library's threads cannot ask about that stream (from them the handle names their own), but an
// error that breaks the context is the answer of every stream of the device, the NULL stream's
// included: the worker waiting for the dead kernel and the watch ask that one, and both
// operations fail instead of waiting forever.
child_test!(
    a_fault_fails_the_operations_on_the_per_thread_stream,
    [
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPFILE_ASYNC_BUFFER_SIZE", "131072"),
        ("HIPSIM_STAGE_DIES", "2")
    ],
    {
        common::sync_io::watchdog(60);
        cuda().make_current();
        open_driver();
        let n = 1 << 20;
        let f = TestFile::rw("stage-dies-pt", &pattern(n, 13));
        let dev = cuda().alloc(2 * n);
        let per_thread = Stream(2 as CuStream);
        let word = Word::new();
        word.hold(per_thread.0);
        let (mut first, mut behind) = (Params::new(n, 0, 0), Params::new(n, 0, n as i64));
        assert_eq!(read_async(f.fh, dev, &mut first, &per_thread), OK);
        assert_eq!(read_async(f.fh, dev, &mut behind, &per_thread), OK);
        word.release();
        wait_for_results(&[&first, &behind]);
        assert_eq!((first.result(), behind.result()), (-5011, -5011));
        assert_eq!(hipFileDriverClose(), OK);
        std::mem::forget(per_thread);
    }
);

// Submissions faster than the stream drains: with a launch queue of four items (hipsim's
// `launch_queue`; on a GPU `cuLaunchKernel` blocks the same way once the launch queue is full)
// the submitting thread waits inside the runtime, holding the stream's submission lock, until
// the stream drains. The stream drains only once the worker released the operation at its
// head, so the worker must never need that lock: forty operations from one thread complete,
// every byte in place. With the worker returning its event to the submission state before the
// release, the first blocked submission hung the stream for good (the watchdog fired).
child_test!(
    a_full_launch_queue_does_not_hang_the_stream,
    [("HIPFILE_PLATFORM", "nvidia"), ("HIPSIM_LAUNCH_QUEUE", "4")],
    {
        common::sync_io::watchdog(60);
        cuda().make_current();
        open_driver();
        const OPS: usize = 40;
        const LEN: usize = 4096 + 7;
        let data = pattern(OPS * LEN, 9);
        let f = TestFile::rw("stage-queue", &data);
        let dev = cuda().alloc(OPS * LEN);
        let stream = Stream::new();
        let mut ps: Vec<Box<Params>> = (0..OPS)
            .map(|i| Params::new(LEN, (i * LEN) as i64, (i * LEN) as i64))
            .collect();
        for p in &mut ps {
            assert_eq!(read_async(f.fh, dev, p, &stream), OK);
        }
        stream.sync();
        assert!(ps.iter().all(|p| p.result() == LEN as isize));
        assert_eq!(cuda().download(dev, OPS * LEN), data);
    }
);

/// `CU_STREAM_PER_THREAD`: the calling thread's own stream.
struct PerThread;

impl RawStream for PerThread {
    fn raw(&self) -> *mut c_void {
        2 as *mut c_void
    }
}

/// Releases a word when dropped: a failing test releases the hold it queued, so the thread
/// waiting for the held stream ends and the failure is reported.
struct Release(Word);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.release();
    }
}

// Operations on CU_STREAM_PER_THREAD from two threads: each is queued on its own thread's
// stream, so they do not wait for each other. Thread A holds its per-thread stream (a wait on a
// word) before its read; thread B's read on its own per-thread stream completes meanwhile, and
// A's once released. The library's workers never ask about handle 2 (from them it names their
// own streams), so neither operation is failed or finished early.
child_test!(
    reads_on_two_threads_per_thread_streams_are_independent,
    [("HIPFILE_PLATFORM", "nvidia")],
    {
        common::sync_io::watchdog(60);
        cuda().make_current();
        open_driver();
        let n = (3 << 20) + 5;
        let data = pattern(n, 12);
        let f = TestFile::rw("stage-per-thread", &data);
        let (fh, a_dev, b_dev) = (
            f.fh as usize,
            cuda().alloc(n) as usize,
            cuda().alloc(n) as usize,
        );
        cuda().upload(a_dev as *mut c_void, &vec![0x33; n]);
        cuda().upload(b_dev as *mut c_void, &vec![0x44; n]);
        let word = Word::new();
        let (held_tx, held_rx) = std::sync::mpsc::channel();
        std::thread::scope(|sc| {
            let _release = Release(word);
            let a = sc.spawn(|| {
                cuda().make_current();
                word.hold(PerThread.raw());
                let mut p = Params::new(n, 0, 0);
                assert_eq!(
                    read_async(
                        fh as hipFileHandle_t,
                        a_dev as *mut c_void,
                        &mut p,
                        &PerThread
                    ),
                    OK
                );
                held_tx.send(()).unwrap();
                // SAFETY: the per-thread stream; a context is current.
                assert_eq!(unsafe { (streams().synchronize)(PerThread.raw()) }, 0);
                p.result()
            });
            held_rx.recv().unwrap();
            let b = sc
                .spawn(|| {
                    cuda().make_current();
                    let mut p = Params::new(n - 1, 1, 0);
                    assert_eq!(
                        read_async(
                            fh as hipFileHandle_t,
                            b_dev as *mut c_void,
                            &mut p,
                            &PerThread
                        ),
                        OK
                    );
                    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
                    while p.result() != (n - 1) as isize && std::time::Instant::now() < end {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    // Only once it finished: synchronising a stream held by A would hang.
                    if p.result() == (n - 1) as isize {
                        // SAFETY: the per-thread stream; a context is current.
                        assert_eq!(unsafe { (streams().synchronize)(PerThread.raw()) }, 0);
                    }
                    p.result()
                })
                .join()
                .unwrap();
            assert_eq!(b, (n - 1) as isize, "B's read waited for A's held stream");
            word.release();
            assert_eq!(a.join().unwrap(), n as isize);
        });
        assert_eq!(cuda().download(a_dev as *const c_void, n), data);
        let got = cuda().download(b_dev as *const c_void, n);
        assert_eq!(&got[..n - 1], &data[1..]);
        assert_eq!(got[n - 1], 0x44);
    }
);
