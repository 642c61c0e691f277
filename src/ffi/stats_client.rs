//! The process-statistics client API used by `ais-stats` (behaviour §F.4). Not implemented
//! yet: argument errors are reported, everything else answers
//! `hipFileStatsTargetProcessNotAccessible`.
#![allow(non_snake_case)]

use std::ffi::c_int;

use super::abi::*;

/// `hipFileStatsCreateContext`.
///
/// # Safety
/// `context` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsCreateContext(context: *mut *mut hipFileStatsContext_t, target_pid: c_int) -> hipFileStatsError_t {
    if context.is_null() {
        return hipFileStatsInvalidArgument;
    }
    // SAFETY: non-NULL and valid per the C contract.
    unsafe { context.write(std::ptr::null_mut()) };
    if target_pid <= 0 {
        return hipFileStatsInvalidArgument;
    }
    hipFileStatsTargetProcessNotAccessible
}

/// `hipFileStatsCloseContext`.
///
/// # Safety
/// `context` is NULL or came from `hipFileStatsCreateContext`.
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsCloseContext(_context: *mut hipFileStatsContext_t) {}

/// `hipFileStatsConnectToTargetProcess`.
///
/// # Safety
/// `context` is NULL or came from `hipFileStatsCreateContext`.
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsConnectToTargetProcess(context: *mut hipFileStatsContext_t) -> hipFileStatsError_t {
    if context.is_null() {
        return hipFileStatsInvalidArgument;
    }
    hipFileStatsTargetProcessNotAccessible
}

/// `hipFileStatsPollTargetProcess`.
///
/// # Safety
/// `context` is NULL or came from `hipFileStatsCreateContext`.
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsPollTargetProcess(context: *const hipFileStatsContext_t, _block: bool) -> hipFileStatsError_t {
    if context.is_null() {
        return hipFileStatsInvalidArgument;
    }
    hipFileStatsTargetProcessNotAccessible
}

/// `hipFileStatsGenerateReport`.
///
/// # Safety
/// `context` is NULL or came from `hipFileStatsCreateContext`.
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsGenerateReport(context: *const hipFileStatsContext_t, fd: c_int) -> hipFileStatsError_t {
    if context.is_null() || fd < 0 {
        return hipFileStatsInvalidArgument;
    }
    hipFileStatsReportGenerationFailed
}
