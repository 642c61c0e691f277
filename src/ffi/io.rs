//! Synchronous reads and writes.
#![allow(non_snake_case)]

use std::ffi::c_void;

use super::abi::*;
use super::{boundary, error};
use crate::driver::driver;
use crate::driver::files::FileToken;
use crate::vocab::{Address, Direction};

/// The body of both calls. The direction is a constant parameter, not a captured value, so
/// each export's copy of the I/O path is specialised for it (target T9).
#[inline(always)]
fn read_write<const WRITE: bool>(
    fh: hipFileHandle_t,
    base: Address,
    size: usize,
    file_offset: hoff_t,
    buffer_offset: hoff_t,
) -> isize {
    boundary(-(hipFileInternalError as isize), move || {
        let dir = if WRITE {
            Direction::Write
        } else {
            Direction::Read
        };
        match driver().io(
            dir,
            FileToken::from_c_handle(fh as usize),
            base,
            size,
            u64::try_from(file_offset).ok(),
            usize::try_from(buffer_offset).ok(),
        ) {
            Ok(n) => n as isize,
            Err(e) => error::ssize_error(e),
        }
    })
}

/// `hipFileRead`: reads up to `size` bytes (clamped to `0x7ffff000`) at `file_offset` into
/// `buffer_base + buffer_offset`. Returns the byte count (short at end of file), `-1` with
/// `errno` for an operating-system failure, a closed driver or a negative offset, or a negative
/// `hipFileOpError_t` / `hipError_t` value.
///
/// # Safety
/// For host memory, `buffer_base + buffer_offset` must be valid for writes of `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn hipFileRead(
    fh: hipFileHandle_t,
    buffer_base: *mut c_void,
    size: usize,
    file_offset: hoff_t,
    buffer_offset: hoff_t,
) -> libc::ssize_t {
    read_write::<false>(
        fh,
        Address::of(buffer_base),
        size,
        file_offset,
        buffer_offset,
    )
}

/// `hipFileWrite`: writes up to `size` bytes (clamped to `0x7ffff000`) from
/// `buffer_base + buffer_offset` at `file_offset`, durable when it returns (one `fdatasync`;
/// `HIPFILE_FALLBACK_SYNC_WRITES=false` turns that off). Results as [`hipFileRead`].
///
/// # Safety
/// For host memory, `buffer_base + buffer_offset` must be valid for reads of `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn hipFileWrite(
    fh: hipFileHandle_t,
    buffer_base: *const c_void,
    size: usize,
    file_offset: hoff_t,
    buffer_offset: hoff_t,
) -> libc::ssize_t {
    read_write::<true>(
        fh,
        Address::of(buffer_base),
        size,
        file_offset,
        buffer_offset,
    )
}
