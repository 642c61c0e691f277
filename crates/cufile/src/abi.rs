//! The types and values of `include/cufile.h` that cross our boundary, with their sizes and
//! offsets asserted (the same numbers the C layout asserts check against both headers).
#![allow(non_camel_case_types)]

use std::ffi::{c_int, c_uint, c_void};
use std::mem::{offset_of, size_of};

/// `CUfileOpError` values (the status codes consumers compare against).
pub mod code {
    use std::ffi::c_int;
    pub const DRIVER_NOT_INITIALIZED: c_int = 5001;
    pub const DRIVER_UNSUPPORTED_LIMIT: c_int = 5003;
    pub const DRIVER_CLOSING: c_int = 5006;
    pub const PLATFORM_NOT_SUPPORTED: c_int = 5007;
    pub const IO_NOT_SUPPORTED: c_int = 5008;
    pub const CUDA_DRIVER_ERROR: c_int = 5011;
    pub const INVALID_MAPPING_RANGE: c_int = 5017;
    pub const INVALID_FILE_TYPE: c_int = 5018;
    pub const INVALID_FILE_OPEN_FLAG: c_int = 5019;
    pub const INVALID_VALUE: c_int = 5022;
    pub const DRIVER_ALREADY_OPEN: c_int = 5026;
    pub const INTERNAL_ERROR: c_int = 5030;
    pub const INTERNAL_BATCH_SUBMIT_ERROR: c_int = 5040;
    pub const INTERNAL_BATCH_GETSTATUS_ERROR: c_int = 5041;
}

/// `CUDA_ERROR_NOT_INITIALIZED`: the `cu_err` of calls that need CUDA where there is none.
pub const CUDA_ERROR_NOT_INITIALIZED: c_int = 3;

/// `CUfileError_t` (8 bytes, returned in a register).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CUfileError_t {
    pub err: c_int,
    pub cu_err: c_int,
}

impl CUfileError_t {
    pub const SUCCESS: CUfileError_t = CUfileError_t { err: 0, cu_err: 0 };

    /// A cuFile status with `cu_err` 0.
    pub const fn op(err: c_int) -> CUfileError_t {
        CUfileError_t { err, cu_err: 0 }
    }
}

/// The `nvfs` part of `CUfileDrvProps_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUfileDrvPropsNvfs {
    pub major_version: c_uint,
    pub minor_version: c_uint,
    pub poll_thresh_size: usize,
    pub max_direct_io_size: usize,
    pub dstatusflags: c_uint,
    pub dcontrolflags: c_uint,
}

/// `CUfileDrvProps_t` (56 bytes; note the 32-bit sizes, unlike hipFile's).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUfileDrvProps_t {
    pub nvfs: CUfileDrvPropsNvfs,
    pub fflags: c_uint,
    pub max_device_cache_size: c_uint,
    pub per_buffer_cache_size: c_uint,
    pub max_device_pinned_mem_size: c_uint,
    pub max_batch_io_size: c_uint,
    pub max_batch_io_timeout_msecs: c_uint,
}

/// `CUfileDescr_t` (24 bytes): `type`, the `int fd` / `void *handle` union, `fs_ops`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUfileDescr_t {
    pub kind: c_int,
    pub handle: *mut c_void,
    pub fs_ops: *const c_void,
}

/// `CU_FILE_HANDLE_TYPE_OPAQUE_FD`.
pub const HANDLE_TYPE_OPAQUE_FD: c_int = 1;

/// `CUfileIOVec_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUfileIOVec_t {
    pub base: *mut c_void,
    pub len: usize,
}

/// `CUfileIOParams_t` (64 bytes), byte for byte `hipFileIOParams_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUfileIOParams_t {
    pub mode: c_int,
    pub dev_ptr_base: *mut c_void,
    pub file_offset: i64,
    pub dev_ptr_offset: i64,
    pub size: usize,
    pub fh: *mut c_void,
    pub opcode: c_int,
    pub cookie: *mut c_void,
}

/// `CUfileIOEvents_t` (24 bytes), byte for byte `hipFileIOEvents_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUfileIOEvents_t {
    pub cookie: *mut c_void,
    pub status: c_int,
    pub ret: usize,
}

/// Sizes of the statistics structures at API level 1.19 (with the readv/writev counters).
pub const STATS_L1_SIZE: usize = 624;
pub const STATS_L2_SIZE: usize = 1136;
pub const STATS_L3_SIZE: usize = 5112;
/// Where `CUfileStatsLevel1_t` has its readv/writev counters (after the 512 bytes it shares
/// with hipFile's level 1).
pub const STATS_L1_READV_OFFSET: usize = 512;
/// `CUfilePerGpuStats_t` and the number of them in level 3.
pub const PER_GPU_SIZE: usize = 248;
pub const MAX_GPUS: usize = 16;

const _: () = {
    assert!(size_of::<CUfileError_t>() == 8);
    assert!(size_of::<CUfileDrvPropsNvfs>() == 32);
    assert!(size_of::<CUfileDrvProps_t>() == 56);
    assert!(offset_of!(CUfileDrvProps_t, fflags) == 32);
    assert!(offset_of!(CUfileDrvProps_t, max_batch_io_timeout_msecs) == 52);
    assert!(size_of::<CUfileDescr_t>() == 24);
    assert!(offset_of!(CUfileDescr_t, handle) == 8);
    assert!(offset_of!(CUfileDescr_t, fs_ops) == 16);
    assert!(size_of::<CUfileIOVec_t>() == 16);
    assert!(size_of::<CUfileIOParams_t>() == 64);
    assert!(offset_of!(CUfileIOParams_t, dev_ptr_base) == 8);
    assert!(offset_of!(CUfileIOParams_t, size) == 32);
    assert!(offset_of!(CUfileIOParams_t, fh) == 40);
    assert!(offset_of!(CUfileIOParams_t, opcode) == 48);
    assert!(offset_of!(CUfileIOParams_t, cookie) == 56);
    assert!(size_of::<CUfileIOEvents_t>() == 24);
    assert!(offset_of!(CUfileIOEvents_t, status) == 8);
    assert!(offset_of!(CUfileIOEvents_t, ret) == 16);
    assert!(STATS_L2_SIZE == STATS_L1_SIZE + 2 * 32 * 8);
    assert!(STATS_L3_SIZE == STATS_L2_SIZE + 8 + MAX_GPUS * PER_GPU_SIZE);
};
