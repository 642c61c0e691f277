//! The NVIDIA CUDA driver API (`libcuda.so.1`), loaded at run time.
//!
//! The driver API is used rather than `libcudart` because there is exactly one copy per system
//! and a CUDA application's `CUstream` values are valid here as they are.
//!
//! Contexts: a call that needs a context uses the calling thread's current one when there is
//! one, and otherwise pushes the device's primary context for the duration of the call and pops
//! it again, so the application's context state is the same after every call.
//!
//! `CUresult` values are reported in HIP's numbering. HIP's own `hipCUResultTohipError` keeps the
//! number for every CUDA error that has a HIP twin (the two enums share their values) and turns
//! every other code into `hipErrorUnknown` (999); [`translate`] does the same with the table
//! [`HIP_TWINS`].

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::os::fd::RawFd;
use std::sync::OnceLock;

use libloading::os::unix::Library;
use parking_lot::Mutex;

use super::symbols::{opt_sym, sym};

use super::cufile::CuFile;

use super::RuntimeTools;
use super::{
    DeviceRestore, EventHandle, FastpathFault, Platform, PointerInfo, RtError, RtResult, Runtime,
    StreamHandle,
};
use crate::vocab::{Direction, MemoryType};

type CuResult = c_int;
type CuDevicePtr = u64;
type CuContext = *mut c_void;

/// CUDA result codes that have a HIP error of the same number (HIP's `hipCUResultTohipError`);
/// every other code becomes `hipErrorUnknown`.
pub const HIP_TWINS: &[(i32, &str)] = &[
    (0, "CUDA_SUCCESS → hipSuccess"),
    (1, "CUDA_ERROR_INVALID_VALUE → hipErrorInvalidValue"),
    (2, "CUDA_ERROR_OUT_OF_MEMORY → hipErrorOutOfMemory"),
    (3, "CUDA_ERROR_NOT_INITIALIZED → hipErrorNotInitialized"),
    (4, "CUDA_ERROR_DEINITIALIZED → hipErrorDeinitialized"),
    (5, "CUDA_ERROR_PROFILER_DISABLED → hipErrorProfilerDisabled"),
    (
        6,
        "CUDA_ERROR_PROFILER_NOT_INITIALIZED → hipErrorProfilerNotInitialized",
    ),
    (
        7,
        "CUDA_ERROR_PROFILER_ALREADY_STARTED → hipErrorProfilerAlreadyStarted",
    ),
    (
        8,
        "CUDA_ERROR_PROFILER_ALREADY_STOPPED → hipErrorProfilerAlreadyStopped",
    ),
    (100, "CUDA_ERROR_NO_DEVICE → hipErrorNoDevice"),
    (101, "CUDA_ERROR_INVALID_DEVICE → hipErrorInvalidDevice"),
    (200, "CUDA_ERROR_INVALID_IMAGE → hipErrorInvalidImage"),
    (201, "CUDA_ERROR_INVALID_CONTEXT → hipErrorInvalidContext"),
    (
        202,
        "CUDA_ERROR_CONTEXT_ALREADY_CURRENT → hipErrorContextAlreadyCurrent",
    ),
    (205, "CUDA_ERROR_MAP_FAILED → hipErrorMapFailed"),
    (206, "CUDA_ERROR_UNMAP_FAILED → hipErrorUnmapFailed"),
    (207, "CUDA_ERROR_ARRAY_IS_MAPPED → hipErrorArrayIsMapped"),
    (208, "CUDA_ERROR_ALREADY_MAPPED → hipErrorAlreadyMapped"),
    (209, "CUDA_ERROR_NO_BINARY_FOR_GPU → hipErrorNoBinaryForGpu"),
    (210, "CUDA_ERROR_ALREADY_ACQUIRED → hipErrorAlreadyAcquired"),
    (211, "CUDA_ERROR_NOT_MAPPED → hipErrorNotMapped"),
    (
        212,
        "CUDA_ERROR_NOT_MAPPED_AS_ARRAY → hipErrorNotMappedAsArray",
    ),
    (
        213,
        "CUDA_ERROR_NOT_MAPPED_AS_POINTER → hipErrorNotMappedAsPointer",
    ),
    (
        214,
        "CUDA_ERROR_ECC_UNCORRECTABLE → hipErrorECCNotCorrectable",
    ),
    (
        215,
        "CUDA_ERROR_UNSUPPORTED_LIMIT → hipErrorUnsupportedLimit",
    ),
    (
        216,
        "CUDA_ERROR_CONTEXT_ALREADY_IN_USE → hipErrorContextAlreadyInUse",
    ),
    (
        217,
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED → hipErrorPeerAccessUnsupported",
    ),
    (218, "CUDA_ERROR_INVALID_PTX → hipErrorInvalidKernelFile"),
    (
        219,
        "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT → hipErrorInvalidGraphicsContext",
    ),
    (300, "CUDA_ERROR_INVALID_SOURCE → hipErrorInvalidSource"),
    (301, "CUDA_ERROR_FILE_NOT_FOUND → hipErrorFileNotFound"),
    (
        302,
        "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND → hipErrorSharedObjectSymbolNotFound",
    ),
    (
        303,
        "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED → hipErrorSharedObjectInitFailed",
    ),
    (304, "CUDA_ERROR_OPERATING_SYSTEM → hipErrorOperatingSystem"),
    (400, "CUDA_ERROR_INVALID_HANDLE → hipErrorInvalidHandle"),
    (500, "CUDA_ERROR_NOT_FOUND → hipErrorNotFound"),
    (600, "CUDA_ERROR_NOT_READY → hipErrorNotReady"),
    (700, "CUDA_ERROR_ILLEGAL_ADDRESS → hipErrorIllegalAddress"),
    (
        701,
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES → hipErrorLaunchOutOfResources",
    ),
    (702, "CUDA_ERROR_LAUNCH_TIMEOUT → hipErrorLaunchTimeOut"),
    (
        704,
        "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED → hipErrorPeerAccessAlreadyEnabled",
    ),
    (
        705,
        "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED → hipErrorPeerAccessNotEnabled",
    ),
    (
        708,
        "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE → hipErrorSetOnActiveProcess",
    ),
    (
        709,
        "CUDA_ERROR_CONTEXT_IS_DESTROYED → hipErrorContextIsDestroyed",
    ),
    (710, "CUDA_ERROR_ASSERT → hipErrorAssert"),
    (
        712,
        "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED → hipErrorHostMemoryAlreadyRegistered",
    ),
    (
        713,
        "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED → hipErrorHostMemoryNotRegistered",
    ),
    (719, "CUDA_ERROR_LAUNCH_FAILED → hipErrorLaunchFailure"),
    (
        720,
        "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE → hipErrorCooperativeLaunchTooLarge",
    ),
    (801, "CUDA_ERROR_NOT_SUPPORTED → hipErrorNotSupported"),
    (
        900,
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED → hipErrorStreamCaptureUnsupported",
    ),
    (
        901,
        "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED → hipErrorStreamCaptureInvalidated",
    ),
    (
        902,
        "CUDA_ERROR_STREAM_CAPTURE_MERGE → hipErrorStreamCaptureMerge",
    ),
    (
        903,
        "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED → hipErrorStreamCaptureUnmatched",
    ),
    (
        904,
        "CUDA_ERROR_STREAM_CAPTURE_UNJOINED → hipErrorStreamCaptureUnjoined",
    ),
    (
        905,
        "CUDA_ERROR_STREAM_CAPTURE_ISOLATION → hipErrorStreamCaptureIsolation",
    ),
    (
        906,
        "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT → hipErrorStreamCaptureImplicit",
    ),
    (907, "CUDA_ERROR_CAPTURED_EVENT → hipErrorCapturedEvent"),
    (
        908,
        "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD → hipErrorStreamCaptureWrongThread",
    ),
    (
        910,
        "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE → hipErrorGraphExecUpdateFailure",
    ),
    (999, "CUDA_ERROR_UNKNOWN → hipErrorUnknown"),
];

