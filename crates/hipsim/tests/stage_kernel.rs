//! Kernels: loading hipfile's staging kernel (PTX through the CUDA face, AMD code objects
//! through the HIP face) and running it on a stream, with a mailbox and a ring the test fills
//! from another thread as hipfile's worker does.

mod common;

use std::ffi::{c_int, c_uint, c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::*;

const INVALID_VALUE: c_int = 1;
const INVALID_IMAGE: c_int = 200;
const NO_BINARY_FOR_GPU: c_int = 209;
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

/// A `StageMail` (64 bytes) in mapped pinned memory, zeroed but for the launch's `grid`.
struct Mail {
    host: usize,
}

impl Mail {
    fn new(s: &Sim, grid: u32) -> Mail {
        let m = Mail {
            host: pinned(s, 64, 0),
        };
        m.word32(28).store(grid, Ordering::Release);
        m
    }

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
        // SAFETY: an aligned word of the mailbox, which outlives `self`'s uses; the kernel
        // reads and writes it from the stream's worker, hence the atomic view.
        unsafe { AtomicU32::from_ptr((self.host + offset) as *mut u32) }
    }

    fn started(&self) -> bool {
        self.word32(0).load(Ordering::Acquire) != 0
    }

    fn exited(&self) -> u32 {
        self.word32(4).load(Ordering::Acquire)
    }

    /// Waits until the launch began (10 s at most).
    fn wait_started(&self) {
        let start = Instant::now();
        while !self.started() {
            assert!(start.elapsed() < Duration::from_secs(10), "never started");
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Lets the launch return without a stage.
    fn finish(&self) {
        self.word32(8).store(1, Ordering::Release);
    }

    /// Hands the launch the stage `ctl` (its device address `ctl_dev`) from serial `first`, as
    /// hipfile's worker does: `first` and `ring_len` before `ctl`, which is released.
    fn assign(&self, ctl: &Ctl, ctl_dev: u64, first: u32) {
        self.word32(12).store(first, Ordering::Relaxed);
        self.word32(24).store(ctl.ring_len, Ordering::Relaxed);
        // SAFETY: as in `word32`, for the 8-byte field at offset 16.
        unsafe { AtomicU64::from_ptr((self.host + 16) as *mut u64) }
            .store(ctl_dev, Ordering::Release);
    }
}

/// Launches `f` (cooperatively when `coop`) with `grid` blocks of 1024 threads over the mailbox
/// at device address `mail`.
fn launch(s: &Sim, f: *mut c_void, grid: c_uint, st: Stream, mail: u64, coop: bool) -> c_int {
    let mut mail = mail;
    let mut params = [(&raw mut mail).cast::<c_void>()];
    // SAFETY: the one parameter of hipfile_stage, alive for the call (the launch copies it).
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
        let mail = Mail::new(s, 1);
        assert_eq!(
            launch(s, f, 1, ptr::null_mut(), mail.device_address(s), false),
            INVALID_HANDLE
        );
        free_pinned(s, mail.host);
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

    // Host to device: two blocks; the second segment at odd offsets, 16-byte congruent. The
    // launch says it started, then waits for its stage.
    let m1 = Mail::new(s, 2);
    assert_eq!(launch(s, f, 2, st, m1.device_address(s), true), 0);
    m1.wait_started();
    settle();
    assert_eq!(query(s, st), NOT_READY, "waiting for a stage");
    m1.assign(&ctl, ctl_dev, 1);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            ctl.post(2, 1, dev, src as u64, 1000, false);
            ctl.post(2, 2, dev + 4097, src as u64 + 2049, 3001, true);
        });
    });
    assert_eq!(sync(s, st), 0);
    assert_eq!(m1.exited(), 2, "both blocks counted out");
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

    // Device to host: the next launch on the same stage starts where the mailbox says (serial
    // 3) and wraps the ring (serial 5 reuses entry 1); a segment of zero bytes copies nothing,
    // whatever its addresses; the second segment is not 16-byte congruent.
    let out = pinned(s, 8192, 0x11);
    let m2 = Mail::new(s, 2);
    assert_eq!(launch(s, f, 2, st, m2.device_address(s), false), 0);
    m2.wait_started();
    m2.assign(&ctl, ctl_dev, 3);
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

    // A launch told to finish returns without a stage, touching nothing of it.
    let m3 = Mail::new(s, 1);
    assert_eq!(launch(s, f, 1, st, m3.device_address(s), false), 0);
    m3.wait_started();
    m3.finish();
    assert_eq!(sync(s, st), 0);
    assert_eq!((m3.exited(), ctl.all_done()), (1, done));
    assert_eq!(counter(s, "stage_segments"), 5);

    destroy(s, st);
    for p in [ctl.host, src, out, m1.host, m2.host, m3.host] {
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

    // A kernel held on a non-blocking stream does not hold a synchronous copy; a second launch
    // on the stream starts only once the first returned.
    let nb = stream(s, NON_BLOCKING);
    let a = Ctl::new(s, 2);
    let (m1, m2) = (Mail::new(s, 1), Mail::new(s, 1));
    assert_eq!(launch(s, f, 1, nb, m1.device_address(s), false), 0);
    assert_eq!(launch(s, f, 1, nb, m2.device_address(s), false), 0);
    m1.wait_started();
    settle();
    assert_eq!(query(s, nb), NOT_READY);
    assert!(!m2.started(), "behind the first launch");
    // SAFETY: a host slice and device memory the test owns.
    assert_eq!(
        unsafe { (s.cuMemcpyHtoD_v2)(dev, small.as_ptr().cast(), 16) },
        0
    );
    m1.assign(&a, a.device_address(s), 1);
    a.post(1, 1, dev, src as u64, 64, true);
    m2.wait_started();
    m2.finish();
    assert_eq!(sync(s, nb), 0);
    assert_eq!((m1.exited(), m2.exited()), (1, 1));
    assert_eq!(device_bytes(s, dev, 64), vec![0x5A; 64]);

    // On a blocking stream: a host function and an event queued after the kernel run only
    // when it returned, and a synchronous copy (legacy default stream) waits for it.
    let st = stream(s, 0);
    let b = Ctl::new(s, 2);
    let mb = Mail::new(s, 1);
    let mut ev = ptr::null_mut();
    HOST_CALLS.store(0, Ordering::SeqCst);
    // SAFETY: valid out-pointer, live stream and event, a host function that ignores its data.
    unsafe {
        assert_eq!((s.cuEventCreate)(&mut ev, 0), 0);
        assert_eq!(launch(s, f, 1, st, mb.device_address(s), false), 0);
        assert_eq!(
            (s.cuLaunchHostFunc)(st, Some(count_call), ptr::null_mut()),
            0
        );
        assert_eq!((s.cuEventRecord)(ev, st), 0);
    }
    mb.wait_started();
    mb.assign(&b, b.device_address(s), 1);
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
    // stream waits for the kernel.
    let c1 = Mail::new(s, 1);
    assert_eq!(
        launch(s, f, 1, ptr::null_mut(), c1.device_address(s), true),
        0
    );
    // SAFETY: a host slice that outlives the synchronisation below, device memory, a live
    // stream.
    assert_eq!(
        unsafe { (s.cuMemcpyHtoDAsync_v2)(dev + 2048, small.as_ptr().cast(), 16, st) },
        0
    );
    c1.wait_started();
    settle();
    assert_eq!(query(s, st), NOT_READY);
    assert_eq!(query(s, ptr::null_mut()), NOT_READY);
    c1.finish();
    assert_eq!(sync(s, st), 0);
    assert_eq!(sync(s, ptr::null_mut()), 0);
    assert_eq!(device_bytes(s, dev + 2048, 16), vec![1u8; 16]);
    // On the calling thread's per-thread stream (a blocking stream of its own): work queued
    // afterwards on the legacy default stream waits for the kernel.
    let c2 = Mail::new(s, 1);
    assert_eq!(launch(s, f, 1, 2 as Stream, c2.device_address(s), false), 0);
    let after = [2u8; 16];
    // SAFETY: a host array that outlives the synchronisation below, device memory.
    assert_eq!(
        unsafe { (s.cuMemcpyHtoDAsync_v2)(dev + 3072, after.as_ptr().cast(), 16, ptr::null_mut()) },
        0
    );
    c2.wait_started();
    settle();
    assert_eq!(query(s, 2 as Stream), NOT_READY);
    assert_eq!(query(s, ptr::null_mut()), NOT_READY);
    c2.finish();
    assert_eq!(sync(s, ptr::null_mut()), 0);
    assert_eq!(
        c2.exited(),
        1,
        "the legacy stream's copy ran after the kernel returned"
    );
    assert_eq!(query(s, 2 as Stream), 0);
    assert_eq!(device_bytes(s, dev + 3072, 16), vec![2u8; 16]);

    // SAFETY: a live event.
    assert_eq!(unsafe { (s.cuEventDestroy_v2)(ev) }, 0);
    destroy(s, nb);
    destroy(s, st);
    for p in [
        a.host, b.host, src, m1.host, m2.host, mb.host, c1.host, c2.host,
    ] {
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
    let mail = Mail::new(s, 1);
    let good = mail.device_address(s);
    let short = pinned(s, 32, 0);
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };

    let with = |grid: [c_uint; 3], block: [c_uint; 3], shared: c_uint, mail: u64| {
        let mut mail = mail;
        let mut params = [(&raw mut mail).cast::<c_void>()];
        let [gx, gy, gz] = grid;
        let [bx, by, bz] = block;
        // SAFETY: the one parameter, alive for the call.
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
    assert_eq!(with([0, 1, 1], block, 0, good), INVALID_VALUE);
    assert_eq!(with([33, 1, 1], block, 0, good), INVALID_VALUE);
    assert_eq!(with([2, 2, 1], block, 0, good), INVALID_VALUE);
    assert_eq!(with([2, 1, 2], block, 0, good), INVALID_VALUE);
    assert_eq!(with([2, 1, 0], block, 0, good), INVALID_VALUE);
    assert_eq!(with([1, 1, 1], [0, 1, 1], 0, good), INVALID_VALUE);
    assert_eq!(with([1, 1, 1], [1024, 2, 1], 0, good), INVALID_VALUE);
    assert_eq!(with([1, 1, 1], [1, 1, 1025], 0, good), INVALID_VALUE);
    assert_eq!(
        with([1, 1, 1], [1, 1, 65], 0, good),
        INVALID_VALUE,
        "block z 64 at most"
    );
    assert_eq!(with([1, 1, 1], block, 48 * 1024 + 1, good), INVALID_VALUE);
    assert_eq!(with([1, 1, 1], block, 0, 0), INVALID_VALUE, "NULL mailbox");
    assert_eq!(
        with([1, 1, 1], block, 0, good + 4),
        INVALID_VALUE,
        "misaligned"
    );
    assert_eq!(
        with([1, 1, 1], block, 0, short as u64),
        INVALID_VALUE,
        "mailbox past the allocation"
    );
    let pageable = vec![0u64; 64];
    assert_eq!(
        with([1, 1, 1], block, 0, pageable.as_ptr() as u64),
        INVALID_VALUE,
        "pageable memory"
    );

    // Parameter arrays.
    let mut c = good;
    let mut params = [(&raw mut c).cast::<c_void>()];
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
        let mut none = [ptr::null_mut::<c_void>()];
        assert_eq!(launch(none.as_mut_ptr(), ptr::null_mut()), INVALID_VALUE);
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
    let p0 = params[0] as usize;
    let f = f as usize;
    let st_handle = st as usize;
    let (other_device, no_context) = std::thread::spawn(move || {
        let no_context = {
            let mut params = [p0 as *mut c_void];
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
        let mut params = [p0 as *mut c_void];
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
    assert!(!mail.started());
    destroy(s, st);
    free_pinned(s, mail.host);
    free_pinned(s, short);
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

/// Whether `dev`'s context was broken (and is now repaired).
fn repair(s: &Sim, dev: c_int) -> bool {
    // SAFETY: no preconditions.
    unsafe { (s.hipsimRepairDevice)(dev) == 1 }
}

// A segment the device cannot address is a fault of the kernel: it stops there (nothing more
// is copied, its blocks never count themselves out) and the context is broken for good, as
// with CUDA_ERROR_ILLEGAL_ADDRESS on a GPU: the stream reports it at every synchronisation,
// and copies fail. An injected copy fault is not the kernel's: it fails the stream once and
// the kernel goes on to its last segment.
#[test]
fn a_segment_the_device_cannot_address_breaks_the_context_but_a_copy_fault_does_not() {
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

    let m1 = Mail::new(s, 1);
    assert_eq!(launch(s, f, 1, st, m1.device_address(s), false), 0);
    m1.wait_started();
    m1.assign(&ctl, ctl_dev, 1);
    // A good segment, then a pageable source, then a good last segment.
    ctl.post(1, 1, dev + 512, src as u64 + 512, 256, false);
    ctl.post(1, 2, dev, pageable.as_ptr() as u64, 100, false);
    ctl.post(1, 3, dev + 1024, src as u64 + 1024, 256, true);
    assert_eq!(sync(s, st), ILLEGAL_ADDRESS);
    assert_eq!(sync(s, st), ILLEGAL_ADDRESS, "sticky");
    assert_eq!(query(s, st), ILLEGAL_ADDRESS);
    assert_eq!((ctl.done(0), m1.exited()), (1, 0));
    let mut back = vec![0u8; 16];
    // SAFETY: a host buffer of 16 bytes; the simulator validates `dev`.
    let copy = unsafe { (s.cuMemcpyDtoH_v2)(back.as_mut_ptr().cast(), dev, 16) };
    assert_eq!(copy, ILLEGAL_ADDRESS, "a broken context copies nothing");
    assert_eq!(counter(s, "stage_segments"), 1);
    assert_eq!(counter(s, "stage_bytes"), 256);
    assert_eq!(counter(s, "contexts_broken"), 1);
    assert!(repair(s, 0));
    assert!(!repair(s, 0), "repaired once");
    assert_eq!(sync(s, st), 0);
    let mut want = vec![0xEEu8; 4096];
    want[512..768].copy_from_slice(&data[512..768]);
    assert_eq!(device_bytes(s, dev, 4096), want);

    // The copy faults apply to the kernel's segments: the second one fails, the kernel goes on.
    set_fault(s, "fail_copy", 999);
    set_fault(s, "fail_copy_after", 1);
    let m2 = Mail::new(s, 1);
    assert_eq!(launch(s, f, 1, st, m2.device_address(s), false), 0);
    m2.wait_started();
    m2.assign(&ctl, ctl_dev, 4);
    ctl.post(1, 4, dev, src as u64, 100, false);
    ctl.post(1, 5, dev + 1024, src as u64 + 1024, 100, true);
    assert_eq!(sync(s, st), 999);
    assert_eq!(sync(s, st), 0, "reported once");
    set_fault(s, "fail_copy", 0);
    set_fault(s, "fail_copy_after", 0);
    assert_eq!((ctl.done(0), m2.exited()), (5, 1));
    want[..100].copy_from_slice(&data[..100]);
    assert_eq!(device_bytes(s, dev, 4096), want);
    assert_eq!(counter(s, "copy_faults_injected"), 1);
    assert_eq!(counter(s, "stage_bytes"), 356);
    assert_eq!(counter(s, "contexts_broken"), 1);

    destroy(s, st);
    for p in [ctl.host, src, m1.host, m2.host] {
        free_pinned(s, p);
    }
    // SAFETY: device memory the test allocated.
    assert_eq!(unsafe { (s.cuMemFree_v2)(dev) }, 0);
}

// A stage the device cannot address, or a mailbox whose grid is not the launch's (the blocks
// would copy the wrong shares), fault the launch: the kernel stops before copying anything,
// never returns, and the context is broken (CUDA_ERROR_ILLEGAL_ADDRESS).
#[test]
fn a_bad_stage_or_grid_faults_the_launch() {
    let (s, _g) = sim();
    cuda(s, 0);
    let f = stage_function(s);
    let st = stream(s, NON_BLOCKING);
    let ctl = Ctl::new(s, 4);
    let short = Ctl::new(s, 1);
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };
    let pageable = vec![0u64; 2048];
    let cases = [
        ("a grid of 2 for a launch of 1", 2, ctl.device_address(s)),
        ("a ring past its allocation", 1, short.device_address(s)),
        ("pageable memory", 1, pageable.as_ptr() as u64),
    ];
    // Every case names a ring of 4 entries.
    let four = Ctl {
        host: 0,
        ring_len: 4,
    };
    for (what, grid, ctl_dev) in cases {
        let m = Mail::new(s, grid);
        assert_eq!(launch(s, f, 1, st, m.device_address(s), false), 0);
        m.wait_started();
        m.assign(&four, ctl_dev, 1);
        assert_eq!(sync(s, st), ILLEGAL_ADDRESS, "{what}");
        assert_eq!(m.exited(), 0, "{what}");
        assert!(repair(s, 0), "{what}");
        free_pinned(s, m.host);
    }
    assert_eq!(counter(s, "stage_segments"), 0);
    assert_eq!(counter(s, "contexts_broken"), 3);
    destroy(s, st);
    free_pinned(s, ctl.host);
    free_pinned(s, short.host);
}

// A fault breaks the whole context: a kernel running on another stream of the device stops
// without returning, work queued behind it never runs (a copy, a host function), and every
// call that does work on the device returns the error, again and again; frees and stream
// destruction still release what they name.
#[test]
fn a_kernel_fault_stops_the_devices_other_kernels_and_queued_work() {
    let (s, _g) = sim();
    cuda(s, 0);
    let f = stage_function(s);
    // Each stream on a hardware queue of its own (sharing one, B's kernel would hold A's).
    set_fault(s, "cuda_hw_queues", 0);
    let (a, b) = (stream(s, NON_BLOCKING), stream(s, NON_BLOCKING));
    set_fault(s, "cuda_hw_queues", 8);
    let ctl = Ctl::new(s, 4);
    let dev = device(s, 4096);
    let host = pinned(s, 4096, 0x5A);
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };
    let calls = HOST_CALLS.load(Ordering::SeqCst);
    let (ma, mb) = (Mail::new(s, 1), Mail::new(s, 1));
    assert_eq!(launch(s, f, 1, b, mb.device_address(s), false), 0);
    mb.wait_started();
    let mut event = ptr::null_mut();
    // SAFETY: live streams and buffers.
    unsafe {
        assert_eq!(
            (s.cuMemcpyHtoDAsync_v2)(dev, host as *const c_void, 4096, b),
            0
        );
        assert_eq!(
            (s.cuLaunchHostFunc)(b, Some(count_call), ptr::null_mut()),
            0
        );
        assert_eq!((s.cuEventCreate)(&mut event, 0), 0);
        assert_eq!((s.cuEventRecord)(event, b), 0);
    }
    // The kernel on `a` faults at its first segment.
    assert_eq!(launch(s, f, 1, a, ma.device_address(s), false), 0);
    ma.wait_started();
    let pageable = [0u8; 64];
    ma.assign(&ctl, ctl.device_address(s), 1);
    ctl.post(1, 1, dev, pageable.as_ptr() as u64, 64, true);
    assert_eq!(sync(s, a), ILLEGAL_ADDRESS);
    assert_eq!(sync(s, b), ILLEGAL_ADDRESS);
    assert_eq!((ma.exited(), mb.exited()), (0, 0));
    assert_eq!(
        HOST_CALLS.load(Ordering::SeqCst),
        calls,
        "no host function ran"
    );
    assert_eq!(counter(s, "host_funcs_run"), 0);
    let (mut d, mut id) = (0u64, 0u64);
    // SAFETY: valid out-pointers, live handles.
    unsafe {
        assert_eq!((s.cuEventSynchronize)(event), ILLEGAL_ADDRESS);
        assert_eq!((s.cuCtxSynchronize)(), ILLEGAL_ADDRESS);
        assert_eq!((s.cuCtxSynchronize)(), ILLEGAL_ADDRESS, "sticky");
        assert_eq!((s.cuMemAlloc_v2)(&mut d, 4096), ILLEGAL_ADDRESS);
        assert_eq!((s.cuMemsetD8_v2)(dev, 0, 16), ILLEGAL_ADDRESS);
        assert_eq!(
            launch(s, f, 1, a, ma.device_address(s), false),
            ILLEGAL_ADDRESS
        );
        // As on the H200 (scripts/gpu/fault_probe.c): a stream's id and an event's
        // destruction answer the error too.
        assert_eq!((s.cuStreamGetId)(a, &mut id), ILLEGAL_ADDRESS);
        assert_eq!((s.cuEventDestroy_v2)(event), ILLEGAL_ADDRESS);
    }
    // A free releases the memory and reports the error.
    let live = counter(s, "device_bytes_live");
    // SAFETY: device memory the test allocated.
    assert_eq!(unsafe { (s.cuMemFree_v2)(dev) }, ILLEGAL_ADDRESS);
    assert_eq!(counter(s, "device_bytes_live"), live - 4096);
    let streams = counter(s, "streams_live");
    // SAFETY: a stream the test created.
    assert_eq!(unsafe { (s.cuStreamDestroy_v2)(b) }, ILLEGAL_ADDRESS);
    assert_eq!(counter(s, "streams_live"), streams - 1);
    assert!(repair(s, 0));
    assert_eq!(host_bytes(host, 4), vec![0x5A; 4]);
    destroy(s, a);
    for p in [ctl.host, host, ma.host, mb.host] {
        free_pinned(s, p);
    }
}

// The HIP face loads what an AMD runtime loads: the code object for the simulated GPU, not one
// for another architecture (hipErrorNoBinaryForGpu), not PTX nor anything else
// (hipErrorInvalidImage); its kernel runs as the CUDA face's does.
#[test]
fn the_hip_face_loads_the_code_object_of_its_gpu_and_runs_it() {
    let (s, _g) = sim();
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../src/runtime/stage/amdgpu/"
    );
    let object = |gpu: &str| std::fs::read(format!("{dir}{gpu}.hsaco")).unwrap();
    let ptx = stage_ptx();
    // SAFETY: valid out-pointers and images.
    unsafe {
        assert_eq!((s.hipInit)(0), 0);
        assert_eq!((s.hipSetDevice)(0), 0);
        let mut m = ptr::dangling_mut::<c_void>();
        for (image, want) in [
            (object("gfx90a"), NO_BINARY_FOR_GPU),
            (object("gfx1100"), NO_BINARY_FOR_GPU),
            (ptx.as_bytes_with_nul().to_vec(), INVALID_IMAGE),
            (
                b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0\x3e\0".repeat(4),
                INVALID_IMAGE,
            ),
        ] {
            assert_eq!((s.hipModuleLoadData)(&mut m, image.as_ptr().cast()), want);
        }
        assert_eq!(m, ptr::dangling_mut(), "untouched on failure");
        let gfx942 = object("gfx942");
        assert_eq!((s.hipModuleLoadData)(&mut m, gfx942.as_ptr().cast()), 0);
        let mut f = ptr::null_mut();
        assert_eq!(
            (s.hipModuleGetFunction)(&mut f, m, cstr("hipfile_stage").as_ptr()),
            0
        );
        let mut st = ptr::null_mut();
        assert_eq!((s.hipStreamCreateWithFlags)(&mut st, NON_BLOCKING), 0);
        let mut dev = ptr::null_mut();
        assert_eq!((s.hipMalloc)(&mut dev, 256), 0);
        let src = pinned_hip(s, 256);
        let data = pattern(256, 5);
        write_host(src, &data);
        let ctl = Ctl {
            host: pinned_hip(s, 256 + 32 * 4),
            ring_len: 4,
        };
        let mail = Mail {
            host: pinned_hip(s, 64),
        };
        mail.word32(28).store(2, Ordering::Release);
        let mut mail_dev = mail.host as u64;
        let mut params = [(&raw mut mail_dev).cast::<c_void>()];
        assert_eq!(
            (s.hipModuleLaunchCooperativeKernel)(
                f,
                2,
                1,
                1,
                1024,
                1,
                1,
                0,
                st,
                params.as_mut_ptr()
            ),
            0
        );
        mail.wait_started();
        mail.assign(&ctl, ctl.host as u64, 1);
        ctl.post(2, 1, dev as u64, src as u64, 256, true);
        assert_eq!((s.hipStreamSynchronize)(st), 0);
        assert_eq!(mail.exited(), 2);
        let mut back = vec![0u8; 256];
        assert_eq!((s.hipMemcpy)(back.as_mut_ptr().cast(), dev, 256, 2), 0);
        assert_eq!(back, data);
        assert_eq!((s.hipModuleUnload)(m), 0);
        assert_eq!((s.hipStreamDestroy)(st), 0);
        assert_eq!((s.hipFree)(dev), 0);
        for p in [src, ctl.host, mail.host] {
            assert_eq!((s.hipHostFree)(p as *mut c_void), 0);
        }
    }
}

/// The staging kernel of the gfx942 code object, loaded through the HIP face (device 0).
fn hip_stage_function(s: &Sim) -> *mut c_void {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../src/runtime/stage/amdgpu/gfx942.hsaco"
    );
    let image = std::fs::read(path).unwrap();
    let (mut m, mut f) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: valid out-pointers, a code object and a NUL-terminated name.
    unsafe {
        assert_eq!((s.hipInit)(0), 0);
        assert_eq!((s.hipSetDevice)(0), 0);
        assert_eq!((s.hipModuleLoadData)(&mut m, image.as_ptr().cast()), 0);
        assert_eq!(
            (s.hipModuleGetFunction)(&mut f, m, cstr("hipfile_stage").as_ptr()),
            0
        );
    }
    f
}

/// A cooperative launch of the HIP face with `grid` blocks over `mail` on `st`.
fn hip_coop_launch(s: &Sim, f: *mut c_void, st: Stream, mail: &Mail, grid: c_uint) -> c_int {
    let mut mail_dev = mail.host as u64;
    let mut params = [(&raw mut mail_dev).cast::<c_void>()];
    // SAFETY: the kernel's one parameter, alive for the call (the launch copies it).
    unsafe {
        (s.hipModuleLaunchCooperativeKernel)(f, grid, 1, 1, 1024, 1, 1, 0, st, params.as_mut_ptr())
    }
}

// ROCm runs every cooperative launch of a device on one queue, in launch order: a cooperative
// kernel on one stream does not start while one launched before it on another stream still
// runs, even when its own stream is idle; a plain launch is not held. With `hip_coop_queue` 0
// the second cooperative kernel starts at once.
#[test]
fn rocm_runs_the_cooperative_launches_of_a_device_one_after_another() {
    let (s, _g) = sim();
    let f = hip_stage_function(s);
    for (setting, held) in [(1, true), (0, false)] {
        set_fault(s, "hip_coop_queue", setting);
        // Each stream on a hardware queue of its own: only the cooperative queue ties them.
        set_fault(s, "hip_hw_queues", 0);
        let (mut a, mut b) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!((s.hipStreamCreateWithFlags)(&mut a, NON_BLOCKING), 0);
            assert_eq!((s.hipStreamCreateWithFlags)(&mut b, NON_BLOCKING), 0);
        }
        set_fault(s, "hip_hw_queues", 4);
        let mails: Vec<Mail> = (0..4)
            .map(|_| {
                let m = Mail {
                    host: pinned_hip(s, 64),
                };
                m.word32(28).store(2, Ordering::Release);
                m
            })
            .collect();
        assert_eq!(hip_coop_launch(s, f, a, &mails[0], 2), 0);
        mails[0].wait_started();
        assert_eq!(hip_coop_launch(s, f, b, &mails[1], 2), 0);
        if held {
            std::thread::sleep(Duration::from_millis(50));
            assert!(!mails[1].started(), "held behind the first");
        } else {
            mails[1].wait_started();
        }
        mails[0].finish();
        mails[1].wait_started();
        mails[1].finish();
        // SAFETY: live streams.
        unsafe {
            assert_eq!((s.hipStreamSynchronize)(a), 0);
            assert_eq!((s.hipStreamSynchronize)(b), 0);
        }
        // A plain launch is not held by a cooperative kernel of another stream.
        set_fault(s, "hip_coop_queue", 1);
        assert_eq!(hip_coop_launch(s, f, a, &mails[3], 2), 0);
        mails[3].wait_started();
        let mut mail_dev = mails[2].host as u64;
        let mut params = [(&raw mut mail_dev).cast::<c_void>()];
        mails[2].word32(28).store(1, Ordering::Release);
        // SAFETY: as in `hip_coop_launch`, one block.
        let plain = unsafe {
            (s.hipModuleLaunchKernel)(
                f,
                1,
                1,
                1,
                1024,
                1,
                1,
                0,
                b,
                params.as_mut_ptr(),
                ptr::null_mut(),
            )
        };
        assert_eq!(plain, 0);
        mails[2].wait_started();
        mails[2].finish();
        mails[3].finish();
        // SAFETY: live streams, then memory the test allocated.
        unsafe {
            assert_eq!((s.hipStreamDestroy)(a), 0);
            assert_eq!((s.hipStreamDestroy)(b), 0);
            for m in &mails {
                assert_eq!((s.hipHostFree)(m.host as *mut c_void), 0);
            }
        }
    }
}

