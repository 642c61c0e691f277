//! The types and values of NVIDIA's cuFile C ABI (`include/cufile.h`) that cross a boundary in
//! this workspace, defined once: `libcufile.so.0` serves them (`crates/cufile`), the engine
//! calls NVIDIA's library with them (`src/runtime/cufile.rs`), the simulator's fake cuFile
//! answers with them (`crates/hipsim`), and the fuzz target of `libcufile.so.0` passes them.
//!
//! Only plain data, no code that could differ between those users. The sizes and offsets are
//! asserted here (x86-64), and `tests/cufile_suite.rs` checks every one of them and every
//! `CUfileOpError` value against the header, which `tests/cufile_header.rs` checks against
//! NVIDIA's own.
#![no_std]
#![allow(non_camel_case_types)]

use core::ffi::{c_int, c_uint, c_void};
use core::mem::{offset_of, size_of};

/// Defines the `CUfileOpError` constants and [`code::ALL`], their names and values.
macro_rules! op_errors {
    ($($name:ident = $value:expr,)*) => {
        $(#[doc = concat!("`CU_FILE_", stringify!($name), "`.")]
        pub const $name: c_int = $value;)*
        /// Every value, named as the header names it without `CU_FILE_`, in the header's order.
        pub const ALL: &[(&str, c_int)] = &[$((stringify!($name), $value),)*];
    };
}

/// `CUfileOpError`: every status of cuFile 1.15 and later (5039 and up were inserted in 1.15,
/// moving `CU_FILE_IO_MAX_ERROR` from 5039 to 5050).
pub mod code {
    use core::ffi::c_int;

    op_errors! {
        SUCCESS = 0,
        DRIVER_NOT_INITIALIZED = 5001,
        DRIVER_INVALID_PROPS = 5002,
        DRIVER_UNSUPPORTED_LIMIT = 5003,
        DRIVER_VERSION_MISMATCH = 5004,
        DRIVER_VERSION_READ_ERROR = 5005,
        DRIVER_CLOSING = 5006,
        PLATFORM_NOT_SUPPORTED = 5007,
        IO_NOT_SUPPORTED = 5008,
        DEVICE_NOT_SUPPORTED = 5009,
        NVFS_DRIVER_ERROR = 5010,
        CUDA_DRIVER_ERROR = 5011,
        CUDA_POINTER_INVALID = 5012,
        CUDA_MEMORY_TYPE_INVALID = 5013,
        CUDA_POINTER_RANGE_ERROR = 5014,
        CUDA_CONTEXT_MISMATCH = 5015,
        INVALID_MAPPING_SIZE = 5016,
        INVALID_MAPPING_RANGE = 5017,
        INVALID_FILE_TYPE = 5018,
        INVALID_FILE_OPEN_FLAG = 5019,
        DIO_NOT_SET = 5020,
        INVALID_VALUE = 5022,
        MEMORY_ALREADY_REGISTERED = 5023,
        MEMORY_NOT_REGISTERED = 5024,
        PERMISSION_DENIED = 5025,
        DRIVER_ALREADY_OPEN = 5026,
        HANDLE_NOT_REGISTERED = 5027,
        HANDLE_ALREADY_REGISTERED = 5028,
        DEVICE_NOT_FOUND = 5029,
        INTERNAL_ERROR = 5030,
        GETNEWFD_FAILED = 5031,
        NVFS_SETUP_ERROR = 5033,
        IO_DISABLED = 5034,
        BATCH_SUBMIT_FAILED = 5035,
        GPU_MEMORY_PINNING_FAILED = 5036,
        BATCH_FULL = 5037,
        ASYNC_NOT_SUPPORTED = 5038,
        INTERNAL_BATCH_SETUP_ERROR = 5039,
        INTERNAL_BATCH_SUBMIT_ERROR = 5040,
        INTERNAL_BATCH_GETSTATUS_ERROR = 5041,
        INTERNAL_BATCH_CANCEL_ERROR = 5042,
        NOMEM_ERROR = 5043,
        IO_ERROR = 5044,
        INTERNAL_BUF_REGISTER_ERROR = 5045,
        HASH_OPR_ERROR = 5046,
        INVALID_CONTEXT_ERROR = 5047,
        NVFS_INTERNAL_DRIVER_ERROR = 5048,
        BATCH_NOCOMPAT_ERROR = 5049,
        IO_MAX_ERROR = 5050,
    }
}

/// `CUfileError_t` (8 bytes, returned in a register): a `CUfileOpError`, and the CUDA
/// driver's `CUresult` where it is `CU_FILE_CUDA_DRIVER_ERROR`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

