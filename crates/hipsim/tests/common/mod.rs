//! Shared test support: loads the built `libhipsim.so` with dlopen (never the rlib, which would
//! be a second copy of the simulator) and serialises tests, which share the simulator's global
//! state (faults, counters) within one test binary.

#![allow(dead_code, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use cufile_abi::{CUfileDescr_t, CUfileDrvProps_t, CUfileError_t};
use libloading::Library;

pub type Stream = *mut c_void;
pub type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PointerAttribute {
    pub memory_type: c_int,
    pub device: c_int,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
    pub is_managed: c_int,
    pub allocation_flags: c_uint,
}

impl Default for PointerAttribute {
    fn default() -> Self {
        PointerAttribute {
            memory_type: -7,
            device: -7,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            is_managed: -7,
            allocation_flags: 0,
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct FileHandle {
    pub handle: u64,
}

impl FileHandle {
    pub fn fd(fd: c_int) -> Self {
        FileHandle {
            handle: fd as u32 as u64,
        }
    }
}

/// Where the simulator is: `HIPSIM_LIBRARY`, or next to the test executable
/// (`target/<profile>/deps/libhipsim.so`), or one level up.
pub fn library_path() -> PathBuf {
    if let Some(p) = std::env::var_os("HIPSIM_LIBRARY") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("exe dir").to_path_buf();
    for dir in [
        deps.clone(),
        deps.parent()
            .map(|p| p.to_path_buf())
            .unwrap_or(deps.clone()),
    ] {
        let candidate = dir.join("libhipsim.so");
        if candidate.exists() {
            return candidate;
        }
    }
    panic!("libhipsim.so not found next to {}", exe.display());
}

macro_rules! api {
    ($($name:ident : fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// Typed entry points of the simulator.
        pub struct Sim {
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }
        impl Sim {
            fn load(lib: &'static Library) -> Sim {
                Sim {
                    $($name: {
                        let name = concat!(stringify!($name), "\0");
                        // SAFETY: the type is the documented C signature of the symbol.
                        *unsafe { lib.get(name.as_bytes()) }
                            .unwrap_or_else(|e| panic!("{}: {e}", stringify!($name)))
                    },)*
                }
            }
        }
    };
}

api! {
    hipsimCounter: fn(*const c_char) -> u64;
    hipsimResetCounters: fn();
    hipsimSetFault: fn(*const c_char, i64) -> c_int;
    hipsimGetFault: fn(*const c_char) -> i64;
    hipsimIsSimulator: fn() -> c_int;
    hipsimStreamHwQueue: fn(Stream) -> i64;
    hipsimSetGcnArch: fn(c_int, *const c_char) -> c_int;
    hipsimRepairDevice: fn(c_int) -> c_int;

    hipInit: fn(c_uint) -> c_int;
    hipRuntimeGetVersion: fn(*mut c_int) -> c_int;
    hipDriverGetVersion: fn(*mut c_int) -> c_int;
    hipGetDeviceCount: fn(*mut c_int) -> c_int;
    hipGetDevice: fn(*mut c_int) -> c_int;
    hipGetDevicePropertiesR0600: fn(*mut c_void, c_int) -> c_int;
    hipSetDevice: fn(c_int) -> c_int;
    hipDeviceSynchronize: fn() -> c_int;
    hipMalloc: fn(*mut *mut c_void, usize) -> c_int;
    hipFree: fn(*mut c_void) -> c_int;
    hipMallocManaged: fn(*mut *mut c_void, usize, c_uint) -> c_int;
    hipHostMalloc: fn(*mut *mut c_void, usize, c_uint) -> c_int;
    hipHostFree: fn(*mut c_void) -> c_int;
    hipHostRegister: fn(*mut c_void, usize, c_uint) -> c_int;
    hipHostUnregister: fn(*mut c_void) -> c_int;
    hipHostGetDevicePointer: fn(*mut *mut c_void, *mut c_void, c_uint) -> c_int;
    hipPointerGetAttributes: fn(*mut PointerAttribute, *const c_void) -> c_int;
    hipMemGetAddressRange: fn(*mut *mut c_void, *mut usize, *mut c_void) -> c_int;
    hipMemcpy: fn(*mut c_void, *const c_void, usize, c_int) -> c_int;
    hipMemcpyAsync: fn(*mut c_void, *const c_void, usize, c_int, Stream) -> c_int;
    hipMemcpyHtoD: fn(*mut c_void, *mut c_void, usize) -> c_int;
    hipMemcpyDtoH: fn(*mut c_void, *mut c_void, usize) -> c_int;
    hipMemcpyHtoDAsync: fn(*mut c_void, *mut c_void, usize, Stream) -> c_int;
    hipMemcpyDtoHAsync: fn(*mut c_void, *mut c_void, usize, Stream) -> c_int;
    hipMemset: fn(*mut c_void, c_int, usize) -> c_int;
    hipStreamCreate: fn(*mut Stream) -> c_int;
    hipStreamCreateWithFlags: fn(*mut Stream, c_uint) -> c_int;
    hipStreamDestroy: fn(Stream) -> c_int;
    hipStreamSynchronize: fn(Stream) -> c_int;
    hipStreamQuery: fn(Stream) -> c_int;
    hipStreamGetDevice: fn(Stream, *mut c_int) -> c_int;
    hipStreamGetId: fn(Stream, *mut u64) -> c_int;
    hipLaunchHostFunc: fn(Stream, HostFn, *mut c_void) -> c_int;
    hipStreamWaitValue32: fn(Stream, *mut c_void, u32, c_uint, u32) -> c_int;
    hipEventCreate: fn(*mut *mut c_void) -> c_int;
    hipEventCreateWithFlags: fn(*mut *mut c_void, c_uint) -> c_int;
    hipEventRecord: fn(*mut c_void, Stream) -> c_int;
    hipEventSynchronize: fn(*mut c_void) -> c_int;
    hipEventQuery: fn(*mut c_void) -> c_int;
    hipEventDestroy: fn(*mut c_void) -> c_int;
    hipGetErrorString: fn(c_int) -> *const c_char;
    hipGetErrorName: fn(c_int) -> *const c_char;
    hipGetLastError: fn() -> c_int;
    hipPeekAtLastError: fn() -> c_int;
    hipGetProcAddress: fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> c_int;
    hipAmdFileRead: fn(FileHandle, *mut c_void, u64, i64, *mut u64, *mut i32) -> c_int;
    hipModuleLoadData: fn(*mut *mut c_void, *const c_void) -> c_int;
    hipModuleUnload: fn(*mut c_void) -> c_int;
    hipModuleGetFunction: fn(*mut *mut c_void, *mut c_void, *const c_char) -> c_int;
    hipModuleLaunchKernel: fn(
        *mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream,
        *mut *mut c_void, *mut *mut c_void
    ) -> c_int;
    hipModuleLaunchCooperativeKernel: fn(
        *mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream,
        *mut *mut c_void
    ) -> c_int;
    hipAmdFileWrite: fn(FileHandle, *mut c_void, u64, i64, *mut u64, *mut i32) -> c_int;

    cuInit: fn(c_uint) -> c_int;
    cuDriverGetVersion: fn(*mut c_int) -> c_int;
    cuDeviceGetCount: fn(*mut c_int) -> c_int;
    cuDeviceGet: fn(*mut c_int, c_int) -> c_int;
    cuDeviceGetName: fn(*mut c_char, c_int, c_int) -> c_int;
    cuDevicePrimaryCtxRetain: fn(*mut *mut c_void, c_int) -> c_int;
    cuDevicePrimaryCtxRelease_v2: fn(c_int) -> c_int;
    cuCtxGetCurrent: fn(*mut *mut c_void) -> c_int;
    cuCtxSetCurrent: fn(*mut c_void) -> c_int;
    cuCtxPushCurrent_v2: fn(*mut c_void) -> c_int;
    cuCtxPopCurrent_v2: fn(*mut *mut c_void) -> c_int;
    cuCtxGetDevice: fn(*mut c_int) -> c_int;
    cuCtxSynchronize: fn() -> c_int;
    cuMemAlloc_v2: fn(*mut u64, usize) -> c_int;
    cuMemFree_v2: fn(u64) -> c_int;
    cuMemAllocManaged: fn(*mut u64, usize, c_uint) -> c_int;
    cuMemAllocHost_v2: fn(*mut *mut c_void, usize) -> c_int;
    cuMemHostAlloc: fn(*mut *mut c_void, usize, c_uint) -> c_int;
    cuMemFreeHost: fn(*mut c_void) -> c_int;
    cuMemHostRegister_v2: fn(*mut c_void, usize, c_uint) -> c_int;
    cuMemHostUnregister: fn(*mut c_void) -> c_int;
    cuMemHostGetDevicePointer_v2: fn(*mut u64, *mut c_void, c_uint) -> c_int;
    cuPointerGetAttribute: fn(*mut c_void, c_int, u64) -> c_int;
    cuPointerGetAttributes: fn(c_uint, *mut c_int, *mut *mut c_void, u64) -> c_int;
    cuMemGetAddressRange_v2: fn(*mut u64, *mut usize, u64) -> c_int;
    cuMemcpyHtoD_v2: fn(u64, *const c_void, usize) -> c_int;
    cuMemcpyDtoH_v2: fn(*mut c_void, u64, usize) -> c_int;
    cuMemcpyHtoDAsync_v2: fn(u64, *const c_void, usize, Stream) -> c_int;
    cuMemcpyDtoHAsync_v2: fn(*mut c_void, u64, usize, Stream) -> c_int;
    cuMemcpy: fn(u64, u64, usize) -> c_int;
    cuMemsetD8_v2: fn(u64, u8, usize) -> c_int;
    cuStreamCreate: fn(*mut Stream, c_uint) -> c_int;
    cuStreamDestroy_v2: fn(Stream) -> c_int;
    cuStreamSynchronize: fn(Stream) -> c_int;
    cuStreamQuery: fn(Stream) -> c_int;
    cuStreamGetCtx: fn(Stream, *mut *mut c_void) -> c_int;
    cuStreamGetId: fn(Stream, *mut u64) -> c_int;
    cuLaunchHostFunc: fn(Stream, HostFn, *mut c_void) -> c_int;
    cuStreamWaitValue32_v2: fn(Stream, u64, u32, c_uint) -> c_int;
    cuEventCreate: fn(*mut *mut c_void, c_uint) -> c_int;
    cuEventRecord: fn(*mut c_void, Stream) -> c_int;
    cuEventSynchronize: fn(*mut c_void) -> c_int;
    cuEventDestroy_v2: fn(*mut c_void) -> c_int;
    cuDeviceGetAttribute: fn(*mut c_int, c_int, c_int) -> c_int;
    cuModuleLoadData: fn(*mut *mut c_void, *const c_void) -> c_int;
    cuModuleUnload: fn(*mut c_void) -> c_int;
    cuModuleGetFunction: fn(*mut *mut c_void, *mut c_void, *const c_char) -> c_int;
    cuLaunchKernel: fn(
        *mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream,
        *mut *mut c_void, *mut *mut c_void
    ) -> c_int;
    cuLaunchCooperativeKernel: fn(
        *mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream,
        *mut *mut c_void
    ) -> c_int;
    cuGetErrorString: fn(c_int, *mut *const c_char) -> c_int;
    cuGetErrorName: fn(c_int, *mut *const c_char) -> c_int;

    cuFileDriverOpen: fn() -> CUfileError_t;
    cuFileDriverClose: fn() -> CUfileError_t;
    cuFileDriverClose_v2: fn() -> CUfileError_t;
    cuFileDriverGetProperties: fn(*mut CUfileDrvProps_t) -> CUfileError_t;
    cuFileHandleRegister: fn(*mut *mut c_void, *mut CUfileDescr_t) -> CUfileError_t;
    cuFileHandleDeregister: fn(*mut c_void);
    cuFileBufRegister: fn(*const c_void, usize, c_int) -> CUfileError_t;
    cuFileBufDeregister: fn(*const c_void) -> CUfileError_t;
    cuFileRead: fn(*mut c_void, *mut c_void, usize, i64, i64) -> isize;
    cuFileWrite: fn(*mut c_void, *const c_void, usize, i64, i64) -> isize;
}

// SAFETY: a table of plain C function pointers.
unsafe impl Sync for Sim {}
// SAFETY: as above.
unsafe impl Send for Sim {}

pub struct Handle {
    pub lib: &'static Library,
    pub sim: Sim,
}

static HANDLE: OnceLock<Handle> = OnceLock::new();
static SERIAL: Mutex<()> = Mutex::new(());

/// The simulator plus a guard serialising tests of this binary. Faults are cleared and the
/// runtime version reset on entry.
pub fn sim() -> (&'static Sim, MutexGuard<'static, ()>) {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = sim_raw();
    for name in [
        "fastpath_errno",
        "fastpath_hip_error",
        "fail_copy",
        "fail_copy_after",
        "short_transfer",
        "no_fastpath",
        "fail_host_alloc",
        "copy_delay_us",
        "runtime_version",
        "cuda_driver_version",
        "cufile_gds",
        "cufile_register_error",
        "cufile_io_errno",
        "cufile_io_error",
        "no_wait_value",
        "no_kernels",
        "stage_dies",
    ] {
        set_fault(s, name, 0);
    }
    set_fault(s, "device_count", 1);
    // The settings whose default is not 0.
    set_fault(s, "hip_coop_queue", 1);
    set_fault(s, "hip_hw_queues", 4);
    set_fault(s, "cuda_hw_queues", 8);
    set_fault(s, "launch_queue", 1024);
    // SAFETY: plain calls into the simulator.
    unsafe {
        // A test that broke a device's context on purpose leaves it to the next one repaired.
        for d in 0..16 {
            (s.hipsimRepairDevice)(d);
        }
        assert_eq!((s.hipSetDevice)(0), 0);
        (s.hipGetLastError)();
    }
    (s, guard)
}

/// The simulator as loaded, settings untouched (for tests of the environment settings).
pub fn sim_raw() -> &'static Sim {
    let h = HANDLE.get_or_init(|| {
        let path = library_path();
        // SAFETY: loading the simulator runs no unsafe initialisers.
        let lib: &'static Library = Box::leak(Box::new(
            unsafe { Library::new(&path) }.expect("dlopen libhipsim.so"),
        ));
        Handle {
            lib,
            sim: Sim::load(lib),
        }
    });
    &h.sim
}

/// The raw dlopen'd library (for dlsym address comparisons).
pub fn library() -> &'static Library {
    HANDLE.get().expect("sim() first").lib
}

