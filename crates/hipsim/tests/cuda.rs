//! CUDA driver face: initialisation, contexts, memory, pointer attributes, copies, streams,
//! events and errors.

mod common;

use std::ffi::{c_int, c_uint, c_void};
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};

use common::*;

const INVALID_VALUE: c_int = 1;
const INVALID_CONTEXT: c_int = 201;

fn primary(s: &Sim, dev: c_int) -> *mut c_void {
    let mut ctx = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.cuDevicePrimaryCtxRetain)(&mut ctx, dev) }, 0);
    assert!(!ctx.is_null());
    ctx
}

/// Initialises CUDA and makes device `dev`'s primary context current on this thread.
fn cuda(dev: c_int) -> &'static Sim {
    let s = sim_raw();
    // SAFETY: plain calls.
    unsafe {
        assert_eq!((s.cuInit)(0), 0);
        assert_eq!((s.cuCtxSetCurrent)(primary(s, dev)), 0);
    }
    s
}

#[test]
fn init_devices_and_versions() {
    let (s, _g) = sim();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!((s.cuInit)(1), INVALID_VALUE);
        assert_eq!((s.cuInit)(0), 0);
        let mut v = 0;
        assert_eq!((s.cuDriverGetVersion)(&mut v), 0);
        assert_eq!(v, 13000);
        set_fault(s, "cuda_driver_version", 12040);
        assert_eq!((s.cuDriverGetVersion)(&mut v), 0);
        assert_eq!(v, 12040);
        let mut n = -1;
        assert_eq!((s.cuDeviceGetCount)(&mut n), 0);
        assert_eq!(n, 1);
        set_fault(s, "device_count", 0);
        assert_eq!((s.cuDeviceGetCount)(&mut n), 0);
        assert_eq!(n, 0);
        set_fault(s, "device_count", 2);
        let mut dev = -1;
        assert_eq!((s.cuDeviceGet)(&mut dev, 1), 0);
        assert_eq!(dev, 1);
        assert_eq!((s.cuDeviceGet)(&mut dev, 2), 101);
        let mut name = [0i8; 64];
        assert_eq!((s.cuDeviceGetName)(name.as_mut_ptr(), 64, 1), 0);
        assert_eq!(as_str(name.as_ptr()), "hipsim simulated GPU 1");
        let mut short = [0x7Fi8; 6];
        assert_eq!((s.cuDeviceGetName)(short.as_mut_ptr(), 5, 0), 0);
        assert_eq!(as_str(short.as_ptr()), "hips");
        assert_eq!(short[5], 0x7F);
        assert_eq!((s.cuDeviceGetName)(name.as_mut_ptr(), 64, 5), 101);
        assert_eq!((s.cuDeviceGetCount)(ptr::null_mut()), INVALID_VALUE);
    }
}

