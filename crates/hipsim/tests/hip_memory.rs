//! HIP face: devices, allocations, pointer attributes, address ranges, copies, errors,
//! `hipGetProcAddress`, counters and the environment settings.

mod common;

use std::ffi::{c_int, c_void};
use std::ptr;

use common::*;

const ROCM5: i64 = 50_200_000;

fn attrs(s: &Sim, p: *const c_void) -> (c_int, PointerAttribute) {
    let mut a = PointerAttribute::default();
    // SAFETY: valid out-pointer.
    let rc = unsafe { (s.hipPointerGetAttributes)(&mut a, p) };
    (rc, a)
}

fn range(s: &Sim, p: *mut c_void) -> (c_int, usize, usize) {
    let mut base = ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: valid out-pointers.
    let rc = unsafe { (s.hipMemGetAddressRange)(&mut base, &mut size, p) };
    (rc, base as usize, size)
}

#[test]
fn versions_and_devices() {
    let (s, _g) = sim();
    let mut v = 0;
    // SAFETY: valid out-pointers throughout.
    unsafe {
        assert_eq!((s.hipsimIsSimulator)(), 1);
        assert_eq!((s.hipInit)(0), 0);
        assert_eq!((s.hipInit)(1), 1);
        assert_eq!((s.hipRuntimeGetVersion)(&mut v), 0);
        assert_eq!(v, 70_200_000);
        assert_eq!((s.hipDriverGetVersion)(&mut v), 0);
        assert_eq!(v, 70_200_000);
        set_fault(s, "runtime_version", ROCM5);
        assert_eq!((s.hipRuntimeGetVersion)(&mut v), 0);
        assert_eq!(v, 50_200_000);
        assert_eq!((s.hipRuntimeGetVersion)(ptr::null_mut()), 1);

        let mut n = -1;
        assert_eq!((s.hipGetDeviceCount)(&mut n), 0);
        assert_eq!(n, 1);
        set_fault(s, "device_count", 3);
        assert_eq!((s.hipGetDeviceCount)(&mut n), 0);
        assert_eq!(n, 3);
        assert_eq!((s.hipSetDevice)(2), 0);
        let mut d = -1;
        assert_eq!((s.hipGetDevice)(&mut d), 0);
        assert_eq!(d, 2);
        assert_eq!((s.hipSetDevice)(3), 101);
        assert_eq!((s.hipSetDevice)(-1), 101);
        // Another thread starts on device 0.
        let other = std::thread::spawn(move || {
            let mut d = -1;
            let rc = (s.hipGetDevice)(&mut d);
            (rc, d)
        })
        .join()
        .unwrap();
        assert_eq!(other, (0, 0));

        set_fault(s, "device_count", 0);
        n = -1;
        assert_eq!((s.hipGetDeviceCount)(&mut n), 100);
        assert_eq!(n, 0);
        assert_eq!((s.hipInit)(0), 0, "hipInit succeeds without devices");
        let mut p = ptr::null_mut();
        assert_eq!((s.hipMalloc)(&mut p, 4096), 100);
        assert_eq!((s.hipsimSetFault)(cstr("device_count").as_ptr(), 17), -1);
        assert_eq!((s.hipsimSetFault)(cstr("no_such_fault").as_ptr(), 1), -1);
        assert_eq!((s.hipsimGetFault)(cstr("no_such_fault").as_ptr()), 0);
        set_fault(s, "device_count", 1);
        assert_eq!(fault(s, "device_count"), 1);
    }
}

