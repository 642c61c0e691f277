//! The CUDA driver API face (`libcuda.so.1` subset), with the real C signatures. It shares the
//! simulated machine (devices, memory, streams, events) with the HIP face.
//!
//! Rules: `cuInit` must come first (`CUDA_ERROR_NOT_INITIALIZED`). Each device has one primary
//! context with a stable handle; the current context is per thread and a thread starts with
//! none. Calls that allocate, free, copy, or create streams/events, and anything that uses the
//! NULL, legacy or per-thread stream (which name a stream of the current context's device),
//! need a current context (`CUDA_ERROR_INVALID_CONTEXT`). Pointer queries do not. A stream
//! belongs to the device of the context current at its creation.
//!
//! Every call is counted under its function name; a panic becomes `CUDA_ERROR_UNKNOWN`; NULL
//! out-pointers are `CUDA_ERROR_INVALID_VALUE`. With zero devices `cuInit` still succeeds and
//! `cuDeviceGetCount` reports 0.
//!
//! Kernels: `cuModuleLoadData`, `cuModuleUnload`, `cuModuleGetFunction`, `cuLaunchKernel` and
//! `cuLaunchCooperativeKernel` load and run the one kernel the simulator emulates, hipfile's
//! staging kernel `hipfile_stage` (see [`kernels`]); `cuDeviceGetAttribute` answers the
//! attributes of [`device_attr`] (cooperative launch: 1).
//!
//! Safety contract of every `unsafe extern "C"` function in this module (the C contract of the
//! real driver): each pointer argument is NULL or valid for the access the CUDA documentation
//! describes, for the duration of the call (for async copies: until the copy has run).

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CStr};
use std::ptr;
use std::sync::Arc;

use crate::copy::{self, kind};
use crate::device;
use crate::errors::{self, SimError, SimResult};
use crate::faults::{self, Fault};
use crate::ffi::{cu_call, Out};
use crate::hip_api::{enqueue_host_fn, free_device_like, free_pinned, HostFn};
use crate::kernels;
use crate::memory::{self, Kind, Region};
use crate::stream::{self, Stream};

/// `CUresult`.
pub type CuResult = c_int;
/// `CUdeviceptr`.
pub type CuDevicePtr = u64;
/// `CUcontext`.
pub type CuContext = *mut c_void;
/// `CUstream`.
pub type CuStream = *mut c_void;
/// `CUevent`.
pub type CuEvent = *mut c_void;
/// `CUmodule`.
pub type CuModule = *mut c_void;
/// `CUfunction`.
pub type CuFunction = *mut c_void;

/// `CUdevice_attribute` values the simulator answers, with its answers (those of one H200-like
/// device; the kernel limits are the ones the launches check).
pub mod device_attr {
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
    pub const MAX_THREADS_PER_BLOCK: i32 = 1;
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X`.
    pub const MAX_BLOCK_DIM_X: i32 = 2;
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y`.
    pub const MAX_BLOCK_DIM_Y: i32 = 3;
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z`.
    pub const MAX_BLOCK_DIM_Z: i32 = 4;
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK`.
    pub const MAX_SHARED_MEMORY_PER_BLOCK: i32 = 8;
    /// `CU_DEVICE_ATTRIBUTE_WARP_SIZE`.
    pub const WARP_SIZE: i32 = 10;
    /// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
    pub const MULTIPROCESSOR_COUNT: i32 = 16;
    /// `CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY`.
    pub const CAN_MAP_HOST_MEMORY: i32 = 19;
    /// `CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING`.
    pub const UNIFIED_ADDRESSING: i32 = 41;
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`.
    pub const COMPUTE_CAPABILITY_MAJOR: i32 = 75;
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`.
    pub const COMPUTE_CAPABILITY_MINOR: i32 = 76;
    /// `CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH`.
    pub const COOPERATIVE_LAUNCH: i32 = 95;

    use crate::kernels;

    /// The simulator's answer for `attribute`, `None` for an attribute it does not know.
    pub fn value(attribute: i32) -> Option<i32> {
        Some(match attribute {
            MAX_THREADS_PER_BLOCK | MAX_BLOCK_DIM_X | MAX_BLOCK_DIM_Y => {
                kernels::MAX_THREADS_PER_BLOCK as i32
            }
            MAX_BLOCK_DIM_Z => kernels::MAX_BLOCK_DIM_Z as i32,
            MAX_SHARED_MEMORY_PER_BLOCK => kernels::MAX_SHARED_MEMORY_PER_BLOCK as i32,
            WARP_SIZE => 32,
            MULTIPROCESSOR_COUNT => 132,
            CAN_MAP_HOST_MEMORY | UNIFIED_ADDRESSING | COOPERATIVE_LAUNCH => 1,
            COMPUTE_CAPABILITY_MAJOR => 9,
            COMPUTE_CAPABILITY_MINOR => 0,
            _ => return None,
        })
    }
}

/// `CUpointer_attribute` values understood by the simulator.
pub mod attr {
    /// `CU_POINTER_ATTRIBUTE_CONTEXT` (`CUcontext`).
    pub const CONTEXT: i32 = 1;
    /// `CU_POINTER_ATTRIBUTE_MEMORY_TYPE` (`unsigned int`, `CUmemorytype`).
    pub const MEMORY_TYPE: i32 = 2;
    /// `CU_POINTER_ATTRIBUTE_DEVICE_POINTER` (`CUdeviceptr`).
    pub const DEVICE_POINTER: i32 = 3;
    /// `CU_POINTER_ATTRIBUTE_HOST_POINTER` (`void *`).
    pub const HOST_POINTER: i32 = 4;
    /// `CU_POINTER_ATTRIBUTE_IS_MANAGED` (4-byte boolean).
    pub const IS_MANAGED: i32 = 8;
    /// `CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL` (`int`).
    pub const DEVICE_ORDINAL: i32 = 9;
    /// `CU_POINTER_ATTRIBUTE_RANGE_START_ADDR` (`CUdeviceptr`).
    pub const RANGE_START_ADDR: i32 = 11;
    /// `CU_POINTER_ATTRIBUTE_RANGE_SIZE` (`size_t`).
    pub const RANGE_SIZE: i32 = 12;
    /// `CU_POINTER_ATTRIBUTE_MAPPED` (4-byte boolean).
    pub const MAPPED: i32 = 13;
}

