//! Streams and stream-ordered (async) I/O.
#![allow(non_snake_case)]

use std::ffi::c_uint;

use super::abi::*;
use super::boundary_op;
use crate::driver::driver;
use crate::error::Error;
use crate::runtime::StreamHandle;

/// `hipFileStreamRegister`: registers `stream` (NULL included) with `HIPFILE_STREAM_*` flags.
/// Unknown flag bits or a stream already registered → `hipFileInvalidValue`; a runtime failure
/// to find the stream's device → `hipFileHipDriverError`. Does not touch the use count.
#[no_mangle]
pub extern "C" fn hipFileStreamRegister(stream: hipStream_t, flags: c_uint) -> hipFileError_t {
    boundary_op(|| {
        let d = driver();
        d.streams()
            .register(d.rt(), StreamHandle(stream as usize), flags)
    })
}

/// `hipFileStreamDeregister`: `hipFileInvalidValue` when `stream` is not registered.
#[no_mangle]
pub extern "C" fn hipFileStreamDeregister(stream: hipStream_t) -> hipFileError_t {
    boundary_op(|| driver().streams().deregister(StreamHandle(stream as usize)))
}

fn async_io(
    buffer_base: *const std::ffi::c_void,
    size_p: *mut usize,
    file_offset_p: *mut hoff_t,
    buffer_offset_p: *mut hoff_t,
    bytes_p: *mut libc::ssize_t,
) -> crate::error::Result<()> {
    // As upstream: on a closed driver the call opens it and fails, whatever the arguments.
    if driver().open_if_closed() {
        return Err(Error::InvalidValue("the driver was not open"));
    }
    if buffer_base.is_null()
        || size_p.is_null()
        || file_offset_p.is_null()
        || buffer_offset_p.is_null()
        || bytes_p.is_null()
    {
        return Err(Error::InvalidValue("NULL argument"));
    }
    Err(Error::Internal("stream-ordered I/O is not implemented yet"))
}

/// `hipFileReadAsync`: stream-ordered read. Not implemented yet: after upstream's argument
/// checks it answers `hipFileInternalError`.
///
/// # Safety
/// Pointers are NULL or valid until the operation completes on `stream`.
#[no_mangle]
pub unsafe extern "C" fn hipFileReadAsync(
    _fh: hipFileHandle_t,
    buffer_base: *mut std::ffi::c_void,
    size_p: *mut usize,
    file_offset_p: *mut hoff_t,
    buffer_offset_p: *mut hoff_t,
    bytes_read_p: *mut libc::ssize_t,
    _stream: hipStream_t,
) -> hipFileError_t {
    boundary_op(|| {
        async_io(
            buffer_base,
            size_p,
            file_offset_p,
            buffer_offset_p,
            bytes_read_p,
        )
    })
}

/// `hipFileWriteAsync`: stream-ordered write. Not implemented yet (see [`hipFileReadAsync`]).
///
/// # Safety
/// Pointers are NULL or valid until the operation completes on `stream`.
#[no_mangle]
pub unsafe extern "C" fn hipFileWriteAsync(
    _fh: hipFileHandle_t,
    buffer_base: *mut std::ffi::c_void,
    size_p: *mut usize,
    file_offset_p: *mut hoff_t,
    buffer_offset_p: *mut hoff_t,
    bytes_written_p: *mut libc::ssize_t,
    _stream: hipStream_t,
) -> hipFileError_t {
    boundary_op(|| {
        async_io(
            buffer_base,
            size_p,
            file_offset_p,
            buffer_offset_p,
            bytes_written_p,
        )
    })
}
