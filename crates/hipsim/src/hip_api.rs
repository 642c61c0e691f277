//! The HIP runtime face (`libamdhip64.so` subset), with the real C signatures.
//!
//! Conventions shared by every function here: the call is counted under the function's name,
//! a panic becomes `hipErrorUnknown`, a failure becomes the thread's last error, and NULL
//! out-pointers are `hipErrorInvalidValue`. With zero devices, calls that need a device return
//! `hipErrorNoDevice`.
//!
//! Synchronous copies and memsets run on the calling thread after the current device's NULL
//! stream has drained. `hipFree`/`hipHostFree` wait for the owning device's streams first.
//!
//! Safety contract of every `unsafe extern "C"` function in this module (the C contract of the
//! real runtime): each pointer argument is NULL or valid for the access the HIP documentation
//! describes, for the duration of the call (for async copies: until the copy has run).

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};
use std::ptr;

use crate::control::{
    hipsimCounter, hipsimGetFault, hipsimIsSimulator, hipsimResetCounters, hipsimSetFault,
};
use crate::copy::{self, kind, CopyOp};
use crate::counters;
use crate::device;
use crate::errors::{self, SimError, SimResult};
use crate::fastpath::{hipAmdFileRead, hipAmdFileWrite};
use crate::faults::{self, Fault};
use crate::ffi::{c_str, guarded, hip_call, Out};
use crate::memory::{self, Kind};
use crate::stream::{self, Stream};

/// `hipError_t`.
pub type HipError = c_int;
/// `hipStream_t`.
pub type HipStream = *mut c_void;
/// `hipEvent_t`.
pub type HipEvent = *mut c_void;
/// `hipHostFn_t` (nullable).
pub type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;

/// First HIP_VERSION with ROCm 6's `hipMemoryType` numbering.
pub const ROCM6_VERSION: i32 = 60_000_000;

/// `hipPointerAttribute_t` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HipPointerAttribute {
    /// `hipMemoryType` (numbering depends on the reported runtime version).
    pub memory_type: c_int,
    /// Owning device.
    pub device: c_int,
    /// Device address.
    pub device_pointer: *mut c_void,
    /// Host address.
    pub host_pointer: *mut c_void,
    /// Non-zero for managed memory.
    pub is_managed: c_int,
    /// Flags given at allocation.
    pub allocation_flags: c_uint,
}

/// `hipMemoryType` values of ROCm ≥ 6.
pub mod memtype6 {
    /// `hipMemoryTypeUnregistered`.
    pub const UNREGISTERED: i32 = 0;
    /// `hipMemoryTypeHost`.
    pub const HOST: i32 = 1;
    /// `hipMemoryTypeDevice`.
    pub const DEVICE: i32 = 2;
    /// `hipMemoryTypeManaged`.
    pub const MANAGED: i32 = 3;
}

/// `hipMemoryType` values of ROCm ≤ 5.
pub mod memtype5 {
    /// `hipMemoryTypeHost`.
    pub const HOST: i32 = 0;
    /// `hipMemoryTypeDevice`.
    pub const DEVICE: i32 = 1;
    /// `hipMemoryTypeUnified` (reported for managed memory, with `isManaged = 1`).
    pub const UNIFIED: i32 = 3;
}

fn rocm6() -> bool {
    faults::runtime_version() >= ROCM6_VERSION
}

fn current_stream(handle: HipStream) -> SimResult<std::sync::Arc<Stream>> {
    stream::resolve(handle as usize, stream::Api::Hip, device::hip_current)
}

/// The current device, for a call that does work there: a broken context's error (see
/// [`device`]).
fn working_device() -> SimResult<i32> {
    let dev = device::hip_current()?;
    device::usable(dev)?;
    Ok(dev)
}

/// A stream, for a call that queues work on it: a broken context's error.
fn working_stream(handle: HipStream) -> SimResult<std::sync::Arc<Stream>> {
    let st = current_stream(handle)?;
    device::usable(st.device())?;
    Ok(st)
}

fn sync_copy(dst: usize, src: usize, len: usize, memcpy_kind: c_int) -> SimResult<()> {
    let dev = working_device()?;
    let op = copy::plan(dst, src, len, memcpy_kind)?;
    stream::wait_default_idle(dev);
    copy::execute(&op)
}

fn async_copy(
    dst: usize,
    src: usize,
    len: usize,
    memcpy_kind: c_int,
    s: HipStream,
) -> SimResult<()> {
    let st = working_stream(s)?;
    let op: CopyOp = copy::plan(dst, src, len, memcpy_kind)?;
    st.enqueue(Box::new(move || copy::execute(&op)));
    Ok(())
}

fn check_host_alloc_fault() -> SimResult<()> {
    if faults::get(Fault::FailHostAlloc) != 0 {
        Err(SimError::OUT_OF_MEMORY)
    } else {
        Ok(())
    }
}