/// `CUmemorytype` values.
pub mod memtype {
    /// `CU_MEMORYTYPE_HOST`.
    pub const HOST: u32 = 1;
    /// `CU_MEMORYTYPE_DEVICE`.
    pub const DEVICE: u32 = 2;
}

/// Device ordinal CUDA reports for memory it does not know.
pub const UNKNOWN_MEMORY_ORDINAL: i32 = -2;

fn ctx_device() -> SimResult<i32> {
    device::cuda_current_device()
}

fn cu_stream(s: CuStream) -> SimResult<Arc<Stream>> {
    device::cuda_require_init()?;
    stream::resolve(s as usize, stream::Api::Cuda, ctx_device)
}

/// The current context's device, for a call that does work there: a broken context's error
/// (see [`device`]).
fn working_device() -> SimResult<i32> {
    let dev = ctx_device()?;
    device::usable(dev)?;
    Ok(dev)
}

/// A stream, for a call that queues work on it: a broken context's error.
fn working_stream(s: CuStream) -> SimResult<Arc<Stream>> {
    let st = cu_stream(s)?;
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
    s: CuStream,
) -> SimResult<()> {
    ctx_device()?;
    let st = working_stream(s)?;
    let op = copy::plan(dst, src, len, memcpy_kind)?;
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

fn device_ordinal(ordinal: c_int) -> SimResult<()> {
    device::cuda_require_init()?;
    device::check_ordinal(ordinal).map_err(|_| SimError::INVALID_DEVICE)
}

// ---- initialisation, devices, contexts ------------------------------------------------------

/// `CUresult cuInit(unsigned int Flags)`: flags must be 0.
#[no_mangle]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> CuResult {
    cu_call("cuInit", || {
        if flags != 0 {
            return Err(SimError::INVALID_VALUE);
        }
        device::cuda_init();
        Ok(())
    })
}

/// `CUresult cuDriverGetVersion(int *driverVersion)`.
#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CuResult {
    cu_call("cuDriverGetVersion", || {
        // SAFETY: module contract.
        unsafe { Out::new(version) }?.set(faults::cuda_driver_version());
        Ok(())
    })
}

/// `CUresult cuDeviceGetCount(int *count)`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CuResult {
    cu_call("cuDeviceGetCount", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(count) }?;
        device::cuda_require_init()?;
        out.set(device::count());
        Ok(())
    })
}

/// `CUresult cuDeviceGet(CUdevice *device, int ordinal)`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(dev: *mut c_int, ordinal: c_int) -> CuResult {
    cu_call("cuDeviceGet", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(dev) }?;
        device_ordinal(ordinal)?;
        out.set(ordinal);
        Ok(())
    })
}

/// `CUresult cuDeviceGetName(char *name, int len, CUdevice dev)`: "hipsim simulated GPU N",
/// truncated to `len - 1` bytes and NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: c_int) -> CuResult {
    cu_call("cuDeviceGetName", || {
        let cap = usize::try_from(len)
            .ok()
            .filter(|&l| l > 0)
            .ok_or(SimError::INVALID_VALUE)?;
        if name.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        device_ordinal(dev)?;
        let text = format!("hipsim simulated GPU {dev}");
        let n = text.len().min(cap - 1);
        // SAFETY: module contract: `name` is writable for `len` bytes; n + 1 <= len.
        unsafe {
            ptr::copy_nonoverlapping(text.as_ptr(), name.cast::<u8>(), n);
            name.add(n).write(0);
        }
        Ok(())
    })
}

/// The PCI bus id of simulated device `dev`: that of a real PCI device of this machine (the
/// `dev`-th entry of `/sys/bus/pci/devices` in name order, counted modulo their number), so
/// that a program reading the device's sysfs files reads real ones; `0000:00:<dev>.0` where
/// the machine shows no PCI device.
fn pci_bus_id(dev: c_int) -> String {
    let mut ids: Vec<String> = std::fs::read_dir("/sys/bus/pci/devices")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    match ids.len() {
        0 => format!("0000:00:{dev:02x}.0"),
        n => ids[dev as usize % n].clone(),
    }
}

/// `CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)`: see [`pci_bus_id`];
/// truncated to `len - 1` bytes and NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(
    bus_id: *mut c_char,
    len: c_int,
    dev: c_int,
) -> CuResult {
    cu_call("cuDeviceGetPCIBusId", || {
        let cap = usize::try_from(len)
            .ok()
            .filter(|&l| l > 0)
            .ok_or(SimError::INVALID_VALUE)?;
        if bus_id.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        device_ordinal(dev)?;
        let text = pci_bus_id(dev);
        let n = text.len().min(cap - 1);
        // SAFETY: module contract: `bus_id` is writable for `len` bytes; n + 1 <= len.
        unsafe {
            ptr::copy_nonoverlapping(text.as_ptr(), bus_id.cast::<u8>(), n);
            bus_id.add(n).write(0);
        }
        Ok(())
    })
}