pub fn cstr(s: &str) -> CString {
    CString::new(s).unwrap()
}

pub fn set_fault(s: &Sim, name: &str, value: i64) {
    // SAFETY: valid C string.
    let rc = unsafe { (s.hipsimSetFault)(cstr(name).as_ptr(), value) };
    assert_eq!(rc, 0, "hipsimSetFault({name})");
}

pub fn fault(s: &Sim, name: &str) -> i64 {
    // SAFETY: valid C string.
    unsafe { (s.hipsimGetFault)(cstr(name).as_ptr()) }
}

pub fn counter(s: &Sim, name: &str) -> u64 {
    // SAFETY: valid C string.
    unsafe { (s.hipsimCounter)(cstr(name).as_ptr()) }
}

/// hipMalloc that must succeed.
pub fn dmalloc(s: &Sim, size: usize) -> *mut c_void {
    let mut p = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.hipMalloc)(&mut p, size) }, 0);
    assert!(!p.is_null());
    p
}

/// Copies host bytes to device memory.
pub fn h2d(s: &Sim, dst: *mut c_void, src: &[u8]) {
    // SAFETY: valid host slice; the simulator validates dst.
    assert_eq!(
        unsafe { (s.hipMemcpy)(dst, src.as_ptr().cast(), src.len(), 1) },
        0
    );
}