// ---- initialisation and devices --------------------------------------------------------------

/// `hipError_t hipInit(unsigned int flags)`: flags must be 0. Succeeds with zero devices too
/// (`hipGetDeviceCount` then reports `hipErrorNoDevice`).
#[no_mangle]
pub unsafe extern "C" fn hipInit(flags: c_uint) -> HipError {
    hip_call("hipInit", || {
        if flags != 0 {
            return Err(SimError::INVALID_VALUE);
        }
        Ok(())
    })
}

/// `hipError_t hipRuntimeGetVersion(int *runtimeVersion)`.
#[no_mangle]
pub unsafe extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> HipError {
    hip_call("hipRuntimeGetVersion", || {
        // SAFETY: module contract.
        unsafe { Out::new(version) }?.set(faults::runtime_version());
        Ok(())
    })
}

/// `hipError_t hipDriverGetVersion(int *driverVersion)`: the same number as the runtime.
#[no_mangle]
pub unsafe extern "C" fn hipDriverGetVersion(version: *mut c_int) -> HipError {
    hip_call("hipDriverGetVersion", || {
        // SAFETY: module contract.
        unsafe { Out::new(version) }?.set(faults::runtime_version());
        Ok(())
    })
}

/// `hipError_t hipGetDeviceCount(int *count)`: zero devices is `hipErrorNoDevice` (count 0).
#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> HipError {
    hip_call("hipGetDeviceCount", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(count) }?;
        let n = device::count();
        out.set(n);
        if n == 0 {
            Err(SimError::NO_DEVICE)
        } else {
            Ok(())
        }
    })
}

/// `hipError_t hipGetDevice(int *deviceId)`.
#[no_mangle]
pub unsafe extern "C" fn hipGetDevice(device_id: *mut c_int) -> HipError {
    hip_call("hipGetDevice", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(device_id) }?;
        out.set(device::hip_current()?);
        Ok(())
    })
}

/// `hipError_t hipSetDevice(int deviceId)`.
#[no_mangle]
pub unsafe extern "C" fn hipSetDevice(device_id: c_int) -> HipError {
    hip_call("hipSetDevice", || device::hip_set_current(device_id))
}

/// `hipError_t hipDeviceSynchronize(void)`: waits for every stream of the current device and
/// returns the first failure of their queued work.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceSynchronize() -> HipError {
    hip_call("hipDeviceSynchronize", || {
        stream::synchronize_device(device::hip_current()?)
    })
}

/// `hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600 *prop, int deviceId)` (what
/// `hipGetDeviceProperties` compiles to with ROCm 6 and later): the properties of an
/// MI300X-like device, with the device's architecture name in `gcnArchName` and the
/// compute capability that follows from it (see [`device::hip_properties`]). A NULL `prop` is
/// `hipErrorInvalidValue`, a device that does not exist `hipErrorInvalidDevice`. The legacy
/// `hipGetDeviceProperties` symbol (ROCm 5's smaller layout) is not exported: a program that
/// looks it up learns that, instead of reading fields at the wrong offsets.
#[no_mangle]
pub unsafe extern "C" fn hipGetDevicePropertiesR0600(
    prop: *mut device::HipDevicePropR0600,
    device_id: c_int,
) -> HipError {
    hip_call("hipGetDevicePropertiesR0600", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(prop) }?;
        device::check_ordinal(device_id)?;
        out.set(device::hip_properties(device_id));
        Ok(())
    })
}

// ---- memory ----------------------------------------------------------------------------------

/// `hipError_t hipMalloc(void **ptr, size_t size)`: size 0 gives NULL.
#[no_mangle]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> HipError {
    hip_call("hipMalloc", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(ptr) }?;
        let dev = working_device()?;
        if size == 0 {
            out.set(ptr::null_mut());
            return Ok(());
        }
        out.set(memory::alloc_device(size, dev)? as *mut c_void);
        Ok(())
    })
}

/// Frees device or managed memory after the owning device's streams drained.
pub(crate) fn free_device_like(p: usize) -> SimResult<()> {
    if p == 0 {
        return Ok(());
    }
    let kinds = [Kind::Device, Kind::Managed];
    let r = memory::region_at(p, &kinds).ok_or(SimError::INVALID_VALUE)?;
    stream::wait_device_idle(r.device);
    memory::free(p, &kinds)?;
    // Freed all the same: a program tearing down a broken context must not leak or wait.
    device::usable(r.device)
}

/// `hipError_t hipFree(void *ptr)`: device or managed memory; NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> HipError {
    hip_call("hipFree", || free_device_like(ptr as usize))
}