#[test]
fn contexts_are_per_thread() {
    let (s, _g) = sim();
    set_fault(s, "device_count", 2);
    // SAFETY: valid handles and out-pointers; each check runs on a fresh thread.
    std::thread::spawn(move || unsafe {
        assert_eq!((s.cuInit)(0), 0);
        let mut cur = ptr::dangling_mut::<c_void>();
        assert_eq!((s.cuCtxGetCurrent)(&mut cur), 0);
        assert!(cur.is_null(), "a thread starts without a context");
        let mut p = 0u64;
        assert_eq!((s.cuMemAlloc_v2)(&mut p, 4096), INVALID_CONTEXT);
        let mut st = ptr::null_mut();
        assert_eq!((s.cuStreamCreate)(&mut st, 0), INVALID_CONTEXT);
        assert_eq!((s.cuStreamSynchronize)(ptr::null_mut()), INVALID_CONTEXT);
        let mut dev = -1;
        assert_eq!((s.cuCtxGetDevice)(&mut dev), INVALID_CONTEXT);
        assert_eq!((s.cuCtxSynchronize)(), INVALID_CONTEXT);

        let c0 = primary(s, 0);
        let c1 = primary(s, 1);
        assert_ne!(c0, c1);
        assert_eq!(primary(s, 0), c0, "one stable primary context per device");
        let mut bad = ptr::null_mut();
        assert_eq!((s.cuDevicePrimaryCtxRetain)(&mut bad, 2), 101);

        assert_eq!((s.cuCtxSetCurrent)(c0), 0);
        assert_eq!((s.cuCtxGetDevice)(&mut dev), 0);
        assert_eq!(dev, 0);
        assert_eq!((s.cuCtxPushCurrent_v2)(c1), 0);
        assert_eq!((s.cuCtxGetDevice)(&mut dev), 0);
        assert_eq!(dev, 1);
        let mut popped = ptr::null_mut();
        assert_eq!((s.cuCtxPopCurrent_v2)(&mut popped), 0);
        assert_eq!(popped, c1);
        assert_eq!((s.cuCtxGetCurrent)(&mut cur), 0);
        assert_eq!(cur, c0);
        assert_eq!((s.cuCtxSetCurrent)(0x1234 as *mut c_void), INVALID_CONTEXT);
        assert_eq!((s.cuCtxPushCurrent_v2)(ptr::null_mut()), INVALID_CONTEXT);
        assert_eq!((s.cuCtxSetCurrent)(ptr::null_mut()), 0);
        assert_eq!((s.cuCtxGetCurrent)(&mut cur), 0);
        assert!(cur.is_null());
        assert_eq!((s.cuCtxPopCurrent_v2)(ptr::null_mut()), INVALID_CONTEXT);
        assert_eq!((s.cuDevicePrimaryCtxRelease_v2)(0), 0);
        assert_eq!((s.cuDevicePrimaryCtxRelease_v2)(5), 101);

        // Allocations belong to the current context's device.
        assert_eq!((s.cuCtxPushCurrent_v2)(c1), 0);
        assert_eq!((s.cuMemAlloc_v2)(&mut p, 4096), 0);
        let mut ordinal: c_int = -1;
        assert_eq!(
            (s.cuPointerGetAttribute)((&mut ordinal as *mut c_int).cast(), 9, p),
            0
        );
        assert_eq!(ordinal, 1);
        let mut ctx = ptr::null_mut();
        assert_eq!(
            (s.cuPointerGetAttribute)((&mut ctx as *mut *mut c_void).cast(), 1, p),
            0
        );
        assert_eq!(ctx, c1);
        assert_eq!((s.cuStreamCreate)(&mut st, 0), 0);
        assert_eq!((s.cuStreamGetCtx)(st, &mut ctx), 0);
        assert_eq!(ctx, c1);
        assert_eq!((s.cuStreamDestroy_v2)(st), 0);
        assert_eq!((s.cuMemFree_v2)(p), 0);
        assert_eq!((s.cuCtxPopCurrent_v2)(ptr::null_mut()), 0);
    })
    .join()
    .unwrap();
}

/// Reads MEMORY_TYPE, DEVICE_ORDINAL, IS_MANAGED, HOST_POINTER, DEVICE_POINTER, RANGE_START,
/// RANGE_SIZE, CONTEXT, MAPPED with cuPointerGetAttributes.
#[derive(Debug, PartialEq)]
struct Attrs {
    memory_type: c_uint,
    ordinal: c_int,
    managed: c_int,
    host: *mut c_void,
    device: u64,
    start: u64,
    size: usize,
    ctx: *mut c_void,
    mapped: c_uint,
}

fn attributes(s: &Sim, p: u64) -> (c_int, Attrs) {
    let mut a = Attrs {
        memory_type: 77,
        ordinal: 77,
        managed: 77,
        host: ptr::dangling_mut::<c_void>(),
        device: 77,
        start: 77,
        size: 77,
        ctx: ptr::dangling_mut::<c_void>(),
        mapped: 77,
    };
    let mut ids = [2, 9, 8, 4, 3, 11, 12, 1, 13];
    let mut data: [*mut c_void; 9] = [
        (&mut a.memory_type as *mut c_uint).cast(),
        (&mut a.ordinal as *mut c_int).cast(),
        (&mut a.managed as *mut c_int).cast(),
        (&mut a.host as *mut *mut c_void).cast(),
        (&mut a.device as *mut u64).cast(),
        (&mut a.start as *mut u64).cast(),
        (&mut a.size as *mut usize).cast(),
        (&mut a.ctx as *mut *mut c_void).cast(),
        (&mut a.mapped as *mut c_uint).cast(),
    ];
    // SAFETY: nine attributes with correctly sized out-pointers.
    let rc = unsafe { (s.cuPointerGetAttributes)(9, ids.as_mut_ptr(), data.as_mut_ptr(), p) };
    (rc, a)
}

fn get_attr<T: Default>(s: &Sim, attr: c_int, p: u64) -> (c_int, T) {
    let mut v = T::default();
    // SAFETY: `T` is the attribute's type in each call below.
    let rc = unsafe { (s.cuPointerGetAttribute)((&mut v as *mut T).cast(), attr, p) };
    (rc, v)
}

