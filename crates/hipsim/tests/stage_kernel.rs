//! The CUDA face's kernels: loading hipfile's staging kernel from PTX and running it on a
//! stream, with a ring the test fills from another thread as hipfile's worker does.

mod common;

use std::ffi::{c_int, c_uint, c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::*;

const INVALID_VALUE: c_int = 1;
const INVALID_IMAGE: c_int = 200;
const INVALID_CONTEXT: c_int = 201;
const INVALID_HANDLE: c_int = 400;
const NOT_FOUND: c_int = 500;
const NOT_READY: c_int = 600;
const ILLEGAL_ADDRESS: c_int = 700;
const NOT_SUPPORTED: c_int = 801;

/// `CU_MEMHOSTALLOC_DEVICEMAP`.
const DEVICEMAP: c_uint = 2;
/// `CU_STREAM_NON_BLOCKING`.
const NON_BLOCKING: c_uint = 1;

fn stage_ptx() -> CString {
    CString::new(include_str!("../../../src/runtime/stage/stage.ptx")).unwrap()
}

/// Initialises CUDA and makes device `dev`'s primary context current on this thread.
fn cuda(s: &Sim, dev: c_int) {
    let mut ctx = ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe {
        assert_eq!((s.cuInit)(0), 0);
        assert_eq!((s.cuDevicePrimaryCtxRetain)(&mut ctx, dev), 0);
        assert_eq!((s.cuCtxSetCurrent)(ctx), 0);
    }
}

/// The staging kernel of a freshly loaded module.
fn stage_function(s: &Sim) -> *mut c_void {
    let ptx = stage_ptx();
    let (mut m, mut f) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: valid out-pointers and strings.
    unsafe {
        assert_eq!((s.cuModuleLoadData)(&mut m, ptx.as_ptr().cast()), 0);
        assert_eq!(
            (s.cuModuleGetFunction)(&mut f, m, cstr("hipfile_stage").as_ptr()),
            0
        );
    }
    f
}

fn stream(s: &Sim, flags: c_uint) -> Stream {
    let mut st = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.cuStreamCreate)(&mut st, flags) }, 0);
    st
}

fn destroy(s: &Sim, st: Stream) {
    // SAFETY: a stream the test created.
    assert_eq!(unsafe { (s.cuStreamDestroy_v2)(st) }, 0);
}

fn sync(s: &Sim, st: Stream) -> c_int {
    // SAFETY: a live stream handle.
    unsafe { (s.cuStreamSynchronize)(st) }
}

fn query(s: &Sim, st: Stream) -> c_int {
    // SAFETY: a live stream handle.
    unsafe { (s.cuStreamQuery)(st) }
}

/// Mapped pinned memory of `len` bytes filled with `fill`; returns its host address.
fn pinned(s: &Sim, len: usize, fill: u8) -> usize {
    let mut p = ptr::null_mut();
    // SAFETY: valid out-pointer; then `len` bytes the simulator just allocated.
    unsafe {
        assert_eq!((s.cuMemHostAlloc)(&mut p, len, DEVICEMAP), 0);
        ptr::write_bytes(p.cast::<u8>(), fill, len);
    }
    p as usize
}

fn free_pinned(s: &Sim, p: usize) {
    // SAFETY: pinned memory the test allocated.
    assert_eq!(unsafe { (s.cuMemFreeHost)(p as *mut c_void) }, 0);
}

/// Device memory of `len` bytes filled with 0xEE.
fn device(s: &Sim, len: usize) -> u64 {
    let mut d = 0u64;
    // SAFETY: valid out-pointer; then the allocation just made.
    unsafe {
        assert_eq!((s.cuMemAlloc_v2)(&mut d, len), 0);
        assert_eq!((s.cuMemsetD8_v2)(d, 0xEE, len), 0);
    }
    d
}

fn device_bytes(s: &Sim, d: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    // SAFETY: a host buffer of `len` bytes; the simulator validates `d`.
    assert_eq!(
        unsafe { (s.cuMemcpyDtoH_v2)(v.as_mut_ptr().cast(), d, len) },
        0
    );
    v
}

fn host_bytes(p: usize, len: usize) -> Vec<u8> {
    // SAFETY: `len` bytes of pinned memory the test allocated; the kernel that wrote them has
    // returned (the stream was synchronised).
    unsafe { std::slice::from_raw_parts(p as *const u8, len) }.to_vec()
}