/// `hipError_t hipMallocManaged(void **devPtr, size_t size, unsigned int flags)`.
#[no_mangle]
pub unsafe extern "C" fn hipMallocManaged(
    dev_ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> HipError {
    hip_call("hipMallocManaged", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(dev_ptr) }?;
        let dev = working_device()?;
        out.set(memory::alloc_host(size, Kind::Managed, dev, flags)? as *mut c_void);
        Ok(())
    })
}

/// `hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)`: size 0 gives NULL.
#[no_mangle]
pub unsafe extern "C" fn hipHostMalloc(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> HipError {
    hip_call("hipHostMalloc", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(ptr) }?;
        let dev = working_device()?;
        check_host_alloc_fault()?;
        if size == 0 {
            out.set(ptr::null_mut());
            return Ok(());
        }
        out.set(memory::alloc_host(size, Kind::PinnedHost, dev, flags)? as *mut c_void);
        Ok(())
    })
}

/// Frees simulator-owned pinned memory after the owning device's streams drained.
pub(crate) fn free_pinned(p: usize) -> SimResult<()> {
    if p == 0 {
        return Ok(());
    }
    let r = memory::region_at(p, &[Kind::PinnedHost]).ok_or(SimError::INVALID_VALUE)?;
    stream::wait_device_idle(r.device);
    memory::free(p, &[Kind::PinnedHost])?;
    device::usable(r.device)
}

/// `hipError_t hipHostFree(void *ptr)`: NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn hipHostFree(ptr: *mut c_void) -> HipError {
    hip_call("hipHostFree", || free_pinned(ptr as usize))
}

/// `hipError_t hipHostRegister(void *hostPtr, size_t sizeBytes, unsigned int flags)`.
#[no_mangle]
pub unsafe extern "C" fn hipHostRegister(
    host_ptr: *mut c_void,
    size: usize,
    flags: c_uint,
) -> HipError {
    hip_call("hipHostRegister", || {
        let dev = working_device()?;
        check_host_alloc_fault()?;
        memory::register(host_ptr as usize, size, dev, flags)
    })
}

/// `hipError_t hipHostUnregister(void *hostPtr)`.
#[no_mangle]
pub unsafe extern "C" fn hipHostUnregister(host_ptr: *mut c_void) -> HipError {
    hip_call("hipHostUnregister", || {
        if host_ptr.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        let dev = memory::lookup(host_ptr as usize).map(|r| r.device);
        memory::unregister(host_ptr as usize)?;
        dev.map_or(Ok(()), device::usable)
    })
}

/// `hipError_t hipHostGetDevicePointer(void **devPtr, void *hstPtr, unsigned int flags)`:
/// the device alias of pinned or registered memory is the same address. `flags` is reserved:
/// anything but 0 is `hipErrorInvalidValue`, as AMD's runtime answers.
#[no_mangle]
pub unsafe extern "C" fn hipHostGetDevicePointer(
    dev_ptr: *mut *mut c_void,
    host_ptr: *mut c_void,
    flags: c_uint,
) -> HipError {
    hip_call("hipHostGetDevicePointer", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(dev_ptr) }?;
        if flags != 0 {
            return Err(SimError::INVALID_VALUE);
        }
        match memory::lookup(host_ptr as usize) {
            Some(r) if matches!(r.kind, Kind::PinnedHost | Kind::Registered) => {
                out.set(host_ptr);
                Ok(())
            }
            _ => Err(SimError::INVALID_VALUE),
        }
    })
}

/// `hipInvalidDeviceId`: the device of memory no device owns.
pub const INVALID_DEVICE_ID: c_int = -2;

/// `hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attributes, const void *ptr)`.
///
/// A pointer the runtime does not know (pageable memory) and NULL: from ROCm 6 on, success with
/// `hipMemoryTypeUnregistered` and device `hipInvalidDeviceId`, as AMD's runtime answers (ROCm 6
/// stopped refusing pageable memory; NULL and the device value are ROCm 7's, applied to every
/// ROCm 6+ setting); before ROCm 6 `hipErrorInvalidValue`, which is also what AMD's
/// documentation says for every version (so a `runtime_version` below 6 is how a test meets
/// that answer).
#[no_mangle]
pub unsafe extern "C" fn hipPointerGetAttributes(
    attributes: *mut HipPointerAttribute,
    p: *const c_void,
) -> HipError {
    hip_call("hipPointerGetAttributes", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(attributes) }?;
        let v6 = rocm6();
        if p.is_null() && !v6 {
            return Err(SimError::INVALID_VALUE);
        }
        let addr = p.cast_mut();
        let attr = match memory::lookup(p as usize) {
            Some(r) => {
                let (memory_type, device_pointer, host_pointer, is_managed) = match r.kind {
                    Kind::Device => (
                        if v6 {
                            memtype6::DEVICE
                        } else {
                            memtype5::DEVICE
                        },
                        addr,
                        ptr::null_mut(),
                        0,
                    ),
                    Kind::PinnedHost | Kind::Registered => (
                        if v6 { memtype6::HOST } else { memtype5::HOST },
                        addr,
                        addr,
                        0,
                    ),
                    Kind::Managed => (
                        if v6 {
                            memtype6::MANAGED
                        } else {
                            memtype5::UNIFIED
                        },
                        addr,
                        addr,
                        1,
                    ),
                };
                HipPointerAttribute {
                    memory_type,
                    device: r.device,
                    device_pointer,
                    host_pointer,
                    is_managed,
                    allocation_flags: r.flags,
                }
            }
            // ROCm 6 describes unknown (pageable) memory as "unregistered"; ROCm 5 refuses it.
            None if v6 => HipPointerAttribute {
                memory_type: memtype6::UNREGISTERED,
                device: INVALID_DEVICE_ID,
                device_pointer: ptr::null_mut(),
                host_pointer: ptr::null_mut(),
                is_managed: 0,
                allocation_flags: 0,
            },
            None => return Err(SimError::INVALID_VALUE),
        };
        out.set(attr);
        Ok(())
    })
}

