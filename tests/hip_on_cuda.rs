//! The HIP-on-CUDA runtime (`scripts/gpu/hip_on_cuda`, a `libamdhip64.so.7` built with gcc)
//! over the simulator's CUDA driver API: the stack that runs the library's HIP backend on an
//! NVIDIA GPU (`scripts/gpu/hip_suite.sh`), here with `libhipsim.so` as `libcuda`
//! (`HIP_ON_CUDA_LIBCUDA`).
//!
//! - The shim's HIP semantics, call by call (each test in a child process, which loads the shim
//!   with the settings it names): versions, errors and the last error, `hipGetProcAddress`
//!   without the GPU-direct entry points, pointer attributes in ROCm 7's and ROCm 5's numbering,
//!   memory and copies, host registration, streams, events, waits and writes on memory words,
//!   host functions, device attributes and properties, modules and launches (`extra` and
//!   `kernelParams`), the per-thread default stream setting.
//! - The C-ABI suite (`tests/c/suite.c`, HIP mode, built by `scripts/gpu/build_suite.sh --hip`)
//!   and the three C examples with `HIPFILE_PLATFORM=amd HIPFILE_HIP_LIBRARY=<the shim>`.

mod common;

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use common::cc::{lib_dir, CProgram};
use common::cprog::{suite_groups, suite_passed};
use common::{
    fnv1a64, hipsim_path, in_child, out_dir, repo_root, run_in_child, stderr, stdout, text,
};

// ---- building ---------------------------------------------------------------------------------

fn work_dir() -> PathBuf {
    out_dir("hip_on_cuda")
}

/// The shim, built once per test process by its own build script (against the CUDA subset
/// where this machine has no cuda.h; processes building at once each rename a complete file
/// into place); the last line the script prints is the library's path.
fn shim() -> &'static Path {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let out = work_dir().join("build");
        let o = Command::new("bash")
            .arg(repo_root().join("scripts/gpu/hip_on_cuda/build.sh"))
            .arg(&out)
            .output()
            .expect("run build.sh (bash and gcc are required)");
        assert!(o.status.success(), "build.sh failed:\n{}", text(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        let lib = PathBuf::from(stdout.lines().last().expect("build.sh prints the path"));
        assert_eq!(lib, out.join("libamdhip64.so.7"));
        assert!(lib.exists());
        lib
    })
}

/// Environment of a process that runs the library on the shim over the simulator.
fn hip_mode(cmd: &mut Command) {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") || k.starts_with("HIP_ON_CUDA_") {
            cmd.env_remove(&k);
        }
    }
    // Cargo's LD_LIBRARY_PATH may name another libhipsim.so: only the paths given here count.
    cmd.env_remove("LD_LIBRARY_PATH")
        .env("HIPFILE_PLATFORM", "amd")
        .env("HIPFILE_HIP_LIBRARY", shim())
        .env("HIP_ON_CUDA_LIBCUDA", hipsim_path());
}

/// Runs test `name` of this file in a child process that loads the shim over the simulator,
/// with `env` added.
fn in_shim_child(name: &str, env: &[(&str, &str)]) {
    let shim = shim().to_str().unwrap().to_string();
    let sim = hipsim_path().to_str().unwrap().to_string();
    let mut all = vec![
        ("HOC_TEST_SHIM", shim.as_str()),
        ("HIP_ON_CUDA_LIBCUDA", sim.as_str()),
    ];
    all.extend_from_slice(env);
    run_in_child(module_path!(), name, &all);
}

// ---- the shim's API, loaded in a child ----------------------------------------------------------

type E = c_int;
type Stream = *mut c_void;

/// hipPointerAttribute_t.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct PointerAttribute {
    memory_type: c_int,
    device: c_int,
    device_pointer: *mut c_void,
    host_pointer: *mut c_void,
    is_managed: c_int,
    allocation_flags: c_uint,
}

impl Default for PointerAttribute {
    fn default() -> Self {
        PointerAttribute {
            memory_type: -7,
            device: -7,
            device_pointer: 0x7 as *mut c_void,
            host_pointer: 0x7 as *mut c_void,
            is_managed: -7,
            allocation_flags: 7,
        }
    }
}

macro_rules! api {
    ($($name:ident : fn($($arg:ty),*) -> $ret:ty;)*) => {
        #[allow(non_snake_case)]
        struct Hip {
            $($name: unsafe extern "C" fn($($arg),*) -> $ret,)*
            lib: libloading::Library,
        }
        impl Hip {
            fn load(path: &str) -> Hip {
                // SAFETY: loading the shim runs no initialiser; it dlopens the driver lazily.
                let lib = unsafe { libloading::Library::new(path) }.expect("dlopen the shim");
                Hip {
                    $($name: {
                        // SAFETY: the type is the HIP C signature of the symbol.
                        *unsafe { lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(
                            concat!(stringify!($name), "\0").as_bytes()) }
                            .expect(stringify!($name))
                    },)*
                    lib,
                }
            }
        }
    };
}

