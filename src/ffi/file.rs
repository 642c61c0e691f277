//! File handle registration.
#![allow(non_snake_case)]

use std::ffi::c_void;

use super::abi::*;
use super::{boundary, boundary_op};
use crate::driver::driver;
use crate::driver::files::FileToken;
use crate::error::Error;

/// `hipFileHandleRegister`: registers the descriptor in `descr` and writes an opaque handle to
/// `*fh` (only on success). NULL arguments → `hipFileInvalidValue`; a handle type other than
/// `hipFileHandleTypeOpaqueFD` → `hipFileIONotSupported`; an `O_APPEND` descriptor →
/// `hipFileInvalidFileOpenFlag`; a descriptor already registered → `hipFileHandleAlreadyRegistered`;
/// an unusable descriptor → `hipFileInternalError`. Opens the driver implicitly.
///
/// # Safety
/// `fh` and `descr` are NULL or valid pointers.
#[no_mangle]
pub unsafe extern "C" fn hipFileHandleRegister(
    fh: *mut hipFileHandle_t,
    descr: *mut hipFileDescr_t,
) -> hipFileError_t {
    boundary_op(|| {
        if fh.is_null() || descr.is_null() {
            return Err(Error::InvalidValue("NULL handle or descriptor"));
        }
        // SAFETY: non-NULL and valid per the C contract; the type is read as a raw int, so any
        // value is safe, and a union member of type int accepts any bits.
        let (kind, fd) = unsafe { ((*descr).type_, (*descr).handle.fd) };
        if kind != hipFileHandleTypeOpaqueFD {
            return Err(Error::IoNotSupported(
                "only hipFileHandleTypeOpaqueFD is supported",
            ));
        }
        let token = driver().register_file(fd)?;
        // SAFETY: non-NULL and valid per the C contract. The token is an integer, not an
        // address: it is never dereferenced, so it carries no provenance.
        unsafe { fh.write(std::ptr::without_provenance_mut::<c_void>(token.c_handle())) };
        Ok(())
    })
}

/// `hipFileHandleDeregister`: forgets a registration. NULL, unknown or stale handles, a closed
/// driver and a handle with I/O in flight are silently ignored.
#[no_mangle]
pub extern "C" fn hipFileHandleDeregister(fh: hipFileHandle_t) {
    boundary((), || {
        if !fh.is_null() {
            driver().deregister_file(FileToken::from_c_handle(fh as usize));
        }
    })
}