/// `hipError_t hipMemGetAddressRange(hipDeviceptr_t *pbase, size_t *psize, hipDeviceptr_t
/// dptr)`: device, pinned (hipHostMalloc) and managed allocations; `hipErrorNotFound` otherwise.
#[no_mangle]
pub unsafe extern "C" fn hipMemGetAddressRange(
    pbase: *mut *mut c_void,
    psize: *mut usize,
    dptr: *mut c_void,
) -> HipError {
    hip_call("hipMemGetAddressRange", || {
        // SAFETY: module contract.
        let (base, size) = unsafe { (Out::new(pbase)?, Out::new(psize)?) };
        match memory::lookup(dptr as usize) {
            Some(r) if r.kind != Kind::Registered => {
                base.set(r.start as *mut c_void);
                size.set(r.size);
                Ok(())
            }
            _ => Err(SimError::NOT_FOUND),
        }
    })
}

// ---- copies ----------------------------------------------------------------------------------

/// `hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind)`.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    memcpy_kind: c_int,
) -> HipError {
    hip_call("hipMemcpy", || {
        sync_copy(dst as usize, src as usize, size, memcpy_kind)
    })
}

/// `hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
/// hipStream_t stream)`.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    memcpy_kind: c_int,
    s: HipStream,
) -> HipError {
    hip_call("hipMemcpyAsync", || {
        async_copy(dst as usize, src as usize, size, memcpy_kind, s)
    })
}

/// `hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t sizeBytes)`.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyHtoD(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> HipError {
    hip_call("hipMemcpyHtoD", || {
        sync_copy(dst as usize, src as usize, size, kind::HOST_TO_DEVICE)
    })
}

/// `hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t sizeBytes)`.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoH(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> HipError {
    hip_call("hipMemcpyDtoH", || {
        sync_copy(dst as usize, src as usize, size, kind::DEVICE_TO_HOST)
    })
}

/// `hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t sizeBytes, hipStream_t
/// stream)`.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyHtoDAsync(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
    s: HipStream,
) -> HipError {
    hip_call("hipMemcpyHtoDAsync", || {
        async_copy(dst as usize, src as usize, size, kind::HOST_TO_DEVICE, s)
    })
}

/// `hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t
/// stream)`.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoHAsync(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
    s: HipStream,
) -> HipError {
    hip_call("hipMemcpyDtoHAsync", || {
        async_copy(dst as usize, src as usize, size, kind::DEVICE_TO_HOST, s)
    })
}

/// `hipError_t hipMemset(void *dst, int value, size_t sizeBytes)`: device memory only.
#[no_mangle]
pub unsafe extern "C" fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> HipError {
    hip_call("hipMemset", || {
        let dev = working_device()?;
        let op = copy::plan_memset(dst as usize, value as u8, size)?;
        stream::wait_default_idle(dev);
        copy::execute_memset(&op);
        Ok(())
    })
}

// ---- streams ---------------------------------------------------------------------------------

/// `hipError_t hipStreamCreate(hipStream_t *stream)`.
#[no_mangle]
pub unsafe extern "C" fn hipStreamCreate(s: *mut HipStream) -> HipError {
    hip_call("hipStreamCreate", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(s) }?;
        out.set(stream::create(working_device()?, true, stream::Api::Hip)? as HipStream);
        Ok(())
    })
}

/// `hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)`: flags
/// `hipStreamDefault` (0) or `hipStreamNonBlocking` (1).
#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithFlags(s: *mut HipStream, flags: c_uint) -> HipError {
    hip_call("hipStreamCreateWithFlags", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(s) }?;
        if flags > 1 {
            return Err(SimError::INVALID_VALUE);
        }
        out.set(stream::create(working_device()?, flags == 0, stream::Api::Hip)? as HipStream);
        Ok(())
    })
}