api! {
    hipInit: fn(c_uint) -> E;
    hipRuntimeGetVersion: fn(*mut c_int) -> E;
    hipDriverGetVersion: fn(*mut c_int) -> E;
    hipGetDeviceCount: fn(*mut c_int) -> E;
    hipGetDevice: fn(*mut c_int) -> E;
    hipSetDevice: fn(c_int) -> E;
    hipDeviceSynchronize: fn() -> E;
    hipGetErrorName: fn(E) -> *const c_char;
    hipGetErrorString: fn(E) -> *const c_char;
    hipGetLastError: fn() -> E;
    hipPeekAtLastError: fn() -> E;
    hipGetProcAddress: fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> E;
    hipMalloc: fn(*mut *mut c_void, usize) -> E;
    hipFree: fn(*mut c_void) -> E;
    hipMallocManaged: fn(*mut *mut c_void, usize, c_uint) -> E;
    hipHostMalloc: fn(*mut *mut c_void, usize, c_uint) -> E;
    hipHostFree: fn(*mut c_void) -> E;
    hipHostRegister: fn(*mut c_void, usize, c_uint) -> E;
    hipHostUnregister: fn(*mut c_void) -> E;
    hipHostGetDevicePointer: fn(*mut *mut c_void, *mut c_void, c_uint) -> E;
    hipPointerGetAttributes: fn(*mut PointerAttribute, *const c_void) -> E;
    hipMemGetAddressRange: fn(*mut *mut c_void, *mut usize, *mut c_void) -> E;
    hipMemcpy: fn(*mut c_void, *const c_void, usize, c_int) -> E;
    hipMemcpyAsync: fn(*mut c_void, *const c_void, usize, c_int, Stream) -> E;
    hipMemset: fn(*mut c_void, c_int, usize) -> E;
    hipStreamCreate: fn(*mut Stream) -> E;
    hipStreamCreateWithFlags: fn(*mut Stream, c_uint) -> E;
    hipStreamDestroy: fn(Stream) -> E;
    hipStreamSynchronize: fn(Stream) -> E;
    hipStreamQuery: fn(Stream) -> E;
    hipStreamGetId: fn(Stream, *mut u64) -> E;
    hipStreamGetDevice: fn(Stream, *mut c_int) -> E;
    hipStreamWaitValue32: fn(Stream, *mut c_void, u32, c_uint, u32) -> E;
    hipStreamWaitValue64: fn(Stream, *mut c_void, u64, c_uint, u64) -> E;
    hipStreamWriteValue32: fn(Stream, *mut c_void, u32, c_uint) -> E;
    hipLaunchHostFunc: fn(Stream, Option<unsafe extern "C" fn(*mut c_void)>, *mut c_void) -> E;
    hipEventCreate: fn(*mut *mut c_void) -> E;
    hipEventCreateWithFlags: fn(*mut *mut c_void, c_uint) -> E;
    hipEventRecord: fn(*mut c_void, Stream) -> E;
    hipEventSynchronize: fn(*mut c_void) -> E;
    hipEventQuery: fn(*mut c_void) -> E;
    hipEventDestroy: fn(*mut c_void) -> E;
    hipDeviceGetAttribute: fn(*mut c_int, c_int, c_int) -> E;
    hipGetDevicePropertiesR0600: fn(*mut u8, c_int) -> E;
    hipModuleLoadData: fn(*mut *mut c_void, *const c_void) -> E;
    hipModuleUnload: fn(*mut c_void) -> E;
    hipModuleGetFunction: fn(*mut *mut c_void, *mut c_void, *const c_char) -> E;
    hipModuleLaunchKernel: fn(*mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
        Stream, *mut *mut c_void, *mut *mut c_void) -> E;
    hipModuleOccupancyMaxActiveBlocksPerMultiprocessor: fn(*mut c_int, *mut c_void, c_int, usize) -> E;
}

/// The shim of the child's environment.
fn hip() -> Hip {
    let path = std::env::var("HOC_TEST_SHIM").expect("a test child names the shim");
    let h = Hip::load(&path);
    // SAFETY: flags must be 0.
    assert_eq!(unsafe { (h.hipInit)(0) }, 0);
    h
}

/// The simulator the shim loaded (the same path, hence the same instance): its counters.
fn sim_counter(name: &str) -> u64 {
    let name = std::ffi::CString::new(name).unwrap();
    // SAFETY: the simulator the shim already loaded (no initialiser runs again); its counter
    // query takes a NUL-terminated name.
    unsafe {
        let lib = libloading::Library::new(hipsim_path()).unwrap();
        let f = lib
            .get::<unsafe extern "C" fn(*const c_char) -> u64>(b"hipsimCounter\0")
            .unwrap();
        f(name.as_ptr())
    }
}