/// Translate a `CUresult` into HIP's numbering (see [`HIP_TWINS`]).
pub fn translate(cu: CuResult) -> RtError {
    if HIP_TWINS.iter().any(|&(c, _)| c == cu) {
        RtError(cu)
    } else {
        RtError::UNKNOWN
    }
}

fn check(rc: CuResult) -> RtResult<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(translate(rc))
    }
}

const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: c_int = 2;
const CU_POINTER_ATTRIBUTE_IS_MANAGED: c_int = 8;
const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: c_int = 9;
const CU_MEMHOSTALLOC_PORTABLE: c_uint = 0x1;
const CU_MEMHOSTALLOC_DEVICEMAP: c_uint = 0x2;
const CU_STREAM_NON_BLOCKING: c_uint = 0x1;
const CU_EVENT_DISABLE_TIMING: c_uint = 0x2;
/// `CU_STREAM_PER_THREAD`: the calling thread's implicit stream, which does not synchronise
/// with other threads' streams.
const CU_STREAM_PER_THREAD: *mut c_void = 0x2 as *mut c_void;
const MAX_DEVICES: usize = 64;

/// Typed entry points of `libcuda.so.1` (the `_v2` symbols are what the headers bind to).
struct CudaApi {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    driver_get_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
    primary_ctx_retain: unsafe extern "C" fn(*mut CuContext, c_int) -> CuResult,
    ctx_get_current: unsafe extern "C" fn(*mut CuContext) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_push_current: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_pop_current: unsafe extern "C" fn(*mut CuContext) -> CuResult,
    ctx_get_device: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pointer_get_attributes:
        unsafe extern "C" fn(c_uint, *mut c_int, *mut *mut c_void, CuDevicePtr) -> CuResult,
    mem_get_address_range:
        unsafe extern "C" fn(*mut CuDevicePtr, *mut usize, CuDevicePtr) -> CuResult,
    memcpy_htod_async:
        unsafe extern "C" fn(CuDevicePtr, *const c_void, usize, *mut c_void) -> CuResult,
    memcpy_dtoh_async:
        unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize, *mut c_void) -> CuResult,
    stream_create: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> CuResult,
    stream_destroy: unsafe extern "C" fn(*mut c_void) -> CuResult,
    stream_synchronize: unsafe extern "C" fn(*mut c_void) -> CuResult,
    stream_get_ctx: unsafe extern "C" fn(*mut c_void, *mut CuContext) -> CuResult,
    event_create: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> CuResult,
    event_record: unsafe extern "C" fn(*mut c_void, *mut c_void) -> CuResult,
    event_synchronize: unsafe extern "C" fn(*mut c_void) -> CuResult,
    event_destroy: unsafe extern "C" fn(*mut c_void) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
    mem_host_alloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> CuResult,
    mem_free_host: unsafe extern "C" fn(*mut c_void) -> CuResult,
    // Optional: bounce buffers on huge pages are registered instead of cuMemHostAlloc'd.
    mem_host_register: Option<unsafe extern "C" fn(*mut c_void, usize, c_uint) -> CuResult>,
    mem_host_unregister: Option<unsafe extern "C" fn(*mut c_void) -> CuResult>,
    // Optional: not called by the library itself.
    // Optional (CUDA 12): tells a stream from a later one created at the same address.
    stream_get_id: Option<unsafe extern "C" fn(*mut c_void, *mut u64) -> CuResult>,
    mem_host_get_device_pointer:
        Option<unsafe extern "C" fn(*mut u64, *mut c_void, c_uint) -> CuResult>,
    // Optional: the staging kernel of stream-ordered I/O (loaded from PTX, launched on streams).
    module_load_data: Option<unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> CuResult>,
    module_get_function:
        Option<unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> CuResult>,
    launch_kernel: Option<LaunchKernel>,
    launch_cooperative_kernel: Option<LaunchCooperativeKernel>,
    device_get_attribute: Option<unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CuResult>,
    // Optional: the staging kernel's waits give up when its stream failed.
    stream_query: Option<unsafe extern "C" fn(*mut c_void) -> CuResult>,
}