/// `CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)`: the
/// attributes of [`device_attr`]; any other is `CUDA_ERROR_INVALID_VALUE`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    pi: *mut c_int,
    attrib: c_int,
    dev: c_int,
) -> CuResult {
    cu_call("cuDeviceGetAttribute", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(pi) }?;
        device_ordinal(dev)?;
        out.set(device_attr::value(attrib).ok_or(SimError::INVALID_VALUE)?);
        Ok(())
    })
}

/// `CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)`.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(pctx: *mut CuContext, dev: c_int) -> CuResult {
    cu_call("cuDevicePrimaryCtxRetain", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(pctx) }?;
        out.set(device::retain_primary(dev)?);
        Ok(())
    })
}

/// `CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)`: the context stays usable.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(dev: c_int) -> CuResult {
    cu_call("cuDevicePrimaryCtxRelease_v2", || {
        device::release_primary(dev)
    })
}

/// `CUresult cuCtxGetCurrent(CUcontext *pctx)`: NULL when the thread has none.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(pctx: *mut CuContext) -> CuResult {
    cu_call("cuCtxGetCurrent", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(pctx) }?;
        device::cuda_require_init()?;
        out.set(device::current_context() as CuContext);
        Ok(())
    })
}

/// `CUresult cuCtxSetCurrent(CUcontext ctx)`: replaces the top of the thread's context stack
/// (NULL pops it).
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(ctx: CuContext) -> CuResult {
    cu_call("cuCtxSetCurrent", || {
        device::cuda_require_init()?;
        device::set_current_context(ctx as usize)
    })
}

/// `CUresult cuCtxPushCurrent_v2(CUcontext ctx)`.
#[no_mangle]
pub unsafe extern "C" fn cuCtxPushCurrent_v2(ctx: CuContext) -> CuResult {
    cu_call("cuCtxPushCurrent_v2", || {
        device::cuda_require_init()?;
        device::push_context(ctx as usize)
    })
}

/// `CUresult cuCtxPopCurrent_v2(CUcontext *pctx)`: `pctx` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn cuCtxPopCurrent_v2(pctx: *mut CuContext) -> CuResult {
    cu_call("cuCtxPopCurrent_v2", || {
        // SAFETY: module contract.
        let out = unsafe { Out::optional(pctx) };
        device::cuda_require_init()?;
        let popped = device::pop_context()?;
        if let Some(o) = out {
            o.set(popped as CuContext);
        }
        Ok(())
    })
}

/// `CUresult cuCtxGetDevice(CUdevice *device)`.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetDevice(dev: *mut c_int) -> CuResult {
    cu_call("cuCtxGetDevice", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(dev) }?;
        out.set(ctx_device()?);
        Ok(())
    })
}

/// `CUresult cuCtxSynchronize(void)`: waits for every stream of the context's device and
/// returns the first failure of their queued work.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSynchronize() -> CuResult {
    cu_call("cuCtxSynchronize", || {
        stream::synchronize_device(ctx_device()?)
    })
}

// ---- memory ----------------------------------------------------------------------------------

/// `CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)`: size 0 is invalid.
#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CuDevicePtr, size: usize) -> CuResult {
    cu_call("cuMemAlloc_v2", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(dptr) }?;
        let dev = working_device()?;
        out.set(memory::alloc_device(size, dev)? as CuDevicePtr);
        Ok(())
    })
}

/// `CUresult cuMemFree_v2(CUdeviceptr dptr)`: device or managed memory; 0 is a no-op.
#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: CuDevicePtr) -> CuResult {
    cu_call("cuMemFree_v2", || {
        ctx_device()?;
        free_device_like(dptr as usize)
    })
}

/// `CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocManaged(
    dptr: *mut CuDevicePtr,
    size: usize,
    flags: c_uint,
) -> CuResult {
    cu_call("cuMemAllocManaged", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(dptr) }?;
        let dev = working_device()?;
        out.set(memory::alloc_host(size, Kind::Managed, dev, flags)? as CuDevicePtr);
        Ok(())
    })
}

fn host_alloc(pp: *mut *mut c_void, size: usize, flags: c_uint) -> SimResult<()> {
    // SAFETY: module contract (the callers pass their C argument through).
    let out = unsafe { Out::new(pp) }?;
    let dev = working_device()?;
    check_host_alloc_fault()?;
    out.set(memory::alloc_host(size, Kind::PinnedHost, dev, flags)? as *mut c_void);
    Ok(())
}

/// `CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, size: usize) -> CuResult {
    cu_call("cuMemAllocHost_v2", || host_alloc(pp, size, 0))
}

/// `CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(
    pp: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> CuResult {
    cu_call("cuMemHostAlloc", || host_alloc(pp, size, flags))
}

/// `CUresult cuMemFreeHost(void *p)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> CuResult {
    cu_call("cuMemFreeHost", || {
        ctx_device()?;
        free_pinned(p as usize)
    })
}

/// `CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostRegister_v2(
    p: *mut c_void,
    size: usize,
    flags: c_uint,
) -> CuResult {
    cu_call("cuMemHostRegister_v2", || {
        let dev = working_device()?;
        check_host_alloc_fault()?;
        memory::register(p as usize, size, dev, flags)
    })
}

/// `CUresult cuMemHostUnregister(void *p)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostUnregister(p: *mut c_void) -> CuResult {
    cu_call("cuMemHostUnregister", || {
        let dev = ctx_device()?;
        if p.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        memory::unregister(p as usize)?;
        device::usable(dev)
    })
}

