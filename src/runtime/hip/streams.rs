//! HIP's streams, events and stream-ordered copies.

use std::ffi::c_void;

use super::sys::{HIP_MEMCPY_DEVICE_TO_HOST, HIP_MEMCPY_HOST_TO_DEVICE, HIP_STREAM_NON_BLOCKING};
use super::{check, HipRuntime};
use crate::runtime::{EventHandle, RtError, RtResult, StreamHandle, Streams};
use crate::vocab::Address;

impl Streams for HipRuntime {
    unsafe fn copy_to_device_async(
        &self,
        dst: Address,
        src: *const u8,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()> {
        // SAFETY: the caller keeps `src` valid until the copy completes on `stream`.
        check(unsafe {
            (self.api.memcpy_async)(
                dst.get() as *mut c_void,
                src.cast(),
                len,
                HIP_MEMCPY_HOST_TO_DEVICE,
                stream.0 as *mut c_void,
            )
        })
    }

    unsafe fn copy_from_device_async(
        &self,
        dst: *mut u8,
        src: Address,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()> {
        // SAFETY: the caller keeps `dst` valid until the copy completes on `stream`.
        check(unsafe {
            (self.api.memcpy_async)(
                dst.cast(),
                src.get() as *const c_void,
                len,
                HIP_MEMCPY_DEVICE_TO_HOST,
                stream.0 as *mut c_void,
            )
        })
    }

    /// Non-blocking when the runtime can (our copies never wait for the legacy default
    /// stream, which an application's stream-ordered I/O may hold).
    fn stream_create(&self) -> RtResult<StreamHandle> {
        let mut s: *mut c_void = std::ptr::null_mut();
        match self.api.stream_create_with_flags {
            // SAFETY: valid out-pointer.
            Some(f) => check(unsafe { f(&mut s, HIP_STREAM_NON_BLOCKING) })?,
            // SAFETY: valid out-pointer.
            None => check(unsafe { (self.api.stream_create)(&mut s) })?,
        }
        Ok(StreamHandle(s as usize))
    }

    fn stream_destroy(&self, stream: StreamHandle) {
        // SAFETY: the stream came from stream_create.
        unsafe { (self.api.stream_destroy)(stream.0 as *mut c_void) };
    }

    fn stream_synchronize(&self, stream: StreamHandle) -> RtResult<()> {
        // SAFETY: the runtime validates the handle.
        check(unsafe { (self.api.stream_synchronize)(stream.0 as *mut c_void) })
    }

    fn stream_device(&self, stream: StreamHandle) -> RtResult<i32> {
        match self.api.stream_get_device {
            Some(f) => {
                let mut d = 0;
                // SAFETY: valid out-pointer; the runtime validates the handle.
                check(unsafe { f(stream.0 as *mut c_void, &mut d) })?;
                Ok(d)
            }
            None => self.current(),
        }
    }

    fn stream_query(&self, stream: StreamHandle) -> RtResult<()> {
        let query = self.api.stream_query.ok_or(RtError::NOT_READY)?;
        // SAFETY: the runtime validates the handle.
        check(unsafe { query(stream.0 as *mut c_void) })
    }

    fn stream_id(&self, stream: StreamHandle) -> RtResult<u64> {
        let get = self.api.stream_get_id.ok_or(RtError::NOT_SUPPORTED)?;
        let mut id = 0u64;
        // SAFETY: valid out-pointer; the runtime validates the stream.
        check(unsafe { get(stream.0 as *mut c_void, &mut id) })?;
        Ok(id)
    }

    fn event_create(&self) -> RtResult<EventHandle> {
        let mut e: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.event_create)(&mut e) })?;
        Ok(EventHandle(e as usize))
    }

    fn event_record(&self, event: EventHandle, stream: StreamHandle) -> RtResult<()> {
        // SAFETY: the runtime validates both handles.
        check(unsafe { (self.api.event_record)(event.0 as *mut c_void, stream.0 as *mut c_void) })
    }

    fn event_synchronize(&self, event: EventHandle) -> RtResult<()> {
        // SAFETY: the runtime validates the handle.
        check(unsafe { (self.api.event_synchronize)(event.0 as *mut c_void) })
    }

    fn event_destroy(&self, event: EventHandle) {
        // SAFETY: the event came from event_create.
        unsafe { (self.api.event_destroy)(event.0 as *mut c_void) };
    }
}