/// `cuLaunchKernel`.
type LaunchKernel = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CuResult;

/// `cuLaunchCooperativeKernel`.
type LaunchCooperativeKernel = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
) -> CuResult;

/// `CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH`.
const CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: c_int = 95;
/// Blocks of one staging launch where they can be launched co-resident: four copy at 49 GB/s
/// on the H200 (one at 35; more gain nothing: scripts/gpu/stage_probe.c).
const STAGE_GRID: u32 = 4;

/// The CUDA driver-API runtime.
pub struct CudaRuntime {
    api: CudaApi,
    version: i32,
    device_count: i32,
    simulated: bool,
    path: String,
    /// Primary context of each device, retained on first use and kept for the process lifetime.
    primary: [OnceLock<usize>; MAX_DEVICES],
    /// cuFile, when it reports a real GPUDirect Storage path.
    cufile: Option<CuFile>,
    /// Why GPUDirect Storage is or is not used.
    cufile_status: String,
    /// The staging kernel per device (function handle, blocks per launch), loaded on first use.
    stage: [OnceLock<RtResult<(usize, u32)>>; MAX_DEVICES],
    /// `host_alloc`'s huge-page mappings registered with the driver, by address: their length.
    registered: Mutex<HashMap<usize, usize>>,
}

/// `host_alloc` and `mapped_alloc` requests from this size on get huge pages registered with
/// the driver (`sys::huge`: a third of `cuMemHostAlloc`'s set-up time on the H200); smaller
/// ones, which could not use a huge page, stay with `cuMemHostAlloc`.
const REGISTER_MIN: usize = 2 << 20;
const CU_MEMHOSTREGISTER_PORTABLE: c_uint = 0x01;
const CU_MEMHOSTREGISTER_DEVICEMAP: c_uint = 0x02;

/// Restores the thread's context state when a call had to push a primary context.
struct CtxGuard<'a> {
    rt: &'a CudaRuntime,
    pushed: bool,
}

impl Drop for CtxGuard<'_> {
    fn drop(&mut self) {
        if self.pushed {
            let mut popped: CuContext = std::ptr::null_mut();
            // SAFETY: valid out-pointer; we pushed exactly one context.
            unsafe { (self.rt.api.ctx_pop_current)(&mut popped) };
        }
    }
}

impl CudaRuntime {
    /// `len` bytes (at least [`REGISTER_MIN`]) of huge-page memory registered with the driver
    /// (portable, plus `extra` registration flags), recorded for `host_free`; `None` where the
    /// driver has no registration, refuses it, or the mapping fails (the caller then uses
    /// `cuMemHostAlloc`). The caller holds the context.
    fn register_huge(&self, len: usize, extra: c_uint) -> Option<std::ptr::NonNull<u8>> {
        let register = self.api.mem_host_register?;
        self.api.mem_host_unregister?;
        if len < REGISTER_MIN {
            return None;
        }
        let p = crate::sys::huge::map(len).ok()?;
        // SAFETY: `len` bytes of our own mapping, faulted in, not shared.
        let r = unsafe { register(p.as_ptr().cast(), len, CU_MEMHOSTREGISTER_PORTABLE | extra) };
        if r != 0 {
            // Refused (a driver without registration here): the classic allocation.
            // SAFETY: the mapping just made, unknown to anyone else.
            unsafe { crate::sys::huge::unmap(p, len) };
            return None;
        }
        self.registered.lock().insert(p.as_ptr() as usize, len);
        Some(p)
    }