#[test]
fn device_memory_attributes_and_range() {
    let (s, _g) = sim();
    let live0 = counter(s, "device_bytes_live");
    let size = 3 * 1024 * 1024 + 5;
    let p = dmalloc(s, size);
    assert_eq!(
        p as usize % (2 << 20),
        0,
        "device allocations start 2 MiB aligned"
    );
    assert_eq!(counter(s, "device_bytes_live"), live0 + size as u64);
    let q = dmalloc(s, 10);
    assert!(q as usize >= p as usize + size, "no overlap");
    assert!(q as usize - (p as usize + size) >= (2 << 20), "guard gap");

    for (version, device_type) in [(0, 2), (ROCM5, 1)] {
        set_fault(s, "runtime_version", version);
        let (rc, a) = attrs(s, p);
        assert_eq!(rc, 0);
        assert_eq!(a.memory_type, device_type);
        assert_eq!(a.device, 0);
        assert_eq!(a.device_pointer, p);
        assert!(a.host_pointer.is_null());
        assert_eq!(a.is_managed, 0);
        // Interior pointers resolve to their allocation.
        let inner = (p as usize + size - 1) as *mut c_void;
        let (rc, a) = attrs(s, inner);
        assert_eq!(rc, 0);
        assert_eq!(a.memory_type, device_type);
        assert_eq!(a.device_pointer, inner);
        assert_eq!(range(s, inner), (0, p as usize, size));
    }
    // One past the end is not part of the allocation.
    set_fault(s, "runtime_version", 0);
    let past = (p as usize + size) as *mut c_void;
    assert_eq!(attrs(s, past).1.memory_type, 0);
    assert_eq!(range(s, past).0, 500);

    // SAFETY: plain calls.
    unsafe {
        assert_eq!((s.hipFree)(p), 0);
        assert_eq!((s.hipFree)(p), 1, "double free");
        assert_eq!((s.hipFree)(q), 0);
        assert_eq!((s.hipFree)(ptr::null_mut()), 0);
        let mut z = ptr::dangling_mut::<c_void>();
        assert_eq!((s.hipMalloc)(&mut z, 0), 0);
        assert!(z.is_null());
        assert_eq!((s.hipMalloc)(ptr::null_mut(), 16), 1);
    }
    assert_eq!(counter(s, "device_bytes_live"), live0);
    // Freed addresses are never reused.
    let r = dmalloc(s, size);
    assert!(r as usize > q as usize);
    assert_eq!(attrs(s, p).1.memory_type, 0, "freed memory is unknown");
    // SAFETY: plain call.
    assert_eq!(unsafe { (s.hipFree)(r) }, 0);
}

#[test]
fn device_allocations_on_other_devices() {
    let (s, _g) = sim();
    set_fault(s, "device_count", 2);
    // SAFETY: plain calls.
    unsafe { assert_eq!((s.hipSetDevice)(1), 0) };
    let p = dmalloc(s, 4096);
    let (rc, a) = attrs(s, p);
    assert_eq!((rc, a.device, a.memory_type), (0, 1, 2));
    // SAFETY: plain calls.
    unsafe {
        assert_eq!((s.hipSetDevice)(0), 0);
        assert_eq!((s.hipFree)(p), 0);
    }
}

#[test]
fn huge_allocations_are_lazy() {
    let (s, _g) = sim();
    let size = 64usize << 30;
    let p = dmalloc(s, size);
    h2d(s, (p as usize + size - 4096) as *mut c_void, &[7u8; 4096]);
    assert_eq!(
        d2h(s, (p as usize + size - 4096) as *const c_void, 4096),
        vec![7u8; 4096]
    );
    assert_eq!(d2h(s, p, 16), vec![0u8; 16]);
    // SAFETY: plain call.
    assert_eq!(unsafe { (s.hipFree)(p) }, 0);
}

