//! CUDA driver face, the entry points the HIP-on-CUDA runtime (`scripts/gpu/hip_on_cuda`) uses
//! beyond hipfile's own: event queries, pinned-allocation flags, stream ids, queued copies and
//! fills, 32/64-bit stream writes and 64-bit waits, kernel parameter layout and occupancy.

mod common;

use std::ffi::{c_int, c_uint, c_void};
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use common::*;

const INVALID_VALUE: c_int = 1;
const INVALID_HANDLE: c_int = 400;
const NOT_READY: c_int = 600;
const NOT_SUPPORTED: c_int = 801;

/// A simulator entry point by name, with the given C signature.
macro_rules! sym {
    ($name:literal, $t:ty) => {{
        // SAFETY: the type is the documented C signature of the symbol.
        *unsafe { library().get::<$t>(concat!($name, "\0").as_bytes()) }
            .expect(concat!("the simulator exports ", $name))
    }};
}

type WaitValue32 = unsafe extern "C" fn(*mut c_void, u64, u32, c_uint) -> c_int;
type Value64 = unsafe extern "C" fn(*mut c_void, u64, u64, c_uint) -> c_int;
type EventQuery = unsafe extern "C" fn(*mut c_void) -> c_int;

/// Initialises CUDA and makes device 0's primary context current on this thread.
fn cuda() -> (&'static Sim, std::sync::MutexGuard<'static, ()>) {
    let (s, g) = sim();
    let mut ctx = ptr::null_mut();
    // SAFETY: valid out-pointer and a context just retained.
    unsafe {
        assert_eq!((s.cuInit)(0), 0);
        assert_eq!((s.cuDevicePrimaryCtxRetain)(&mut ctx, 0), 0);
        assert_eq!((s.cuCtxSetCurrent)(ctx), 0);
    }
    (s, g)
}

fn stream(s: &Sim) -> *mut c_void {
    let mut st = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.cuStreamCreate)(&mut st, 1) }, 0);
    st
}

/// `len` bytes of pinned host memory with `flags`, zeroed.
fn pinned(s: &Sim, len: usize, flags: c_uint) -> *mut c_void {
    let mut p = ptr::null_mut();
    // SAFETY: valid out-pointer; the memory is then ours to write.
    unsafe {
        assert_eq!((s.cuMemHostAlloc)(&mut p, len, flags), 0);
        ptr::write_bytes(p.cast::<u8>(), 0, len);
    }
    p
}

#[test]
fn event_query_follows_the_stream() {
    let (s, _g) = cuda();
    let query: EventQuery = sym!("cuEventQuery", EventQuery);
    let wait: WaitValue32 = sym!("cuStreamWaitValue32_v2", WaitValue32);
    let st = stream(s);
    let word = pinned(s, 64, 0);
    let mut ev = ptr::null_mut();
    // SAFETY: handles from the simulator; the word is pinned and outlives the stream's work.
    unsafe {
        assert_eq!((s.cuEventCreate)(&mut ev, 0), 0);
        assert_eq!(query(ev), 0, "an event never recorded is complete");
        assert_eq!(wait(st, word as u64, 1, 1), 0);
        assert_eq!((s.cuEventRecord)(ev, st), 0);
        assert_eq!(query(ev), NOT_READY);
        AtomicU32::from_ptr(word.cast()).store(1, Ordering::Release);
        assert_eq!((s.cuStreamSynchronize)(st), 0);
        assert_eq!(query(ev), 0);
        assert_eq!((s.cuEventDestroy_v2)(ev), 0);
        assert_eq!(query(ev), INVALID_HANDLE);
        assert_eq!((s.cuStreamDestroy_v2)(st), 0);
        assert_eq!((s.cuMemFreeHost)(word), 0);
    }
}