/// `CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)`:
/// pinned memory, or memory registered with `CU_MEMHOSTREGISTER_DEVICEMAP`; the device alias is
/// the same address.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostGetDevicePointer_v2(
    pdptr: *mut CuDevicePtr,
    p: *mut c_void,
    _flags: c_uint,
) -> CuResult {
    cu_call("cuMemHostGetDevicePointer_v2", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(pdptr) }?;
        ctx_device()?;
        match memory::lookup(p as usize) {
            // Registered memory has a device alias only when registered with
            // CU_MEMHOSTREGISTER_DEVICEMAP (0x02).
            Some(r)
                if r.kind == Kind::PinnedHost
                    || (r.kind == Kind::Registered && r.flags & 0x02 != 0) =>
            {
                out.set(p as CuDevicePtr);
                Ok(())
            }
            _ => Err(SimError::INVALID_VALUE),
        }
    })
}

/// `CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)`:
/// either out-pointer may be NULL; device, pinned and managed allocations only
/// (`CUDA_ERROR_NOT_FOUND` otherwise).
#[no_mangle]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(
    pbase: *mut CuDevicePtr,
    psize: *mut usize,
    dptr: CuDevicePtr,
) -> CuResult {
    cu_call("cuMemGetAddressRange_v2", || {
        // SAFETY: module contract.
        let (base, size) = unsafe { (Out::optional(pbase), Out::optional(psize)) };
        ctx_device()?;
        match memory::lookup(dptr as usize) {
            Some(r) if r.kind != Kind::Registered => {
                if let Some(b) = base {
                    b.set(r.start as CuDevicePtr);
                }
                if let Some(s) = size {
                    s.set(r.size);
                }
                Ok(())
            }
            _ => Err(SimError::NOT_FOUND),
        }
    })
}

// ---- pointer attributes ----------------------------------------------------------------------

/// Writes one attribute of `p` (inside `region`, or unknown pageable memory when `None`) to
/// `data`. `strict` is `cuPointerGetAttribute`'s behaviour: unknown memory and a host pointer
/// of device memory are errors rather than zeros.
///
/// # Safety
/// `data` must be NULL or valid for a write of the attribute's type.
unsafe fn write_attribute(
    attribute: c_int,
    data: *mut c_void,
    p: u64,
    region: Option<Region>,
    strict: bool,
) -> SimResult<()> {
    if data.is_null() {
        return Err(SimError::INVALID_VALUE);
    }
    if strict && region.is_none() {
        return Err(SimError::INVALID_VALUE);
    }
    // Each write below is of the attribute's type.
    macro_rules! put {
        ($t:ty, $v:expr) => {
            // SAFETY: the caller guarantees `data` is valid for a write of the attribute's
            // type; write_unaligned tolerates any alignment.
            unsafe { data.cast::<$t>().write_unaligned($v) }
        };
    }
    match attribute {
        attr::CONTEXT => put!(
            CuContext,
            region.map_or(ptr::null_mut(), |r| device::primary_handle(r.device))
        ),
        attr::MEMORY_TYPE => put!(
            u32,
            match region.map(|r| r.kind) {
                None => 0,
                Some(Kind::Device | Kind::Managed) => memtype::DEVICE,
                Some(Kind::PinnedHost | Kind::Registered) => memtype::HOST,
            }
        ),
        attr::DEVICE_POINTER => put!(CuDevicePtr, if region.is_some() { p } else { 0 }),
        attr::HOST_POINTER => match region {
            Some(r) if r.kind == Kind::Device && strict => return Err(SimError::INVALID_VALUE),
            Some(r) if r.kind != Kind::Device => put!(*mut c_void, p as *mut c_void),
            _ => put!(*mut c_void, ptr::null_mut()),
        },
        attr::IS_MANAGED => put!(
            u32,
            u32::from(region.is_some_and(|r| r.kind == Kind::Managed))
        ),
        attr::DEVICE_ORDINAL => put!(c_int, region.map_or(UNKNOWN_MEMORY_ORDINAL, |r| r.device)),
        attr::RANGE_START_ADDR => put!(CuDevicePtr, region.map_or(0, |r| r.start as CuDevicePtr)),
        attr::RANGE_SIZE => put!(usize, region.map_or(0, |r| r.size)),
        attr::MAPPED => put!(u32, u32::from(region.is_some())),
        _ => return Err(SimError::INVALID_VALUE),
    }
    Ok(())
}

/// `CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr
/// ptr)`: unknown (pageable) memory is `CUDA_ERROR_INVALID_VALUE`.
#[no_mangle]
pub unsafe extern "C" fn cuPointerGetAttribute(
    data: *mut c_void,
    attribute: c_int,
    p: CuDevicePtr,
) -> CuResult {
    cu_call("cuPointerGetAttribute", || {
        device::cuda_require_init()?;
        let region = memory::lookup(p as usize);
        // SAFETY: module contract: `data` fits the attribute's type.
        unsafe { write_attribute(attribute, data, p, region, true) }
    })
}

/// `CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute
/// *attributes, void **data, CUdeviceptr ptr)`: unknown (pageable) memory succeeds with memory
/// type 0, device ordinal -2 and every other value zero.
#[no_mangle]
pub unsafe extern "C" fn cuPointerGetAttributes(
    n: c_uint,
    attributes: *mut c_int,
    data: *mut *mut c_void,
    p: CuDevicePtr,
) -> CuResult {
    cu_call("cuPointerGetAttributes", || {
        device::cuda_require_init()?;
        if n == 0 || attributes.is_null() || data.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        let region = memory::lookup(p as usize);
        for i in 0..n as usize {
            // SAFETY: module contract: both arrays hold `n` elements.
            let (a, d) = unsafe { (*attributes.add(i), *data.add(i)) };
            // SAFETY: module contract: `d` fits attribute `a`'s type.
            unsafe { write_attribute(a, d, p, region, false) }?;
        }
        Ok(())
    })
}

