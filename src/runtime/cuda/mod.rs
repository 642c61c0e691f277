//! The NVIDIA CUDA driver API (`libcuda.so.1`), loaded at run time.
//!
//! The driver API is used rather than `libcudart` because there is exactly one copy per system
//! and a CUDA application's `CUstream` values are valid here as they are. [`sys`] holds the
//! library's raw symbol table; this file binds it and implements the core of the seam, host
//! registration, [`GpuDirect`] (through NVIDIA's cuFile) and [`Tools`]; [`streams`] and
//! [`staging`] implement those capabilities. `CUresult` values are reported in HIP's numbering
//! ([`errors`]).
//!
//! Contexts: a call that needs a context uses the calling thread's current one when there is
//! one, and otherwise pushes the device's primary context for the duration of the call and pops
//! it again, so the application's context state is the same after every call.

mod errors;
mod staging;
mod streams;
mod sys;

use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};
use std::os::fd::RawFd;
use std::sync::OnceLock;

use libloading::os::unix::Library;
use parking_lot::Mutex;

use super::cufile::CuFile;
use super::{
    DeviceRestore, FastpathFault, GpuDirect, HostRegistration, Platform, PointerInfo, RtError,
    RtResult, Runtime, Staging, Streams, Tools,
};
use crate::vocab::{Address, Direction, MemoryType};
use errors::check;
#[cfg(test)]
pub(super) use errors::HIP_TWINS;
use sys::{
    CuContext, CuDevicePtr, CudaApi, CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTREGISTER_PORTABLE,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_IS_MANAGED,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_STREAM_PER_THREAD,
};

const MAX_DEVICES: usize = 64;

/// The CUDA driver-API runtime.
pub(crate) struct CudaRuntime {
    api: CudaApi,
    version: i32,
    device_count: i32,
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
    pub(crate) fn bind(lib: Library, path: &str) -> Result<Self, String> {
        let api = CudaApi::load(&lib)?;
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
            if self.api.simulated {
                " (simulated GPU runtime)"
            } else {
                ""
            },
            self.device_count,
            self.cufile_status
        )
    }

    fn pointer_info(&self, ptr: Address) -> RtResult<PointerInfo> {
        if ptr.is_null() {
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
            (self.api.pointer_get_attributes)(
                3,
                attrs.as_mut_ptr(),
                data.as_mut_ptr(),
                ptr.get() as u64,
            )
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

    fn address_range(&self, ptr: Address) -> RtResult<(Address, usize)> {
        let _g = self.ctx()?;
        let mut base: CuDevicePtr = 0;
        let mut size = 0usize;
        // SAFETY: valid out-pointers.
        check(unsafe { (self.api.mem_get_address_range)(&mut base, &mut size, ptr.get() as u64) })?;
        Ok((Address::new(base as usize), size))
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

    fn copy_to_device(&self, dst: Address, src: &[u8]) -> RtResult<()> {
        let _g = self.ctx()?;
        // On the calling thread's per-thread stream rather than the legacy default stream,
        // which serialises the copies of every thread of the process (16 threads of 4 KiB
        // copies ran 7× slower that way on the H200).
        // SAFETY: `src` is valid host memory for its length and we wait for the copy before
        // returning; the driver validates `dst`.
        check(unsafe {
            (self.api.memcpy_htod_async)(
                dst.get() as u64,
                src.as_ptr().cast(),
                src.len(),
                CU_STREAM_PER_THREAD,
            )
        })?;
        // SAFETY: the per-thread stream handle is always valid.
        check(unsafe { (self.api.stream_synchronize)(CU_STREAM_PER_THREAD) })
    }

    fn copy_from_device(&self, dst: &mut [u8], src: Address) -> RtResult<()> {
        let _g = self.ctx()?;
        // SAFETY: `dst` is valid writable host memory and we wait for the copy before
        // returning; the driver validates `src`.
        check(unsafe {
            (self.api.memcpy_dtoh_async)(
                dst.as_mut_ptr().cast(),
                src.get() as u64,
                dst.len(),
                CU_STREAM_PER_THREAD,
            )
        })?;
        // SAFETY: the per-thread stream handle is always valid.
        check(unsafe { (self.api.stream_synchronize)(CU_STREAM_PER_THREAD) })
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

    fn streams(&self) -> Option<&dyn Streams> {
        Some(self)
    }

    /// Where the driver can map pinned memory for the device and load and launch modules.
    fn staging(&self) -> Option<&dyn Staging> {
        let api = &self.api;
        (api.mem_host_get_device_pointer.is_some()
            && api.module_load_data.is_some()
            && api.module_get_function.is_some()
            && api.launch_kernel.is_some())
        .then_some(self)
    }

    /// Where cuFile reports a real GPUDirect Storage path.
    fn gpu_direct(&self) -> Option<&dyn GpuDirect> {
        self.cufile.is_some().then_some(self)
    }

    fn host_registration(&self) -> Option<&dyn HostRegistration> {
        (self.api.mem_host_register.is_some() && self.api.mem_host_unregister.is_some())
            .then_some(self)
    }

    fn tools(&self) -> Option<&dyn Tools> {
        Some(self)
    }
}

impl HostRegistration for CudaRuntime {
    fn host_register(&self, ptr: *mut u8, len: usize) -> RtResult<()> {
        let register = self.api.mem_host_register.ok_or(RtError::NOT_SUPPORTED)?;
        self.api.mem_host_unregister.ok_or(RtError::NOT_SUPPORTED)?;
        let _g = self.ctx()?;
        // SAFETY: the caller's own memory of `len` bytes; the driver validates the range.
        check(unsafe { register(ptr.cast(), len, CU_MEMHOSTREGISTER_PORTABLE) })
    }

    unsafe fn host_unregister(&self, ptr: *mut u8) {
        let (Some(unregister), Ok(_g)) = (self.api.mem_host_unregister, self.ctx()) else {
            // Without the context the driver may still hold the pages: leave them.
            return;
        };
        // SAFETY: registered by host_register; the caller no longer uses it.
        unsafe { unregister(ptr.cast()) };
    }
}

impl GpuDirect for CudaRuntime {
    fn fastpath_io(
        &self,
        dir: Direction,
        fd: RawFd,
        dev: Address,
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

    fn forget_file(&self, fd: RawFd) {
        if let Some(c) = &self.cufile {
            c.forget(fd);
        }
    }
}

impl Tools for CudaRuntime {
    fn version(&self) -> i32 {
        self.version
    }
    fn is_simulated(&self) -> bool {
        self.api.simulated
    }
    fn device_count(&self) -> i32 {
        self.device_count
    }
    fn set_device(&self, device: i32) -> RtResult<()> {
        let ctx = self.primary_ctx(device)?;
        // SAFETY: a valid primary context.
        check(unsafe { (self.api.ctx_set_current)(ctx) })
    }
    fn device_alloc(&self, len: usize) -> RtResult<Address> {
        let _g = self.ctx()?;
        let mut p: CuDevicePtr = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.mem_alloc)(&mut p, len) })?;
        Ok(Address::new(p as usize))
    }
    fn device_free(&self, addr: Address) {
        if let Ok(_g) = self.ctx() {
            // SAFETY: the address came from device_alloc.
            unsafe { (self.api.mem_free)(addr.get() as u64) };
        }
    }
}