#[test]
fn pinned_allocations_report_their_flags() {
    let (s, _g) = cuda();
    let get_flags: unsafe extern "C" fn(*mut c_uint, *mut c_void) -> c_int = sym!(
        "cuMemHostGetFlags",
        unsafe extern "C" fn(*mut c_uint, *mut c_void) -> c_int
    );
    let p = pinned(s, 8192, 0x3);
    let mut dev = 0u64;
    let mut flags: c_uint = 99;
    // SAFETY: valid out-pointers; pointers from the simulator or our stack.
    unsafe {
        assert_eq!(get_flags(&mut flags, p), 0);
        assert_eq!(flags, 0x3);
        assert_eq!(get_flags(&mut flags, p.cast::<u8>().add(4096).cast()), 0);
        assert_eq!(flags, 0x3, "an interior pointer names its allocation");
        assert_eq!((s.cuMemAlloc_v2)(&mut dev, 4096), 0);
        assert_eq!(get_flags(&mut flags, dev as *mut c_void), INVALID_VALUE);
        let mut local = 0u8;
        assert_eq!(
            get_flags(&mut flags, (&mut local as *mut u8).cast()),
            INVALID_VALUE
        );
        assert_eq!(get_flags(ptr::null_mut(), p), INVALID_VALUE);
        assert_eq!((s.cuMemFree_v2)(dev), 0);
        assert_eq!((s.cuMemFreeHost)(p), 0);
    }
}

#[test]
fn stream_ids_are_unique_and_stable() {
    let (s, _g) = cuda();
    let get_id: unsafe extern "C" fn(*mut c_void, *mut u64) -> c_int = sym!(
        "cuStreamGetId",
        unsafe extern "C" fn(*mut c_void, *mut u64) -> c_int
    );
    let id = |st: *mut c_void| {
        let mut v = 0u64;
        // SAFETY: valid out-pointer; the simulator validates the handle.
        assert_eq!(unsafe { get_id(st, &mut v) }, 0);
        v
    };
    let (a, b) = (stream(s), stream(s));
    let (ia, ib) = (id(a), id(b));
    assert_ne!(ia, ib);
    assert_eq!(id(a), ia, "the same stream keeps its id");
    let legacy = id(ptr::null_mut());
    assert_eq!(id(ptr::null_mut()), legacy);
    assert!(![ia, ib].contains(&legacy));
    // SAFETY: handles from the simulator.
    unsafe {
        assert_eq!((s.cuStreamDestroy_v2)(a), 0);
        let mut v = 0;
        assert_eq!(get_id(a, &mut v), INVALID_HANDLE);
        assert_eq!(get_id(b, ptr::null_mut()), INVALID_VALUE);
    }
    let c = stream(s);
    assert!(
        ![ia, ib, legacy].contains(&id(c)),
        "a new stream gets a new id"
    );
    // SAFETY: handles from the simulator.
    unsafe {
        assert_eq!((s.cuStreamDestroy_v2)(b), 0);
        assert_eq!((s.cuStreamDestroy_v2)(c), 0);
    }
}