    /// Bind the driver API in `lib` and initialise it.
    pub fn bind(lib: Library, path: &str) -> Result<Self, String> {
        let api = CudaApi {
            init: sym(&lib, "cuInit")?,
            driver_get_version: sym(&lib, "cuDriverGetVersion")?,
            device_get_count: sym(&lib, "cuDeviceGetCount")?,
            device_get: sym(&lib, "cuDeviceGet")?,
            primary_ctx_retain: sym(&lib, "cuDevicePrimaryCtxRetain")?,
            ctx_get_current: sym(&lib, "cuCtxGetCurrent")?,
            ctx_set_current: sym(&lib, "cuCtxSetCurrent")?,
            ctx_push_current: sym(&lib, "cuCtxPushCurrent_v2")?,
            ctx_pop_current: sym(&lib, "cuCtxPopCurrent_v2")?,
            ctx_get_device: sym(&lib, "cuCtxGetDevice")?,
            pointer_get_attributes: sym(&lib, "cuPointerGetAttributes")?,
            mem_get_address_range: sym(&lib, "cuMemGetAddressRange_v2")?,
            memcpy_htod_async: sym(&lib, "cuMemcpyHtoDAsync_v2")?,
            memcpy_dtoh_async: sym(&lib, "cuMemcpyDtoHAsync_v2")?,
            stream_create: sym(&lib, "cuStreamCreate")?,
            stream_destroy: sym(&lib, "cuStreamDestroy_v2")?,
            stream_synchronize: sym(&lib, "cuStreamSynchronize")?,
            stream_get_ctx: sym(&lib, "cuStreamGetCtx")?,
            event_create: sym(&lib, "cuEventCreate")?,
            event_record: sym(&lib, "cuEventRecord")?,
            event_synchronize: sym(&lib, "cuEventSynchronize")?,
            event_destroy: sym(&lib, "cuEventDestroy_v2")?,
            mem_alloc: sym(&lib, "cuMemAlloc_v2")?,
            mem_free: sym(&lib, "cuMemFree_v2")?,
            mem_host_alloc: sym(&lib, "cuMemHostAlloc")?,
            mem_free_host: sym(&lib, "cuMemFreeHost")?,
            mem_host_register: opt_sym(&lib, "cuMemHostRegister_v2"),
            mem_host_unregister: opt_sym(&lib, "cuMemHostUnregister"),
            stream_get_id: opt_sym(&lib, "cuStreamGetId"),
            mem_host_get_device_pointer: opt_sym(&lib, "cuMemHostGetDevicePointer_v2"),
            module_load_data: opt_sym(&lib, "cuModuleLoadData"),
            module_get_function: opt_sym(&lib, "cuModuleGetFunction"),
            launch_kernel: opt_sym(&lib, "cuLaunchKernel"),
            launch_cooperative_kernel: opt_sym(&lib, "cuLaunchCooperativeKernel"),
            device_get_attribute: opt_sym(&lib, "cuDeviceGetAttribute"),
            stream_query: opt_sym(&lib, "cuStreamQuery"),
        };
        // SAFETY: cuInit takes a flags integer (must be 0).
        let rc = unsafe { (api.init)(0) };
        if rc != 0 {
            return Err(format!("cuInit failed with CUresult {rc}"));
        }
        let mut version = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { (api.driver_get_version)(&mut version) })
            .map_err(|e| format!("cuDriverGetVersion: {e}"))?;
        let mut count = 0;
        // SAFETY: valid out-pointer.
        if unsafe { (api.device_get_count)(&mut count) } != 0 {
            count = 0;
        }
        let simulated = sym::<unsafe extern "C" fn() -> c_int>(&lib, "hipsimIsSimulator").is_ok();
        // Never dlclose the driver.
        std::mem::forget(lib);
        // Ignored in secure-execution mode, as every variable that names a library.
        let cufile_path = crate::sys::secure::path_var("HIPFILE_CUFILE_LIBRARY")
            .and_then(|v| v.into_string().ok());
        // An explicitly named library is always asked; the default one only where it could
        // have a GDS path.
        let precheck = match cufile_path {
            Some(_) => Ok(()),
            None => super::cufile::gds_possible(std::path::Path::new("/")),
        };
        let (cufile, cufile_status) = match (cufile_path.as_deref(), precheck) {
            (Some("none") | Some("off"), _) => (
                None,
                "cuFile not used: HIPFILE_CUFILE_LIBRARY=none".to_string(),
            ),
            (_, Err(reason)) => (None, format!("cuFile not used: {reason}")),
            (p, Ok(())) => match CuFile::load(p) {
                Ok(c) => {
                    let (major, minor) = c.version();
                    (
                        Some(c),
                        format!("GPUDirect Storage through cuFile (nvidia-fs {major}.{minor})"),
                    )
                }
                Err(reason) => (None, format!("cuFile not used: {reason}")),
            },
        };
        tracing::info!(target: "hipfile", "{cufile_status}");
        Ok(CudaRuntime {
            api,
            version,
            device_count: count,
            simulated,
            path: path.to_string(),
            primary: std::array::from_fn(|_| OnceLock::new()),
            cufile,
            cufile_status,
            stage: std::array::from_fn(|_| OnceLock::new()),
            registered: Mutex::new(HashMap::new()),
        })
    }

    /// The primary context of `device`, retained once.
    fn primary_ctx(&self, device: i32) -> RtResult<CuContext> {
        let slot = self
            .primary
            .get(usize::try_from(device).map_err(|_| RtError::INVALID_DEVICE)?)
            .ok_or(RtError::INVALID_DEVICE)?;
        if let Some(&c) = slot.get() {
            return Ok(c as CuContext);
        }
        let mut dev = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.device_get)(&mut dev, device) })?;
        let mut ctx: CuContext = std::ptr::null_mut();
        // SAFETY: valid out-pointer. Retaining twice under a race only bumps a refcount.
        check(unsafe { (self.api.primary_ctx_retain)(&mut ctx, dev) })?;
        Ok(*slot.get_or_init(|| ctx as usize) as CuContext)
    }

    fn current_ctx(&self) -> CuContext {
        let mut cur: CuContext = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        if unsafe { (self.api.ctx_get_current)(&mut cur) } != 0 {
            return std::ptr::null_mut();
        }
        cur
    }

    /// Load the staging kernel into `device`'s primary context: its function handle and how many
    /// blocks a launch uses (several only with cooperative launches, which keep them co-resident:
    /// each block waits for the host, so one that never got a multiprocessor would stall the rest).
    fn load_stage(&self, device: i32) -> RtResult<(usize, u32)> {
        let (Some(load), Some(get), Some(_)) = (
            self.api.module_load_data,
            self.api.module_get_function,
            self.api.launch_kernel,
        ) else {
            return Err(RtError::NOT_SUPPORTED);
        };
        let restore = self.enter_device(device)?;
        let loaded = (|| {
            let mut module: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the image is NUL-terminated PTX text.
            check(unsafe { load(&mut module, super::stage::PTX.as_ptr().cast()) })?;
            let mut f: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer, a module just loaded, a NUL-terminated name.
            check(unsafe { get(&mut f, module, super::stage::NAME.as_ptr()) })?;
            let mut coop: c_int = 0;
            let mut dev: c_int = 0;
            // SAFETY: valid out-pointers.
            let cooperative = check(unsafe { (self.api.device_get)(&mut dev, device) }).is_ok()
                && self.api.launch_cooperative_kernel.is_some()
                && self.api.device_get_attribute.is_some_and(|attr| {
                    // SAFETY: valid out-pointer.
                    unsafe { attr(&mut coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev) == 0 }
                })
                && coop != 0;
            Ok((f as usize, if cooperative { STAGE_GRID } else { 1 }))
        })();
        self.leave_device(restore);
        if let Err(e) = &loaded {
            tracing::info!(target: "hipfile", "the staging kernel of stream-ordered I/O cannot be loaded on device {device} ({e}); streams are held on a memory word instead");
        }
        loaded
    }

    /// Make sure a context is current for the duration of the returned guard.
    fn ctx(&self) -> RtResult<CtxGuard<'_>> {
        if !self.current_ctx().is_null() {
            return Ok(CtxGuard {
                rt: self,
                pushed: false,
            });
        }
        let ctx = self.primary_ctx(0)?;
        // SAFETY: a valid primary context.
        check(unsafe { (self.api.ctx_push_current)(ctx) })?;
        Ok(CtxGuard {
            rt: self,
            pushed: true,
        })
    }
}

