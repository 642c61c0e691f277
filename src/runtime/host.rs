//! Host-only mode: no GPU runtime in the process. Every pointer is host memory; the driver
//! opens and host buffers work through the host backend.

use super::{
    DeviceRestore, EventHandle, HostRegistration, Platform, PointerInfo, RtError, RtResult,
    Runtime, StreamHandle, Streams, Tools,
};
use crate::vocab::Address;

/// The runtime used when no GPU runtime was chosen.
pub(crate) struct HostRuntime {
    reason: String,
}

impl HostRuntime {
    /// A host-only runtime; `reason` says why no GPU runtime was used.
    pub(crate) fn new(reason: impl Into<String>) -> Self {
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
    fn pointer_info(&self, ptr: Address) -> RtResult<PointerInfo> {
        if ptr.is_null() {
            return Err(RtError::INVALID_VALUE);
        }
        Ok(PointerInfo::UNREGISTERED)
    }
    fn address_range(&self, _ptr: Address) -> RtResult<(Address, usize)> {
        Err(RtError::NOT_FOUND)
    }
    fn enter_device(&self, _device: i32) -> RtResult<DeviceRestore> {
        Ok(DeviceRestore(None))
    }
    fn leave_device(&self, _restore: DeviceRestore) {}
    fn copy_to_device(&self, _dst: Address, _src: &[u8]) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    fn copy_from_device(&self, _dst: &mut [u8], _src: Address) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
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
    /// Streams exist in the API (an application may name one), but there is no device to
    /// run them: every call answers "no device".
    fn streams(&self) -> Option<&dyn Streams> {
        Some(self)
    }
    fn host_registration(&self) -> Option<&dyn HostRegistration> {
        Some(self)
    }
    fn tools(&self) -> Option<&dyn Tools> {
        Some(self)
    }
}

impl Streams for HostRuntime {
    unsafe fn copy_to_device_async(
        &self,
        _: Address,
        _: *const u8,
        _: usize,
        _: StreamHandle,
    ) -> RtResult<()> {
        Err(RtError::NO_DEVICE)
    }
    unsafe fn copy_from_device_async(
        &self,
        _: *mut u8,
        _: Address,
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
}

impl HostRegistration for HostRuntime {
    fn host_register(&self, _ptr: *mut u8, _len: usize) -> RtResult<()> {
        // Host memory needs no pinning here: registration is bookkeeping only.
        Ok(())
    }
    unsafe fn host_unregister(&self, _ptr: *mut u8) {}
}

impl Tools for HostRuntime {
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
    fn device_alloc(&self, _len: usize) -> RtResult<Address> {
        Err(RtError::NO_DEVICE)
    }
    fn device_free(&self, _addr: Address) {}
}

/// Lengths of the mappings handed out by `host_alloc`, for `munmap`.
static HOST_ALLOCS: parking_lot::Mutex<std::collections::BTreeMap<usize, usize>> =
    parking_lot::Mutex::new(std::collections::BTreeMap::new());