#[test]
fn copies_and_fills_are_queued_on_the_stream() {
    let (s, _g) = cuda();
    let memcpy_async: unsafe extern "C" fn(u64, u64, usize, *mut c_void) -> c_int = sym!(
        "cuMemcpyAsync",
        unsafe extern "C" fn(u64, u64, usize, *mut c_void) -> c_int
    );
    let memset_async: unsafe extern "C" fn(u64, u8, usize, *mut c_void) -> c_int = sym!(
        "cuMemsetD8Async",
        unsafe extern "C" fn(u64, u8, usize, *mut c_void) -> c_int
    );
    let wait: WaitValue32 = sym!("cuStreamWaitValue32_v2", WaitValue32);
    let st = stream(s);
    let gate = pinned(s, 64, 0);
    let host = pinned(s, 4096, 0);
    let mut dev = 0u64;
    // SAFETY: handles and memory from the simulator, alive until the stream is synchronised.
    unsafe {
        assert_eq!((s.cuMemAlloc_v2)(&mut dev, 4096), 0);
        assert_eq!(wait(st, gate as u64, 1, 1), 0);
        assert_eq!(memset_async(dev, 0x5A, 4096, st), 0);
        assert_eq!(memset_async(dev + 100, 0x11, 10, st), 0);
        assert_eq!(memcpy_async(host as u64, dev, 4096, st), 0);
        let bytes = std::slice::from_raw_parts(host.cast::<u8>(), 4096);
        assert!(
            bytes.iter().all(|&b| b == 0),
            "nothing runs before the gate opens"
        );
        AtomicU32::from_ptr(gate.cast()).store(1, Ordering::Release);
        assert_eq!((s.cuStreamSynchronize)(st), 0);
        let mut want = vec![0x5Au8; 4096];
        want[100..110].fill(0x11);
        assert_eq!(bytes, &want[..]);
        assert_eq!(memset_async(0, 1, 16, st), INVALID_VALUE);
        assert_eq!(
            memset_async(dev, 1, 16, 0x1234 as *mut c_void),
            INVALID_HANDLE
        );
        assert_eq!((s.cuMemFree_v2)(dev), 0);
        assert_eq!((s.cuStreamDestroy_v2)(st), 0);
        assert_eq!((s.cuMemFreeHost)(host), 0);
        assert_eq!((s.cuMemFreeHost)(gate), 0);
    }
}

#[test]
fn stream_writes_and_64_bit_waits() {
    let (s, _g) = cuda();
    let write32: WaitValue32 = sym!("cuStreamWriteValue32_v2", WaitValue32);
    let write64: Value64 = sym!("cuStreamWriteValue64_v2", Value64);
    let wait64: Value64 = sym!("cuStreamWaitValue64_v2", Value64);
    let wait32: WaitValue32 = sym!("cuStreamWaitValue32_v2", WaitValue32);
    let (a, b) = (stream(s), stream(s));
    let words = pinned(s, 64, 0);
    let w32 = words as u64;
    let w64 = w32 + 8;
    // SAFETY: handles and pinned memory from the simulator, alive until the streams are
    // synchronised; the words are read atomically.
    unsafe {
        let (v32, v64) = (
            AtomicU32::from_ptr(words.cast()),
            AtomicU64::from_ptr(words.cast::<u8>().add(8).cast()),
        );
        // b waits for a 64-bit value that a writes after waiting for the host.
        assert_eq!(wait64(b, w64, 1 << 40, 0), 0, "GEQ");
        assert_eq!(write32(b, w32, 7, 0), 0);
        let gate_ptr = pinned(s, 64, 0);
        assert_eq!(wait32(a, gate_ptr as u64, 1, 1), 0);
        assert_eq!(write64(a, w64, (1 << 40) + 5, 0), 0);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(v32.load(Ordering::Acquire), 0, "b still waits");
        assert_eq!(v64.load(Ordering::Acquire), 0, "a still waits for the host");
        AtomicU32::from_ptr(gate_ptr.cast()).store(1, Ordering::Release);
        assert_eq!((s.cuStreamSynchronize)(a), 0);
        assert_eq!((s.cuStreamSynchronize)(b), 0);
        assert_eq!(v64.load(Ordering::Acquire), (1 << 40) + 5);
        assert_eq!(v32.load(Ordering::Acquire), 7);

        // The other conditions, each already met.
        assert_eq!(wait64(b, w64, (1 << 40) + 5, 1), 0, "EQ");
        assert_eq!(wait64(b, w64, 4, 2), 0, "AND");
        assert_eq!(wait64(b, w64, 2, 3), 0, "NOR: bit 1 is clear in both");
        assert_eq!((s.cuStreamSynchronize)(b), 0);

        // Refusals.
        assert_eq!(write32(b, w32 + 2, 1, 0), INVALID_VALUE, "misaligned");
        assert_eq!(write64(b, w32 + 4, 1, 0), INVALID_VALUE, "misaligned");
        assert_eq!(wait64(b, w32 + 4, 1, 0), INVALID_VALUE, "misaligned");
        assert_eq!(write32(b, w32, 1, 2), INVALID_VALUE, "unknown flags");
        assert_eq!(wait64(b, w64, 1, 4), INVALID_VALUE, "unknown condition");
        let mut local = 0u64;
        assert_eq!(
            write64(b, &mut local as *mut u64 as u64, 1, 0),
            INVALID_VALUE
        );
        let mut dev = 0u64;
        assert_eq!((s.cuMemAlloc_v2)(&mut dev, 64), 0);
        assert_eq!(
            write32(b, dev, 1, 0),
            INVALID_VALUE,
            "device memory is not a word here"
        );
        assert_eq!(write32(0x1234 as *mut c_void, w32, 1, 0), INVALID_HANDLE);
        set_fault(s, "no_wait_value", 1);
        assert_eq!(wait64(b, w64, 1, 0), NOT_SUPPORTED);
        set_fault(s, "no_wait_value", 0);
        assert_eq!((s.cuMemFree_v2)(dev), 0);
        assert_eq!((s.cuStreamDestroy_v2)(a), 0);
        assert_eq!((s.cuStreamDestroy_v2)(b), 0);
        assert_eq!((s.cuMemFreeHost)(gate_ptr), 0);
        assert_eq!((s.cuMemFreeHost)(words), 0);
    }
}