/// `hipError_t hipStreamDestroy(hipStream_t stream)`: drains the stream, then joins its worker.
#[no_mangle]
pub unsafe extern "C" fn hipStreamDestroy(s: HipStream) -> HipError {
    hip_call("hipStreamDestroy", || {
        if stream::is_default_handle(s as usize) {
            return Err(SimError::INVALID_HANDLE);
        }
        let dev = current_stream(s)?.device();
        stream::destroy(s as usize)?;
        device::usable(dev)
    })
}

/// `hipError_t hipStreamSynchronize(hipStream_t stream)`: also returns the first failure of
/// the stream's queued work since the last synchronisation.
#[no_mangle]
pub unsafe extern "C" fn hipStreamSynchronize(s: HipStream) -> HipError {
    hip_call("hipStreamSynchronize", || current_stream(s)?.synchronize())
}

/// `hipError_t hipStreamQuery(hipStream_t stream)`: `hipSuccess` or `hipErrorNotReady`. Asked
/// about the NULL stream, it first queues a marker there, as ROCm does (clr's `hipStreamQuery`
/// gets the NULL stream with `wait = true`, which queues a marker behind the last command of
/// every busy blocking stream): with the legacy default stream's rules, the marker waits for
/// every blocking stream's queued work, and work queued afterwards on a blocking stream waits
/// for the marker. Asking about the NULL stream thus ties blocking streams together.
#[no_mangle]
pub unsafe extern "C" fn hipStreamQuery(s: HipStream) -> HipError {
    hip_call("hipStreamQuery", || {
        let st = working_stream(s)?;
        if s.is_null() {
            st.enqueue(Box::new(|| Ok(())));
        }
        if st.is_idle() {
            Ok(())
        } else {
            Err(SimError::NOT_READY)
        }
    })
}

/// `hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device)`.
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetDevice(s: HipStream, device_out: *mut c_int) -> HipError {
    hip_call("hipStreamGetDevice", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(device_out) }?;
        out.set(current_stream(s)?.device());
        Ok(())
    })
}

/// `hipError_t hipStreamGetId(hipStream_t stream, unsigned long long *streamId)`:
/// the stream's id, unique for the life of the process and never given to another stream,
/// also when a new stream gets a destroyed one's handle (see [`crate::stream`]). NULL and
/// `hipStreamLegacy` name the current device's legacy default stream (id device + 1),
/// `hipStreamPerThread` the calling thread's per-thread stream on the current device (made by
/// this call if the thread never named it there; an id of its own, different for every thread
/// and device). An unknown or destroyed handle is `hipErrorInvalidHandle` (ROCm answers
/// `hipErrorInvalidResourceHandle`, the same code 400); a NULL `streamId` is
/// `hipErrorInvalidValue`, checked first as ROCm does.
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetId(s: HipStream, stream_id: *mut c_ulonglong) -> HipError {
    hip_call("hipStreamGetId", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(stream_id) }?;
        out.set(working_stream(s)?.id());
        Ok(())
    })
}

/// Queues a C host function on a stream (shared with the CUDA face): it runs on the
/// simulator's one callback thread, as a real runtime's host functions do.
pub(crate) fn enqueue_host_fn(
    st: &std::sync::Arc<Stream>,
    f: HostFn,
    user_data: *mut c_void,
) -> SimResult<()> {
    let f = f.ok_or(SimError::INVALID_VALUE)?;
    let data = user_data as usize;
    stream::enqueue_host_fn(
        st,
        Box::new(move || {
            // SAFETY: the application guarantees that `f` may be called with `user_data` once
            // its preceding stream work has completed (the hipLaunchHostFunc contract).
            unsafe { f(data as *mut c_void) };
            counters::bump("host_funcs_run");
        }),
    );
    Ok(())
}

/// Checks and queues a wait on a 32-bit word (shared with the CUDA face): `addr` must be a
/// 4-byte aligned word of pinned or registered host memory (a mapped allocation's device alias
/// is the same address here).
pub(crate) fn enqueue_wait_value32(
    st: &std::sync::Arc<Stream>,
    addr: usize,
    value: u32,
    mask: u32,
    cond: stream::WaitCondition,
) -> SimResult<()> {
    if faults::get(faults::Fault::NoWaitValue) != 0 {
        return Err(SimError::NOT_SUPPORTED);
    }
    if addr % 4 != 0 {
        return Err(SimError::INVALID_VALUE);
    }
    match memory::lookup(addr) {
        Some(r) if matches!(r.kind, Kind::PinnedHost | Kind::Registered) => {}
        _ => return Err(SimError::INVALID_VALUE),
    }
    stream::enqueue_wait_value(st, addr, value, mask, cond);
    Ok(())
}