#[test]
fn pinned_host_memory() {
    let (s, _g) = sim();
    // SAFETY: resetting counters has no preconditions.
    unsafe { (s.hipsimResetCounters)() };
    let live0 = counter(s, "pinned_bytes_live");
    let mut p = ptr::null_mut();
    // SAFETY: valid out-pointers; the pinned memory is CPU accessible.
    unsafe {
        assert_eq!((s.hipHostMalloc)(&mut p, 100_000, 0), 0);
        assert_eq!(p as usize % 4096, 0);
        ptr::write_bytes(p.cast::<u8>(), 0x5A, 100_000);
    }
    assert_eq!(counter(s, "pinned_bytes_live"), live0 + 100_000);
    assert!(counter(s, "pinned_bytes_peak") >= live0 + 100_000);
    assert_eq!(counter(s, "hipHostMalloc"), 1);

    for (version, host_type) in [(0, 1), (ROCM5, 0)] {
        set_fault(s, "runtime_version", version);
        let inner = (p as usize + 4096) as *mut c_void;
        let (rc, a) = attrs(s, inner);
        assert_eq!(rc, 0);
        assert_eq!(a.memory_type, host_type);
        assert_eq!(a.device, 0);
        assert_eq!(a.device_pointer, inner);
        assert_eq!(a.host_pointer, inner);
        assert_eq!(a.is_managed, 0);
        assert_eq!(range(s, inner), (0, p as usize, 100_000));
    }
    let mut dev = ptr::null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!((s.hipHostGetDevicePointer)(&mut dev, p, 0), 0);
        assert_eq!(dev, p);
        let mut local = 0u8;
        let pageable = (&mut local as *mut u8).cast();
        assert_eq!((s.hipHostGetDevicePointer)(&mut dev, pageable, 0), 1);
        assert_eq!((s.hipHostFree)(p), 0);
        assert_eq!((s.hipHostFree)(p), 1);
        assert_eq!((s.hipHostFree)(ptr::null_mut()), 0);
    }
    assert_eq!(counter(s, "pinned_bytes_live"), live0);
    assert!(counter(s, "pinned_bytes_peak") >= live0 + 100_000);
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };
    assert_eq!(counter(s, "pinned_bytes_peak"), live0);
    assert_eq!(counter(s, "hipHostMalloc"), 0);
}

#[test]
fn registered_host_memory() {
    let (s, _g) = sim();
    let live0 = counter(s, "registered_bytes_live");
    let mut buf = vec![0u8; 3 * 4096];
    let p: *mut c_void = buf.as_mut_ptr().cast();
    // SAFETY: `buf` outlives the registration.
    unsafe {
        assert_eq!((s.hipHostRegister)(p, buf.len(), 0), 0);
        assert_eq!(
            counter(s, "registered_bytes_live"),
            live0 + buf.len() as u64
        );
        // Overlapping registrations are refused.
        assert_eq!((s.hipHostRegister)(p.add(4096), 10, 0), 712);
        assert_eq!((s.hipHostRegister)(p, buf.len(), 0), 712);
        let (rc, a) = attrs(s, p.add(5));
        assert_eq!(
            (rc, a.memory_type, a.host_pointer, a.device_pointer),
            (0, 1, p.add(5), p.add(5))
        );
        let mut dev = ptr::null_mut();
        assert_eq!((s.hipHostGetDevicePointer)(&mut dev, p.add(5), 0), 0);
        assert_eq!(dev, p.add(5));
        // Registered memory is not an allocation.
        assert_eq!(range(s, p).0, 500);
        assert_eq!((s.hipHostUnregister)(p.add(1)), 713);
        assert_eq!((s.hipHostUnregister)(p), 0);
        assert_eq!((s.hipHostUnregister)(p), 713);
        assert_eq!((s.hipHostRegister)(ptr::null_mut(), 10, 0), 1);
        assert_eq!((s.hipHostRegister)(p, 0, 0), 1);
        // Device memory cannot be registered.
        let d = dmalloc(s, 4096);
        assert_eq!((s.hipHostRegister)(d, 4096, 0), 1);
        assert_eq!((s.hipFree)(d), 0);
    }
    assert_eq!(counter(s, "registered_bytes_live"), live0);
}

#[test]
fn managed_memory() {
    let (s, _g) = sim();
    let mut p = ptr::null_mut();
    // SAFETY: managed memory is CPU accessible.
    unsafe {
        assert_eq!((s.hipMallocManaged)(&mut p, 8192, 1), 0);
        ptr::write_bytes(p.cast::<u8>(), 1, 8192);
    }
    for (version, managed_type) in [(0, 3), (ROCM5, 3)] {
        set_fault(s, "runtime_version", version);
        let (rc, a) = attrs(s, p);
        assert_eq!(rc, 0);
        assert_eq!(a.memory_type, managed_type);
        assert_eq!(a.is_managed, 1);
        assert_eq!(a.device, 0);
        assert_eq!(a.allocation_flags, 1);
        assert_eq!(range(s, p), (0, p as usize, 8192));
    }
    // Managed memory works as a copy operand.
    assert_eq!(d2h(s, p, 4), vec![1u8; 4]);
    // SAFETY: plain call.
    assert_eq!(unsafe { (s.hipFree)(p) }, 0);
}