impl Runtime for CudaRuntime {
    fn platform(&self) -> Platform {
        Platform::Nvidia
    }

    fn describe(&self) -> String {
        format!(
            "CUDA driver {}.{} from {}{}, {} device(s), {}",
            self.version / 1000,
            (self.version % 1000) / 10,
            self.path,
            if self.simulated {
                " (simulated GPU runtime)"
            } else {
                ""
            },
            self.device_count,
            self.cufile_status
        )
    }

    fn pointer_info(&self, ptr: usize) -> RtResult<PointerInfo> {
        if ptr == 0 {
            return Err(RtError::INVALID_VALUE);
        }
        let mut mem_type: c_uint = 0;
        let mut ordinal: c_int = -1;
        let mut managed: c_int = 0;
        let mut attrs = [
            CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            CU_POINTER_ATTRIBUTE_IS_MANAGED,
        ];
        let mut data: [*mut c_void; 3] = [
            (&mut mem_type as *mut c_uint).cast(),
            (&mut ordinal as *mut c_int).cast(),
            (&mut managed as *mut c_int).cast(),
        ];
        // SAFETY: three attributes with three valid, correctly sized out-pointers.
        check(unsafe {
            (self.api.pointer_get_attributes)(3, attrs.as_mut_ptr(), data.as_mut_ptr(), ptr as u64)
        })?;
        let memory_type = if managed != 0 {
            MemoryType::Managed
        } else {
            match mem_type {
                0 => MemoryType::Unregistered,
                1 => MemoryType::Host,
                2 => MemoryType::Device,
                3 => MemoryType::Array,
                _ => MemoryType::Unified,
            }
        };
        Ok(PointerInfo {
            memory_type,
            device: ordinal,
        })
    }