#[test]
fn memory_and_pointer_attributes() {
    let (_s, _g) = sim();
    let s = cuda(0);
    let ctx = primary(s, 0);
    // SAFETY: valid out-pointers and ranges.
    unsafe {
        // Device memory.
        let mut d = 0u64;
        assert_eq!((s.cuMemAlloc_v2)(&mut d, 0), INVALID_VALUE);
        assert_eq!((s.cuMemAlloc_v2)(&mut d, 10_000), 0);
        let (rc, a) = attributes(s, d + 10);
        assert_eq!(rc, 0);
        assert_eq!(
            a,
            Attrs {
                memory_type: 2,
                ordinal: 0,
                managed: 0,
                host: ptr::null_mut(),
                device: d + 10,
                start: d,
                size: 10_000,
                ctx,
                mapped: 1
            }
        );
        assert_eq!(get_attr::<c_uint>(s, 2, d), (0, 2));
        assert_eq!(get_attr::<u64>(s, 11, d + 5), (0, d));
        assert_eq!(get_attr::<usize>(s, 12, d + 5), (0, 10_000));
        assert_eq!(
            get_attr::<usize>(s, 4, d).0,
            INVALID_VALUE,
            "device memory has no host pointer"
        );
        assert_eq!(get_attr::<usize>(s, 99, d).0, INVALID_VALUE);
        let (mut base, mut size) = (0u64, 0usize);
        assert_eq!(
            (s.cuMemGetAddressRange_v2)(&mut base, &mut size, d + 9999),
            0
        );
        assert_eq!((base, size), (d, 10_000));
        assert_eq!(
            (s.cuMemGetAddressRange_v2)(ptr::null_mut(), &mut size, d),
            0
        );
        assert_eq!(
            (s.cuMemGetAddressRange_v2)(&mut base, &mut size, d + 10_000),
            500
        );

        // Pageable memory.
        let local = [0u8; 32];
        let pageable = local.as_ptr() as u64;
        assert_eq!(get_attr::<c_uint>(s, 2, pageable).0, INVALID_VALUE);
        let (rc, a) = attributes(s, pageable);
        assert_eq!(rc, 0);
        assert_eq!(
            a,
            Attrs {
                memory_type: 0,
                ordinal: -2,
                managed: 0,
                host: ptr::null_mut(),
                device: 0,
                start: 0,
                size: 0,
                ctx: ptr::null_mut(),
                mapped: 0
            }
        );
        assert_eq!(
            (s.cuMemGetAddressRange_v2)(&mut base, &mut size, pageable),
            500
        );

        // Managed memory: DEVICE with IS_MANAGED, CPU accessible.
        let mut m = 0u64;
        assert_eq!((s.cuMemAllocManaged)(&mut m, 8192, 1), 0);
        ptr::write_bytes(m as *mut u8, 9, 8192);
        let (rc, a) = attributes(s, m);
        assert_eq!(
            (rc, a.memory_type, a.managed, a.ordinal, a.host),
            (0, 2, 1, 0, m as *mut c_void)
        );
        assert_eq!(get_attr::<c_int>(s, 8, m), (0, 1));
        assert_eq!((s.cuMemGetAddressRange_v2)(&mut base, &mut size, m), 0);
        assert_eq!((base, size), (m, 8192));

        // Pinned memory from both allocators.
        let mut h = ptr::null_mut();
        assert_eq!((s.cuMemHostAlloc)(&mut h, 12_345, 1), 0);
        let mut h2 = ptr::null_mut();
        assert_eq!((s.cuMemAllocHost_v2)(&mut h2, 4096), 0);
        for (p, len) in [(h, 12_345usize), (h2, 4096)] {
            let (rc, a) = attributes(s, p as u64 + 1);
            assert_eq!(
                (rc, a.memory_type, a.managed, a.host, a.device),
                (0, 1, 0, (p as usize + 1) as *mut c_void, p as u64 + 1)
            );
            assert_eq!(get_attr::<usize>(s, 4, p as u64), (0, p as usize));
            assert_eq!(
                (s.cuMemGetAddressRange_v2)(&mut base, &mut size, p as u64),
                0
            );
            assert_eq!((base, size), (p as u64, len));
            let mut dp = 0u64;
            assert_eq!((s.cuMemHostGetDevicePointer_v2)(&mut dp, p, 0), 0);
            assert_eq!(dp, p as u64);
        }
        let mut dp = 0u64;
        assert_eq!(
            (s.cuMemHostGetDevicePointer_v2)(&mut dp, local.as_ptr().cast_mut().cast(), 0),
            INVALID_VALUE
        );

        // Registration.
        let mut buf = vec![0u8; 8192];
        let b = buf.as_mut_ptr().cast::<c_void>();
        assert_eq!((s.cuMemHostRegister_v2)(b, 8192, 0), 0);
        assert_eq!((s.cuMemHostRegister_v2)(b, 100, 0), 712);
        assert_eq!(attributes(s, b as u64).1.memory_type, 1);
        assert_eq!(
            (s.cuMemGetAddressRange_v2)(&mut base, &mut size, b as u64),
            500
        );
        // No device alias without CU_MEMHOSTREGISTER_DEVICEMAP; one with it.
        let mut dp = 0u64;
        assert_eq!(
            (s.cuMemHostGetDevicePointer_v2)(&mut dp, b, 0),
            INVALID_VALUE
        );
        assert_eq!((s.cuMemHostUnregister)(b), 0);
        assert_eq!((s.cuMemHostRegister_v2)(b, 8192, 0x02), 0);
        assert_eq!((s.cuMemHostGetDevicePointer_v2)(&mut dp, b, 0), 0);
        assert_eq!(dp, b as u64);
        assert_eq!((s.cuMemHostUnregister)(b), 0);
        assert_eq!((s.cuMemHostUnregister)(b), 713);
        set_fault(s, "fail_host_alloc", 1);
        assert_eq!((s.cuMemHostRegister_v2)(b, 8192, 0), 2);
        assert_eq!((s.cuMemHostAlloc)(&mut h2, 4096, 0), 2);
        set_fault(s, "fail_host_alloc", 0);

        assert_eq!((s.cuMemFreeHost)(h), 0);
        assert_eq!((s.cuMemFreeHost)(h), INVALID_VALUE);
        assert_eq!((s.cuMemFree_v2)(m), 0);
        assert_eq!((s.cuMemFree_v2)(d), 0);
        assert_eq!((s.cuMemFree_v2)(d), INVALID_VALUE);
    }
}