// ---- copies ----------------------------------------------------------------------------------

/// `CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    dst: CuDevicePtr,
    src: *const c_void,
    size: usize,
) -> CuResult {
    cu_call("cuMemcpyHtoD_v2", || {
        sync_copy(dst as usize, src as usize, size, kind::HOST_TO_DEVICE)
    })
}

/// `CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(
    dst: *mut c_void,
    src: CuDevicePtr,
    size: usize,
) -> CuResult {
    cu_call("cuMemcpyDtoH_v2", || {
        sync_copy(dst as usize, src as usize, size, kind::DEVICE_TO_HOST)
    })
}

/// `CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t
/// ByteCount, CUstream hStream)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: CuDevicePtr,
    src: *const c_void,
    size: usize,
    s: CuStream,
) -> CuResult {
    cu_call("cuMemcpyHtoDAsync_v2", || {
        async_copy(dst as usize, src as usize, size, kind::HOST_TO_DEVICE, s)
    })
}

/// `CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
/// CUstream hStream)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: CuDevicePtr,
    size: usize,
    s: CuStream,
) -> CuResult {
    cu_call("cuMemcpyDtoHAsync_v2", || {
        async_copy(dst as usize, src as usize, size, kind::DEVICE_TO_HOST, s)
    })
}

/// `CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)`: unified
/// addressing, the direction is inferred from the addresses.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpy(dst: CuDevicePtr, src: CuDevicePtr, size: usize) -> CuResult {
    cu_call("cuMemcpy", || {
        sync_copy(dst as usize, src as usize, size, kind::DEFAULT)
    })
}

/// `CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(dst: CuDevicePtr, value: u8, n: usize) -> CuResult {
    cu_call("cuMemsetD8_v2", || {
        let dev = working_device()?;
        let op = copy::plan_memset(dst as usize, value, n)?;
        stream::wait_default_idle(dev);
        copy::execute_memset(&op);
        Ok(())
    })
}

// ---- streams ---------------------------------------------------------------------------------

/// `CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)`: flags
/// `CU_STREAM_DEFAULT` (0) or `CU_STREAM_NON_BLOCKING` (1).
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(ph_stream: *mut CuStream, flags: c_uint) -> CuResult {
    cu_call("cuStreamCreate", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(ph_stream) }?;
        if flags > 1 {
            return Err(SimError::INVALID_VALUE);
        }
        out.set(stream::create(working_device()?, flags == 0, stream::Api::Cuda)? as CuStream);
        Ok(())
    })
}

/// `CUresult cuStreamDestroy_v2(CUstream hStream)`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(s: CuStream) -> CuResult {
    cu_call("cuStreamDestroy_v2", || {
        device::cuda_require_init()?;
        if stream::is_default_handle(s as usize) {
            return Err(SimError::INVALID_HANDLE);
        }
        let dev = cu_stream(s)?.device();
        stream::destroy(s as usize)?;
        device::usable(dev)
    })
}

/// `CUresult cuStreamSynchronize(CUstream hStream)`: also returns the first failure of the
/// stream's queued work since the last synchronisation.
#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(s: CuStream) -> CuResult {
    cu_call("cuStreamSynchronize", || cu_stream(s)?.synchronize())
}

/// `CUresult cuStreamQuery(CUstream hStream)`: `CUDA_SUCCESS` or `CUDA_ERROR_NOT_READY`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamQuery(s: CuStream) -> CuResult {
    cu_call("cuStreamQuery", || {
        let st = working_stream(s)?;
        if !st.is_idle() {
            return Err(SimError::NOT_READY);
        }
        // As CUDA's: an error of earlier asynchronous work is reported (and kept for the next
        // synchronisation).
        st.pending_error().map_or(Ok(()), Err)
    })
}

/// `CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)`: the primary context of the
/// stream's device.
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetCtx(s: CuStream, pctx: *mut CuContext) -> CuResult {
    cu_call("cuStreamGetCtx", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(pctx) }?;
        out.set(device::primary_handle(cu_stream(s)?.device()));
        Ok(())
    })
}

/// `CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId)` (CUDA 12.0): the
/// stream's id, unique for the life of the process and never given to another stream, also
/// when a new stream gets a destroyed one's handle (see [`crate::stream`]). NULL and
/// `CU_STREAM_LEGACY` name the legacy default stream of the current context's device (id
/// device + 1), `CU_STREAM_PER_THREAD` the calling thread's per-thread stream on that device
/// (made by this call if the thread never named it there; an id of its own, different for
/// every thread and device); both need a current context (`CUDA_ERROR_INVALID_CONTEXT`
/// without one). CUDA calls an invalid handle
/// undefined behaviour; here an unknown or destroyed handle is `CUDA_ERROR_INVALID_HANDLE`, as
/// for every other stream call. A NULL `streamId` is `CUDA_ERROR_INVALID_VALUE`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetId(s: CuStream, stream_id: *mut c_ulonglong) -> CuResult {
    cu_call("cuStreamGetId", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(stream_id) }?;
        // A broken context answers this too (the H200 does: scripts/gpu/fault_probe.c).
        out.set(working_stream(s)?.id());
        Ok(())
    })
}

/// `CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)`.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchHostFunc(
    s: CuStream,
    f: HostFn,
    user_data: *mut c_void,
) -> CuResult {
    cu_call("cuLaunchHostFunc", || {
        enqueue_host_fn(&working_stream(s)?, f, user_data)
    })
}