/// `hipError_t hipStreamWaitValue32(hipStream_t stream, void *ptr, uint32_t value, unsigned
/// int flags, uint32_t mask)`: flags `hipStreamWaitValueGte` (0), `Eq` (1), `And` (2), `Nor`
/// (3). The stream holds until the word at `ptr` meets the condition.
#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitValue32(
    s: HipStream,
    ptr: *mut c_void,
    value: u32,
    flags: c_uint,
    mask: u32,
) -> HipError {
    hip_call("hipStreamWaitValue32", || {
        let cond = match flags {
            0 => stream::WaitCondition::Geq,
            1 => stream::WaitCondition::Eq,
            2 => stream::WaitCondition::And,
            3 => stream::WaitCondition::Nor,
            _ => return Err(SimError::INVALID_VALUE),
        };
        enqueue_wait_value32(&working_stream(s)?, ptr as usize, value, mask, cond)
    })
}

/// `hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void *userData)`: `fn`
/// runs on the stream's worker thread, in stream order.
#[no_mangle]
pub unsafe extern "C" fn hipLaunchHostFunc(
    s: HipStream,
    f: HostFn,
    user_data: *mut c_void,
) -> HipError {
    hip_call("hipLaunchHostFunc", || {
        enqueue_host_fn(&working_stream(s)?, f, user_data)
    })
}

// ---- events ----------------------------------------------------------------------------------

/// `hipError_t hipEventCreate(hipEvent_t *event)`.
#[no_mangle]
pub unsafe extern "C" fn hipEventCreate(event: *mut HipEvent) -> HipError {
    hip_call("hipEventCreate", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(event) }?;
        working_device()?;
        out.set(stream::event_create() as HipEvent);
        Ok(())
    })
}

/// `hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)`: flags are accepted
/// and ignored.
#[no_mangle]
pub unsafe extern "C" fn hipEventCreateWithFlags(event: *mut HipEvent, _flags: c_uint) -> HipError {
    hip_call("hipEventCreateWithFlags", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(event) }?;
        working_device()?;
        out.set(stream::event_create() as HipEvent);
        Ok(())
    })
}

/// `hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)`.
#[no_mangle]
pub unsafe extern "C" fn hipEventRecord(event: HipEvent, s: HipStream) -> HipError {
    hip_call("hipEventRecord", || {
        let ev = stream::event_resolve(event as usize)?;
        ev.record(&working_stream(s)?);
        Ok(())
    })
}

/// `hipError_t hipEventSynchronize(hipEvent_t event)`.
#[no_mangle]
pub unsafe extern "C" fn hipEventSynchronize(event: HipEvent) -> HipError {
    hip_call("hipEventSynchronize", || {
        let ev = stream::event_resolve(event as usize)?;
        ev.synchronize();
        ev.usable()
    })
}

/// `hipError_t hipEventQuery(hipEvent_t event)`: `hipSuccess` or `hipErrorNotReady`.
#[no_mangle]
pub unsafe extern "C" fn hipEventQuery(event: HipEvent) -> HipError {
    hip_call("hipEventQuery", || {
        let ev = stream::event_resolve(event as usize)?;
        ev.usable()?;
        if ev.is_complete() {
            Ok(())
        } else {
            Err(SimError::NOT_READY)
        }
    })
}

/// `hipError_t hipEventDestroy(hipEvent_t event)`.
#[no_mangle]
pub unsafe extern "C" fn hipEventDestroy(event: HipEvent) -> HipError {
    hip_call("hipEventDestroy", || {
        stream::event_destroy(event as usize)?;
        device::usable(device::hip_current()?)
    })
}

// ---- errors ----------------------------------------------------------------------------------

/// `const char *hipGetErrorString(hipError_t error)`: a static string, never NULL.
#[no_mangle]
pub unsafe extern "C" fn hipGetErrorString(error: HipError) -> *const c_char {
    guarded("hipGetErrorString", c"unknown error".as_ptr(), || {
        errors::hip_text(error).as_ptr()
    })
}

/// `const char *hipGetErrorName(hipError_t error)`: a static string, never NULL.
#[no_mangle]
pub unsafe extern "C" fn hipGetErrorName(error: HipError) -> *const c_char {
    guarded("hipGetErrorName", c"hipErrorUnknown".as_ptr(), || {
        errors::hip_name(error).as_ptr()
    })
}

/// `hipError_t hipGetLastError(void)`: returns and resets the thread's last error.
#[no_mangle]
pub unsafe extern "C" fn hipGetLastError() -> HipError {
    guarded(
        "hipGetLastError",
        SimError::UNKNOWN.0,
        errors::take_last_error,
    )
}