static HOST_CALLS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn bump(user: *mut c_void) {
    HOST_CALLS.fetch_add(user as usize as u32, Ordering::SeqCst);
}

#[test]
fn copies_streams_and_events() {
    let (_s, _g) = sim();
    let s = cuda(0);
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };
    let len = 128 * 1024;
    // SAFETY: valid out-pointers; buffers outlive the synchronisations.
    unsafe {
        let (mut a, mut b) = (0u64, 0u64);
        assert_eq!((s.cuMemAlloc_v2)(&mut a, len), 0);
        assert_eq!((s.cuMemAlloc_v2)(&mut b, len), 0);
        let src = pattern(len, 21);
        assert_eq!((s.cuMemcpyHtoD_v2)(a, src.as_ptr().cast(), len), 0);
        let mut back = vec![0u8; len];
        assert_eq!((s.cuMemcpyDtoH_v2)(back.as_mut_ptr().cast(), a, len), 0);
        assert_eq!(back, src);
        // Unified cuMemcpy: device to device, then host to device.
        assert_eq!((s.cuMemcpy)(b, a, len), 0);
        assert_eq!((s.cuMemcpyDtoH_v2)(back.as_mut_ptr().cast(), b, len), 0);
        assert_eq!(back, src);
        let other = pattern(100, 1);
        assert_eq!((s.cuMemcpy)(b, other.as_ptr() as u64, 100), 0);
        assert_eq!((s.cuMemsetD8_v2)(b + 100, 0xCD, 28), 0);
        assert_eq!((s.cuMemcpyDtoH_v2)(back.as_mut_ptr().cast(), b, 128), 0);
        assert_eq!(back[..100], other[..]);
        assert_eq!(back[100..128], [0xCDu8; 28]);
        assert_eq!(
            (s.cuMemcpyHtoD_v2)(a, src.as_ptr().cast(), len + 1),
            INVALID_VALUE
        );
        assert_eq!(
            (s.cuMemcpyHtoD_v2)(src.as_ptr() as u64, src.as_ptr().cast(), 10),
            INVALID_VALUE
        );

        // Async on a created stream, with a host function and an event.
        let mut st = ptr::null_mut();
        assert_eq!((s.cuStreamCreate)(&mut st, 1), 0);
        assert_eq!((s.cuStreamCreate)(&mut st, 9), INVALID_VALUE);
        assert_eq!((s.cuStreamCreate)(&mut st, 0), 0);
        let mut ev = ptr::null_mut();
        assert_eq!((s.cuEventCreate)(&mut ev, 2), 0);
        set_fault(s, "copy_delay_us", 100_000);
        let fresh = pattern(len, 77);
        let mut out = vec![0u8; len];
        HOST_CALLS.store(0, Ordering::SeqCst);
        assert_eq!(
            (s.cuMemcpyHtoDAsync_v2)(a, fresh.as_ptr().cast(), len, st),
            0
        );
        assert_eq!(
            (s.cuLaunchHostFunc)(st, Some(bump), 5usize as *mut c_void),
            0
        );
        assert_eq!(
            (s.cuMemcpyDtoHAsync_v2)(out.as_mut_ptr().cast(), a, len, st),
            0
        );
        assert_eq!((s.cuEventRecord)(ev, st), 0);
        assert_eq!((s.cuStreamQuery)(st), 600);
        assert_eq!((s.cuEventSynchronize)(ev), 0);
        assert_eq!(out, fresh);
        assert_eq!(HOST_CALLS.load(Ordering::SeqCst), 5);
        assert_eq!((s.cuStreamSynchronize)(st), 0);
        assert_eq!((s.cuStreamQuery)(st), 0);
        set_fault(s, "copy_delay_us", 0);

        // The NULL stream is the context's default stream.
        assert_eq!(
            (s.cuMemcpyHtoDAsync_v2)(a, src.as_ptr().cast(), len, ptr::null_mut()),
            0
        );
        assert_eq!((s.cuStreamSynchronize)(ptr::null_mut()), 0);
        assert_eq!((s.cuCtxSynchronize)(), 0);
        let mut ctx = ptr::null_mut();
        assert_eq!((s.cuStreamGetCtx)(ptr::null_mut(), &mut ctx), 0);
        assert_eq!(ctx, primary(s, 0));

        // Async copy faults surface at synchronisation.
        set_fault(s, "fail_copy", 999);
        set_fault(s, "fail_copy_after", 1);
        assert_eq!((s.cuMemcpyHtoDAsync_v2)(a, src.as_ptr().cast(), len, st), 0);
        assert_eq!(
            (s.cuMemcpyDtoHAsync_v2)(out.as_mut_ptr().cast(), a, len, st),
            0
        );
        assert_eq!((s.cuStreamSynchronize)(st), 999);
        assert_eq!((s.cuMemcpyHtoD_v2)(a, src.as_ptr().cast(), len), 999);
        set_fault(s, "fail_copy", 0);
        set_fault(s, "fail_copy_after", 0);

        assert_eq!((s.cuEventDestroy_v2)(ev), 0);
        assert_eq!((s.cuEventDestroy_v2)(ev), 400);
        assert_eq!((s.cuStreamDestroy_v2)(st), 0);
        assert_eq!((s.cuStreamDestroy_v2)(st), 400);
        assert_eq!((s.cuMemFree_v2)(a), 0);
        assert_eq!((s.cuMemFree_v2)(b), 0);
    }
    assert_eq!(counter(s, "cuMemcpyHtoDAsync_v2"), 3);
    assert_eq!(counter(s, "cuMemcpyDtoHAsync_v2"), 2);
    assert_eq!(counter(s, "cuMemcpy"), 2);
    // h2d: sync src + cuMemcpy(host→device) + async fresh + async src (NULL stream) + async src
    // (stream, before the fault) = 4 * len + 100.
    assert_eq!(counter(s, "h2d_bytes"), 4 * len as u64 + 100);
    assert_eq!(counter(s, "d2d_bytes"), len as u64);
}

#[test]
fn error_strings() {
    let (s, _g) = sim();
    // This test's own calls (the counter is shared with the binary's other tests).
    let names0 = counter(s, "cuGetErrorName");
    let mut p = ptr::null();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!((s.cuGetErrorString)(1, &mut p), 0);
        assert_eq!(as_str(p), "invalid argument");
        assert_eq!((s.cuGetErrorName)(201, &mut p), 0);
        assert_eq!(as_str(p), "CUDA_ERROR_INVALID_CONTEXT");
        assert_eq!((s.cuGetErrorName)(0, &mut p), 0);
        assert_eq!(as_str(p), "CUDA_SUCCESS");
        assert_eq!((s.cuGetErrorName)(12_345, &mut p), INVALID_VALUE);
        assert!(p.is_null());
        assert_eq!((s.cuGetErrorString)(21, &mut p), INVALID_VALUE);
        assert_eq!((s.cuGetErrorString)(1, ptr::null_mut()), INVALID_VALUE);
    }
    assert_eq!(counter(s, "cuGetErrorName"), names0 + 3);
}