    fn address_range(&self, ptr: usize) -> RtResult<(usize, usize)> {
        let _g = self.ctx()?;
        let mut base: CuDevicePtr = 0;
        let mut size = 0usize;
        // SAFETY: valid out-pointers.
        check(unsafe { (self.api.mem_get_address_range)(&mut base, &mut size, ptr as u64) })?;
        Ok((base as usize, size))
    }

    fn enter_device(&self, device: i32) -> RtResult<DeviceRestore> {
        if device < 0 {
            return Ok(DeviceRestore(None));
        }
        let target = self.primary_ctx(device)?;
        if self.current_ctx() == target {
            return Ok(DeviceRestore(None));
        }
        // Push rather than set, so the application's context stack is exactly restored.
        // SAFETY: a valid primary context.
        check(unsafe { (self.api.ctx_push_current)(target) })?;
        Ok(DeviceRestore(Some(1)))
    }

    fn leave_device(&self, restore: DeviceRestore) {
        if restore.0.is_some() {
            let mut popped: CuContext = std::ptr::null_mut();
            // SAFETY: valid out-pointer; enter_device pushed exactly one context.
            let rc = unsafe { (self.api.ctx_pop_current)(&mut popped) };
            if rc != 0 {
                tracing::warn!(target: "hipfile", "popping the CUDA context failed: {rc}");
            }
        }
    }

    fn thread_init(&self) {}

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> RtResult<()> {
        let _g = self.ctx()?;
        // On the calling thread's per-thread stream rather than the legacy default stream,
        // which serialises the copies of every thread of the process (16 threads of 4 KiB
        // copies ran 7× slower that way on the H200).
        // SAFETY: `src` is valid host memory for its length and we wait for the copy before
        // returning; the driver validates `dst`.
        check(unsafe {
            (self.api.memcpy_htod_async)(
                dst as u64,
                src.as_ptr().cast(),
                src.len(),
                CU_STREAM_PER_THREAD,
            )
        })?;
        // SAFETY: the per-thread stream handle is always valid.
        check(unsafe { (self.api.stream_synchronize)(CU_STREAM_PER_THREAD) })
    }

    fn copy_from_device(&self, dst: &mut [u8], src: usize) -> RtResult<()> {
        let _g = self.ctx()?;
        // SAFETY: `dst` is valid writable host memory and we wait for the copy before
        // returning; the driver validates `src`.
        check(unsafe {
            (self.api.memcpy_dtoh_async)(
                dst.as_mut_ptr().cast(),
                src as u64,
                dst.len(),
                CU_STREAM_PER_THREAD,
            )
        })?;
        // SAFETY: the per-thread stream handle is always valid.
        check(unsafe { (self.api.stream_synchronize)(CU_STREAM_PER_THREAD) })
    }