/// `hipError_t hipPeekAtLastError(void)`: returns the thread's last error.
#[no_mangle]
pub unsafe extern "C" fn hipPeekAtLastError() -> HipError {
    guarded(
        "hipPeekAtLastError",
        SimError::UNKNOWN.0,
        errors::peek_last_error,
    )
}

// ---- hipGetProcAddress -----------------------------------------------------------------------

/// `HIP_GET_PROC_ADDRESS_SUCCESS`.
pub const PROC_ADDRESS_SUCCESS: c_int = 0;
/// `HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`.
pub const PROC_ADDRESS_SYMBOL_NOT_FOUND: c_int = 1;

macro_rules! symbol_table {
    ($name:expr; $($f:ident),* $(,)?) => {
        match $name {
            $( stringify!($f) => Some($f as *const () as *mut c_void), )*
            _ => None,
        }
    };
}

/// The address of an exported `hip*` function by name (`hipAmdFileRead`/`Write` unless the
/// `no_fastpath` fault is on).
pub fn proc_address(name: &str) -> Option<*mut c_void> {
    if matches!(name, "hipAmdFileRead" | "hipAmdFileWrite") && faults::get(Fault::NoFastpath) != 0 {
        return None;
    }
    symbol_table!(name;
        hipInit, hipRuntimeGetVersion, hipDriverGetVersion, hipGetDeviceCount, hipGetDevice,
        hipGetDevicePropertiesR0600,
        hipSetDevice, hipDeviceSynchronize, hipMalloc, hipFree, hipMallocManaged, hipHostMalloc,
        hipHostFree, hipHostRegister, hipHostUnregister, hipHostGetDevicePointer,
        hipPointerGetAttributes, hipMemGetAddressRange, hipMemcpy, hipMemcpyAsync, hipMemcpyHtoD,
        hipMemcpyDtoH, hipMemcpyHtoDAsync, hipMemcpyDtoHAsync, hipMemset, hipStreamCreate,
        hipStreamCreateWithFlags, hipStreamDestroy, hipStreamSynchronize, hipStreamQuery,
        hipStreamGetDevice, hipStreamGetId, hipLaunchHostFunc, hipEventCreate, hipEventCreateWithFlags,
        hipEventRecord, hipEventSynchronize, hipEventQuery, hipEventDestroy, hipGetErrorString,
        hipGetErrorName, hipGetLastError, hipPeekAtLastError, hipGetProcAddress, hipAmdFileRead,
        hipAmdFileWrite, hipsimCounter, hipsimResetCounters, hipsimSetFault, hipsimGetFault,
        hipsimIsSimulator,
    )
}

/// `hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t
/// flags, hipDriverProcAddressQueryResult *symbolStatus)`: `symbolStatus` may be NULL; it
/// receives 0 (found) or 1 (not found). Unknown symbols are `hipErrorInvalidValue` with
/// `*pfn = NULL`, as AMD's runtime answers (and documents).
#[no_mangle]
pub unsafe extern "C" fn hipGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    _hip_version: c_int,
    _flags: u64,
    symbol_status: *mut c_int,
) -> HipError {
    hip_call("hipGetProcAddress", || {
        // SAFETY: module contract.
        let (out, status) = unsafe { (Out::new(pfn)?, Out::optional(symbol_status)) };
        // SAFETY: module contract: `symbol` is NULL or a NUL-terminated string.
        let found = unsafe { c_str(symbol) }.and_then(proc_address);
        out.set(found.unwrap_or(ptr::null_mut()));
        if let Some(st) = status {
            st.set(if found.is_some() {
                PROC_ADDRESS_SUCCESS
            } else {
                PROC_ADDRESS_SYMBOL_NOT_FOUND
            });
        }
        // A NULL, empty or unknown symbol alike.
        found.map(|_| ()).ok_or(SimError::INVALID_VALUE)
    })
}

// ---- modules and kernel launches -------------------------------------------------------------

/// The bytes of the code object at `image`: its ELF header first, then as many bytes as its
/// section and program header tables reach (an AMD runtime reads the object the same way: the
/// call takes no length). `None` for an image that is not a 64-bit ELF object.
///
/// # Safety
/// `image` must point to at least 4 readable bytes and, when they are an ELF magic, to a whole
/// ELF object.
unsafe fn code_object<'a>(image: *const u8) -> Option<&'a [u8]> {
    // SAFETY: the caller's contract: 4 bytes.
    let magic = unsafe { std::slice::from_raw_parts(image, 4) };
    if magic != b"\x7fELF" {
        return None;
    }
    // SAFETY: an ELF object has a 64-byte header.
    let h = unsafe { std::slice::from_raw_parts(image, 64) };
    if h[4] != 2 {
        return None;
    }
    let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    let u16_at = |o: usize| u64::from(u16::from_le_bytes([h[o], h[o + 1]]));
    let end_ph = u64_at(32) + u16_at(54) * u16_at(56);
    let end_sh = u64_at(40) + u16_at(58) * u16_at(60);
    let len = usize::try_from(end_ph.max(end_sh).max(64)).ok()?;
    // SAFETY: the caller's contract: the whole object, whose tables end at `len`.
    Some(unsafe { std::slice::from_raw_parts(image, len) })
}

