//! The raw symbol table of the CUDA driver API (`libcuda.so.1`): its C types and constants as
//! the library uses them, and [`CudaApi`], its entry points as typed function pointers resolved
//! once when the library is bound (cudarc's `sys`). Nothing here interprets a result; `super`
//! does.
//!
//! Required entry points fail the load with the symbol's name; optional ones are `Option`s.

use std::ffi::{c_char, c_int, c_uint, c_void};

use libloading::os::unix::Library;

use crate::runtime::symbols::{opt_sym, sym};

pub(super) type CuResult = c_int;
pub(super) type CuDevicePtr = u64;
pub(super) type CuContext = *mut c_void;

pub(super) const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: c_int = 2;
pub(super) const CU_POINTER_ATTRIBUTE_IS_MANAGED: c_int = 8;
pub(super) const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: c_int = 9;
pub(super) const CU_MEMHOSTALLOC_PORTABLE: c_uint = 0x1;
pub(super) const CU_MEMHOSTALLOC_DEVICEMAP: c_uint = 0x2;
pub(super) const CU_STREAM_NON_BLOCKING: c_uint = 0x1;
pub(super) const CU_EVENT_DISABLE_TIMING: c_uint = 0x2;
/// `CU_STREAM_PER_THREAD`: the calling thread's implicit stream, which does not synchronise
/// with other threads' streams.
pub(super) const CU_STREAM_PER_THREAD: *mut c_void = 0x2 as *mut c_void;
/// `CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH`.
pub(super) const CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: c_int = 95;
pub(super) const CU_MEMHOSTREGISTER_PORTABLE: c_uint = 0x01;
pub(super) const CU_MEMHOSTREGISTER_DEVICEMAP: c_uint = 0x02;

/// Typed entry points of `libcuda.so.1` (the `_v2` symbols are what the headers bind to).
pub(super) struct CudaApi {
    pub(super) init: unsafe extern "C" fn(c_uint) -> CuResult,
    pub(super) driver_get_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub(super) device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub(super) device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
    pub(super) primary_ctx_retain: unsafe extern "C" fn(*mut CuContext, c_int) -> CuResult,
    pub(super) ctx_get_current: unsafe extern "C" fn(*mut CuContext) -> CuResult,
    pub(super) ctx_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    pub(super) ctx_push_current: unsafe extern "C" fn(CuContext) -> CuResult,
    pub(super) ctx_pop_current: unsafe extern "C" fn(*mut CuContext) -> CuResult,
    pub(super) ctx_get_device: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub(super) pointer_get_attributes:
        unsafe extern "C" fn(c_uint, *mut c_int, *mut *mut c_void, CuDevicePtr) -> CuResult,
    pub(super) mem_get_address_range:
        unsafe extern "C" fn(*mut CuDevicePtr, *mut usize, CuDevicePtr) -> CuResult,
    pub(super) memcpy_htod_async:
        unsafe extern "C" fn(CuDevicePtr, *const c_void, usize, *mut c_void) -> CuResult,
    pub(super) memcpy_dtoh_async:
        unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize, *mut c_void) -> CuResult,
    pub(super) stream_create: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> CuResult,
    pub(super) stream_destroy: unsafe extern "C" fn(*mut c_void) -> CuResult,
    pub(super) stream_synchronize: unsafe extern "C" fn(*mut c_void) -> CuResult,
    pub(super) stream_get_ctx: unsafe extern "C" fn(*mut c_void, *mut CuContext) -> CuResult,
    pub(super) event_create: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> CuResult,
    pub(super) event_record: unsafe extern "C" fn(*mut c_void, *mut c_void) -> CuResult,
    pub(super) event_synchronize: unsafe extern "C" fn(*mut c_void) -> CuResult,
    pub(super) event_destroy: unsafe extern "C" fn(*mut c_void) -> CuResult,
    pub(super) mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
    pub(super) mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
    pub(super) mem_host_alloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> CuResult,
    pub(super) mem_free_host: unsafe extern "C" fn(*mut c_void) -> CuResult,
    // Optional: bounce buffers on huge pages are registered instead of cuMemHostAlloc'd.
    pub(super) mem_host_register:
        Option<unsafe extern "C" fn(*mut c_void, usize, c_uint) -> CuResult>,
    pub(super) mem_host_unregister: Option<unsafe extern "C" fn(*mut c_void) -> CuResult>,
    // Optional (CUDA 12): tells a stream from a later one created at the same address.
    pub(super) stream_get_id: Option<unsafe extern "C" fn(*mut c_void, *mut u64) -> CuResult>,
    pub(super) mem_host_get_device_pointer:
        Option<unsafe extern "C" fn(*mut u64, *mut c_void, c_uint) -> CuResult>,
    // Optional: the staging kernel of stream-ordered I/O (loaded from PTX, launched on streams).
    pub(super) module_load_data:
        Option<unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> CuResult>,
    pub(super) module_get_function:
        Option<unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> CuResult>,
    pub(super) launch_kernel: Option<LaunchKernel>,
    pub(super) launch_cooperative_kernel: Option<LaunchCooperativeKernel>,
    pub(super) device_get_attribute:
        Option<unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CuResult>,
    // Optional: the staging kernel's waits give up when its stream failed.
    pub(super) stream_query: Option<unsafe extern "C" fn(*mut c_void) -> CuResult>,
    /// Whether the library is the simulated runtime (it exports `hipsimIsSimulator`).
    pub(super) simulated: bool,
}