fn s(p: *const c_char) -> String {
    assert!(!p.is_null());
    // SAFETY: the shim returns static NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

const INVALID_VALUE: E = 1;
const INVALID_MEMCPY_DIRECTION: E = 21;
const INVALID_DEVICE: E = 101;
const INVALID_HANDLE: E = 400;
const NOT_FOUND: E = 500;
const NOT_READY: E = 600;
const HOST_MEMORY_NOT_REGISTERED: E = 713;
const NOT_SUPPORTED: E = 801;
const H2D: c_int = 1;
const D2H: c_int = 2;

/// The body of a test in the child; in the parent, the child's launch.
macro_rules! shim_test {
    ($name:ident, [$(($k:expr, $v:expr)),* $(,)?], $body:block) => {
        #[test]
        fn $name() {
            if !in_child() {
                in_shim_child(stringify!($name), &[$(($k, $v)),*]);
                return;
            }
            $body
        }
    };
}

// ---- semantics ---------------------------------------------------------------------------------

shim_test!(versions_devices_and_errors, [], {
    let h = hip();
    // SAFETY: valid out-pointers; plain values.
    unsafe {
        assert_eq!((h.hipInit)(1), INVALID_VALUE);
        let mut v = 0;
        assert_eq!((h.hipRuntimeGetVersion)(&mut v), 0);
        assert_eq!(v, 70_000_000, "ROCm 7.0.0");
        assert_eq!((h.hipDriverGetVersion)(&mut v), 0);
        assert_eq!(v, 70_000_000);
        let mut n = -1;
        assert_eq!((h.hipGetDeviceCount)(&mut n), 0);
        assert_eq!(n, 1);
        assert_eq!((h.hipGetDevice)(&mut n), 0);
        assert_eq!(n, 0);
        assert_eq!((h.hipSetDevice)(1), INVALID_DEVICE);
        assert_eq!((h.hipPeekAtLastError)(), INVALID_DEVICE);
        assert_eq!((h.hipSetDevice)(0), 0);
        assert_eq!(
            (h.hipGetLastError)(),
            INVALID_DEVICE,
            "a success does not clear it"
        );
        assert_eq!((h.hipGetLastError)(), 0);

        assert_eq!(
            s((h.hipGetErrorName)(712)),
            "hipErrorHostMemoryAlreadyRegistered"
        );
        assert_eq!(
            s((h.hipGetErrorString)(100)),
            "no ROCm-capable device is detected"
        );
        assert_eq!(s((h.hipGetErrorName)(21)), "hipErrorInvalidMemcpyDirection");
        assert_eq!(s((h.hipGetErrorName)(12345)), "hipErrorUnknown");
        assert_eq!(s((h.hipGetErrorString)(12345)), "unknown error");
    }
});

shim_test!(proc_address_has_no_gpu_direct_entry_points, [], {
    let h = hip();
    let mut p: *mut c_void = ptr::dangling_mut();
    let mut status: c_int = -1;
    // SAFETY: valid names and out-pointers.
    unsafe {
        for name in [c"hipAmdFileRead", c"hipAmdFileWrite", c"hipNoSuchFunction"] {
            assert_eq!(
                (h.hipGetProcAddress)(name.as_ptr(), &mut p, 70_000_000, 0, &mut status),
                INVALID_VALUE,
                "{name:?}"
            );
            assert!(p.is_null());
            assert_eq!(status, 1, "HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND");
        }
        assert_eq!(
            (h.hipGetProcAddress)(c"hipMalloc".as_ptr(), &mut p, 70_000_000, 0, &mut status),
            0
        );
        assert_eq!(status, 0);
        assert_eq!(p as usize, h.hipMalloc as usize);
        assert_eq!(
            (h.hipGetProcAddress)(
                c"hipGetDeviceProperties".as_ptr(),
                &mut p,
                600,
                0,
                ptr::null_mut()
            ),
            0
        );
        assert_eq!(p as usize, h.hipGetDevicePropertiesR0600 as usize);
        assert_eq!(
            (h.hipGetProcAddress)(ptr::null(), &mut p, 600, 0, ptr::null_mut()),
            INVALID_VALUE
        );
        let sym = h
            .lib
            .get::<unsafe extern "C" fn()>(b"hipAmdFileRead\0")
            .is_err();
        assert!(sym, "not exported either");
    }
});

shim_test!(pointer_attributes_in_rocm7_numbering, [], {
    let h = hip();
    let attrs = |p: *const c_void| {
        let mut a = PointerAttribute::default();
        // SAFETY: valid out-pointer; the shim only inspects the address.
        let rc = unsafe { (h.hipPointerGetAttributes)(&mut a, p) };
        (rc, a)
    };
    let (mut dev, mut host, mut managed) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!((h.hipMalloc)(&mut dev, 1 << 20), 0);
        assert_eq!((h.hipHostMalloc)(&mut host, 1 << 20, 0), 0);
        assert_eq!((h.hipMallocManaged)(&mut managed, 1 << 20, 1), 0);
    }
    let (rc, a) = attrs(dev);
    assert_eq!(rc, 0);
    assert_eq!((a.memory_type, a.device, a.is_managed), (2, 0, 0));
    assert_eq!((a.device_pointer, a.host_pointer), (dev, ptr::null_mut()));
    assert_eq!(a.allocation_flags, 0);
    let (rc, a) = attrs(host);
    assert_eq!(rc, 0);
    assert_eq!((a.memory_type, a.device, a.is_managed), (1, 0, 0));
    assert_eq!((a.device_pointer, a.host_pointer), (host, host));
    assert_eq!(
        a.allocation_flags, 3,
        "the CUDA flags of the allocation: portable and mapped, always"
    );
    let (rc, a) = attrs(managed);
    assert_eq!(rc, 0);
    assert_eq!((a.memory_type, a.is_managed), (3, 1));
    // Pageable memory and NULL: hipSuccess, Unregistered, hipInvalidDeviceId (AMD's runtime).
    let local = [0u8; 64];
    for p in [local.as_ptr().cast::<c_void>(), ptr::null()] {
        let (rc, a) = attrs(p);
        assert_eq!(rc, 0, "{p:?}");
        assert_eq!((a.memory_type, a.device, a.is_managed), (0, -2, 0));
        assert!(a.device_pointer.is_null() && a.host_pointer.is_null());
    }
    // SAFETY: NULL attributes are refused before anything is written.
    assert_eq!(
        unsafe { (h.hipPointerGetAttributes)(ptr::null_mut(), dev) },
        INVALID_VALUE
    );
    // SAFETY: memory from the shim.
    unsafe {
        assert_eq!((h.hipFree)(dev), 0);
        assert_eq!((h.hipHostFree)(host), 0);
        assert_eq!((h.hipFree)(managed), 0);
    }
});