fn write_host(p: usize, bytes: &[u8]) {
    // SAFETY: pinned memory the test allocated, at least `bytes.len()` long.
    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), p as *mut u8, bytes.len()) };
}

/// A `StageCtl` with a ring of `ring_len` descriptors in mapped pinned memory, zeroed.
struct Ctl {
    host: usize,
    ring_len: u32,
}

impl Ctl {
    fn new(s: &Sim, ring_len: u32) -> Ctl {
        Ctl {
            host: pinned(s, 256 + 32 * ring_len as usize, 0),
            ring_len,
        }
    }

    /// The device alias of the control block, as hipfile obtains it.
    fn device_address(&self, s: &Sim) -> u64 {
        let mut d = 0u64;
        // SAFETY: valid out-pointer; pinned memory the test allocated.
        assert_eq!(
            unsafe { (s.cuMemHostGetDevicePointer_v2)(&mut d, self.host as *mut c_void, 0) },
            0
        );
        d
    }

    fn word32(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: an aligned word of the control block, which outlives `self`'s uses; the
        // kernel reads and writes it from the stream's worker, hence the atomic view.
        unsafe { AtomicU32::from_ptr((self.host + offset) as *mut u32) }
    }

    fn word64(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: as in `word32`, for an 8-byte aligned field of a descriptor.
        unsafe { AtomicU64::from_ptr((self.host + offset) as *mut u64) }
    }

    fn done(&self, block: usize) -> u32 {
        self.word32(4 * block).load(Ordering::Acquire)
    }

    fn set_done(&self, block: usize, serial: u32) {
        self.word32(4 * block).store(serial, Ordering::Release);
    }

    fn all_done(&self) -> Vec<u32> {
        (0..32).map(|b| self.done(b)).collect()
    }

    /// Waits until every one of the first `blocks` blocks has finished `serial` (10 s at most).
    fn wait_done(&self, blocks: usize, serial: u32) {
        let start = Instant::now();
        while (0..blocks).any(|b| self.done(b) < serial) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "blocks never reached serial {serial}: {:?}",
                self.all_done()
            );
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Posts segment `serial` as hipfile's worker does: once its ring entry is free (every
    /// block finished the serial that used it before), the fields, then the serial (release).
    fn post(&self, blocks: usize, serial: u32, dst: u64, src: u64, len: u64, last: bool) {
        self.wait_done(blocks, serial.saturating_sub(self.ring_len));
        let e = 256 + 32 * (serial % self.ring_len) as usize;
        self.word64(e).store(dst, Ordering::Relaxed);
        self.word64(e + 8).store(src, Ordering::Relaxed);
        self.word64(e + 16).store(len, Ordering::Relaxed);
        self.word32(e + 28)
            .store(u32::from(last), Ordering::Relaxed);
        self.word32(e + 24).store(serial, Ordering::Release);
    }
}

/// Launches `f` (cooperatively when `coop`) with `grid` blocks of 1024 threads.
fn launch(
    s: &Sim,
    f: *mut c_void,
    grid: c_uint,
    st: Stream,
    ctl: u64,
    ring_len: u32,
    coop: bool,
) -> c_int {
    let (mut ctl, mut ring_len) = (ctl, ring_len);
    let mut params = [
        (&raw mut ctl).cast::<c_void>(),
        (&raw mut ring_len).cast::<c_void>(),
    ];
    // SAFETY: the two parameters of hipfile_stage, alive for the call (the launch copies them).
    unsafe {
        if coop {
            (s.cuLaunchCooperativeKernel)(f, grid, 1, 1, 1024, 1, 1, 0, st, params.as_mut_ptr())
        } else {
            (s.cuLaunchKernel)(
                f,
                grid,
                1,
                1,
                1024,
                1,
                1,
                0,
                st,
                params.as_mut_ptr(),
                ptr::null_mut(),
            )
        }
    }
}

fn settle() {
    std::thread::sleep(Duration::from_millis(50));
}

