//! The raw symbol table of `libamdhip64`: its C types and constants as the library uses them,
//! and [`HipApi`], its entry points as typed function pointers resolved once when the library
//! is bound (cudarc's `sys`). Nothing here interprets a result; `super` does.
//!
//! Required entry points fail the load with the symbol's name; optional ones are `Option`s.
//! The fastpath entry points `hipAmdFileRead/Write` are looked up through `hipGetProcAddress`
//! ([`HipApi::resolve_file_io`]) and simply disable the fastpath when absent.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

use libloading::os::unix::Library;

use crate::runtime::symbols::{opt_sym, sym};

pub(super) type HipError = c_int;

/// `hipPointerAttribute_t` (32 bytes in every ROCm version; the type numbering changed in 6.0).
#[repr(C)]
pub(super) struct HipPointerAttribute {
    pub(super) memory_type: c_int,
    pub(super) device: c_int,
    pub(super) device_pointer: *mut c_void,
    pub(super) host_pointer: *mut c_void,
    pub(super) is_managed: c_int,
    pub(super) allocation_flags: c_uint,
}

impl Default for HipPointerAttribute {
    fn default() -> Self {
        HipPointerAttribute {
            memory_type: 0,
            device: -1,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            is_managed: 0,
            allocation_flags: 0,
        }
    }
}

/// `hipAmdFileHandle_t`: an 8-byte union passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct HipAmdFileHandle {
    pub(super) handle: u64,
}

/// `hipModuleLaunchKernel(f, grid xyz, block xyz, shared bytes, stream, params, extra)`.
pub(super) type ModuleLaunch = unsafe extern "C" fn(
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
) -> HipError;

/// `hipAmdFileRead` / `hipAmdFileWrite`.
pub(super) type FileRwFn =
    unsafe extern "C" fn(HipAmdFileHandle, *mut c_void, u64, i64, *mut u64, *mut i32) -> HipError;

/// `hipGetProcAddress(symbol, out, hip_version, flags, status)`.
type GetProcAddress =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> HipError;

pub(super) const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub(super) const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
pub(super) const HIP_HOST_MALLOC_PORTABLE: c_uint = 0x1;
pub(super) const HIP_HOST_MALLOC_MAPPED: c_uint = 0x2;
pub(super) const HIP_STREAM_NON_BLOCKING: c_uint = 0x1;

/// Typed entry points of `libamdhip64`.
pub(super) struct HipApi {
    pub(super) init: unsafe extern "C" fn(c_uint) -> HipError,
    pub(super) runtime_get_version: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub(super) get_device_count: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub(super) get_device: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub(super) set_device: unsafe extern "C" fn(c_int) -> HipError,
    pub(super) pointer_get_attributes:
        unsafe extern "C" fn(*mut HipPointerAttribute, *const c_void) -> HipError,
    pub(super) mem_get_address_range:
        unsafe extern "C" fn(*mut *mut c_void, *mut usize, *mut c_void) -> HipError,
    pub(super) memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipError,
    pub(super) memcpy_async:
        unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int, *mut c_void) -> HipError,
    pub(super) stream_create: unsafe extern "C" fn(*mut *mut c_void) -> HipError,
    // Optional: our streams are created non-blocking when the runtime has it.
    pub(super) stream_create_with_flags:
        Option<unsafe extern "C" fn(*mut *mut c_void, c_uint) -> HipError>,
    // Optional: the staging kernel of stream-ordered I/O reads host-mapped memory through it.
    pub(super) host_get_device_pointer:
        Option<unsafe extern "C" fn(*mut *mut c_void, *mut c_void, c_uint) -> HipError>,
    // Optional: the staging kernel of stream-ordered I/O (loaded from the embedded code objects,
    // launched on the application's streams).
    pub(super) module_load_data:
        Option<unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> HipError>,
    pub(super) module_get_function:
        Option<unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> HipError>,
    pub(super) module_launch_kernel: Option<ModuleLaunch>,
    // Optional: whether a stream failed (the staging kernel's waits look at it now and then).
    pub(super) stream_query: Option<unsafe extern "C" fn(*mut c_void) -> HipError>,
    // Optional (ROCm 6.2 and later): tells a stream from a later one at the same address.
    pub(super) stream_get_id: Option<unsafe extern "C" fn(*mut c_void, *mut u64) -> HipError>,
    pub(super) stream_destroy: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub(super) stream_synchronize: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub(super) stream_get_device: Option<unsafe extern "C" fn(*mut c_void, *mut c_int) -> HipError>,
    pub(super) event_create: unsafe extern "C" fn(*mut *mut c_void) -> HipError,
    pub(super) event_record: unsafe extern "C" fn(*mut c_void, *mut c_void) -> HipError,
    pub(super) event_synchronize: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub(super) event_destroy: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub(super) malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    pub(super) free: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub(super) host_malloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    pub(super) host_free: unsafe extern "C" fn(*mut c_void) -> HipError,
    // Optional: found through hipGetProcAddress ([`HipApi::resolve_file_io`]), both or neither.
    get_proc_address: Option<GetProcAddress>,
    pub(super) file_read: Option<FileRwFn>,
    pub(super) file_write: Option<FileRwFn>,
    /// Whether the library is the simulated runtime (it exports `hipsimIsSimulator`).
    pub(super) simulated: bool,
}