#[test]
fn pageable_and_null_pointers() {
    // AMD's ROCm 7 runtime (clr, hip_memory.cpp) describes a pointer it does not know, NULL
    // included, as unregistered memory of device hipInvalidDeviceId (-2), with success.
    let (s, _g) = sim();
    let local = [0u8; 64];
    let p: *const c_void = local.as_ptr().cast();
    for q in [p, ptr::null()] {
        let mut a = PointerAttribute {
            memory_type: 7,
            device: 7,
            device_pointer: ptr::dangling_mut(),
            host_pointer: ptr::dangling_mut(),
            is_managed: 7,
            allocation_flags: 7,
        };
        // SAFETY: valid out-pointer.
        let rc = unsafe { (s.hipPointerGetAttributes)(&mut a, q) };
        assert_eq!(rc, 0, "ROCm 7 describes {q:?}");
        assert_eq!(a.memory_type, 0, "hipMemoryTypeUnregistered");
        assert_eq!(a.device, -2, "hipInvalidDeviceId");
        assert_eq!(a.is_managed, 0);
        assert_eq!(a.allocation_flags, 0);
        assert!(a.device_pointer.is_null() && a.host_pointer.is_null());
    }
    // ROCm 5, and AMD's documentation at every version: hipErrorInvalidValue.
    set_fault(s, "runtime_version", ROCM5);
    assert_eq!(attrs(s, p).0, 1, "ROCm 5 refuses pageable memory");
    assert_eq!(attrs(s, ptr::null()).0, 1, "and NULL");
    assert_eq!(range(s, p.cast_mut()).0, 500);
    // SAFETY: NULL out-pointer is refused.
    unsafe {
        assert_eq!((s.hipPointerGetAttributes)(ptr::null_mut(), p), 1);
        set_fault(s, "runtime_version", 0);
        assert_eq!((s.hipPointerGetAttributes)(ptr::null_mut(), p), 1);
        let mut size = 0usize;
        assert_eq!(
            (s.hipMemGetAddressRange)(ptr::null_mut(), &mut size, p.cast_mut()),
            1
        );
    }
}

#[test]
fn host_get_device_pointer_takes_no_flags() {
    // AMD's runtime refuses any flags (the parameter is reserved): hipErrorInvalidValue, and
    // *devPtr is not written.
    let (s, _g) = sim();
    let mut p = ptr::null_mut();
    // SAFETY: valid out-pointers; `p` is freed at the end.
    unsafe {
        assert_eq!((s.hipHostMalloc)(&mut p, 4096, 0), 0);
        for flags in [1, 2, 0x8000_0000, u32::MAX] {
            let mut dev = ptr::dangling_mut::<c_void>();
            assert_eq!(
                (s.hipHostGetDevicePointer)(&mut dev, p, flags),
                1,
                "flags {flags:#x}"
            );
            assert_eq!(
                dev,
                ptr::dangling_mut(),
                "flags {flags:#x}: *devPtr untouched"
            );
        }
        let mut dev = ptr::null_mut();
        assert_eq!((s.hipHostGetDevicePointer)(&mut dev, p, 0), 0);
        assert_eq!(dev, p);
        assert_eq!((s.hipHostGetDevicePointer)(ptr::null_mut(), p, 0), 1);
        assert_eq!((s.hipHostFree)(p), 0);
    }
}