shim_test!(
    pointer_attributes_in_rocm5_numbering,
    [("HIP_ON_CUDA_HIP_VERSION", "50700000")],
    {
        let h = hip();
        let mut v = 0;
        let (mut dev, mut host) = (ptr::null_mut(), ptr::null_mut());
        let mut a = PointerAttribute::default();
        let local = 0u64;
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!((h.hipRuntimeGetVersion)(&mut v), 0);
            assert_eq!(v, 50_700_000);
            assert_eq!((h.hipMalloc)(&mut dev, 4096), 0);
            assert_eq!((h.hipHostMalloc)(&mut host, 4096, 0), 0);
            assert_eq!((h.hipPointerGetAttributes)(&mut a, dev), 0);
            assert_eq!(a.memory_type, 1, "ROCm 5: hipMemoryTypeDevice = 1");
            assert_eq!((h.hipPointerGetAttributes)(&mut a, host), 0);
            assert_eq!(a.memory_type, 0, "ROCm 5: hipMemoryTypeHost = 0");
            assert_eq!(
                (h.hipPointerGetAttributes)(&mut a, (&local as *const u64).cast()),
                INVALID_VALUE,
                "ROCm 5 refuses memory it does not know"
            );
            assert_eq!((h.hipFree)(dev), 0);
            assert_eq!((h.hipHostFree)(host), 0);
        }
    }
);

shim_test!(memory_copies_and_registration, [], {
    let h = hip();
    let pattern: Vec<u8> = (0..65536u32).map(|i| (i * 7 + 3) as u8).collect();
    let mut back = vec![0u8; pattern.len()];
    let mut dev: *mut c_void = ptr::dangling_mut();
    // SAFETY: valid buffers and out-pointers; device memory is only touched by the shim.
    unsafe {
        assert_eq!((h.hipMalloc)(&mut dev, 0), 0);
        assert!(dev.is_null(), "size 0 gives NULL");
        assert_eq!((h.hipFree)(ptr::null_mut()), 0);
        assert_eq!((h.hipMalloc)(&mut dev, pattern.len()), 0);
        assert_eq!(
            (h.hipMemcpy)(dev, pattern.as_ptr().cast(), pattern.len(), 7),
            INVALID_MEMCPY_DIRECTION
        );
        assert_eq!(
            (h.hipMemcpy)(dev, pattern.as_ptr().cast(), pattern.len(), H2D),
            0
        );
        assert_eq!(
            (h.hipMemset)(dev.cast::<u8>().add(100).cast(), 0x1A5, 10),
            0
        );
        assert_eq!(
            (h.hipMemcpy)(back.as_mut_ptr().cast(), dev, back.len(), D2H),
            0
        );
        let mut want = pattern.clone();
        want[100..110].fill(0xA5);
        assert_eq!(back, want);
        assert_eq!(
            (h.hipMemcpy)(back.as_mut_ptr().cast(), dev, 4, 4),
            0,
            "default kind"
        );

        let (mut base, mut size) = (ptr::null_mut(), 0usize);
        assert_eq!(
            (h.hipMemGetAddressRange)(&mut base, &mut size, dev.cast::<u8>().add(5).cast()),
            0
        );
        assert_eq!((base, size), (dev, pattern.len()));
        assert_eq!(
            (h.hipMemGetAddressRange)(&mut base, &mut size, back.as_mut_ptr().cast()),
            NOT_FOUND
        );

        // Registration: HIP's flags, and the device alias of any registration.
        let region =
            std::alloc::alloc_zeroed(std::alloc::Layout::from_size_align(1 << 16, 4096).unwrap());
        let r = region.cast::<c_void>();
        assert_eq!((h.hipHostRegister)(r, 0, 0), INVALID_VALUE);
        assert_eq!((h.hipHostRegister)(r, 1 << 16, 0x10), INVALID_VALUE);
        assert_eq!(
            (h.hipHostRegister)(r, 1 << 16, 0x8),
            0,
            "coarse-grained/read-only bit"
        );
        let mut alias = ptr::null_mut();
        assert_eq!((h.hipHostGetDevicePointer)(&mut alias, r, 1), INVALID_VALUE);
        assert_eq!((h.hipHostGetDevicePointer)(&mut alias, r, 0), 0);
        assert_eq!(alias, r, "unified addressing: the same address");
        let mut a = PointerAttribute::default();
        assert_eq!((h.hipPointerGetAttributes)(&mut a, r), 0);
        assert_eq!(a.memory_type, 1);
        assert_eq!((h.hipHostUnregister)(r), 0);
        assert_eq!((h.hipHostUnregister)(r), HOST_MEMORY_NOT_REGISTERED);
        assert_eq!((h.hipHostUnregister)(ptr::null_mut()), INVALID_VALUE);
        std::alloc::dealloc(
            region,
            std::alloc::Layout::from_size_align(1 << 16, 4096).unwrap(),
        );
        assert_eq!((h.hipFree)(dev), 0);

        let mut pinned = ptr::null_mut();
        assert_eq!((h.hipHostMalloc)(&mut pinned, 0, 0), 0);
        assert!(pinned.is_null());
        assert_eq!(
            (h.hipHostMalloc)(&mut pinned, 4096, 0x4000_0000 | 0x8000_0000),
            INVALID_VALUE,
            "coherent and non-coherent at once"
        );
        assert_eq!(
            (h.hipHostMalloc)(&mut pinned, 4096, 0x2000_0000),
            0,
            "NUMA flag accepted"
        );
        assert_eq!((h.hipHostFree)(pinned), 0);
    }
});