#[test]
fn a_module_loads_from_ptx_and_gives_the_stage_kernel() {
    let (s, _g) = sim();
    cuda(s, 0);
    let ptx = stage_ptx();
    let name = cstr("hipfile_stage");
    // SAFETY: valid out-pointers and strings; bad handles are refused before any use.
    unsafe {
        (s.hipsimResetCounters)();
        let mut m = ptr::null_mut();
        assert_eq!((s.cuModuleLoadData)(&mut m, ptx.as_ptr().cast()), 0);
        assert!(!m.is_null());
        let (mut f, mut again) = (ptr::null_mut(), ptr::null_mut());
        assert_eq!((s.cuModuleGetFunction)(&mut f, m, name.as_ptr()), 0);
        assert!(!f.is_null());
        assert_ne!(f, m);
        assert_eq!((s.cuModuleGetFunction)(&mut again, m, name.as_ptr()), 0);
        assert_eq!(again, f, "one function per module and name");

        let mut other = ptr::dangling_mut::<c_void>();
        assert_eq!(
            (s.cuModuleGetFunction)(&mut other, m, cstr("hipfile_stage2").as_ptr()),
            NOT_FOUND
        );
        assert_eq!(other, ptr::dangling_mut(), "untouched on failure");
        assert_eq!(
            (s.cuModuleGetFunction)(&mut other, m, ptr::null()),
            INVALID_VALUE
        );
        assert_eq!(
            (s.cuModuleGetFunction)(ptr::null_mut(), m, name.as_ptr()),
            INVALID_VALUE
        );
        assert_eq!(
            (s.cuModuleGetFunction)(&mut other, 0x1234 as *mut c_void, name.as_ptr()),
            INVALID_HANDLE
        );
        assert_eq!(
            (s.cuModuleGetFunction)(&mut other, f, name.as_ptr()),
            INVALID_HANDLE
        );

        // Images without the kernel, or no image.
        let mut m2 = ptr::dangling_mut::<c_void>();
        for text in [
            ".version 7.0\n.visible .entry hipfile_stage_v2(\n",
            "hipfile_stage",
            "",
        ] {
            let image = cstr(text);
            assert_eq!(
                (s.cuModuleLoadData)(&mut m2, image.as_ptr().cast()),
                INVALID_IMAGE
            );
        }
        // An ELF image (a cubin) is not PTX text.
        let elf = [0x7Fu8, b'E', b'L', b'F', 2, 1, 1, 0, 0];
        assert_eq!(
            (s.cuModuleLoadData)(&mut m2, elf.as_ptr().cast()),
            INVALID_IMAGE
        );
        assert_eq!(m2, ptr::dangling_mut(), "untouched on failure");
        assert_eq!((s.cuModuleLoadData)(&mut m2, ptr::null()), INVALID_VALUE);
        assert_eq!(
            (s.cuModuleLoadData)(ptr::null_mut(), ptx.as_ptr().cast()),
            INVALID_VALUE
        );

        // A thread without a context cannot load a module.
        let image = ptx.as_ptr() as usize;
        let rc = std::thread::spawn(move || {
            let mut m = ptr::null_mut();
            (s.cuModuleLoadData)(&mut m, image as *const c_void)
        })
        .join()
        .unwrap();
        assert_eq!(rc, INVALID_CONTEXT);

        // Unloading forgets the module and its function.
        assert_eq!((s.cuModuleUnload)(f), INVALID_HANDLE);
        assert_eq!((s.cuModuleUnload)(m), 0);
        assert_eq!((s.cuModuleUnload)(m), INVALID_HANDLE);
        assert_eq!(
            (s.cuModuleGetFunction)(&mut other, m, name.as_ptr()),
            INVALID_HANDLE
        );
        let ctl = Ctl::new(s, 4);
        assert_eq!(
            launch(s, f, 1, ptr::null_mut(), ctl.device_address(s), 4, false),
            INVALID_HANDLE
        );
        free_pinned(s, ctl.host);
    }
    assert_eq!(counter(s, "cuModuleLoadData"), 8);
    assert_eq!(counter(s, "cuModuleGetFunction"), 8);
    assert_eq!(counter(s, "cuModuleUnload"), 3);
    assert_eq!(counter(s, "stage_launches"), 0);
}