// Two threads launching cooperative kernels on two streams that share a hardware queue: each
// launch takes a ticket on the hardware queue and one on the cooperative queue. Taken in
// opposite orders by the two threads, each worker would hold one queue's turn and wait for the
// other's, for good; taken together they never cross. (With the tickets taken one after the
// other, this hung within two runs of 50,000 launches per thread.)
#[test]
fn cooperative_launches_from_two_threads_on_one_hardware_queue_never_cross() {
    const LAUNCHES: usize = 20_000;
    let (s, _g) = sim();
    let f = hip_stage_function(s) as usize;
    set_fault(s, "hip_hw_queues", 1);
    let streams: Vec<usize> = (0..2)
        .map(|_| {
            let mut st = ptr::null_mut();
            // SAFETY: valid out-pointer.
            assert_eq!(
                unsafe { (s.hipStreamCreateWithFlags)(&mut st, NON_BLOCKING) },
                0
            );
            st as usize
        })
        .collect();
    set_fault(s, "hip_hw_queues", 4);
    let done = std::sync::Arc::new(AtomicU32::new(0));
    let threads: Vec<_> = streams
        .iter()
        .map(|&st| {
            let done = std::sync::Arc::clone(&done);
            // A mailbox already told to finish: every launch over it returns at once.
            let mail = pinned_hip(s, 64);
            std::thread::spawn(move || {
                let m = Mail { host: mail };
                m.word32(28).store(2, Ordering::Release);
                m.finish();
                for _ in 0..LAUNCHES {
                    assert_eq!(hip_coop_launch(s, f as *mut c_void, st as Stream, &m, 2), 0);
                }
                done.fetch_add(1, Ordering::Release);
                mail
            })
        })
        .collect();
    let all_done = || {
        done.load(Ordering::Acquire) == 2
            && streams.iter().all(|&st| {
                // SAFETY: a live stream.
                unsafe { (s.hipStreamQuery)(st as Stream) == 0 }
            })
    };
    assert!(
        within(Duration::from_secs(60), all_done),
        "the launches crossed"
    );
    for t in threads {
        let mail = t.join().unwrap();
        // SAFETY: pinned memory the thread allocated; its launches have returned.
        assert_eq!(unsafe { (s.hipHostFree)(mail as *mut c_void) }, 0);
    }
    for st in streams {
        // SAFETY: a stream the test created.
        assert_eq!(unsafe { (s.hipStreamDestroy)(st as Stream) }, 0);
    }
}

/// Zeroed mapped pinned memory from the HIP face.
fn pinned_hip(s: &Sim, len: usize) -> usize {
    let mut p = ptr::null_mut();
    // SAFETY: valid out-pointer; then `len` bytes the simulator just allocated.
    unsafe {
        assert_eq!((s.hipHostMalloc)(&mut p, len, 2), 0);
        ptr::write_bytes(p.cast::<u8>(), 0, len);
    }
    p as usize
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