extern "C" fn bump(data: *mut c_void) {
    // SAFETY: the test passes a live AtomicU32.
    unsafe { &*data.cast::<AtomicU32>() }.fetch_add(1, Ordering::SeqCst);
}

shim_test!(streams_events_waits_and_host_functions, [], {
    let h = hip();
    let (mut a, mut b) = (ptr::null_mut(), ptr::null_mut());
    let mut words = ptr::null_mut();
    let mut ev = ptr::null_mut();
    let calls = AtomicU32::new(0);
    // SAFETY: handles and mapped memory from the shim, alive until the streams are drained; the
    // words are read atomically.
    unsafe {
        assert_eq!((h.hipStreamCreateWithFlags)(&mut a, 2), INVALID_VALUE);
        assert_eq!((h.hipStreamCreateWithFlags)(&mut a, 1), 0);
        assert_eq!((h.hipStreamCreate)(&mut b), 0);
        assert_eq!((h.hipStreamDestroy)(ptr::null_mut()), INVALID_HANDLE);
        let (mut ia, mut ib, mut dev) = (0u64, 0u64, -1);
        assert_eq!((h.hipStreamGetId)(a, &mut ia), 0);
        assert_eq!((h.hipStreamGetId)(b, &mut ib), 0);
        assert_ne!(ia, ib);
        assert_eq!((h.hipStreamGetDevice)(a, &mut dev), 0);
        assert_eq!(dev, 0);
        assert_eq!((h.hipStreamGetDevice)(ptr::null_mut(), &mut dev), 0);
        assert_eq!(dev, 0);

        assert_eq!((h.hipHostMalloc)(&mut words, 4096, 0x2), 0);
        let gate = words;
        let flag = words.cast::<u8>().add(64).cast::<c_void>();
        let gate_word = AtomicU32::from_ptr(gate.cast());
        let flag_word = AtomicU32::from_ptr(flag.cast());
        // HIP's mask: all ones maps to CUDA's wait; "and" folds any mask into the value;
        // another mask on another condition has no CUDA counterpart.
        assert_eq!((h.hipStreamWaitValue32)(a, gate, 1, 1, 0xFF), NOT_SUPPORTED);
        assert_eq!(
            (h.hipStreamWaitValue32)(a, gate, 1, 9, u32::MAX),
            INVALID_VALUE
        );
        let local = 0u32;
        assert_eq!(
            (h.hipStreamWaitValue32)(a, (&local as *const u32).cast_mut().cast(), 1, 1, u32::MAX),
            INVALID_VALUE,
            "memory the runtime does not know"
        );
        assert_eq!(
            (h.hipStreamWaitValue32)(a, gate, 0x10, 2, 0x30),
            0,
            "and, masked"
        );
        assert_eq!((h.hipStreamWriteValue32)(a, flag, 5, 0), 0);
        assert_eq!((h.hipStreamWriteValue32)(a, flag, 5, 1), NOT_SUPPORTED);
        assert_eq!(
            (h.hipLaunchHostFunc)(
                a,
                Some(bump),
                (&calls as *const AtomicU32).cast_mut().cast()
            ),
            0
        );
        assert_eq!(
            (h.hipLaunchHostFunc)(a, None, ptr::null_mut()),
            INVALID_VALUE
        );
        assert_eq!((h.hipEventCreateWithFlags)(&mut ev, 0x10), INVALID_VALUE);
        assert_eq!(
            (h.hipEventCreateWithFlags)(&mut ev, 0x4000_0002),
            0,
            "AMD-only flag dropped"
        );
        assert_eq!((h.hipEventRecord)(ev, a), 0);
        let mut plain = ptr::null_mut();
        assert_eq!((h.hipEventCreate)(&mut plain), 0);
        assert_eq!((h.hipEventRecord)(plain, b), 0);
        assert_eq!((h.hipEventSynchronize)(plain), 0, "b does not wait for a");
        assert_eq!((h.hipEventDestroy)(plain), 0);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!((h.hipEventQuery)(ev), NOT_READY);
        assert_eq!((h.hipStreamQuery)(a), NOT_READY);
        assert_eq!(flag_word.load(Ordering::Acquire), 0);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        gate_word.store(0x20, Ordering::Release);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(
            flag_word.load(Ordering::Acquire),
            0,
            "0x20 & 0x30 & 0x10 == 0: still waiting"
        );
        gate_word.store(0x10, Ordering::Release);
        assert_eq!((h.hipEventSynchronize)(ev), 0);
        assert_eq!((h.hipEventQuery)(ev), 0);
        assert_eq!(flag_word.load(Ordering::Acquire), 5);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!((h.hipStreamQuery)(a), 0);

        // 64-bit wait, and the NULL stream.
        let wide = words.cast::<u8>().add(128).cast::<c_void>();
        assert_eq!((h.hipStreamWaitValue64)(b, wide, 0, 1, u64::MAX), 0);
        assert_eq!((h.hipStreamSynchronize)(b), 0);
        assert_eq!((h.hipStreamSynchronize)(ptr::null_mut()), 0);
        assert_eq!((h.hipDeviceSynchronize)(), 0);

        assert_eq!((h.hipEventDestroy)(ev), 0);
        assert_eq!((h.hipStreamDestroy)(a), 0);
        assert_eq!((h.hipStreamDestroy)(b), 0);
        assert_eq!((h.hipHostFree)(words), 0);
    }
});