/// `hipError_t hipModuleLoadData(hipModule_t *module, const void *image)`: an AMDGPU code object
/// with the staging kernel, built for the simulated GPU (see [`crate::kernels`]): one for
/// another architecture is `hipErrorNoBinaryForGpu`, anything else (PTX text included)
/// `hipErrorInvalidImage`. The `no_kernels` fault makes it `hipErrorNotSupported`.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(
    module: *mut *mut c_void,
    image: *const c_void,
) -> HipError {
    hip_call("hipModuleLoadData", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(module) }?;
        let dev = working_device()?;
        if image.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        // SAFETY: module contract: a code object (or PTX text, at least 4 bytes of it).
        let object = unsafe { code_object(image.cast()) }.ok_or(SimError::INVALID_IMAGE)?;
        out.set(crate::kernels::load_amdgpu_module(object, dev)? as *mut c_void);
        Ok(())
    })
}

/// `hipError_t hipModuleUnload(hipModule_t module)`.
#[no_mangle]
pub unsafe extern "C" fn hipModuleUnload(module: *mut c_void) -> HipError {
    hip_call("hipModuleUnload", || {
        crate::kernels::unload_module(module as usize)
    })
}

/// `hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char
/// *name)`: `"hipfile_stage"` is the module's one function; another name is `hipErrorNotFound`.
#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
) -> HipError {
    hip_call("hipModuleGetFunction", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(function) }?;
        if name.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        // SAFETY: module contract: a NUL-terminated name.
        let name = unsafe { std::ffi::CStr::from_ptr(name) };
        out.set(crate::kernels::get_function(module as usize, name.to_bytes())? as *mut c_void);
        Ok(())
    })
}

/// The launch shared by `hipModuleLaunchKernel` and `hipModuleLaunchCooperativeKernel`
/// (`cooperative`: on the device's cooperative queue too, see [`crate::stream`]).
///
/// # Safety
/// `params` as for [`crate::kernels::plan_stage`].
unsafe fn module_launch(
    f: *mut c_void,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    s: HipStream,
    params: *mut *mut c_void,
    cooperative: bool,
) -> SimResult<()> {
    let dev = working_device()?;
    crate::kernels::check_function(f as usize, dev)?;
    let st = working_stream(s)?;
    // SAFETY: the caller's contract.
    let planned =
        unsafe { crate::kernels::plan_stage(grid, block, shared, params.cast_const().cast()) }?;
    crate::kernels::enqueue_stage(&st, planned, cooperative);
    Ok(())
}

/// `hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gridDimX, unsigned gridDimY,
/// unsigned gridDimZ, unsigned blockDimX, unsigned blockDimY, unsigned blockDimZ, unsigned
/// sharedMemBytes, hipStream_t stream, void **kernelParams, void **extra)`: launches
/// `hipfile_stage` on the stream, parameters through `kernelParams` only (a non-NULL `extra` is
/// `hipErrorInvalidValue`), with the checks of `cuLaunchKernel`.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: *mut c_void,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_mem_bytes: c_uint,
    s: HipStream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> HipError {
    hip_call("hipModuleLaunchKernel", || {
        if !extra.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        // SAFETY: module contract: `kernelParams` holds the kernel's parameter.
        unsafe {
            module_launch(
                f,
                [grid_x, grid_y, grid_z],
                [block_x, block_y, block_z],
                shared_mem_bytes,
                s,
                kernel_params,
                false,
            )
        }
    })
}

/// `hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gridDimX, unsigned
/// gridDimY, unsigned gridDimZ, unsigned blockDimX, unsigned blockDimY, unsigned blockDimZ,
/// unsigned sharedMemBytes, hipStream_t stream, void **kernelParams)`: as
/// `hipModuleLaunchKernel` (every block of a staging launch is co-resident on the simulator),
/// on the device's one cooperative queue as ROCm runs it (`hip_coop_queue`, see
/// [`crate::stream`]).
#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchCooperativeKernel(
    f: *mut c_void,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_mem_bytes: c_uint,
    s: HipStream,
    kernel_params: *mut *mut c_void,
) -> HipError {
    hip_call("hipModuleLaunchCooperativeKernel", || {
        // SAFETY: module contract: `kernelParams` holds the kernel's parameter.
        unsafe {
            module_launch(
                f,
                [grid_x, grid_y, grid_z],
                [block_x, block_y, block_z],
                shared_mem_bytes,
                s,
                kernel_params,
                true,
            )
        }
    })
}
