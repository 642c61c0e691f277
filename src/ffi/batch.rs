//! Batch I/O (behaviour §E). Not implemented yet: every call answers `hipFileInternalError`
//! (as upstream 0.2 does for the functions it lacks) and `hipFileBatchIODestroy` does nothing.
#![allow(non_snake_case)]

use std::ffi::c_uint;

use super::abi::*;

/// `hipFileBatchIOSetUp`: not implemented yet (`hipFileInternalError`).
///
/// # Safety
/// `batch_idp` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileBatchIOSetUp(
    _batch_idp: *mut hipFileBatchHandle_t,
    _max_nr: c_uint,
) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileBatchIOSubmit`: not implemented yet (`hipFileInternalError`).
///
/// # Safety
/// `iocbp` is NULL or valid for `nr` entries.
#[no_mangle]
pub unsafe extern "C" fn hipFileBatchIOSubmit(
    _batch_idp: hipFileBatchHandle_t,
    _nr: c_uint,
    _iocbp: *mut hipFileIOParams_t,
    _flags: c_uint,
) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileBatchIOGetStatus`: not implemented yet (`hipFileInternalError`).
///
/// # Safety
/// Pointers are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hipFileBatchIOGetStatus(
    _batch_idp: hipFileBatchHandle_t,
    _min_nr: c_uint,
    _nr: *mut c_uint,
    _iocbp: *mut hipFileIOEvents_t,
    _timeout: *mut libc::timespec,
) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileBatchIOCancel`: not implemented yet (`hipFileInternalError`).
#[no_mangle]
pub extern "C" fn hipFileBatchIOCancel(_batch_idp: hipFileBatchHandle_t) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileBatchIODestroy`: nothing to destroy yet.
#[no_mangle]
pub extern "C" fn hipFileBatchIODestroy(_batch_idp: hipFileBatchHandle_t) {}