#[test]
fn the_stage_kernel_copies_the_segments_the_host_posts() {
    let (s, _g) = sim();
    cuda(s, 0);
    let f = stage_function(s);
    let st = stream(s, NON_BLOCKING);
    let ctl = Ctl::new(s, 4);
    let ctl_dev = ctl.device_address(s);
    assert_eq!(
        ctl_dev, ctl.host as u64,
        "a mapped allocation's device alias is its address"
    );
    let dev = device(s, 8192);
    let src = pinned(s, 8192, 0);
    let data = pattern(8192, 3);
    write_host(src, &data);
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };

    // Host to device: two blocks; the second segment at odd offsets, 16-byte congruent.
    assert_eq!(launch(s, f, 2, st, ctl_dev, 4, true), 0);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            ctl.post(2, 1, dev, src as u64, 1000, false);
            ctl.post(2, 2, dev + 4097, src as u64 + 2049, 3001, true);
        });
    });
    assert_eq!(sync(s, st), 0);
    let mut want = vec![0xEEu8; 8192];
    want[..1000].copy_from_slice(&data[..1000]);
    want[4097..7098].copy_from_slice(&data[2049..5050]);
    let mut done = vec![0u32; 32];
    done[..2].copy_from_slice(&[2, 2]);
    assert_eq!(ctl.all_done(), done);
    assert_eq!(counter(s, "stage_launches"), 1);
    assert_eq!(counter(s, "stage_segments"), 2);
    assert_eq!(counter(s, "stage_bytes"), 4001);
    assert_eq!(counter(s, "h2d_bytes"), 4001);
    assert_eq!(counter(s, "cuLaunchCooperativeKernel"), 1);
    assert_eq!(device_bytes(s, dev, 8192), want);

    // Device to host: the next launch starts after done[] (serial 3) and wraps the ring
    // (serial 5 reuses entry 1); a segment of zero bytes copies nothing, whatever its
    // addresses; the second segment is not 16-byte congruent.
    let out = pinned(s, 8192, 0x11);
    assert_eq!(launch(s, f, 2, st, ctl_dev, 4, false), 0);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            ctl.post(2, 3, out as u64, dev, 1000, false);
            ctl.post(2, 4, 0, 0, 0, false);
            ctl.post(2, 5, out as u64 + 1001, dev + 4097, 3001, true);
        });
    });
    assert_eq!(sync(s, st), 0);
    let mut want_out = vec![0x11u8; 8192];
    want_out[..1000].copy_from_slice(&want[..1000]);
    want_out[1001..4002].copy_from_slice(&want[4097..7098]);
    assert_eq!(host_bytes(out, 8192), want_out);
    done[..2].copy_from_slice(&[5, 5]);
    assert_eq!(ctl.all_done(), done);
    assert_eq!(counter(s, "stage_launches"), 2);
    assert_eq!(counter(s, "stage_segments"), 5);
    assert_eq!(counter(s, "stage_bytes"), 8002);
    assert_eq!(
        counter(s, "d2h_bytes"),
        8192 + 4001,
        "the check above, then the kernel"
    );
    assert_eq!(counter(s, "cuLaunchKernel"), 1);

    destroy(s, st);
    for p in [ctl.host, src, out] {
        free_pinned(s, p);
    }
    // SAFETY: device memory the test allocated.
    assert_eq!(unsafe { (s.cuMemFree_v2)(dev) }, 0);
}