shim_test!(device_attributes_and_properties, [], {
    let h = hip();
    let attr = |a: c_int| {
        let mut v = -1;
        // SAFETY: valid out-pointer.
        let rc = unsafe { (h.hipDeviceGetAttribute)(&mut v, a, 0) };
        (rc, v)
    };
    assert_eq!(
        attr(10013),
        (0, 1),
        "hipDeviceAttributeCanUseStreamWaitValue"
    );
    assert_eq!(attr(63), (0, 132), "hipDeviceAttributeMultiprocessorCount");
    assert_eq!(attr(10), (0, 1), "hipDeviceAttributeCooperativeLaunch");
    assert_eq!(attr(23), (0, 9), "hipDeviceAttributeComputeCapabilityMajor");
    assert_eq!(attr(61), (0, 0), "hipDeviceAttributeComputeCapabilityMinor");
    assert_eq!(attr(87), (0, 32), "hipDeviceAttributeWarpSize");
    assert_eq!(attr(56), (0, 1024), "hipDeviceAttributeMaxThreadsPerBlock");
    assert_eq!(attr(9999).0, INVALID_VALUE, "not an attribute");
    let mut v = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { (h.hipDeviceGetAttribute)(&mut v, 63, 1) },
        INVALID_DEVICE
    );

    // ROCm 7's hipDeviceProp_t is 1472 bytes: nothing after it is written.
    let mut buf = vec![0xEEu8; 1472 + 64];
    // SAFETY: a buffer of the struct's size plus guard bytes.
    assert_eq!(
        unsafe { (h.hipGetDevicePropertiesR0600)(buf.as_mut_ptr(), 0) },
        0
    );
    assert!(buf[1472..].iter().all(|&b| b == 0xEE));
    let name = CStr::from_bytes_until_nul(&buf[..256]).unwrap();
    assert_eq!(name.to_str().unwrap(), "hipsim simulated GPU 0");
    let int_at = |off: usize| i32::from_ne_bytes(buf[off..off + 4].try_into().unwrap());
    // Offsets of ROCm 7's layout: warpSize, maxThreadsPerBlock, major, minor,
    // multiProcessorCount, and gcnArchName.
    assert_eq!(int_at(308), 32);
    assert_eq!(int_at(320), 1024);
    assert_eq!((int_at(360), int_at(364)), (9, 0));
    assert_eq!(int_at(388), 132);
    let arch = CStr::from_bytes_until_nul(&buf[1160..1416]).unwrap();
    assert_eq!(arch.to_str().unwrap(), "sm_90");
});

