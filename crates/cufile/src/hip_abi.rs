//! The few `include/hipfile.h` types this library passes to libhipfile.so.0, mirrored by hand
//! (this crate does not link the `hipfile` crate: see `engine.rs`). Only what we call is here;
//! `tests/cufile_suite.rs` includes this file and asserts every size and offset against the
//! `hipfile` crate's own definitions, which the header tests check against `hipfile.h`.
#![allow(non_camel_case_types, dead_code)]

use std::ffi::{c_int, c_uint, c_void};

/// `hipFileError_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct HipError {
    pub err: c_int,
    pub hip_drv_err: c_int,
}

/// `hipFileDescr_t` (the same layout as `CUfileDescr_t`).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct HipDescr {
    pub kind: c_int,
    pub handle: *mut c_void,
    pub fs_ops: *const c_void,
}

/// The `nvfs` part of `hipFileDriverProps_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HipPropsNvfs {
    pub major_version: c_uint,
    pub minor_version: c_uint,
    pub poll_thresh_size: u64,
    pub max_direct_io_size: u64,
    pub driver_status_flags: c_uint,
    pub driver_control_flags: c_uint,
}

/// `hipFileDriverProps_t` (72 bytes: its cache and pinned sizes are 64-bit).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HipProps {
    pub nvfs: HipPropsNvfs,
    pub feature_flags: c_uint,
    pub max_device_cache_size: u64,
    pub per_buffer_cache_size: u64,
    pub max_device_pinned_mem_size: u64,
    pub max_batch_io_count: c_uint,
    pub max_batch_io_timeout_msecs: c_uint,
}

/// Sizes of `hipFileStatsLevel1_t`, `…2_t`, `…3_t` (filled as plain bytes and re-laid into
/// the 1.19 cuFile structures).
pub(crate) const HIP_STATS_L1_SIZE: usize = 512;
pub(crate) const HIP_STATS_L2_SIZE: usize = 1024;
pub(crate) const HIP_STATS_L3_SIZE: usize = 5000;

/// `hipFileIOParams_t` and `hipFileIOEvents_t` have cuFile's layouts (64 and 24 bytes):
/// batch arrays are passed through as they are.
pub(crate) const HIP_IO_PARAMS_SIZE: usize = 64;
pub(crate) const HIP_IO_EVENTS_SIZE: usize = 24;

/// `hipFileOpError_t` values this library distinguishes.
pub(crate) const HIP_INVALID_VALUE: c_int = 5022;
pub(crate) const HIP_DRIVER_ERROR: c_int = 5011;
pub(crate) const HIP_INTERNAL_ERROR: c_int = 5030;
pub(crate) const HIP_IO_MAX_ERROR: c_int = 5039;

/// Bit numbers of `hipFileDriverProps_t` flags.
pub(crate) const HIP_ALLOW_COMPAT_MODE_BIT: c_uint = 1;
pub(crate) const HIP_USE_POLL_MODE_BIT: c_uint = 0;

/// `hipFileSizeTConfigParameter_t` / `hipFileBoolConfigParameter_t` have cuFile's first 12
/// values in the same order; these are the counts.
pub(crate) const HIP_SIZE_PARAMS: c_int = 12;
pub(crate) const HIP_BOOL_PARAMS: c_int = 12;

const _: () = {
    assert!(std::mem::size_of::<HipError>() == 8);
    assert!(std::mem::size_of::<HipDescr>() == 24);
    assert!(std::mem::size_of::<HipProps>() == 72);
};