static HOST_CALLS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn count_call(_: *mut c_void) {
    HOST_CALLS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn work_queued_after_the_kernel_waits_until_it_returns() {
    let (s, _g) = sim();
    cuda(s, 0);
    let f = stage_function(s);
    let dev = device(s, 4096);
    let src = pinned(s, 4096, 0x5A);
    let small = [1u8; 16];

    // A kernel held on a non-blocking stream does not hold a synchronous copy.
    let nb = stream(s, NON_BLOCKING);
    let a = Ctl::new(s, 2);
    assert_eq!(launch(s, f, 1, nb, a.device_address(s), 2, false), 0);
    settle();
    assert_eq!(query(s, nb), NOT_READY);
    // SAFETY: a host slice and device memory the test owns.
    assert_eq!(
        unsafe { (s.cuMemcpyHtoD_v2)(dev, small.as_ptr().cast(), 16) },
        0
    );
    a.post(1, 1, dev, src as u64, 64, true);
    assert_eq!(sync(s, nb), 0);
    assert_eq!(device_bytes(s, dev, 64), vec![0x5A; 64]);

    // On a blocking stream: a host function and an event queued after the kernel run only
    // when it returned, and a synchronous copy (legacy default stream) waits for it.
    let st = stream(s, 0);
    let b = Ctl::new(s, 2);
    let mut ev = ptr::null_mut();
    HOST_CALLS.store(0, Ordering::SeqCst);
    // SAFETY: valid out-pointer, live stream and event, a host function that ignores its data.
    unsafe {
        assert_eq!((s.cuEventCreate)(&mut ev, 0), 0);
        assert_eq!(launch(s, f, 1, st, b.device_address(s), 2, false), 0);
        assert_eq!(
            (s.cuLaunchHostFunc)(st, Some(count_call), ptr::null_mut()),
            0
        );
        assert_eq!((s.cuEventRecord)(ev, st), 0);
    }
    b.post(1, 1, dev, src as u64, 16, false);
    b.wait_done(1, 1);
    let copier = std::thread::spawn(move || {
        cuda(s, 0);
        let bytes = [7u8; 16];
        // SAFETY: a host array and device memory that outlive the call.
        unsafe { (s.cuMemcpyHtoD_v2)(dev + 1024, bytes.as_ptr().cast(), 16) }
    });
    settle();
    assert_eq!(HOST_CALLS.load(Ordering::SeqCst), 0);
    assert_eq!(query(s, st), NOT_READY);
    // SAFETY: a live event.
    assert_eq!(unsafe { (s.hipEventQuery)(ev) }, NOT_READY);
    assert!(
        !copier.is_finished(),
        "a synchronous copy waits for the blocking stream"
    );
    b.post(1, 2, 0, 0, 0, true);
    assert_eq!(sync(s, st), 0);
    assert_eq!(HOST_CALLS.load(Ordering::SeqCst), 1);
    // SAFETY: a live event.
    assert_eq!(unsafe { (s.hipEventQuery)(ev) }, 0);
    assert_eq!(copier.join().unwrap(), 0);
    assert_eq!(device_bytes(s, dev + 1024, 16), vec![7u8; 16]);

    // On the NULL stream (the legacy default stream): work queued afterwards on a blocking
    // stream waits for the kernel; the per-thread handle names the same default stream here.
    let c = Ctl::new(s, 2);
    assert_eq!(
        launch(s, f, 1, ptr::null_mut(), c.device_address(s), 2, true),
        0
    );
    // SAFETY: a host slice that outlives the synchronisation below, device memory, a live
    // stream.
    assert_eq!(
        unsafe { (s.cuMemcpyHtoDAsync_v2)(dev + 2048, small.as_ptr().cast(), 16, st) },
        0
    );
    settle();
    assert_eq!(query(s, st), NOT_READY);
    assert_eq!(query(s, ptr::null_mut()), NOT_READY);
    c.post(1, 1, 0, 0, 0, true);
    assert_eq!(sync(s, st), 0);
    assert_eq!(sync(s, ptr::null_mut()), 0);
    assert_eq!(device_bytes(s, dev + 2048, 16), vec![1u8; 16]);
    assert_eq!(
        launch(s, f, 1, 2 as Stream, c.device_address(s), 2, false),
        0
    );
    settle();
    assert_eq!(query(s, ptr::null_mut()), NOT_READY);
    c.post(1, 2, 0, 0, 0, true);
    assert_eq!(sync(s, 2 as Stream), 0);
    assert_eq!(c.done(0), 2);

    // SAFETY: a live event.
    assert_eq!(unsafe { (s.cuEventDestroy_v2)(ev) }, 0);
    destroy(s, nb);
    destroy(s, st);
    for p in [a.host, b.host, c.host, src] {
        free_pinned(s, p);
    }
    // SAFETY: device memory the test allocated.
    assert_eq!(unsafe { (s.cuMemFree_v2)(dev) }, 0);
}

#[test]
fn a_launch_with_bad_arguments_is_refused_with_the_exact_code() {
    let (s, _g) = sim();
    set_fault(s, "device_count", 2);
    cuda(s, 0);
    let f = stage_function(s);
    let st = stream(s, NON_BLOCKING);
    let ctl = Ctl::new(s, 4);
    let good = ctl.device_address(s);
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };

    let with = |grid: [c_uint; 3], block: [c_uint; 3], shared: c_uint, ctl: u64, ring_len: u32| {
        let (mut ctl, mut ring_len) = (ctl, ring_len);
        let mut params = [
            (&raw mut ctl).cast::<c_void>(),
            (&raw mut ring_len).cast::<c_void>(),
        ];
        let [gx, gy, gz] = grid;
        let [bx, by, bz] = block;
        // SAFETY: the two parameters, alive for the call.
        unsafe {
            let plain = (s.cuLaunchKernel)(
                f,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                shared,
                st,
                params.as_mut_ptr(),
                ptr::null_mut(),
            );
            let coop = (s.cuLaunchCooperativeKernel)(
                f,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                shared,
                st,
                params.as_mut_ptr(),
            );
            assert_eq!(plain, coop, "both launches check alike");
            plain
        }
    };
    let block = [1024, 1, 1];
    assert_eq!(with([0, 1, 1], block, 0, good, 4), INVALID_VALUE);
    assert_eq!(with([33, 1, 1], block, 0, good, 4), INVALID_VALUE);
    assert_eq!(with([2, 2, 1], block, 0, good, 4), INVALID_VALUE);
    assert_eq!(with([2, 1, 2], block, 0, good, 4), INVALID_VALUE);
    assert_eq!(with([2, 1, 0], block, 0, good, 4), INVALID_VALUE);
    assert_eq!(with([1, 1, 1], [0, 1, 1], 0, good, 4), INVALID_VALUE);
    assert_eq!(with([1, 1, 1], [1024, 2, 1], 0, good, 4), INVALID_VALUE);
    assert_eq!(with([1, 1, 1], [1, 1, 1025], 0, good, 4), INVALID_VALUE);
    assert_eq!(
        with([1, 1, 1], [1, 1, 65], 0, good, 4),
        INVALID_VALUE,
        "block z 64 at most"
    );
    assert_eq!(
        with([1, 1, 1], block, 48 * 1024 + 1, good, 4),
        INVALID_VALUE
    );
    assert_eq!(with([1, 1, 1], block, 0, 0, 4), INVALID_VALUE, "NULL ctl");
    assert_eq!(
        with([1, 1, 1], block, 0, good, 0),
        INVALID_VALUE,
        "ring_len 0"
    );
    assert_eq!(
        with([1, 1, 1], block, 0, good + 4, 3),
        INVALID_VALUE,
        "misaligned"
    );
    assert_eq!(
        with([1, 1, 1], block, 0, good, 5),
        INVALID_VALUE,
        "ring past the allocation"
    );
    let pageable = vec![0u64; 64];
    assert_eq!(
        with([1, 1, 1], block, 0, pageable.as_ptr() as u64, 4),
        INVALID_VALUE,
        "pageable memory"
    );

    // Parameter arrays.
    let (mut c, mut r) = (good, 4u32);
    let mut params = [(&raw mut c).cast::<c_void>(), (&raw mut r).cast::<c_void>()];
    let mut extra = [ptr::null_mut::<c_void>()];
    // SAFETY: arrays that outlive the calls; the simulator refuses them before any use.
    unsafe {
        let launch = |p: *mut *mut c_void, x: *mut *mut c_void| {
            (s.cuLaunchKernel)(f, 1, 1, 1, 1024, 1, 1, 0, st, p, x)
        };
        assert_eq!(launch(ptr::null_mut(), ptr::null_mut()), INVALID_VALUE);
        assert_eq!(
            launch(params.as_mut_ptr(), extra.as_mut_ptr()),
            INVALID_VALUE
        );
        let mut half = [params[0], ptr::null_mut()];
        assert_eq!(launch(half.as_mut_ptr(), ptr::null_mut()), INVALID_VALUE);
        let mut other_half = [ptr::null_mut(), params[1]];
        assert_eq!(
            launch(other_half.as_mut_ptr(), ptr::null_mut()),
            INVALID_VALUE
        );
        assert_eq!(
            (s.cuLaunchCooperativeKernel)(f, 1, 1, 1, 1024, 1, 1, 0, st, ptr::null_mut()),
            INVALID_VALUE
        );

        // Handles.
        let bad = 0x1234 as *mut c_void;
        assert_eq!(
            (s.cuLaunchKernel)(
                bad,
                1,
                1,
                1,
                1024,
                1,
                1,
                0,
                st,
                params.as_mut_ptr(),
                ptr::null_mut()
            ),
            INVALID_HANDLE
        );
        assert_eq!(
            (s.cuLaunchKernel)(
                f,
                1,
                1,
                1,
                1024,
                1,
                1,
                0,
                bad,
                params.as_mut_ptr(),
                ptr::null_mut()
            ),
            INVALID_HANDLE,
            "unknown stream"
        );
    }

    // A function of device 1's module is not valid in device 0's context; a thread without a
    // context cannot launch.
    let (p0, p1) = (params[0] as usize, params[1] as usize);
    let f = f as usize;
    let st_handle = st as usize;
    let (other_device, no_context) = std::thread::spawn(move || {
        let no_context = {
            let mut params = [p0 as *mut c_void, p1 as *mut c_void];
            // SAFETY: the parameters outlive the call (the spawning thread joins this one).
            unsafe {
                (s.cuLaunchKernel)(
                    f as *mut c_void,
                    1,
                    1,
                    1,
                    1024,
                    1,
                    1,
                    0,
                    st_handle as Stream,
                    params.as_mut_ptr(),
                    ptr::null_mut(),
                )
            }
        };
        cuda(s, 1);
        let f1 = stage_function(s);
        cuda(s, 0);
        let mut params = [p0 as *mut c_void, p1 as *mut c_void];
        // SAFETY: as above.
        let other_device = unsafe {
            (s.cuLaunchKernel)(
                f1,
                1,
                1,
                1,
                1024,
                1,
                1,
                0,
                ptr::null_mut(),
                params.as_mut_ptr(),
                ptr::null_mut(),
            )
        };
        (other_device, no_context)
    })
    .join()
    .unwrap();
    assert_eq!(other_device, INVALID_HANDLE);
    assert_eq!(no_context, INVALID_CONTEXT);

    assert_eq!(counter(s, "stage_launches"), 0, "nothing was launched");
    assert_eq!(query(s, st), 0);
    assert_eq!(ctl.all_done(), vec![0u32; 32]);
    destroy(s, st);
    free_pinned(s, ctl.host);
}

