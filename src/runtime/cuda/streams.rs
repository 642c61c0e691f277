//! The CUDA driver API's streams, events and stream-ordered copies.

use std::ffi::c_void;

use super::errors::{breaks_context, check, translate};
use super::sys::{CuContext, CU_EVENT_DISABLE_TIMING, CU_STREAM_NON_BLOCKING};
use super::{CtxGuard, CudaRuntime};
use crate::runtime::{EventHandle, RtError, RtResult, StreamHandle, Streams};
use crate::vocab::Address;

impl Streams for CudaRuntime {
    unsafe fn copy_to_device_async(
        &self,
        dst: Address,
        src: *const u8,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()> {
        let _g = self.ctx()?;
        // SAFETY: the caller keeps `src` valid until the copy completes.
        check(unsafe {
            (self.api.memcpy_htod_async)(dst.get() as u64, src.cast(), len, stream.0 as *mut c_void)
        })
    }

    unsafe fn copy_from_device_async(
        &self,
        dst: *mut u8,
        src: Address,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()> {
        let _g = self.ctx()?;
        // SAFETY: the caller keeps `dst` valid until the copy completes.
        check(unsafe {
            (self.api.memcpy_dtoh_async)(dst.cast(), src.get() as u64, len, stream.0 as *mut c_void)
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

    fn stream_query(&self, stream: StreamHandle) -> RtResult<()> {
        let query = self.api.stream_query.ok_or(RtError::NOT_READY)?;
        let _g = self.ctx()?;
        // SAFETY: the driver validates the handle.
        check(unsafe { query(stream.0 as *mut c_void) })
    }

    fn context_broken(&self) -> Option<RtError> {
        let query = self.api.stream_query?;
        let _g = self.ctx().ok()?;
        // A broken context's error is every call's answer; querying the legacy stream changes
        // nothing.
        // SAFETY: NULL names the current context's legacy stream.
        let rc = unsafe { query(std::ptr::null_mut()) };
        breaks_context(rc).then(|| translate(rc))
    }

    fn stream_id(&self, stream: StreamHandle) -> RtResult<u64> {
        let get = self.api.stream_get_id.ok_or(RtError::NOT_SUPPORTED)?;
        let _g = self.ctx()?;
        let mut id = 0u64;
        // SAFETY: valid out-pointer; the driver validates the stream.
        check(unsafe { get(stream.0 as *mut c_void, &mut id) })?;
        Ok(id)
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
}
