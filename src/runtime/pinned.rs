//! Page-locked host memory allocated through a runtime, owned: freed by the same runtime when
//! dropped, lent out only as slices borrowed from the owner.

use std::ptr::NonNull;

use super::{RtResult, Runtime};

/// `len` bytes of pinned host memory from `rt`.
pub(crate) struct PinnedHost {
    ptr: NonNull<u8>,
    len: usize,
    rt: &'static dyn Runtime,
}

// SAFETY: the allocation is exclusively owned; access goes through &self / &mut self.
unsafe impl Send for PinnedHost {}
// SAFETY: shared access is read-only through &self.
unsafe impl Sync for PinnedHost {}

impl PinnedHost {
    /// Allocate `len` bytes (at least one) through `rt`; `None` if the runtime answered
    /// success with a NULL pointer.
    pub(crate) fn alloc(rt: &'static dyn Runtime, len: usize) -> RtResult<Option<PinnedHost>> {
        let ptr = rt.host_alloc(len.max(1))?;
        Ok(NonNull::new(ptr).map(|ptr| PinnedHost { ptr, len, rt }))
    }

    /// The memory.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `len` bytes of host memory owned by self, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The memory, read-only.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` bytes of host memory owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for PinnedHost {
    fn drop(&mut self) {
        // SAFETY: allocated by host_alloc of this runtime; no borrow outlives self.
        unsafe { self.rt.host_free(self.ptr.as_ptr()) };
    }
}