#[test]
fn synchronous_copies_and_counters() {
    let (s, _g) = sim();
    // SAFETY: no preconditions.
    unsafe { (s.hipsimResetCounters)() };
    let len = 256 * 1024;
    let a = dmalloc(s, len);
    let b = dmalloc(s, len);
    let data = pattern(len, 3);
    h2d(s, a, &data);
    assert_eq!(counter(s, "h2d_bytes"), len as u64);
    // SAFETY: valid device/host ranges unless stated.
    unsafe {
        assert_eq!((s.hipMemcpy)(b, a, len, 3), 0);
        assert_eq!(counter(s, "d2d_bytes"), len as u64);
        assert_eq!(d2h(s, b, len), data);
        assert_eq!(counter(s, "d2h_bytes"), len as u64);
        // hipMemcpyDefault infers directions from the addresses.
        let mut back = vec![0u8; 100];
        assert_eq!(
            (s.hipMemcpy)(
                back.as_mut_ptr().cast(),
                (a as usize + 7) as *const c_void,
                100,
                4
            ),
            0
        );
        assert_eq!(back, data[7..107]);
        let src = pattern(100, 9);
        assert_eq!((s.hipMemcpy)(b, src.as_ptr().cast(), 100, 4), 0);
        assert_eq!(d2h(s, b, 100), src);
        let mut h = vec![0u8; 100];
        assert_eq!(
            (s.hipMemcpy)(h.as_mut_ptr().cast(), src.as_ptr().cast(), 100, 0),
            0
        );
        assert_eq!(h, src);
        assert_eq!(counter(s, "h2h_bytes"), 100);
        // hipMemcpyHtoD / DtoH.
        assert_eq!((s.hipMemcpyHtoD)(a, src.as_ptr().cast_mut().cast(), 100), 0);
        let mut h2 = vec![0u8; 100];
        assert_eq!((s.hipMemcpyDtoH)(h2.as_mut_ptr().cast(), a, 100), 0);
        assert_eq!(h2, src);
        assert_eq!(counter(s, "hipMemcpyHtoD"), 1);
        assert_eq!(counter(s, "hipMemcpyDtoH"), 1);
        // Pinned memory is a valid "device" operand (its device alias is itself).
        let mut pinned = ptr::null_mut();
        assert_eq!((s.hipHostMalloc)(&mut pinned, 4096, 0), 0);
        assert_eq!((s.hipMemcpy)(pinned, src.as_ptr().cast(), 100, 1), 0);
        assert_eq!(
            std::slice::from_raw_parts(pinned.cast::<u8>(), 100),
            &src[..]
        );
        assert_eq!((s.hipHostFree)(pinned), 0);

        // Refusals.
        let end = (a as usize + len - 10) as *mut c_void;
        assert_eq!(
            (s.hipMemcpy)(end, src.as_ptr().cast(), 11, 1),
            1,
            "past the allocation"
        );
        assert_eq!((s.hipPeekAtLastError)(), 1);
        assert_eq!((s.hipPeekAtLastError)(), 1);
        assert_eq!((s.hipGetLastError)(), 1);
        assert_eq!((s.hipGetLastError)(), 0);
        let mut local = [0u8; 16];
        assert_eq!(
            (s.hipMemcpy)(a, local.as_ptr().cast(), 16, 2),
            1,
            "pageable memory as device source"
        );
        assert_eq!(
            (s.hipMemcpy)(local.as_mut_ptr().cast(), a, 16, 0),
            1,
            "device memory as host source"
        );
        assert_eq!((s.hipMemcpy)(a, ptr::null(), 16, 1), 1);
        assert_eq!((s.hipMemcpy)(a, local.as_ptr().cast(), 16, 9), 21);
        assert_eq!(
            (s.hipMemcpy)(a, ptr::null(), 0, 1),
            0,
            "zero bytes is a no-op"
        );
        // A success does not clear the last error.
        assert_eq!((s.hipGetLastError)(), 21);
        assert_eq!((s.hipGetLastError)(), 0);

        // hipMemset.
        assert_eq!((s.hipMemset)(a, 0xAB, 64), 0);
        assert_eq!(d2h(s, a, 65)[..64], [0xABu8; 64]);
        assert_eq!((s.hipMemset)(local.as_mut_ptr().cast(), 0, 16), 1);
        assert_eq!(counter(s, "memset_bytes"), 64);

        assert_eq!((s.hipFree)(a), 0);
        assert_eq!((s.hipFree)(b), 0);
    }
    // Since the reset at the start: 15 hipMemcpy calls (h2d/d2h helpers included, refused
    // ones too; hipMemcpyHtoD/DtoH are counted apart) and the 2 allocations.
    assert_eq!(counter(s, "hipMemcpy"), 15);
    assert_eq!(counter(s, "hipMalloc"), 2);
    assert_eq!(counter(s, "no such counter"), 0);
    // SAFETY: NULL name reads as 0.
    assert_eq!(unsafe { (s.hipsimCounter)(ptr::null()) }, 0);
}

