//! Streams and stream-ordered (async) I/O.
#![allow(non_snake_case)]

use std::ffi::{c_uint, c_void};

use super::abi::*;
use super::boundary_op;
use super::error::op_code;
use crate::driver::driver;
use crate::driver::files::FileToken;
use crate::driver::ordered::{AsyncParams, StreamFlags};
use crate::error::{Error, Result};
use crate::runtime::StreamHandle;
use crate::vocab::{Address, Direction};

/// `hipFileStreamRegister`: registers `stream` (NULL included) with `HIPFILE_STREAM_*` flags.
/// Unknown flag bits or a stream already registered → `hipFileInvalidValue`; a runtime failure
/// to find the stream's device → `hipFileHipDriverError`. Does not touch the use count.
#[no_mangle]
pub extern "C" fn hipFileStreamRegister(stream: hipStream_t, flags: c_uint) -> hipFileError_t {
    boundary_op(|| {
        let flags = StreamFlags::from_bits(flags)?;
        driver().register_stream(StreamHandle::from_c_handle(stream as usize), flags)
    })
}

/// `hipFileStreamDeregister`: `hipFileInvalidValue` when `stream` is not registered; waits
/// for the stream-ordered operations queued on it to finish.
#[no_mangle]
pub extern "C" fn hipFileStreamDeregister(stream: hipStream_t) -> hipFileError_t {
    boundary_op(|| driver().deregister_stream(StreamHandle::from_c_handle(stream as usize)))
}

/// The caller's by-reference parameters of one operation. The application keeps them valid
/// until the stream has passed the operation (the C contract of the async calls).
struct CallerParams {
    size_p: *const usize,
    file_offset_p: *const hoff_t,
    buffer_offset_p: *const hoff_t,
    bytes_p: *mut libc::ssize_t,
}

// SAFETY: the pointers are only read and written through volatile accesses of plain integers,
// from one thread at a time (the submitting thread, then the stream's worker), as the C
// contract allows.
unsafe impl Send for CallerParams {}

impl AsyncParams for CallerParams {
    fn size(&self) -> usize {
        // SAFETY: non-NULL (checked at submission) and valid per the C contract.
        unsafe { self.size_p.read_volatile() }
    }

    fn file_offset(&self) -> Option<u64> {
        // SAFETY: as in `size`.
        u64::try_from(unsafe { self.file_offset_p.read_volatile() }).ok()
    }

    fn buffer_offset(&self) -> Option<usize> {
        // SAFETY: as in `size`.
        usize::try_from(unsafe { self.buffer_offset_p.read_volatile() }).ok()
    }

    fn set_result(&self, r: Result<usize>) {
        let v = match r {
            Ok(n) => n as libc::ssize_t,
            Err(e) => async_error(&e),
        };
        // SAFETY: as in `size`, for a write.
        unsafe { self.bytes_p.write_volatile(v) }
    }
}

/// `*bytes_p` of a failed operation, as upstream reports it: `-1` for an operating-system
/// error of the POSIX path, `-hipFileInternalError` when the GPU-direct path fails with an
/// error the POSIX path does not take over (EIO, say), otherwise `-hipFileOpError`
/// (`-hipFileInvalidValue` for parameters that no longer fit).
fn async_error(e: &Error) -> libc::ssize_t {
    match e {
        Error::Os(_) => -1,
        other => -(op_code(other) as libc::ssize_t),
    }
}

#[allow(clippy::too_many_arguments)]
fn async_io(
    dir: Direction,
    fh: hipFileHandle_t,
    buffer_base: *const c_void,
    size_p: *const usize,
    file_offset_p: *const hoff_t,
    buffer_offset_p: *const hoff_t,
    bytes_p: *mut libc::ssize_t,
    stream: hipStream_t,
) -> Result<()> {
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
    driver().submit_async(
        dir,
        FileToken::from_c_handle(fh as usize),
        Address::of(buffer_base),
        StreamHandle::from_c_handle(stream as usize),
        Box::new(CallerParams {
            size_p,
            file_offset_p,
            buffer_offset_p,
            bytes_p,
        }),
    )
}

/// `hipFileReadAsync`: a read queued on `stream`. It starts when the work queued before it on
/// the stream is done, reads `*size_p`, `*file_offset_p` and `*buffer_offset_p` then (unless
/// the stream was registered with the matching FIXED flag: then their values at this call),
/// and writes the byte count, `-1` for an operating-system error of the POSIX path, or
/// `-hipFileOpError` to `*bytes_read_p` before later work on the stream runs. Any backend serves it (GPU-direct,
/// the POSIX fallback, host memory); the call itself returns at once, with `*bytes_read_p`
/// set to 0. The NULL stream is the default stream.
///
/// # Safety
/// Pointers are NULL or valid until the operation completes on `stream`.
#[no_mangle]
pub unsafe extern "C" fn hipFileReadAsync(
    fh: hipFileHandle_t,
    buffer_base: *mut c_void,
    size_p: *mut usize,
    file_offset_p: *mut hoff_t,
    buffer_offset_p: *mut hoff_t,
    bytes_read_p: *mut libc::ssize_t,
    stream: hipStream_t,
) -> hipFileError_t {
    boundary_op(|| {
        async_io(
            Direction::Read,
            fh,
            buffer_base,
            size_p,
            file_offset_p,
            buffer_offset_p,
            bytes_read_p,
            stream,
        )
    })
}

/// `hipFileWriteAsync`: a write queued on `stream`, as [`hipFileReadAsync`].
///
/// # Safety
/// Pointers are NULL or valid until the operation completes on `stream`.
#[no_mangle]
pub unsafe extern "C" fn hipFileWriteAsync(
    fh: hipFileHandle_t,
    buffer_base: *mut c_void,
    size_p: *mut usize,
    file_offset_p: *mut hoff_t,
    buffer_offset_p: *mut hoff_t,
    bytes_written_p: *mut libc::ssize_t,
    stream: hipStream_t,
) -> hipFileError_t {
    boundary_op(|| {
        async_io(
            Direction::Write,
            fh,
            buffer_base,
            size_p,
            file_offset_p,
            buffer_offset_p,
            bytes_written_p,
            stream,
        )
    })
}