/// The `nvfs` member of `CUfileDrvProps_t` (an unnamed structure in the header).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUfileDrvPropsNvfs {
    /// nvidia-fs version (0.0: no nvidia-fs).
    pub major_version: c_uint,
    pub minor_version: c_uint,
    /// KiB.
    pub poll_thresh_size: usize,
    /// KiB.
    pub max_direct_io_size: usize,
    /// `CUfileDriverStatusFlags_t` bits.
    pub dstatusflags: c_uint,
    /// `CUfileDriverControlFlags_t` bits.
    pub dcontrolflags: c_uint,
}

/// `CUfileDrvProps_t` (56 bytes; its cache and pinned sizes are 32-bit, unlike hipFile's).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUfileDrvProps_t {
    pub nvfs: CUfileDrvPropsNvfs,
    /// `CUfileFeatureFlags_t` bits.
    pub fflags: c_uint,
    /// KiB.
    pub max_device_cache_size: c_uint,
    /// KiB.
    pub per_buffer_cache_size: c_uint,
    /// KiB.
    pub max_device_pinned_mem_size: c_uint,
    /// Entries.
    pub max_batch_io_size: c_uint,
    /// Milliseconds.
    pub max_batch_io_timeout_msecs: c_uint,
}

/// `CUfileDriverStatusFlags_t` bits of `dstatusflags`.
pub const NVME_SUPPORTED: c_uint = 1 << 4;
pub const NVME_P2P_SUPPORTED: c_uint = 1 << 11;
/// `CUfileDriverControlFlags_t` bits of `dcontrolflags`.
pub const USE_POLL_MODE: c_uint = 1 << 0;
pub const ALLOW_COMPAT_MODE: c_uint = 1 << 1;

/// The `handle` union of `CUfileDescr_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union CUfileDescrHandle {
    /// `CU_FILE_HANDLE_TYPE_OPAQUE_FD` (and user-space file systems): a file descriptor.
    pub fd: c_int,
    /// `CU_FILE_HANDLE_TYPE_OPAQUE_WIN32`.
    pub handle: *mut c_void,
}

/// `CUfileDescr_t` (24 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUfileDescr_t {
    /// `CUfileFileHandleType`.
    pub type_: c_int,
    pub handle: CUfileDescrHandle,
    /// `const CUfileFSOps_t *` (user-space file systems).
    pub fs_ops: *const c_void,
}

/// `CU_FILE_HANDLE_TYPE_OPAQUE_FD`.
pub const HANDLE_TYPE_OPAQUE_FD: c_int = 1;

impl CUfileDescr_t {
    /// The descriptor of Linux file descriptor `fd`, as consumers fill it (the rest zero).
    pub const fn fd(fd: c_int) -> CUfileDescr_t {
        // The pointer-sized member first, so that no byte of the union is left undefined.
        let mut handle = CUfileDescrHandle {
            handle: core::ptr::null_mut(),
        };
        handle.fd = fd;
        CUfileDescr_t {
            type_: HANDLE_TYPE_OPAQUE_FD,
            handle,
            fs_ops: core::ptr::null(),
        }
    }
}

/// `CUfileIOVec_t` (16 bytes): one buffer of `cuFileReadv`/`cuFileWritev`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUfileIOVec_t {
    pub base: *mut c_void,
    pub len: usize,
}

/// `CUfileIOParams_t` (64 bytes): one batch entry (`mode` `CUFILE_BATCH`; the `batch` member
/// of the header's union).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUfileIOParams_t {
    /// `CUfileBatchMode_t`.
    pub mode: c_int,
    pub dev_ptr_base: *mut c_void,
    pub file_offset: i64,
    pub dev_ptr_offset: i64,
    pub size: usize,
    /// `CUfileHandle_t`.
    pub fh: *mut c_void,
    /// `CUfileOpcode_t`.
    pub opcode: c_int,
    pub cookie: *mut c_void,
}

/// `CUfileIOEvents_t` (24 bytes): one completion of `cuFileBatchIOGetStatus`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUfileIOEvents_t {
    pub cookie: *mut c_void,
    /// `CUfileStatus_t`.
    pub status: c_int,
    /// Bytes moved, or a negated error.
    pub ret: usize,
}

/// Sizes of the statistics structures in the header's (1.19) layouts, with the readv/writev
/// counters; cuFile 1.15..1.18's are 112 bytes shorter each (see crates/cufile's `version.rs`).
pub const STATS_L1_SIZE: usize = 624;
pub const STATS_L2_SIZE: usize = 1136;
pub const STATS_L3_SIZE: usize = 5112;
/// Where `CUfileStatsLevel1_t` has its readv/writev counters (`read_bytes`'s layout before them
/// is the 512 bytes of 1.15..1.18, and of hipFile's level 1).
pub const STATS_L1_READV_OFFSET: usize = 512;
/// `CUfilePerGpuStats_t`, and how many of them level 3 holds.
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
