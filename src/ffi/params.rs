//! Configuration parameters with cuFile's semantics: setters
//! work only while the driver is closed (`hipFileDriverAlreadyOpen` otherwise) and stage the
//! value for the next open; getters report the staged value while closed and the live one
//! while open; closing to zero resets every staged value.
#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, CStr};

use super::abi::*;
use super::{boundary_op, Out};
use crate::config::params::{BoolParam, SizeParam, StringParam};
use crate::driver::driver;
use crate::error::Error;

fn size_param(p: hipFileSizeTConfigParameter_t) -> crate::error::Result<SizeParam> {
    SizeParam::try_from(p).map_err(|()| Error::InvalidValue("unknown size parameter"))
}

fn bool_param(p: hipFileBoolConfigParameter_t) -> crate::error::Result<BoolParam> {
    BoolParam::try_from(p).map_err(|()| Error::InvalidValue("unknown boolean parameter"))
}

fn string_param(p: hipFileStringConfigParameter_t) -> crate::error::Result<StringParam> {
    StringParam::try_from(p).map_err(|()| Error::InvalidValue("unknown string parameter"))
}

/// `hipFileGetParameterSizeT`: NULL `value` or an unknown parameter → `hipFileInvalidValue`.
///
/// # Safety
/// `value` is NULL or valid for a write of a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetParameterSizeT(
    param: hipFileSizeTConfigParameter_t,
    value: *mut usize,
) -> hipFileError_t {
    boundary_op(|| {
        let p = size_param(param)?;
        // SAFETY: NULL or writable, per the C contract.
        let out = unsafe { Out::new(value, "NULL value") }?;
        let v = driver().params().size(p);
        out.write(usize::try_from(v).unwrap_or(usize::MAX));
        Ok(())
    })
}

/// `hipFileGetParameterBool`: NULL `value` or an unknown parameter → `hipFileInvalidValue`.
///
/// # Safety
/// `value` is NULL or valid for a write of a `bool`.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetParameterBool(
    param: hipFileBoolConfigParameter_t,
    value: *mut bool,
) -> hipFileError_t {
    boundary_op(|| {
        let p = bool_param(param)?;
        // SAFETY: NULL or writable, per the C contract.
        let out = unsafe { Out::new(value, "NULL value") }?;
        out.write(driver().params().flag(p));
        Ok(())
    })
}

/// `hipFileGetParameterString`: copies the value and its NUL into `desc_str` (`len` bytes).
/// NULL, a non-positive `len`, a buffer too small or an unknown parameter →
/// `hipFileInvalidValue` (nothing written).
///
/// # Safety
/// `desc_str` is NULL or valid for writes of `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetParameterString(
    param: hipFileStringConfigParameter_t,
    desc_str: *mut c_char,
    len: c_int,
) -> hipFileError_t {
    boundary_op(|| {
        let p = string_param(param)?;
        if desc_str.is_null() || len <= 0 {
            return Err(Error::InvalidValue("NULL or empty output buffer"));
        }
        let v = driver().params().string(p).to_string();
        let bytes = v.as_bytes();
        if bytes.len() + 1 > len as usize {
            return Err(Error::InvalidValue("output buffer too small"));
        }
        // SAFETY: `len` bytes are writable per the C contract and bytes.len() + 1 <= len.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), desc_str, bytes.len());
            desc_str.add(bytes.len()).write(0);
        }
        Ok(())
    })
}

/// `hipFileSetParameterSizeT`: stages `value` for the next open. `hipFileDriverAlreadyOpen`
/// while open; `hipFileInvalidValue` for an unknown parameter or a value out of range.
#[no_mangle]
pub extern "C" fn hipFileSetParameterSizeT(
    param: hipFileSizeTConfigParameter_t,
    value: usize,
) -> hipFileError_t {
    boundary_op(|| {
        let p = size_param(param)?;
        driver().stage(|s| {
            if !p.valid(value as u64) {
                return Err(Error::InvalidValue("parameter value out of range"));
            }
            s.sizes[p as usize] = Some(value as u64);
            Ok(())
        })
    })
}

/// `hipFileSetParameterBool`: stages `value` for the next open (`hipFileDriverAlreadyOpen`
/// while open).
#[no_mangle]
pub extern "C" fn hipFileSetParameterBool(
    param: hipFileBoolConfigParameter_t,
    value: bool,
) -> hipFileError_t {
    boundary_op(|| {
        let p = bool_param(param)?;
        driver().stage(|s| {
            s.bools[p as usize] = Some(value);
            Ok(())
        })
    })
}

/// `hipFileSetParameterString`: stages `desc_str` for the next open. NULL, non-UTF-8 text or
/// a log directory that does not exist → `hipFileInvalidValue`; `hipFileDriverAlreadyOpen`
/// while open.
///
/// # Safety
/// `desc_str` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hipFileSetParameterString(
    param: hipFileStringConfigParameter_t,
    desc_str: *const c_char,
) -> hipFileError_t {
    boundary_op(|| {
        let p = string_param(param)?;
        if desc_str.is_null() {
            return Err(Error::InvalidValue("NULL string"));
        }
        // SAFETY: non-NULL and NUL-terminated per the C contract.
        let v = unsafe { CStr::from_ptr(desc_str) }
            .to_str()
            .map_err(|_| Error::InvalidValue("not UTF-8"))?
            .to_string();
        driver().stage(|s| {
            if !p.valid(&v) {
                return Err(Error::InvalidValue("the log directory does not exist"));
            }
            s.strings[p as usize] = Some(v);
            Ok(())
        })
    })
}
