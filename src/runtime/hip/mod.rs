//! The AMD HIP runtime (`libamdhip64.so`), loaded at run time.
//!
//! [`sys`] holds the library's raw symbol table; this file binds it and implements the core of
//! the seam, [`GpuDirect`] (the fastpath entry points) and [`Tools`]; [`streams`] and
//! [`staging`] implement those capabilities.

mod staging;
mod streams;
mod sys;

use std::cell::Cell;
use std::ffi::c_void;
use std::os::fd::RawFd;
use std::sync::OnceLock;

use libloading::os::unix::Library;

use super::{
    DeviceRestore, DirectCopy, FastpathFault, GpuDirect, Platform, PointerInfo, RtError, RtResult,
    Runtime, Staging, Streams, Tools,
};
use crate::vocab::{Address, Direction, MemoryType};
use sys::{
    HipAmdFileHandle, HipApi, HipError, HipPointerAttribute, HIP_HOST_MALLOC_PORTABLE,
    HIP_MEMCPY_DEVICE_TO_HOST, HIP_MEMCPY_HOST_TO_DEVICE,
};

/// First HIP_VERSION with the ROCm 6 `hipMemoryType` numbering.
const ROCM6: i32 = 60_000_000;

/// Devices whose staging kernel the runtime keeps track of.
const MAX_DEVICES: usize = 64;

/// The HIP runtime.
pub(crate) struct HipRuntime {
    api: HipApi,
    version: i32,
    device_count: i32,
    path: String,
    /// The staging kernel per device (its function handle, or why not), loaded on first use.
    stage: [OnceLock<RtResult<usize>>; MAX_DEVICES],
}

fn check(e: HipError) -> RtResult<()> {
    if e == 0 {
        Ok(())
    } else {
        Err(RtError(e))
    }
}

thread_local! {
    /// Whether `hipInit(0)` already ran on this thread (a HIP runtime crash
    /// work-around for threads that never touched HIP before the fastpath).
    static THREAD_INIT: Cell<bool> = const { Cell::new(false) };
}

impl HipRuntime {
    /// `hipMemcpy` with its two kinds: the core's synchronous copies and the engine's direct
    /// ones are the same call.
    fn memcpy(&self) -> DirectCopy {
        DirectCopy {
            copy: self.api.memcpy,
            to_device: HIP_MEMCPY_HOST_TO_DEVICE,
            to_host: HIP_MEMCPY_DEVICE_TO_HOST,
        }
    }

    /// Bind the HIP API in `lib` (already opened by the loader) and initialise it.
    pub(crate) fn bind(lib: Library, path: &str) -> Result<Self, String> {
        let mut api = HipApi::load(&lib)?;
        // SAFETY: hipInit takes a flags integer.
        let rc = unsafe { (api.init)(0) };
        if rc != 0 {
            return Err(format!("hipInit failed with {rc}"));
        }
        let mut version = 0;
        // SAFETY: valid out-pointer.
        let rc = unsafe { (api.runtime_get_version)(&mut version) };
        if rc != 0 {
            return Err(format!("hipRuntimeGetVersion failed with {rc}"));
        }
        let mut count = 0;
        // SAFETY: valid out-pointer. hipErrorNoDevice leaves the count at 0.
        if unsafe { (api.get_device_count)(&mut count) } != 0 {
            count = 0;
        }
        api.resolve_file_io(version);
        // Never dlclose a GPU runtime: other code in the process may hold its pointers.
        std::mem::forget(lib);
        Ok(HipRuntime {
            api,
            version,
            device_count: count,
            path: path.to_string(),
            stage: [const { OnceLock::new() }; MAX_DEVICES],
        })
    }

    fn memory_type(&self, raw: std::ffi::c_int, managed: bool) -> MemoryType {
        if managed {
            return MemoryType::Managed;
        }
        if self.version >= ROCM6 {
            match raw {
                0 => MemoryType::Unregistered,
                1 => MemoryType::Host,
                2 => MemoryType::Device,
                3 => MemoryType::Managed,
                10 => MemoryType::Array,
                _ => MemoryType::Unified,
            }
        } else {
            match raw {
                0 => MemoryType::Host,
                1 => MemoryType::Device,
                2 => MemoryType::Array,
                _ => MemoryType::Unified,
            }
        }
    }

    /// The calling thread's current device.
    fn current(&self) -> RtResult<i32> {
        let mut d = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.get_device)(&mut d) })?;
        Ok(d)
    }

    /// Make `device` current on the calling thread.
    fn make_current(&self, device: i32) -> RtResult<()> {
        // SAFETY: plain integer argument.
        check(unsafe { (self.api.set_device)(device) })
    }

    /// Per-thread initialisation before the fastpath is used on a new thread.
    fn thread_init(&self) {
        THREAD_INIT.with(|done| {
            if !done.get() {
                // SAFETY: hipInit takes a flags integer; repeated calls are harmless.
                unsafe { (self.api.init)(0) };
                done.set(true);
            }
        });
    }
}

impl Runtime for HipRuntime {
    fn platform(&self) -> Platform {
        Platform::Amd
    }