/// `CUresult cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
/// unsigned int flags)`: flags `CU_STREAM_WAIT_VALUE_GEQ` (0), `EQ` (1), `AND` (2), `NOR` (3);
/// `CU_STREAM_WAIT_VALUE_FLUSH` (1 << 30) is accepted. The stream holds until the word at
/// `addr` meets the condition.
#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitValue32_v2(
    s: CuStream,
    addr: CuDevicePtr,
    value: u32,
    flags: c_uint,
) -> CuResult {
    cu_call("cuStreamWaitValue32_v2", || {
        wait_value32(s, addr, value, flags)
    })
}

/// `cuStreamWaitValue32`: the name CUDA 11 headers bind (same behaviour as `_v2`).
#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitValue32(
    s: CuStream,
    addr: CuDevicePtr,
    value: u32,
    flags: c_uint,
) -> CuResult {
    cu_call("cuStreamWaitValue32", || {
        wait_value32(s, addr, value, flags)
    })
}

fn wait_value32(s: CuStream, addr: CuDevicePtr, value: u32, flags: c_uint) -> SimResult<()> {
    let cond = match flags & !(1 << 30) {
        0 => stream::WaitCondition::Geq,
        1 => stream::WaitCondition::Eq,
        2 => stream::WaitCondition::And,
        3 => stream::WaitCondition::Nor,
        _ => return Err(SimError::INVALID_VALUE),
    };
    crate::hip_api::enqueue_wait_value32(&working_stream(s)?, addr as usize, value, u32::MAX, cond)
}

// ---- modules and kernels ---------------------------------------------------------------------

/// `CUresult cuModuleLoadData(CUmodule *module, const void *image)`: `image` is NUL-terminated
/// PTX text; it loads when it declares `.entry hipfile_stage` (`CUDA_ERROR_INVALID_IMAGE`
/// otherwise, cubin and fatbin images included). The `no_kernels` fault makes it
/// `CUDA_ERROR_NOT_SUPPORTED`. See [`kernels`].
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut CuModule, image: *const c_void) -> CuResult {
    cu_call("cuModuleLoadData", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(module) }?;
        let dev = working_device()?;
        if image.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        // SAFETY: module contract: the image is NUL-terminated PTX text.
        let ptx = unsafe { CStr::from_ptr(image.cast::<c_char>()) };
        out.set(kernels::load_module(ptx.to_bytes(), dev)? as CuModule);
        Ok(())
    })
}

/// `CUresult cuModuleUnload(CUmodule hmod)`.
#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(module: CuModule) -> CuResult {
    cu_call("cuModuleUnload", || {
        device::cuda_require_init()?;
        kernels::unload_module(module as usize)
    })
}

/// `CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)`:
/// `"hipfile_stage"` is the module's one function; another name is `CUDA_ERROR_NOT_FOUND`.
#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    hfunc: *mut CuFunction,
    module: CuModule,
    name: *const c_char,
) -> CuResult {
    cu_call("cuModuleGetFunction", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(hfunc) }?;
        device::cuda_require_init()?;
        if name.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        // SAFETY: module contract: `name` is a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(name) };
        out.set(kernels::get_function(module as usize, name.to_bytes())? as CuFunction);
        Ok(())
    })
}

/// The launch shared by `cuLaunchKernel` and `cuLaunchCooperativeKernel`.
///
/// # Safety
/// `params` as for [`kernels::plan_stage`].
unsafe fn launch(
    f: CuFunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    s: CuStream,
    params: *mut *mut c_void,
) -> SimResult<()> {
    let dev = working_device()?;
    kernels::check_function(f as usize, dev)?;
    let st = working_stream(s)?;
    // SAFETY: the caller's contract.
    let planned = unsafe { kernels::plan_stage(grid, block, shared, params.cast_const().cast()) }?;
    kernels::enqueue_stage(&st, planned, false);
    Ok(())
}

/// `CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
/// unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int
/// blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void
/// **extra)`: launches `hipfile_stage` (see [`kernels`]) on the stream, parameters through
/// `kernelParams` only (a non-NULL `extra` is `CUDA_ERROR_INVALID_VALUE`). Grid 1..=32 x 1 x 1,
/// 1..=1024 threads per block, at most 48 KiB of shared memory, `ring_len` >= 1 and a
/// `StageCtl` the device can access, or `CUDA_ERROR_INVALID_VALUE`; a function of another
/// context's module, or an unknown stream, is `CUDA_ERROR_INVALID_HANDLE`.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernel(
    f: CuFunction,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_mem_bytes: c_uint,
    s: CuStream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult {
    cu_call("cuLaunchKernel", || {
        if !extra.is_null() {
            return Err(SimError::INVALID_VALUE);
        }
        // SAFETY: module contract: `kernelParams` holds the kernel's two parameters.
        unsafe {
            launch(
                f,
                [grid_x, grid_y, grid_z],
                [block_x, block_y, block_z],
                shared_mem_bytes,
                s,
                kernel_params,
            )
        }
    })
}

/// `CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int
/// gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned
/// int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)`: as
/// `cuLaunchKernel` (every block of a staging launch is co-resident on the simulator).
#[no_mangle]
pub unsafe extern "C" fn cuLaunchCooperativeKernel(
    f: CuFunction,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_mem_bytes: c_uint,
    s: CuStream,
    kernel_params: *mut *mut c_void,
) -> CuResult {
    cu_call("cuLaunchCooperativeKernel", || {
        // SAFETY: module contract: `kernelParams` holds the kernel's two parameters.
        unsafe {
            launch(
                f,
                [grid_x, grid_y, grid_z],
                [block_x, block_y, block_z],
                shared_mem_bytes,
                s,
                kernel_params,
            )
        }
    })
}