#[test]
fn copy_faults_and_delay() {
    let (s, _g) = sim();
    let d = dmalloc(s, 4096);
    let src = [1u8; 64];
    // SAFETY: valid ranges.
    unsafe {
        set_fault(s, "fail_copy", 999);
        let before = counter(s, "copy_faults_injected");
        assert_eq!((s.hipMemcpy)(d, src.as_ptr().cast(), 64, 1), 999);
        assert_eq!((s.hipGetLastError)(), 999);
        assert_eq!(counter(s, "copy_faults_injected"), before + 1);
        // The first N copies succeed, the rest fail.
        set_fault(s, "fail_copy_after", 2);
        let rcs: Vec<c_int> = (0..5)
            .map(|_| (s.hipMemcpy)(d, src.as_ptr().cast(), 64, 1))
            .collect();
        assert_eq!(rcs, vec![0, 0, 999, 999, 999]);
        // Re-arming restarts the count.
        set_fault(s, "fail_copy", 700);
        let rcs: Vec<c_int> = (0..3)
            .map(|_| (s.hipMemcpy)(d, src.as_ptr().cast(), 64, 1))
            .collect();
        assert_eq!(rcs, vec![0, 0, 700]);
        set_fault(s, "fail_copy", 0);
        set_fault(s, "fail_copy_after", 0);
        assert_eq!((s.hipMemcpy)(d, src.as_ptr().cast(), 64, 1), 0);

        set_fault(s, "copy_delay_us", 30_000);
        let t = std::time::Instant::now();
        assert_eq!((s.hipMemcpy)(d, src.as_ptr().cast(), 64, 1), 0);
        assert!(t.elapsed().as_millis() >= 30);
        set_fault(s, "copy_delay_us", 0);

        set_fault(s, "fail_host_alloc", 1);
        let mut p = ptr::null_mut();
        assert_eq!((s.hipHostMalloc)(&mut p, 4096, 0), 2);
        let mut buf = vec![0u8; 4096];
        assert_eq!((s.hipHostRegister)(buf.as_mut_ptr().cast(), 4096, 0), 2);
        set_fault(s, "fail_host_alloc", 0);
        assert_eq!((s.hipHostRegister)(buf.as_mut_ptr().cast(), 4096, 0), 0);
        assert_eq!((s.hipHostUnregister)(buf.as_mut_ptr().cast()), 0);
        assert_eq!((s.hipFree)(d), 0);
    }
}

#[test]
fn error_strings() {
    let (s, _g) = sim();
    // SAFETY: the simulator returns static strings.
    unsafe {
        assert_eq!(as_str((s.hipGetErrorString)(0)), "no error");
        assert_eq!(as_str((s.hipGetErrorString)(1)), "invalid argument");
        assert_eq!(
            as_str((s.hipGetErrorName)(712)),
            "hipErrorHostMemoryAlreadyRegistered"
        );
        assert_eq!(as_str((s.hipGetErrorName)(500)), "hipErrorNotFound");
        assert_eq!(as_str((s.hipGetErrorName)(123_456)), "hipErrorUnknown");
        assert!(!as_str((s.hipGetErrorString)(-3)).is_empty());
    }
}