#[test]
fn device_attributes() {
    let (s, _g) = sim();
    cuda(s, 0);
    let get = |attribute: c_int, dev: c_int| {
        let mut v = -7;
        // SAFETY: valid out-pointer.
        let rc = unsafe { (s.cuDeviceGetAttribute)(&mut v, attribute, dev) };
        (rc, v)
    };
    assert_eq!(get(95, 0), (0, 1), "cooperative launch");
    assert_eq!(get(16, 0), (0, 132), "multiprocessors");
    assert_eq!(get(1, 0), (0, 1024), "threads per block");
    assert_eq!(get(8, 0), (0, 48 * 1024), "shared memory per block");
    assert_eq!(get(4, 0), (0, 64), "block z");
    assert_eq!(get(19, 0), (0, 1), "can map host memory");
    assert_eq!(get(75, 0), (0, 9));
    assert_eq!(get(76, 0), (0, 0));
    assert_eq!(get(12_345, 0), (INVALID_VALUE, -7));
    assert_eq!(get(95, 1), (101, -7), "one device");
    // SAFETY: the simulator refuses the NULL out-pointer.
    assert_eq!(
        unsafe { (s.cuDeviceGetAttribute)(ptr::null_mut(), 95, 0) },
        INVALID_VALUE
    );
}