    fn describe(&self) -> String {
        let v = self.version;
        format!(
            "HIP {}.{}.{} from {}{}, {} device(s), fastpath entry points {}",
            v / 10_000_000,
            (v / 100_000) % 100,
            v % 100_000,
            self.path,
            if self.api.simulated {
                " (simulated GPU runtime)"
            } else {
                ""
            },
            self.device_count,
            if self.gpu_direct().is_some() {
                "present"
            } else {
                "absent"
            }
        )
    }

    fn pointer_info(&self, ptr: Address) -> RtResult<PointerInfo> {
        let mut attr = HipPointerAttribute::default();
        // SAFETY: valid out-pointer; the runtime only inspects the address.
        let rc =
            unsafe { (self.api.pointer_get_attributes)(&mut attr, ptr.get() as *const c_void) };
        if rc == RtError::INVALID_VALUE.0 && !ptr.is_null() {
            // Memory the runtime does not know: pageable host memory. ROCm 5 answers so, and
            // AMD's documentation says every version does (ROCm 6 and later answer
            // hipMemoryTypeUnregistered instead, below). Only NULL stays an error.
            return Ok(PointerInfo::UNREGISTERED);
        }
        check(rc)?;
        Ok(PointerInfo {
            memory_type: self.memory_type(attr.memory_type, attr.is_managed != 0),
            device: attr.device,
        })
    }

    fn address_range(&self, ptr: Address) -> RtResult<(Address, usize)> {
        let mut base: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: valid out-pointers.
        check(unsafe {
            (self.api.mem_get_address_range)(&mut base, &mut size, ptr.get() as *mut c_void)
        })?;
        Ok((Address::of(base), size))
    }

    fn enter_device(&self, device: i32) -> RtResult<DeviceRestore> {
        let current = self.current()?;
        if device < 0 || device == current {
            return Ok(DeviceRestore(None));
        }
        self.make_current(device)?;
        Ok(DeviceRestore(Some(current as usize)))
    }

    fn leave_device(&self, restore: DeviceRestore) {
        if let Some(prev) = restore.0 {
            if let Err(e) = self.make_current(prev as i32) {
                tracing::warn!(target: "hipfile", "restoring the current HIP device {prev} failed: {e}");
            }
        }
    }

    fn copy_to_device(&self, dst: Address, src: &[u8]) -> RtResult<()> {
        self.memcpy().copy_to_device(dst, src)
    }

    fn copy_from_device(&self, dst: &mut [u8], src: Address) -> RtResult<()> {
        self.memcpy().copy_from_device(dst, src)
    }

    fn host_alloc(&self, len: usize) -> RtResult<*mut u8> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.host_malloc)(&mut p, len, HIP_HOST_MALLOC_PORTABLE) })?;
        Ok(p.cast())
    }

    unsafe fn host_free(&self, ptr: *mut u8) {
        // SAFETY: the caller passes memory from host_alloc.
        unsafe { (self.api.host_free)(ptr.cast()) };
    }

    fn direct_copy(&self) -> Option<DirectCopy> {
        Some(self.memcpy())
    }

    fn streams(&self) -> Option<&dyn Streams> {
        Some(self)
    }

    /// Where the runtime can map pinned memory for the device and load and launch modules.
    fn staging(&self) -> Option<&dyn Staging> {
        let api = &self.api;
        (api.host_get_device_pointer.is_some()
            && api.module_load_data.is_some()
            && api.module_get_function.is_some()
            && api.module_launch_kernel.is_some())
        .then_some(self)
    }

    fn gpu_direct(&self) -> Option<&dyn GpuDirect> {
        (self.api.file_read.is_some() && self.api.file_write.is_some()).then_some(self)
    }

    fn tools(&self) -> Option<&dyn Tools> {
        Some(self)
    }
}

impl GpuDirect for HipRuntime {
    fn fastpath_io(
        &self,
        dir: Direction,
        fd: RawFd,
        dev: Address,
        size: u64,
        offset: i64,
    ) -> Result<u64, FastpathFault> {
        let f = match dir {
            Direction::Read => self.api.file_read,
            Direction::Write => self.api.file_write,
        }
        .ok_or(FastpathFault::Runtime(RtError::NOT_SUPPORTED))?;
        self.thread_init();
        let handle = HipAmdFileHandle {
            handle: fd as u32 as u64,
        };
        let mut bytes = 0u64;
        let mut status = 0i32;
        // SAFETY: the entry point has the documented signature; out-pointers are valid; the
        // kernel path validates the device address and descriptor.
        let rc = unsafe {
            f(
                handle,
                dev.get() as *mut c_void,
                size,
                offset,
                &mut bytes,
                &mut status,
            )
        };
        if status != 0 {
            return Err(FastpathFault::Os(status.abs()));
        }
        if rc != 0 {
            return Err(FastpathFault::Runtime(RtError(rc)));
        }
        Ok(bytes)
    }
}

impl Tools for HipRuntime {
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
        self.make_current(device)
    }
    fn device_alloc(&self, len: usize) -> RtResult<Address> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.malloc)(&mut p, len) })?;
        Ok(Address::of(p))
    }
    fn device_free(&self, addr: Address) {
        // SAFETY: the address came from device_alloc.
        unsafe { (self.api.free)(addr.get() as *mut c_void) };
    }
}