#[test]
fn get_proc_address() {
    let (s, _g) = sim();
    // This test's own look-ups (the counter is shared with the binary's other tests).
    let lookups0 = counter(s, "hipGetProcAddress");
    let lookup = |name: &str| {
        let mut p = ptr::dangling_mut::<c_void>();
        let mut status = -1;
        // SAFETY: valid name and out-pointers.
        let rc = unsafe {
            (s.hipGetProcAddress)(cstr(name).as_ptr(), &mut p, 70_200_000, 0, &mut status)
        };
        (rc, p, status)
    };
    let lib = library();
    for name in [
        "hipMalloc",
        "hipAmdFileRead",
        "hipAmdFileWrite",
        "hipStreamGetDevice",
        "hipGetProcAddress",
    ] {
        let (rc, p, status) = lookup(name);
        // SAFETY: only the address is compared.
        let direct: libloading::Symbol<*mut c_void> =
            unsafe { lib.get(format!("{name}\0").as_bytes()) }.unwrap();
        assert_eq!((rc, status), (0, 0), "{name}");
        assert_eq!(p, *direct, "{name}");
    }
    // A missing symbol is hipErrorInvalidValue (AMD's runtime and its documentation), with
    // *pfn = NULL and HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND.
    assert_eq!(lookup("hipNoSuchFunction"), (1, ptr::null_mut(), 1));
    assert_eq!(lookup("cuInit"), (1, ptr::null_mut(), 1));
    assert_eq!(lookup(""), (1, ptr::null_mut(), 1));
    set_fault(s, "no_fastpath", 1);
    assert_eq!(lookup("hipAmdFileRead"), (1, ptr::null_mut(), 1));
    assert_eq!(lookup("hipAmdFileWrite"), (1, ptr::null_mut(), 1));
    assert_eq!(lookup("hipMalloc").0, 0);
    // SAFETY: NULL status pointer is allowed; NULL pfn is refused.
    unsafe {
        let mut p = ptr::null_mut();
        assert_eq!(
            (s.hipGetProcAddress)(cstr("hipMalloc").as_ptr(), &mut p, 0, 0, ptr::null_mut()),
            0
        );
        assert!(!p.is_null());
        assert_eq!(
            (s.hipGetProcAddress)(
                cstr("hipMalloc").as_ptr(),
                ptr::null_mut(),
                0,
                0,
                ptr::null_mut()
            ),
            1
        );
        assert_eq!(
            (s.hipGetProcAddress)(ptr::null(), &mut p, 0, 0, ptr::null_mut()),
            1
        );
    }
    // 5 found, 3 missing, 3 with no_fastpath, 3 with NULL arguments or status.
    assert_eq!(counter(s, "hipGetProcAddress"), lookups0 + 14);
}

#[test]
fn concurrent_allocation_and_copies() {
    let (s, _g) = sim();
    let threads: Vec<_> = (0..8u8)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..50usize {
                    let len = 4096 + i * 1000 + t as usize;
                    let p = dmalloc(s, len);
                    let data = pattern(len, t.wrapping_add(i as u8));
                    h2d(s, p, &data);
                    assert_eq!(d2h(s, p, len), data);
                    // SAFETY: plain call.
                    assert_eq!(unsafe { (s.hipFree)(p) }, 0);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// Runs this test binary again with simulator settings in the environment; the child part is
/// `environment_child`.
#[test]
fn environment_settings_are_read_at_load() {
    run_child(
        "environment_child",
        &[
            ("HIPSIM_RUNTIME_VERSION", "50200000"),
            ("HIPSIM_DEVICE_COUNT", "3"),
            ("HIPSIM_FASTPATH_ERRNO", "EREMOTEIO"),
            ("HIPSIM_FASTPATH_HIP_ERROR", "hipErrorNotSupported"),
            ("HIPSIM_FAIL_COPY", "999"),
            ("HIPSIM_FAIL_COPY_AFTER", "4"),
            ("HIPSIM_SHORT_TRANSFER", "8192"),
            ("HIPSIM_NO_FASTPATH", "1"),
            ("HIPSIM_FAIL_HOST_ALLOC", "1"),
            ("HIPSIM_COPY_DELAY_US", "5"),
        ],
        "environment child ok",
    );
}

#[test]
fn environment_child() {
    if !in_child() {
        return;
    }
    let s = sim_raw();
    assert_eq!(fault(s, "runtime_version"), 50_200_000);
    assert_eq!(fault(s, "device_count"), 3);
    assert_eq!(fault(s, "fastpath_errno"), 121);
    assert_eq!(fault(s, "fastpath_hip_error"), 801);
    assert_eq!(fault(s, "fail_copy"), 999);
    assert_eq!(fault(s, "fail_copy_after"), 4);
    assert_eq!(fault(s, "short_transfer"), 8192);
    assert_eq!(fault(s, "no_fastpath"), 1);
    assert_eq!(fault(s, "fail_host_alloc"), 1);
    assert_eq!(fault(s, "copy_delay_us"), 5);
    let mut v = 0;
    let mut n = 0;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!((s.hipRuntimeGetVersion)(&mut v), 0);
        assert_eq!((s.hipGetDeviceCount)(&mut n), 0);
    }
    assert_eq!((v, n), (50_200_000, 3));
    println!("environment child ok");
}