#[test]
fn a_segment_the_device_cannot_address_fails_the_stream_but_the_kernel_goes_on() {
    let (s, _g) = sim();
    cuda(s, 0);
    let f = stage_function(s);
    let st = stream(s, NON_BLOCKING);
    let ctl = Ctl::new(s, 8);
    let ctl_dev = ctl.device_address(s);
    let dev = device(s, 4096);
    let src = pinned(s, 4096, 0);
    let data = pattern(4096, 9);
    write_host(src, &data);
    let pageable = vec![0x33u8; 256];
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };

    assert_eq!(launch(s, f, 1, st, ctl_dev, 8, false), 0);
    // Pageable source; a destination running past its allocation; then a good last segment.
    ctl.post(1, 1, dev, pageable.as_ptr() as u64, 100, false);
    ctl.post(1, 2, dev + 4000, src as u64, 100, false);
    ctl.post(1, 3, dev + 512, src as u64 + 512, 256, true);
    assert_eq!(sync(s, st), ILLEGAL_ADDRESS);
    assert_eq!(sync(s, st), 0, "reported once");
    assert_eq!(ctl.done(0), 3);
    let mut want = vec![0xEEu8; 4096];
    want[512..768].copy_from_slice(&data[512..768]);
    assert_eq!(device_bytes(s, dev, 4096), want);
    assert_eq!(counter(s, "stage_segments"), 3);
    assert_eq!(counter(s, "stage_bytes"), 256);

    // The copy faults apply to the kernel's segments: the second one fails.
    set_fault(s, "fail_copy", 999);
    set_fault(s, "fail_copy_after", 1);
    assert_eq!(launch(s, f, 1, st, ctl_dev, 8, false), 0);
    ctl.post(1, 4, dev, src as u64, 100, false);
    ctl.post(1, 5, dev + 1024, src as u64 + 1024, 100, true);
    assert_eq!(sync(s, st), 999);
    set_fault(s, "fail_copy", 0);
    set_fault(s, "fail_copy_after", 0);
    assert_eq!(ctl.done(0), 5);
    want[..100].copy_from_slice(&data[..100]);
    assert_eq!(device_bytes(s, dev, 4096), want);
    assert_eq!(counter(s, "copy_faults_injected"), 1);
    assert_eq!(counter(s, "stage_bytes"), 356);

    destroy(s, st);
    free_pinned(s, ctl.host);
    free_pinned(s, src);
    // SAFETY: device memory the test allocated.
    assert_eq!(unsafe { (s.cuMemFree_v2)(dev) }, 0);
}