    unsafe fn copy_to_device_async(
        &self,
        dst: usize,
        src: *const u8,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()> {
        let _g = self.ctx()?;
        // SAFETY: the caller keeps `src` valid until the copy completes.
        check(unsafe {
            (self.api.memcpy_htod_async)(dst as u64, src.cast(), len, stream.0 as *mut c_void)
        })
    }

    unsafe fn copy_from_device_async(
        &self,
        dst: *mut u8,
        src: usize,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()> {
        let _g = self.ctx()?;
        // SAFETY: the caller keeps `dst` valid until the copy completes.
        check(unsafe {
            (self.api.memcpy_dtoh_async)(dst.cast(), src as u64, len, stream.0 as *mut c_void)
        })
    }

    fn stream_create(&self) -> RtResult<StreamHandle> {
        let _g = self.ctx()?;
        let mut s: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.stream_create)(&mut s, CU_STREAM_NON_BLOCKING) })?;
        Ok(StreamHandle(s as usize))
    }

    fn stream_destroy(&self, stream: StreamHandle) {
        // SAFETY: the stream came from stream_create.
        unsafe { (self.api.stream_destroy)(stream.0 as *mut c_void) };
    }

    fn mapped_alloc(&self, len: usize) -> RtResult<super::MappedHost> {
        let alias = self
            .api
            .mem_host_get_device_pointer
            .ok_or(RtError::NOT_SUPPORTED)?;
        let _g = self.ctx()?;
        // Huge pages: the staging kernel reads these slots over PCIe, and with 4 KiB pages its
        // reads of eight streams' slots ran at 24-27 GB/s against 32-33 (H200, T6 8 streams x 1,
        // two rounds interleaved in one run).
        if let Some(p) = self.register_huge(len, CU_MEMHOSTREGISTER_DEVICEMAP) {
            let mut dev: u64 = 0;
            // SAFETY: valid out-pointer; `p` is registered with the device mapping just now.
            match check(unsafe { alias(&mut dev, p.as_ptr().cast(), 0) }) {
                Ok(()) => {
                    return Ok(super::MappedHost {
                        host: p,
                        device: dev as usize,
                    })
                }
                // SAFETY: registered above, not shared.
                Err(_) => unsafe { self.host_free(p.as_ptr()) },
            }
        }
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe {
            (self.api.mem_host_alloc)(
                &mut p,
                len.max(1),
                CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP,
            )
        })?;
        let Some(host) = std::ptr::NonNull::new(p.cast::<u8>()) else {
            return Err(RtError::OUT_OF_MEMORY);
        };
        let mut dev: u64 = 0;
        // SAFETY: valid out-pointer; `p` is mapped pinned memory just allocated.
        if let Err(e) = check(unsafe { alias(&mut dev, p, 0) }) {
            // SAFETY: allocated above, not shared.
            unsafe { (self.api.mem_free_host)(p) };
            return Err(e);
        }
        Ok(super::MappedHost {
            host,
            device: dev as usize,
        })
    }

    fn stage_grid(&self, device: i32) -> RtResult<u32> {
        let slot = self
            .stage
            .get(usize::try_from(device).map_err(|_| RtError::INVALID_DEVICE)?)
            .ok_or(RtError::INVALID_DEVICE)?;
        slot.get_or_init(|| self.load_stage(device)).map(|(_, g)| g)
    }

    fn stage_launch(
        &self,
        device: i32,
        stream: StreamHandle,
        mail: usize,
        grid: u32,
    ) -> RtResult<()> {
        let (f, max) = self
            .stage
            .get(usize::try_from(device).map_err(|_| RtError::INVALID_DEVICE)?)
            .and_then(|s| s.get())
            .copied()
            .ok_or(RtError::NOT_SUPPORTED)??;
        let grid = grid.clamp(1, max);
        let restore = self.enter_device(device)?;
        let mut mail_arg = mail as u64;
        let mut params = [(&mut mail_arg as *mut u64).cast::<c_void>()];
        let f = f as *mut c_void;
        let s = stream.0 as *mut c_void;
        let block = super::stage::THREADS;
        let r = match (grid, self.api.launch_cooperative_kernel) {
            (g, Some(coop)) if g > 1 => {
                // SAFETY: the kernel takes (StageMail *); `params` points at it for the duration
                // of the call, which copies it; the driver validates the stream.
                check(unsafe { coop(f, g, 1, 1, block, 1, 1, 0, s, params.as_mut_ptr()) })
            }
            _ => match self.api.launch_kernel {
                // SAFETY: as above, one block.
                Some(launch) => check(unsafe {
                    launch(
                        f,
                        1,
                        1,
                        1,
                        block,
                        1,
                        1,
                        0,
                        s,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                }),
                None => Err(RtError::NOT_SUPPORTED),
            },
        };
        self.leave_device(restore);
        r
    }

    fn stream_id(&self, stream: StreamHandle) -> RtResult<u64> {
        let get = self.api.stream_get_id.ok_or(RtError::NOT_SUPPORTED)?;
        let _g = self.ctx()?;
        let mut id = 0u64;
        // SAFETY: valid out-pointer; the driver validates the stream.
        check(unsafe { get(stream.0 as *mut c_void, &mut id) })?;
        Ok(id)
    }

    fn stream_query(&self, stream: StreamHandle) -> RtResult<()> {
        let query = self.api.stream_query.ok_or(RtError::NOT_READY)?;
        let _g = self.ctx()?;
        // SAFETY: the driver validates the handle.
        check(unsafe { query(stream.0 as *mut c_void) })
    }

    fn stream_synchronize(&self, stream: StreamHandle) -> RtResult<()> {
        let _g = self.ctx()?;
        // SAFETY: the driver validates the handle.
        check(unsafe { (self.api.stream_synchronize)(stream.0 as *mut c_void) })
    }

    fn stream_device(&self, stream: StreamHandle) -> RtResult<i32> {
        let _g = self.ctx()?;
        let mut ctx: CuContext = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the driver validates the stream.
        check(unsafe { (self.api.stream_get_ctx)(stream.0 as *mut c_void, &mut ctx) })?;
        // SAFETY: a context the driver just returned.
        check(unsafe { (self.api.ctx_push_current)(ctx) })?;
        let pushed = CtxGuard {
            rt: self,
            pushed: true,
        };
        let mut d = 0;
        // SAFETY: valid out-pointer.
        let rc = unsafe { (self.api.ctx_get_device)(&mut d) };
        drop(pushed);
        check(rc)?;
        Ok(d)
    }

    fn event_create(&self) -> RtResult<EventHandle> {
        let _g = self.ctx()?;
        let mut e: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.event_create)(&mut e, CU_EVENT_DISABLE_TIMING) })?;
        Ok(EventHandle(e as usize))
    }

    fn event_record(&self, event: EventHandle, stream: StreamHandle) -> RtResult<()> {
        let _g = self.ctx()?;
        // SAFETY: the driver validates both handles.
        check(unsafe { (self.api.event_record)(event.0 as *mut c_void, stream.0 as *mut c_void) })
    }

    fn event_synchronize(&self, event: EventHandle) -> RtResult<()> {
        // SAFETY: the driver validates the handle.
        check(unsafe { (self.api.event_synchronize)(event.0 as *mut c_void) })
    }

    fn event_destroy(&self, event: EventHandle) {
        // SAFETY: the event came from event_create.
        unsafe { (self.api.event_destroy)(event.0 as *mut c_void) };
    }

    fn host_alloc(&self, len: usize) -> RtResult<*mut u8> {
        let _g = self.ctx()?;
        if let Some(p) = self.register_huge(len, 0) {
            return Ok(p.as_ptr());
        }
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.mem_host_alloc)(&mut p, len, CU_MEMHOSTALLOC_PORTABLE) })?;
        Ok(p.cast())
    }

    unsafe fn host_free(&self, ptr: *mut u8) {
        let registered = self.registered.lock().remove(&(ptr as usize));
        let Ok(_g) = self.ctx() else {
            // Without the context the driver may still hold the pages: leave them.
            return;
        };
        match (registered, self.api.mem_host_unregister) {
            (Some(len), Some(unregister)) => {
                // SAFETY: registered by host_alloc; the caller no longer uses it.
                unsafe { unregister(ptr.cast()) };
                if let Some(p) = std::ptr::NonNull::new(ptr) {
                    // SAFETY: the whole mapping sys::huge::map made for `len` bytes.
                    unsafe { crate::sys::huge::unmap(p, len) };
                }
            }
            // SAFETY: the caller passes memory from host_alloc (cuMemHostAlloc).
            _ => unsafe {
                (self.api.mem_free_host)(ptr.cast());
            },
        }
    }

    fn host_register(&self, ptr: *mut u8, len: usize) -> RtResult<()> {
        let register = self.api.mem_host_register.ok_or(RtError::NOT_SUPPORTED)?;
        self.api.mem_host_unregister.ok_or(RtError::NOT_SUPPORTED)?;
        let _g = self.ctx()?;
        // SAFETY: the caller's own memory of `len` bytes; the driver validates the range.
        check(unsafe { register(ptr.cast(), len, CU_MEMHOSTREGISTER_PORTABLE) })
    }

    fn registers_host(&self) -> bool {
        self.api.mem_host_register.is_some() && self.api.mem_host_unregister.is_some()
    }

    unsafe fn host_unregister(&self, ptr: *mut u8) {
        let (Some(unregister), Ok(_g)) = (self.api.mem_host_unregister, self.ctx()) else {
            // Without the context the driver may still hold the pages: leave them.
            return;
        };
        // SAFETY: registered by host_register; the caller no longer uses it.
        unsafe { unregister(ptr.cast()) };
    }

    fn has_fastpath(&self) -> bool {
        self.cufile.is_some()
    }

    fn forget_file(&self, fd: RawFd) {
        if let Some(c) = &self.cufile {
            c.forget(fd);
        }
    }

    fn fastpath_io(
        &self,
        dir: Direction,
        fd: RawFd,
        dev: usize,
        size: u64,
        offset: i64,
    ) -> Result<u64, FastpathFault> {
        let c = self
            .cufile
            .as_ref()
            .ok_or(FastpathFault::Runtime(RtError::NOT_SUPPORTED))?;
        // cuFile works in the caller's CUDA context.
        let _g = self.ctx().map_err(FastpathFault::Runtime)?;
        c.io(dir, fd, dev, size, offset)
    }
}