#[test]
fn the_staging_kernel_describes_its_parameters_and_occupancy() {
    let (s, _g) = cuda();
    let param_info: unsafe extern "C" fn(*mut c_void, usize, *mut usize, *mut usize) -> c_int = sym!(
        "cuFuncGetParamInfo",
        unsafe extern "C" fn(*mut c_void, usize, *mut usize, *mut usize) -> c_int
    );
    let occupancy: unsafe extern "C" fn(*mut c_int, *mut c_void, c_int, usize) -> c_int = sym!(
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        unsafe extern "C" fn(*mut c_int, *mut c_void, c_int, usize) -> c_int
    );
    let ptx = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src/runtime/stage/stage.ptx"),
    )
    .unwrap();
    let mut text = ptx.clone();
    text.push(0);
    let (mut module, mut f) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: NUL-terminated PTX, valid out-pointers, handles from the simulator.
    unsafe {
        assert_eq!((s.cuModuleLoadData)(&mut module, text.as_ptr().cast()), 0);
        assert_eq!(
            (s.cuModuleGetFunction)(&mut f, module, c"hipfile_stage".as_ptr()),
            0
        );
        let (mut off, mut len) = (99usize, 99usize);
        assert_eq!(param_info(f, 0, &mut off, &mut len), 0);
        assert_eq!((off, len), (0, 8), "its one parameter, the mailbox");
        assert_eq!(param_info(f, 1, &mut off, &mut len), INVALID_VALUE);
        assert_eq!(param_info(f, 0, ptr::null_mut(), &mut len), INVALID_VALUE);
        assert_eq!(
            param_info(module, 0, &mut off, &mut len),
            INVALID_HANDLE,
            "a module is not a function"
        );

        let mut n: c_int = -1;
        for (block, want) in [(1024, 2), (256, 8), (64, 32), (1, 32)] {
            assert_eq!(occupancy(&mut n, f, block, 0), 0);
            assert_eq!(n, want, "block size {block}");
        }
        assert_eq!(occupancy(&mut n, f, 1024, 64 * 1024), 0);
        assert_eq!(n, 0, "more shared memory than a block may have");
        assert_eq!(occupancy(&mut n, f, 0, 0), INVALID_VALUE);
        assert_eq!(occupancy(&mut n, f, 1025, 0), INVALID_VALUE);
        assert_eq!(occupancy(ptr::null_mut(), f, 1024, 0), INVALID_VALUE);
        assert_eq!((s.cuModuleUnload)(module), 0);
        assert_eq!(occupancy(&mut n, f, 1024, 0), INVALID_HANDLE, "unloaded");
    }
}
