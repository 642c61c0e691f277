//! Driver lifetime, version, use count, error strings and driver properties.
#![allow(non_snake_case)]

use std::ffi::{c_char, c_uint};

use super::abi::*;
use super::{boundary, boundary_op, error};
use crate::driver::driver;

/// `hipFileDriverOpen`: increments the use count (behaviour §B.0). Always `hipFileSuccess`.
#[no_mangle]
pub extern "C" fn hipFileDriverOpen() -> hipFileError_t {
    boundary_op(|| {
        driver().open();
        Ok(())
    })
}

/// `hipFileDriverClose`: decrements the use count; at zero every file and buffer registration
/// is dropped. `hipFileDriverNotInitialized` when the count is already zero.
#[no_mangle]
pub extern "C" fn hipFileDriverClose() -> hipFileError_t {
    boundary_op(|| driver().close())
}

/// `hipFileUseCount`: the driver's use count (`-1` only on an internal failure).
#[no_mangle]
pub extern "C" fn hipFileUseCount() -> i64 {
    boundary(-1, || driver().use_count())
}

/// `hipFileGetVersion`: writes the API level 0.5.0 through each non-NULL pointer.
///
/// # Safety
/// Each pointer is NULL or valid for a write of an `unsigned`.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetVersion(major: *mut c_uint, minor: *mut c_uint, patch: *mut c_uint) -> hipFileError_t {
    boundary_op(|| {
        for (p, v) in [(major, HIPFILE_VERSION_MAJOR), (minor, HIPFILE_VERSION_MINOR), (patch, HIPFILE_VERSION_PATCH)] {
            if !p.is_null() {
                // SAFETY: non-NULL and valid per the C contract.
                unsafe { p.write(v) };
            }
        }
        Ok(())
    })
}

/// `hipFileGetOpErrorString`: a static description of `status` (never NULL).
#[no_mangle]
pub extern "C" fn hipFileGetOpErrorString(status: hipFileOpError_t) -> *const c_char {
    boundary(c"Internal GPU IO library error".as_ptr(), || error::op_error_string(status).as_ptr())
}

/// `hipFileDriverGetProperties`: not implemented yet (`hipFileInternalError`, as upstream).
///
/// # Safety
/// `props` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileDriverGetProperties(_props: *mut hipFileDriverProps_t) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileDriverSetPollMode`: not implemented yet (`hipFileInternalError`, as upstream).
#[no_mangle]
pub extern "C" fn hipFileDriverSetPollMode(_poll: bool, _poll_threshold_size: usize) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileDriverSetMaxDirectIOSize`: not implemented yet (`hipFileInternalError`).
#[no_mangle]
pub extern "C" fn hipFileDriverSetMaxDirectIOSize(_max_direct_io_size: usize) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileDriverSetMaxCacheSize`: not implemented yet (`hipFileInternalError`).
#[no_mangle]
pub extern "C" fn hipFileDriverSetMaxCacheSize(_max_cache_size: usize) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileDriverSetMaxPinnedMemSize`: not implemented yet (`hipFileInternalError`).
#[no_mangle]
pub extern "C" fn hipFileDriverSetMaxPinnedMemSize(_max_pinned_size: usize) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}