impl RuntimeTools for CudaRuntime {
    fn current_device(&self) -> RtResult<i32> {
        if self.current_ctx().is_null() {
            return Ok(0);
        }
        let mut d = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.ctx_get_device)(&mut d) })?;
        Ok(d)
    }
    fn version(&self) -> i32 {
        self.version
    }
    fn is_simulated(&self) -> bool {
        self.simulated
    }
    fn device_count(&self) -> i32 {
        self.device_count
    }
    fn set_device(&self, device: i32) -> RtResult<()> {
        let ctx = self.primary_ctx(device)?;
        // SAFETY: a valid primary context.
        check(unsafe { (self.api.ctx_set_current)(ctx) })
    }
    fn device_alloc(&self, len: usize) -> RtResult<usize> {
        let _g = self.ctx()?;
        let mut p: CuDevicePtr = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.mem_alloc)(&mut p, len) })?;
        Ok(p as usize)
    }
    fn device_free(&self, addr: usize) {
        if let Ok(_g) = self.ctx() {
            // SAFETY: the address came from device_alloc.
            unsafe { (self.api.mem_free)(addr as u64) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translation_keeps_twins_and_maps_the_rest_to_unknown() {
        assert_eq!(translate(0), RtError(0));
        assert_eq!(translate(1), RtError::INVALID_VALUE);
        assert_eq!(translate(2), RtError::OUT_OF_MEMORY);
        assert_eq!(translate(201), RtError::INVALID_CONTEXT);
        assert_eq!(translate(500), RtError::NOT_FOUND);
        assert_eq!(translate(712), RtError::HOST_MEMORY_ALREADY_REGISTERED);
        // CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221) has no HIP twin.
        assert_eq!(translate(221), RtError::UNKNOWN);
        assert_eq!(translate(-5), RtError::UNKNOWN);
    }
}