shim_test!(modules_and_both_launch_conventions, [], {
    let h = hip();
    let mut ptx = std::fs::read(repo_root().join("src/runtime/stage/stage.ptx")).unwrap();
    ptx.push(0);
    let (mut module, mut f) = (ptr::null_mut(), ptr::null_mut());
    let (mut ctl, mut mails, mut src, mut dst) = (
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
    );
    let ring_len: u32 = 4;
    let len = 1usize << 16;
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    // SAFETY: NUL-terminated PTX, valid out-pointers; the control block, the mailboxes, the
    // source and the destination are the shim's allocations, alive until the stream is
    // synchronised.
    unsafe {
        assert_eq!((h.hipModuleLoadData)(&mut module, ptx.as_ptr().cast()), 0);
        assert_eq!(
            (h.hipModuleGetFunction)(&mut f, module, c"nope".as_ptr()),
            NOT_FOUND
        );
        assert_eq!(
            (h.hipModuleGetFunction)(&mut f, module, c"hipfile_stage".as_ptr()),
            0
        );
        let mut blocks = 0;
        assert_eq!(
            (h.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor)(&mut blocks, f, 1024, 0),
            0
        );
        assert_eq!(blocks, 2);

        assert_eq!((h.hipHostMalloc)(&mut ctl, 4096, 0x2), 0);
        assert_eq!((h.hipHostMalloc)(&mut mails, 4096, 0x2), 0);
        ptr::write_bytes(ctl.cast::<u8>(), 0, 4096);
        ptr::write_bytes(mails.cast::<u8>(), 0, 4096);
        assert_eq!((h.hipHostMalloc)(&mut src, len, 0), 0);
        assert_eq!((h.hipMalloc)(&mut dst, 2 * len), 0);
        ptr::copy_nonoverlapping(data.as_ptr(), src.cast::<u8>(), len);
        // Mailbox `i` of one block (64 bytes each): `grid` 1 before the launch.
        let mail = |i: usize| {
            let m = mails.cast::<u8>().add(64 * i);
            m.add(28).cast::<u32>().write(1);
            m
        };
        // Hands the started launch of mailbox `m` the stage from `serial`, then posts that
        // segment: `len` bytes from src to dst + at, last of its operation.
        let serve = |m: *mut u8, serial: u32, at: usize| {
            while AtomicU32::from_ptr(m.cast()).load(Ordering::Acquire) == 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            m.add(12).cast::<u32>().write(serial);
            m.add(24).cast::<u32>().write(ring_len);
            std::sync::atomic::AtomicU64::from_ptr(m.add(16).cast())
                .store(ctl as u64, Ordering::Release);
            let d = ctl
                .cast::<u8>()
                .add(256 + 32 * (serial % ring_len) as usize);
            d.cast::<u64>().write((dst as usize + at) as u64);
            d.add(8).cast::<u64>().write(src as u64);
            d.add(16).cast::<u64>().write(len as u64);
            d.add(28).cast::<u32>().write(1);
            AtomicU32::from_ptr(d.add(24).cast()).store(serial, Ordering::Release);
        };

        // `extra`: AMD's form, END = 3, the arguments packed as the kernel declares them.
        let m1 = mail(0);
        let mut args = [0u8; 8];
        args.copy_from_slice(&(m1 as u64).to_ne_bytes());
        let mut size = args.len();
        let size_ptr = &mut size as *mut usize;
        // HIP_LAUNCH_PARAM_BUFFER_POINTER, _BUFFER_SIZE and _END are the numbers 1, 2 and 3.
        let marker = ptr::without_provenance_mut::<c_void>;
        let mut extra: [*mut c_void; 5] = [
            marker(1),
            args.as_mut_ptr().cast(),
            marker(2),
            size_ptr.cast(),
            marker(3),
        ];
        assert_eq!(
            (h.hipModuleLaunchKernel)(
                f,
                1,
                1,
                1,
                1024,
                1,
                1,
                0,
                ptr::null_mut(),
                ptr::null_mut(),
                extra.as_mut_ptr()
            ),
            0
        );
        serve(m1, 1, 0);
        assert_eq!((h.hipStreamSynchronize)(ptr::null_mut()), 0);

        // kernelParams: a pointer to each argument.
        let m2 = mail(1);
        let mut p_mail = m2 as u64;
        let mut params: [*mut c_void; 1] = [(&mut p_mail as *mut u64).cast()];
        assert_eq!(
            (h.hipModuleLaunchKernel)(
                f,
                1,
                1,
                1,
                1024,
                1,
                1,
                0,
                ptr::null_mut(),
                params.as_mut_ptr(),
                ptr::null_mut()
            ),
            0
        );
        serve(m2, 2, len);
        assert_eq!((h.hipStreamSynchronize)(ptr::null_mut()), 0);
        let mut back = vec![0u8; 2 * len];
        assert_eq!(
            (h.hipMemcpy)(back.as_mut_ptr().cast(), dst, back.len(), D2H),
            0
        );
        assert_eq!(&back[..len], &data[..], "the launch through `extra` copied");
        assert_eq!(
            &back[len..],
            &data[..],
            "the launch through kernelParams copied"
        );

        // Refusals: both conventions at once, CUDA's END, a buffer shorter than the arguments.
        assert_eq!(
            (h.hipModuleLaunchKernel)(
                f,
                1,
                1,
                1,
                1024,
                1,
                1,
                0,
                ptr::null_mut(),
                params.as_mut_ptr(),
                extra.as_mut_ptr()
            ),
            INVALID_VALUE
        );
        extra[4] = ptr::null_mut();
        assert_eq!(
            (h.hipModuleLaunchKernel)(
                f,
                1,
                1,
                1,
                1024,
                1,
                1,
                0,
                ptr::null_mut(),
                ptr::null_mut(),
                extra.as_mut_ptr()
            ),
            INVALID_VALUE
        );
        extra[4] = marker(3);
        size_ptr.write(4);
        assert_eq!(
            (h.hipModuleLaunchKernel)(
                f,
                1,
                1,
                1,
                1024,
                1,
                1,
                0,
                ptr::null_mut(),
                ptr::null_mut(),
                extra.as_mut_ptr()
            ),
            INVALID_VALUE
        );
        assert_eq!((h.hipModuleUnload)(module), 0);
        assert_eq!((h.hipFree)(dst), 0);
        assert_eq!((h.hipHostFree)(src), 0);
        assert_eq!((h.hipHostFree)(ctl), 0);
        assert_eq!((h.hipHostFree)(mails), 0);
    }
});

shim_test!(
    per_thread_default_stream_setting,
    [("HIP_ON_CUDA_DEFAULT_STREAM", "per-thread")],
    {
        let h = hip();
        let data = [7u8; 4096];
        let mut dev = ptr::null_mut();
        // SAFETY: valid buffers; device memory from the shim.
        unsafe {
            assert_eq!((h.hipMalloc)(&mut dev, data.len()), 0);
            let (sync0, async0) = (
                sim_counter("cuMemcpyHtoD_v2"),
                sim_counter("cuMemcpyHtoDAsync_v2"),
            );
            assert_eq!((h.hipMemcpy)(dev, data.as_ptr().cast(), data.len(), H2D), 0);
            assert_eq!(
                (h.hipMemcpyAsync)(dev, data.as_ptr().cast(), data.len(), H2D, ptr::null_mut()),
                0
            );
            assert_eq!((h.hipStreamSynchronize)(ptr::null_mut()), 0);
            assert_eq!(
                sim_counter("cuMemcpyHtoD_v2"),
                sync0,
                "not the legacy stream"
            );
            assert_eq!(sim_counter("cuMemcpyHtoDAsync_v2"), async0 + 2);
            assert_eq!((h.hipFree)(dev), 0);
        }
    }
);