/// `cuLaunchKernel`.
pub(super) type LaunchKernel = unsafe extern "C" fn(
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
pub(super) type LaunchCooperativeKernel = unsafe extern "C" fn(
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

impl CudaApi {
    /// Resolve the entry points of `lib`; a required one that is missing fails with its name.
    pub(super) fn load(lib: &Library) -> Result<CudaApi, String> {
        Ok(CudaApi {
            init: sym(lib, "cuInit")?,
            driver_get_version: sym(lib, "cuDriverGetVersion")?,
            device_get_count: sym(lib, "cuDeviceGetCount")?,
            device_get: sym(lib, "cuDeviceGet")?,
            primary_ctx_retain: sym(lib, "cuDevicePrimaryCtxRetain")?,
            ctx_get_current: sym(lib, "cuCtxGetCurrent")?,
            ctx_set_current: sym(lib, "cuCtxSetCurrent")?,
            ctx_push_current: sym(lib, "cuCtxPushCurrent_v2")?,
            ctx_pop_current: sym(lib, "cuCtxPopCurrent_v2")?,
            ctx_get_device: sym(lib, "cuCtxGetDevice")?,
            pointer_get_attributes: sym(lib, "cuPointerGetAttributes")?,
            mem_get_address_range: sym(lib, "cuMemGetAddressRange_v2")?,
            memcpy_htod_async: sym(lib, "cuMemcpyHtoDAsync_v2")?,
            memcpy_dtoh_async: sym(lib, "cuMemcpyDtoHAsync_v2")?,
            stream_create: sym(lib, "cuStreamCreate")?,
            stream_destroy: sym(lib, "cuStreamDestroy_v2")?,
            stream_synchronize: sym(lib, "cuStreamSynchronize")?,
            stream_get_ctx: sym(lib, "cuStreamGetCtx")?,
            event_create: sym(lib, "cuEventCreate")?,
            event_record: sym(lib, "cuEventRecord")?,
            event_synchronize: sym(lib, "cuEventSynchronize")?,
            event_destroy: sym(lib, "cuEventDestroy_v2")?,
            mem_alloc: sym(lib, "cuMemAlloc_v2")?,
            mem_free: sym(lib, "cuMemFree_v2")?,
            mem_host_alloc: sym(lib, "cuMemHostAlloc")?,
            mem_free_host: sym(lib, "cuMemFreeHost")?,
            mem_host_register: opt_sym(lib, "cuMemHostRegister_v2"),
            mem_host_unregister: opt_sym(lib, "cuMemHostUnregister"),
            stream_get_id: opt_sym(lib, "cuStreamGetId"),
            mem_host_get_device_pointer: opt_sym(lib, "cuMemHostGetDevicePointer_v2"),
            module_load_data: opt_sym(lib, "cuModuleLoadData"),
            module_get_function: opt_sym(lib, "cuModuleGetFunction"),
            launch_kernel: opt_sym(lib, "cuLaunchKernel"),
            launch_cooperative_kernel: opt_sym(lib, "cuLaunchCooperativeKernel"),
            device_get_attribute: opt_sym(lib, "cuDeviceGetAttribute"),
            stream_query: opt_sym(lib, "cuStreamQuery"),
            simulated: opt_sym::<unsafe extern "C" fn() -> c_int>(lib, "hipsimIsSimulator")
                .is_some(),
        })
    }
}