#[test]
fn blocks_that_start_at_different_serials_copy_only_their_shares() {
    let (s, _g) = sim();
    cuda(s, 0);
    let f = stage_function(s);
    let st = stream(s, NON_BLOCKING);
    let ctl = Ctl::new(s, 4);
    let dev = device(s, 4096);
    let src = pinned(s, 4096, 0);
    let data = pattern(4096, 1);
    write_host(src, &data);
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };

    // Block 0 already finished serial 1; block 1 did not. Serial 1 is then copied by block 1
    // alone: its share of 64 aligned bytes is the second half.
    ctl.set_done(0, 1);
    assert_eq!(launch(s, f, 2, st, ctl.device_address(s), 4, true), 0);
    ctl.post(1, 1, dev, src as u64, 64, false);
    ctl.post(1, 2, dev + 64, src as u64 + 64, 64, true);
    assert_eq!(sync(s, st), 0);
    let mut want = vec![0xEEu8; 128];
    want[32..128].copy_from_slice(&data[32..128]);
    assert_eq!(device_bytes(s, dev, 128), want);
    assert_eq!(ctl.all_done()[..3], [2, 2, 0]);
    assert_eq!(counter(s, "stage_segments"), 2);
    assert_eq!(counter(s, "stage_bytes"), 96);

    destroy(s, st);
    free_pinned(s, ctl.host);
    free_pinned(s, src);
    // SAFETY: device memory the test allocated.
    assert_eq!(unsafe { (s.cuMemFree_v2)(dev) }, 0);
}

#[test]
fn the_no_kernels_fault_refuses_every_module() {
    let (s, _g) = sim();
    cuda(s, 0);
    let ptx = stage_ptx();
    let mut m = ptr::dangling_mut::<c_void>();
    set_fault(s, "no_kernels", 1);
    // SAFETY: valid out-pointer and image.
    unsafe {
        assert_eq!(
            (s.cuModuleLoadData)(&mut m, ptx.as_ptr().cast()),
            NOT_SUPPORTED
        );
        assert_eq!(m, ptr::dangling_mut(), "untouched");
        set_fault(s, "no_kernels", 0);
        assert_eq!((s.cuModuleLoadData)(&mut m, ptx.as_ptr().cast()), 0);
        assert_eq!((s.cuModuleUnload)(m), 0);
    }
}

/// Runs this test binary again with `HIPSIM_NO_KERNELS` set; the child part is
/// `no_kernels_child`.
#[test]
fn the_no_kernels_fault_is_read_from_the_environment() {
    run_child(
        "no_kernels_child",
        &[("HIPSIM_NO_KERNELS", "1")],
        "no_kernels child ok",
    );
}

#[test]
fn no_kernels_child() {
    if !in_child() {
        return;
    }
    let s = sim_raw();
    assert_eq!(fault(s, "no_kernels"), 1);
    cuda(s, 0);
    let ptx = stage_ptx();
    let mut m = ptr::null_mut();
    // SAFETY: valid out-pointer and image.
    assert_eq!(
        unsafe { (s.cuModuleLoadData)(&mut m, ptx.as_ptr().cast()) },
        NOT_SUPPORTED
    );
    println!("no_kernels child ok");
}