shim_test!(legacy_default_stream_by_default, [], {
    let h = hip();
    let data = [7u8; 4096];
    let mut dev = ptr::null_mut();
    // SAFETY: valid buffers; device memory from the shim.
    unsafe {
        assert_eq!((h.hipMalloc)(&mut dev, data.len()), 0);
        let sync0 = sim_counter("cuMemcpyHtoD_v2");
        assert_eq!((h.hipMemcpy)(dev, data.as_ptr().cast(), data.len(), H2D), 0);
        assert_eq!(
            sim_counter("cuMemcpyHtoD_v2"),
            sync0 + 1,
            "HIP's NULL stream: CUDA's legacy stream"
        );
        assert_eq!((h.hipFree)(dev), 0);
    }
});

// ---- the library on the shim: the C-ABI suite and the examples ---------------------------------

#[test]
fn c_suite_in_hip_mode_on_the_shim() {
    let exe = work_dir().join(format!("suite-{}", std::process::id()));
    let build = Command::new("bash")
        .current_dir(repo_root())
        .arg("scripts/gpu/build_suite.sh")
        .arg(&exe)
        .arg(lib_dir())
        .arg("--hip")
        .arg(shim())
        .output()
        .expect("run build_suite.sh");
    assert!(
        build.status.success(),
        "build_suite.sh --hip failed:\n{}",
        text(&build)
    );
    let files = work_dir().join(format!("suite-files-{}", std::process::id()));
    std::fs::create_dir_all(&files).unwrap();
    let mut cmd = Command::new(&exe);
    cmd.arg(&files)
        .arg("--skip=large")
        .arg("--case-timeout=600");
    hip_mode(&mut cmd);
    cmd.env("HIPFILE_LOG", "info");
    let out = cmd.output().expect("run the suite");
    let stderr = stderr(&out);
    println!("{}\n--- stderr\n{stderr}", stdout(&out));
    suite_passed(
        "the suite in HIP mode on the shim",
        &out,
        &suite_groups(None, Some("large")),
    );
    // The library chose the shim as ROCm 7 and found no GPU-direct entry points.
    let chosen = format!(
        "platform amd: HIP 7.0.0 from {}, 1 device(s), fastpath entry points absent",
        shim().display()
    );
    assert!(stderr.contains(&chosen), "expected {chosen:?} in the log");
    let _ = std::fs::remove_dir_all(&files);
    let _ = std::fs::remove_file(&exe);
}

#[test]
fn examples_in_hip_mode_on_the_shim() {
    let shim_dir = shim().parent().unwrap().to_path_buf();
    let dir = work_dir().join(format!("examples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("src.bin");
    let data: Vec<u8> = (0..(3 << 20) + 12345u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&src, &data).unwrap();
    let run = |name: &str, args: &[&Path]| {
        let exe = CProgram::new(format!("examples/{name}.c"), dir.join(name))
            .headers()
            .hipfile()
            .link([
                format!("-L{}", shim_dir.display()),
                "-l:libamdhip64.so.7".to_string(),
                format!("-Wl,-rpath,{}", shim_dir.display()),
            ])
            .build();
        let mut cmd = Command::new(&exe);
        cmd.args(args);
        hip_mode(&mut cmd);
        cmd.env("HIPFILE_LOG", "error");
        let out = cmd.output().expect("run the example");
        assert!(out.status.success(), "{name} failed:\n{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dst = dir.join("dst.bin");
    assert_eq!(run("copy_file", &[&src, &dst]), "");
    assert!(
        std::fs::read(&dst).unwrap() == data,
        "copy_file: the copy differs"
    );
    let sum = format!("fnv1a64 0x{:016x}\n", fnv1a64(&data));
    let batch = run("batch_read", &[&src]);
    assert!(
        batch.ends_with(&format!("4 batch reads (1 rounds), {sum}")),
        "batch_read: {batch}"
    );
    let async_out = run("async_read", &[&src, Path::new("262144")]);
    assert!(
        async_out.ends_with(&format!("13 async reads on 2 streams, {sum}")),
        "async_read: {async_out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_shim_exports_only_hip_and_names_itself_libamdhip64_so_7() {
    let lib = shim();
    let out = Command::new("readelf")
        .args(["-d", "-W", "--dyn-syms"])
        .arg(lib)
        .output()
        .expect("run readelf");
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.contains("Library soname: [libamdhip64.so.7]"), "{t}");
    let exported: Vec<&str> = t
        .lines()
        .filter(|l| l.contains(" FUNC ") && l.contains(" GLOBAL ") && !l.contains(" UND "))
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert!(exported.len() >= 60, "{exported:?}");
    let foreign: Vec<&&str> = exported.iter().filter(|n| !n.starts_with("hip")).collect();
    assert!(
        foreign.is_empty(),
        "only HIP names leave the library: {foreign:?}"
    );
    assert!(
        !exported.iter().any(|n| n.starts_with("hipFile")),
        "no hipFile name: as libhipfile's auxiliary filter it must never replace one of ours"
    );
    for required in [
        "hipInit",
        "hipRuntimeGetVersion",
        "hipPointerGetAttributes",
        "hipMemGetAddressRange",
        "hipStreamWaitValue32",
        "hipLaunchHostFunc",
        "hipGetProcAddress",
        "hipModuleLaunchKernel",
        "hipGetDevicePropertiesR0600",
    ] {
        assert!(exported.contains(&required), "{required}");
    }
}