// ---- events ----------------------------------------------------------------------------------

/// `CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)`: flags are accepted and
/// ignored.
#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(ph_event: *mut CuEvent, _flags: c_uint) -> CuResult {
    cu_call("cuEventCreate", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(ph_event) }?;
        working_device()?;
        out.set(stream::event_create() as CuEvent);
        Ok(())
    })
}

/// `CUresult cuEventRecord(CUevent hEvent, CUstream hStream)`.
#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(event: CuEvent, s: CuStream) -> CuResult {
    cu_call("cuEventRecord", || {
        device::cuda_require_init()?;
        let ev = stream::event_resolve(event as usize)?;
        ev.record(&working_stream(s)?);
        Ok(())
    })
}

/// `CUresult cuEventSynchronize(CUevent hEvent)`.
#[no_mangle]
pub unsafe extern "C" fn cuEventSynchronize(event: CuEvent) -> CuResult {
    cu_call("cuEventSynchronize", || {
        device::cuda_require_init()?;
        let ev = stream::event_resolve(event as usize)?;
        ev.synchronize();
        ev.usable()
    })
}

/// `CUresult cuEventDestroy_v2(CUevent hEvent)`.
#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(event: CuEvent) -> CuResult {
    cu_call("cuEventDestroy_v2", || {
        device::cuda_require_init()?;
        // Destroyed all the same; a broken context reports its error (as the H200 does).
        stream::event_destroy(event as usize)?;
        device::usable(ctx_device()?)
    })
}

// ---- errors ----------------------------------------------------------------------------------

/// `CUresult cuGetErrorString(CUresult error, const char **pStr)`: unknown codes are
/// `CUDA_ERROR_INVALID_VALUE` with `*pStr = NULL`.
#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(error: CuResult, p_str: *mut *const c_char) -> CuResult {
    cu_call("cuGetErrorString", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(p_str) }?;
        let text = errors::cuda_text(error);
        out.set(text.map_or(ptr::null(), |t| t.as_ptr()));
        text.map(|_| ()).ok_or(SimError::INVALID_VALUE)
    })
}

/// `CUresult cuGetErrorName(CUresult error, const char **pStr)`: unknown codes are
/// `CUDA_ERROR_INVALID_VALUE` with `*pStr = NULL`.
#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(error: CuResult, p_str: *mut *const c_char) -> CuResult {
    cu_call("cuGetErrorName", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(p_str) }?;
        let name = errors::cuda_name(error);
        out.set(name.map_or(ptr::null(), |t| t.as_ptr()));
        name.map(|_| ()).ok_or(SimError::INVALID_VALUE)
    })
}

// ---- further entry points (stream and event queries, memory operations, kernel metadata) ----

/// `CUresult cuEventQuery(CUevent hEvent)`: `CUDA_SUCCESS` once the latest record's marker has
/// run (or the event was never recorded), `CUDA_ERROR_NOT_READY` before.
#[no_mangle]
pub unsafe extern "C" fn cuEventQuery(event: CuEvent) -> CuResult {
    cu_call("cuEventQuery", || {
        device::cuda_require_init()?;
        let ev = stream::event_resolve(event as usize)?;
        ev.usable()?;
        if ev.is_complete() {
            Ok(())
        } else {
            Err(SimError::NOT_READY)
        }
    })
}

/// `CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)`: the flags given when the pinned
/// allocation containing `p` was made; any other memory is `CUDA_ERROR_INVALID_VALUE`.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostGetFlags(flags: *mut c_uint, p: *mut c_void) -> CuResult {
    cu_call("cuMemHostGetFlags", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(flags) }?;
        ctx_device()?;
        match memory::lookup(p as usize) {
            Some(r) if r.kind == Kind::PinnedHost => {
                out.set(r.flags);
                Ok(())
            }
            _ => Err(SimError::INVALID_VALUE),
        }
    })
}

/// `CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream
/// hStream)`: unified addressing, the direction is inferred from the addresses.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyAsync(
    dst: CuDevicePtr,
    src: CuDevicePtr,
    size: usize,
    s: CuStream,
) -> CuResult {
    cu_call("cuMemcpyAsync", || {
        async_copy(dst as usize, src as usize, size, kind::DEFAULT, s)
    })
}

/// `CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream
/// hStream)`: the fill is queued on the stream.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8Async(
    dst: CuDevicePtr,
    value: u8,
    n: usize,
    s: CuStream,
) -> CuResult {
    cu_call("cuMemsetD8Async", || {
        ctx_device()?;
        let st = working_stream(s)?;
        let op = copy::plan_memset(dst as usize, value, n)?;
        st.enqueue(Box::new(move || {
            copy::execute_memset(&op);
            Ok(())
        }));
        Ok(())
    })
}

/// The CPU address of a 4- or 8-byte word a stream memory operation may use: naturally
/// aligned, in pinned or registered host memory (as for `cuStreamWaitValue32`).
fn mem_op_word(addr: CuDevicePtr, len: usize) -> SimResult<usize> {
    let addr = usize::try_from(addr).map_err(|_| SimError::INVALID_VALUE)?;
    if addr % len != 0 {
        return Err(SimError::INVALID_VALUE);
    }
    match memory::lookup(addr) {
        Some(r)
            if matches!(r.kind, Kind::PinnedHost | Kind::Registered) && r.contains(addr, len) =>
        {
            Ok(addr)
        }
        _ => Err(SimError::INVALID_VALUE),
    }
}