/// Copies device memory to a new host vector.
pub fn d2h(s: &Sim, src: *const c_void, len: usize) -> Vec<u8> {
    let mut v = vec![0xEEu8; len];
    // SAFETY: valid host buffer; the simulator validates src.
    assert_eq!(
        unsafe { (s.hipMemcpy)(v.as_mut_ptr().cast(), src, len, 2) },
        0
    );
    v
}

pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

pub fn as_str(p: *const c_char) -> String {
    assert!(!p.is_null());
    // SAFETY: the simulator returns NUL-terminated static strings.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

/// Runs the test `child` of this test binary again, in a process of its own with `env` set
/// (settings the simulator reads when it loads), and checks that it passed and printed
/// `marker`. The child part returns at once unless [`in_child`].
pub fn run_child(child: &str, env: &[(&str, &str)], marker: &str) {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", child, "--nocapture", "--test-threads=1"])
        .env("HIPSIM_CHILD", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains(marker), "child did not run:\n{text}");
}

/// Whether this process is a child started by [`run_child`].
pub fn in_child() -> bool {
    std::env::var_os("HIPSIM_CHILD").is_some()
}

/// Waits until `cond` holds or `bound` passed; whether it held. For what must happen soon:
/// polling with a generous bound instead of a fixed sleep keeps a loaded machine from failing
/// the test.
pub fn within(bound: Duration, cond: impl Fn() -> bool) -> bool {
    let end = Instant::now() + bound;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}
