//! Host-only mode: no GPU runtime in the process. Every pointer is host memory; the driver
//! opens and host buffers work through the host backend.

use std::os::fd::RawFd;

use super::RuntimeTools;
use super::{
    DeviceRestore, EventHandle, FastpathFault, Platform, PointerInfo, RtError, RtResult, Runtime,
    StreamHandle,
};
use crate::vocab::{Direction, MemoryType};

/// The runtime used when no GPU runtime was chosen.
pub struct HostRuntime {
    reason: String,
}

impl HostRuntime {
    /// A host-only runtime; `reason` says why no GPU runtime was used.
    pub fn new(reason: impl Into<String>) -> Self {
        HostRuntime {
            reason: reason.into(),
        }
    }
}

impl Runtime for HostRuntime {
    fn platform(&self) -> Platform {
        Platform::Host
    }
    fn describe(&self) -> String {
        format!("host-only (no GPU runtime: {})", self.reason)
    }
    fn pointer_info(&self, ptr: usize) -> RtResult<PointerInfo> {
        if ptr == 0 {
            return Err(RtError::INVALID_VALUE);
        }
        Ok(PointerInfo {
            memory_type: MemoryType::Unregistered,
            device: -1,
        })
    }
    fn address_range(&self, _ptr: usize) -> RtResult<(usize, usize)> {
        Err(RtError::NOT_FOUND)
    }
    fn enter_device(&self, _device: i32) -> RtResult<DeviceRestore> {
        Ok(DeviceRestore(None))
    }
    fn leave_device(&self, _restore: DeviceRestore) {}
    fn thread_init(&self) {}
    fn copy_to_device(&self, _dst: usize, _src: &[u8]) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    fn copy_from_device(&self, _dst: &mut [u8], _src: usize) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    unsafe fn copy_to_device_async(
        &self,
        _: usize,
        _: *const u8,
        _: usize,
        _: StreamHandle,
    ) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    unsafe fn copy_from_device_async(
        &self,
        _: *mut u8,
        _: usize,
        _: usize,
        _: StreamHandle,
    ) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    fn stream_create(&self) -> RtResult<StreamHandle> {
        Err(RtError::NO_DEVICE)
    }
    fn stream_destroy(&self, _stream: StreamHandle) {}
    fn stream_synchronize(&self, _stream: StreamHandle) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    fn stream_device(&self, _stream: StreamHandle) -> RtResult<i32> {
        Err(RtError::NO_DEVICE)
    }
    fn event_create(&self) -> RtResult<EventHandle> {
        Err(RtError::NO_DEVICE)
    }
    fn event_record(&self, _: EventHandle, _: StreamHandle) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    fn event_synchronize(&self, _: EventHandle) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    fn event_destroy(&self, _: EventHandle) {}
    fn host_alloc(&self, len: usize) -> RtResult<*mut u8> {
        // Page-aligned anonymous memory, so O_DIRECT transfers can use it too.
        // SAFETY: anonymous mapping, no file or address hint.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len.max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(RtError::OUT_OF_MEMORY);
        }
        HOST_ALLOCS.lock().insert(p as usize, len.max(1));
        Ok(p.cast())
    }
    unsafe fn host_free(&self, ptr: *mut u8) {
        if let Some(len) = HOST_ALLOCS.lock().remove(&(ptr as usize)) {
            // SAFETY: the mapping came from host_alloc with this length.
            unsafe { libc::munmap(ptr.cast(), len) };
        }
    }
    fn host_register(&self, _ptr: *mut u8, _len: usize) -> RtResult<()> {
        // Host memory needs no pinning here: registration is bookkeeping only.
        Ok(())
    }
    unsafe fn host_unregister(&self, _ptr: *mut u8) {}
    fn registers_host(&self) -> bool {
        true
    }
    fn has_fastpath(&self) -> bool {
        false
    }
    fn fastpath_io(
        &self,
        _: Direction,
        _: RawFd,
        _: usize,
        _: u64,
        _: i64,
    ) -> Result<u64, FastpathFault> {
        Err(FastpathFault::Runtime(RtError::NOT_SUPPORTED))
    }
}

impl RuntimeTools for HostRuntime {
    fn current_device(&self) -> RtResult<i32> {
        Ok(0)
    }
    fn version(&self) -> i32 {
        0
    }
    fn is_simulated(&self) -> bool {
        false
    }
    fn device_count(&self) -> i32 {
        0
    }
    fn set_device(&self, _device: i32) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    fn device_alloc(&self, _len: usize) -> RtResult<usize> {
        Err(RtError::NO_DEVICE)
    }
    fn device_free(&self, _addr: usize) {}
}

/// Lengths of the mappings handed out by `host_alloc`, for `munmap`.
static HOST_ALLOCS: parking_lot::Mutex<std::collections::BTreeMap<usize, usize>> =
    parking_lot::Mutex::new(std::collections::BTreeMap::new());