/// `CU_STREAM_WRITE_VALUE_DEFAULT` (0) or `CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER` (1).
fn write_value_flags(flags: c_uint) -> SimResult<()> {
    if flags > 1 {
        Err(SimError::INVALID_VALUE)
    } else {
        Ok(())
    }
}

/// `CUresult cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
/// unsigned int flags)`: when the stream reaches it, the word at `addr` (pinned or registered
/// host memory, 4-byte aligned) becomes `value` (a release store).
#[no_mangle]
pub unsafe extern "C" fn cuStreamWriteValue32_v2(
    s: CuStream,
    addr: CuDevicePtr,
    value: u32,
    flags: c_uint,
) -> CuResult {
    cu_call("cuStreamWriteValue32_v2", || {
        write_value_flags(flags)?;
        let st = working_stream(s)?;
        let word = mem_op_word(addr, 4)?;
        st.enqueue(Box::new(move || {
            // SAFETY: a live, aligned word of pinned or registered memory (checked when
            // queued; freeing pinned memory waits for the device's streams); other threads
            // read it, hence the atomic view.
            unsafe { std::sync::atomic::AtomicU32::from_ptr(word as *mut u32) }
                .store(value, std::sync::atomic::Ordering::Release);
            Ok(())
        }));
        Ok(())
    })
}

/// `CUresult cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
/// unsigned int flags)`: as the 32-bit write, for an 8-byte aligned word.
#[no_mangle]
pub unsafe extern "C" fn cuStreamWriteValue64_v2(
    s: CuStream,
    addr: CuDevicePtr,
    value: u64,
    flags: c_uint,
) -> CuResult {
    cu_call("cuStreamWriteValue64_v2", || {
        write_value_flags(flags)?;
        let st = working_stream(s)?;
        let word = mem_op_word(addr, 8)?;
        st.enqueue(Box::new(move || {
            // SAFETY: as in cuStreamWriteValue32_v2, for an 8-byte word.
            unsafe { std::sync::atomic::AtomicU64::from_ptr(word as *mut u64) }
                .store(value, std::sync::atomic::Ordering::Release);
            Ok(())
        }));
        Ok(())
    })
}

/// `CUresult cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
/// unsigned int flags)`: as `cuStreamWaitValue32_v2` for an 8-byte aligned word (GEQ compares
/// cyclically, `(int64_t)(*addr - value) >= 0`); the `no_wait_value` fault refuses it too.
#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitValue64_v2(
    s: CuStream,
    addr: CuDevicePtr,
    value: u64,
    flags: c_uint,
) -> CuResult {
    cu_call("cuStreamWaitValue64_v2", || {
        let cond = flags & !(1 << 30);
        if cond > 3 {
            return Err(SimError::INVALID_VALUE);
        }
        let st = working_stream(s)?;
        if faults::get(Fault::NoWaitValue) != 0 {
            return Err(SimError::NOT_SUPPORTED);
        }
        let word = mem_op_word(addr, 8)?;
        st.enqueue(Box::new(move || {
            // SAFETY: as in cuStreamWriteValue64_v2.
            let w = unsafe { std::sync::atomic::AtomicU64::from_ptr(word as *mut u64) };
            let holds = |x: u64| match cond {
                0 => (x.wrapping_sub(value) as i64) >= 0,
                1 => x == value,
                2 => x & value != 0,
                _ => !(x | value) != 0,
            };
            let mut pause = std::time::Duration::from_micros(1);
            while !holds(w.load(std::sync::atomic::Ordering::Acquire)) {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_micros(100));
            }
            Ok(())
        }));
        Ok(())
    })
}

/// `CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
/// size_t *paramSize)`: the layout of `hipfile_stage(StageCtl *ctl, unsigned ring_len)`:
/// parameter 0 at offset 0 (8 bytes), parameter 1 at offset 8 (4 bytes); a larger index is
/// `CUDA_ERROR_INVALID_VALUE`.
#[no_mangle]
pub unsafe extern "C" fn cuFuncGetParamInfo(
    f: CuFunction,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> CuResult {
    cu_call("cuFuncGetParamInfo", || {
        // SAFETY: module contract.
        let (off, len) = unsafe { (Out::new(offset)?, Out::new(size)?) };
        kernels::check_function(f as usize, ctx_device()?)?;
        let (o, n) = match index {
            0 => (0, 8),
            _ => return Err(SimError::INVALID_VALUE),
        };
        off.set(o);
        len.set(n);
        Ok(())
    })
}

/// `CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int
/// blockSize, size_t dynamicSMemSize)`: for the staging kernel on the H200-like device, 2048
/// threads and at most 32 blocks per multiprocessor: `min(32, 2048 / blockSize)`; 0 when the
/// dynamic shared memory exceeds a block's limit. A block size outside 1..=1024 is
/// `CUDA_ERROR_INVALID_VALUE`.
#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut c_int,
    f: CuFunction,
    block_size: c_int,
    dynamic_shared: usize,
) -> CuResult {
    cu_call("cuOccupancyMaxActiveBlocksPerMultiprocessor", || {
        // SAFETY: module contract.
        let out = unsafe { Out::new(blocks) }?;
        kernels::check_function(f as usize, ctx_device()?)?;
        let threads = u32::try_from(block_size)
            .ok()
            .filter(|t| (1..=kernels::MAX_THREADS_PER_BLOCK).contains(t))
            .ok_or(SimError::INVALID_VALUE)?;
        let n = if dynamic_shared > kernels::MAX_SHARED_MEMORY_PER_BLOCK as usize {
            0
        } else {
            (2048 / threads).min(kernels::STAGE_MAX_BLOCKS)
        };
        out.set(n as c_int);
        Ok(())
    })
}
