//! In-process statistics (behaviour §F.5). Not implemented yet: NULL → `hipFileInvalidValue`,
//! otherwise `hipFileInternalError` ("statistics unavailable").
#![allow(non_snake_case)]

use super::abi::*;

fn unavailable<T>(p: *mut T) -> hipFileError_t {
    if p.is_null() {
        hipFileError_t::op(hipFileInvalidValue)
    } else {
        hipFileError_t::op(hipFileInternalError)
    }
}

/// `hipFileGetStatsL1`.
///
/// # Safety
/// `stats` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetStatsL1(stats: *mut hipFileStatsLevel1_t) -> hipFileError_t {
    unavailable(stats)
}

/// `hipFileGetStatsL2`.
///
/// # Safety
/// `stats` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetStatsL2(stats: *mut hipFileStatsLevel2_t) -> hipFileError_t {
    unavailable(stats)
}

/// `hipFileGetStatsL3`.
///
/// # Safety
/// `stats` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetStatsL3(stats: *mut hipFileStatsLevel3_t) -> hipFileError_t {
    unavailable(stats)
}