impl HipApi {
    /// Resolve the entry points of `lib`; a required one that is missing fails with its name.
    pub(super) fn load(lib: &Library) -> Result<HipApi, String> {
        Ok(HipApi {
            init: sym(lib, "hipInit")?,
            runtime_get_version: sym(lib, "hipRuntimeGetVersion")?,
            get_device_count: sym(lib, "hipGetDeviceCount")?,
            get_device: sym(lib, "hipGetDevice")?,
            set_device: sym(lib, "hipSetDevice")?,
            pointer_get_attributes: sym(lib, "hipPointerGetAttributes")?,
            mem_get_address_range: sym(lib, "hipMemGetAddressRange")?,
            memcpy: sym(lib, "hipMemcpy")?,
            memcpy_async: sym(lib, "hipMemcpyAsync")?,
            stream_create: sym(lib, "hipStreamCreate")?,
            stream_create_with_flags: opt_sym(lib, "hipStreamCreateWithFlags"),
            host_get_device_pointer: opt_sym(lib, "hipHostGetDevicePointer"),
            module_load_data: opt_sym(lib, "hipModuleLoadData"),
            module_get_function: opt_sym(lib, "hipModuleGetFunction"),
            module_launch_kernel: opt_sym(lib, "hipModuleLaunchKernel"),
            stream_query: opt_sym(lib, "hipStreamQuery"),
            stream_get_id: opt_sym(lib, "hipStreamGetId"),
            stream_destroy: sym(lib, "hipStreamDestroy")?,
            stream_synchronize: sym(lib, "hipStreamSynchronize")?,
            stream_get_device: opt_sym(lib, "hipStreamGetDevice"),
            event_create: sym(lib, "hipEventCreate")?,
            event_record: sym(lib, "hipEventRecord")?,
            event_synchronize: sym(lib, "hipEventSynchronize")?,
            event_destroy: sym(lib, "hipEventDestroy")?,
            malloc: sym(lib, "hipMalloc")?,
            free: sym(lib, "hipFree")?,
            host_malloc: sym(lib, "hipHostMalloc")?,
            host_free: sym(lib, "hipHostFree")?,
            get_proc_address: opt_sym(lib, "hipGetProcAddress"),
            file_read: None,
            file_write: None,
            simulated: opt_sym::<unsafe extern "C" fn() -> c_int>(lib, "hipsimIsSimulator")
                .is_some(),
        })
    }

    /// Look up `hipAmdFileRead/Write` for runtime `version` (they are not exported by name);
    /// both or neither.
    pub(super) fn resolve_file_io(&mut self, version: c_int) {
        let Some(gpa) = self.get_proc_address else {
            return;
        };
        let lookup = |name: &CStr| -> Option<FileRwFn> {
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid name and out-pointer; a NULL status pointer is allowed.
            let rc = unsafe { gpa(name.as_ptr(), &mut p, version, 0, std::ptr::null_mut()) };
            if rc != 0 || p.is_null() {
                None
            } else {
                // SAFETY: hipGetProcAddress returned the entry point of this documented
                // signature.
                Some(unsafe { std::mem::transmute::<*mut c_void, FileRwFn>(p) })
            }
        };
        match (lookup(c"hipAmdFileRead"), lookup(c"hipAmdFileWrite")) {
            (Some(r), Some(w)) => {
                self.file_read = Some(r);
                self.file_write = Some(w);
            }
            _ => {
                self.file_read = None;
                self.file_write = None;
            }
        }
    }
}
