//! Configuration parameters (behaviour §A.7, contract §7). Not implemented yet: every call
//! answers `hipFileInternalError`, as upstream does.
#![allow(non_snake_case)]

use std::ffi::{c_char, c_int};

use super::abi::*;

/// `hipFileGetParameterSizeT`: not implemented yet (`hipFileInternalError`).
///
/// # Safety
/// `value` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetParameterSizeT(_param: hipFileSizeTConfigParameter_t, _value: *mut usize) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileGetParameterBool`: not implemented yet (`hipFileInternalError`).
///
/// # Safety
/// `value` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetParameterBool(_param: hipFileBoolConfigParameter_t, _value: *mut bool) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileGetParameterString`: not implemented yet (`hipFileInternalError`).
///
/// # Safety
/// `desc_str` is NULL or valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetParameterString(
    _param: hipFileStringConfigParameter_t,
    _desc_str: *mut c_char,
    _len: c_int,
) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileSetParameterSizeT`: not implemented yet (`hipFileInternalError`).
#[no_mangle]
pub extern "C" fn hipFileSetParameterSizeT(_param: hipFileSizeTConfigParameter_t, _value: usize) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileSetParameterBool`: not implemented yet (`hipFileInternalError`).
#[no_mangle]
pub extern "C" fn hipFileSetParameterBool(_param: hipFileBoolConfigParameter_t, _value: bool) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}

/// `hipFileSetParameterString`: not implemented yet (`hipFileInternalError`).
///
/// # Safety
/// `desc_str` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hipFileSetParameterString(_param: hipFileStringConfigParameter_t, _desc_str: *const c_char) -> hipFileError_t {
    hipFileError_t::op(hipFileInternalError)
}
