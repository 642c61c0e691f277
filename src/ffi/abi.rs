//! `#[repr(C)]` mirrors of `include/hipfile.h` (API level 0.5.0).
//!
//! C enums are plain `int`s here: values arriving from C go through `TryFrom` into Rust enums,
//! so an out-of-range value is an error, never undefined behaviour. Every size and offset the
//! header promises is asserted at compile time below, and `tests/c/abi_asserts.c` asserts the
//! same numbers on the C side.
#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    missing_docs
)]

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::mem::{offset_of, size_of};

/// `hoff_t`: `off_t`, a signed 64-bit file offset on x86-64 Linux.
pub type hoff_t = i64;
/// `hipError_t`: HIP's error enum (4 bytes).
pub type hipError_t = c_int;
/// `hipStream_t`: an opaque stream pointer (`CUstream` on NVIDIA).
pub type hipStream_t = *mut c_void;
/// `hipFileHandle_t`: opaque file handle token (never dereferenced).
pub type hipFileHandle_t = *mut c_void;
/// `hipFileBatchHandle_t`: opaque batch handle token (never dereferenced).
pub type hipFileBatchHandle_t = *mut c_void;

pub const HIPFILE_VERSION_MAJOR: c_uint = 0;
pub const HIPFILE_VERSION_MINOR: c_uint = 5;
pub const HIPFILE_VERSION_PATCH: c_uint = 0;
pub const HIPFILE_BASE_ERR: c_int = 5000;
pub const HIPFILE_RDMA_REGISTER: c_int = 1;
pub const HIPFILE_RDMA_RELAXED_ORDERING: c_int = 1 << 1;
pub const HIPFILE_STREAM_FIXED_BUF_OFFSET: c_uint = 1;
pub const HIPFILE_STREAM_FIXED_FILE_OFFSET: c_uint = 1 << 1;
pub const HIPFILE_STREAM_FIXED_FILE_SIZE: c_uint = 1 << 2;
pub const HIPFILE_STREAM_PAGE_ALIGNED_INPUTS: c_uint = 1 << 3;
pub const HIPFILE_STREAM_FLAGS_MASK: c_uint = 0xf;
pub const HIPFILE_MAX_GPUS: usize = 16;
pub const HIPFILE_GPU_UUID_LEN: usize = 16;

// ---- hipFileOpError_t ----------------------------------------------------------------
pub type hipFileOpError_t = c_int;
pub const hipFileSuccess: hipFileOpError_t = 0;
pub const hipFileDriverNotInitialized: hipFileOpError_t = 5001;
pub const hipFileDriverInvalidProps: hipFileOpError_t = 5002;
pub const hipFileDriverUnsupportedLimit: hipFileOpError_t = 5003;
pub const hipFileDriverVersionMismatch: hipFileOpError_t = 5004;
pub const hipFileDriverVersionReadError: hipFileOpError_t = 5005;
pub const hipFileDriverClosing: hipFileOpError_t = 5006;
pub const hipFilePlatformNotSupported: hipFileOpError_t = 5007;
pub const hipFileIONotSupported: hipFileOpError_t = 5008;
pub const hipFileDeviceNotSupported: hipFileOpError_t = 5009;
pub const hipFileDriverError: hipFileOpError_t = 5010;
pub const hipFileHipDriverError: hipFileOpError_t = 5011;
pub const hipFileHipPointerInvalid: hipFileOpError_t = 5012;
pub const hipFileHipMemoryTypeInvalid: hipFileOpError_t = 5013;
pub const hipFileHipPointerRangeError: hipFileOpError_t = 5014;
pub const hipFileHipContextMismatch: hipFileOpError_t = 5015;
pub const hipFileInvalidMappingSize: hipFileOpError_t = 5016;
pub const hipFileInvalidMappingRange: hipFileOpError_t = 5017;
pub const hipFileInvalidFileType: hipFileOpError_t = 5018;
pub const hipFileInvalidFileOpenFlag: hipFileOpError_t = 5019;
pub const hipFileDIONotSet: hipFileOpError_t = 5020;
pub const hipFileInvalidValue: hipFileOpError_t = 5022;
pub const hipFileMemoryAlreadyRegistered: hipFileOpError_t = 5023;
pub const hipFileMemoryNotRegistered: hipFileOpError_t = 5024;
pub const hipFilePermissionDenied: hipFileOpError_t = 5025;
pub const hipFileDriverAlreadyOpen: hipFileOpError_t = 5026;
pub const hipFileHandleNotRegistered: hipFileOpError_t = 5027;
pub const hipFileHandleAlreadyRegistered: hipFileOpError_t = 5028;
pub const hipFileDeviceNotFound: hipFileOpError_t = 5029;
pub const hipFileInternalError: hipFileOpError_t = 5030;
pub const hipFileGetNewFDFailed: hipFileOpError_t = 5031;
pub const hipFileDriverSetupError: hipFileOpError_t = 5033;
pub const hipFileIODisabled: hipFileOpError_t = 5034;
pub const hipFileBatchSubmitFailed: hipFileOpError_t = 5035;
pub const hipFileGPUMemoryPinningFailed: hipFileOpError_t = 5036;
pub const hipFileBatchFull: hipFileOpError_t = 5037;
pub const hipFileAsyncNotSupported: hipFileOpError_t = 5038;
pub const hipFileIOMaxError: hipFileOpError_t = 5039;

/// `hipFileError_t`: returned by value (8 bytes, in RAX on SysV x86-64).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hipFileError_t {
    pub err: hipFileOpError_t,
    pub hip_drv_err: hipError_t,
}

impl hipFileError_t {
    /// `{err, hipSuccess}`.
    pub const fn op(err: hipFileOpError_t) -> Self {
        hipFileError_t {
            err,
            hip_drv_err: 0,
        }
    }
    /// `{hipFileSuccess, hipSuccess}`.
    pub const SUCCESS: Self = Self::op(hipFileSuccess);
}

// ---- driver properties --------------------------------------------------------------
pub type hipFileDriverStatusFlags_t = c_int;
pub const hipFileLustreSupported: hipFileDriverStatusFlags_t = 0;
pub const hipFileWekaFSSupported: hipFileDriverStatusFlags_t = 1;
pub const hipFileNFSSupported: hipFileDriverStatusFlags_t = 2;
pub const hipFileGPFSSupported: hipFileDriverStatusFlags_t = 3;
pub const hipFileNVMeSupported: hipFileDriverStatusFlags_t = 4;
pub const hipFileNVMeoFSupported: hipFileDriverStatusFlags_t = 5;
pub const hipFileSCSISupported: hipFileDriverStatusFlags_t = 6;
pub const hipFileScaleFluxCSDSupported: hipFileDriverStatusFlags_t = 7;
pub const hipFileNVMeshSupported: hipFileDriverStatusFlags_t = 8;
pub const hipFileBeeGFSSupported: hipFileDriverStatusFlags_t = 9;
pub const hipFileNVMeP2PSupported: hipFileDriverStatusFlags_t = 11;
pub const hipFileScatefsSupported: hipFileDriverStatusFlags_t = 12;

pub type hipFileDriverControlFlags_t = c_int;
pub const hipFileUsePollMode: hipFileDriverControlFlags_t = 0;
pub const hipFileAllowCompatMode: hipFileDriverControlFlags_t = 1;

pub type hipFileFeatureFlags_t = c_int;
pub const hipFileDynRoutingSupported: hipFileFeatureFlags_t = 0;
pub const hipFileBatchIOSupported: hipFileFeatureFlags_t = 1;
pub const hipFileStreamsSupported: hipFileFeatureFlags_t = 2;
pub const hipFileParallelIOSupported: hipFileFeatureFlags_t = 3;

/// The anonymous `nvfs` member of `hipFileDriverProps_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipFileDriverPropsNvfs {
    pub major_version: c_uint,
    pub minor_version: c_uint,
    pub poll_thresh_size: u64,
    pub max_direct_io_size: u64,
    pub driver_status_flags: c_uint,
    pub driver_control_flags: c_uint,
}

/// `hipFileDriverProps_t` (72 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipFileDriverProps_t {
    pub nvfs: hipFileDriverPropsNvfs,
    pub feature_flags: c_uint,
    pub max_device_cache_size: u64,
    pub per_buffer_cache_size: u64,
    pub max_device_pinned_mem_size: u64,
    pub max_batch_io_count: c_uint,
    pub max_batch_io_timeout_msecs: c_uint,
}

// ---- file handles ------------------------------------------------------------------
/// `hipFileRDMAInfo_t` (16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipFileRDMAInfo_t {
    pub version: c_int,
    pub desc_len: c_int,
    pub desc_str: *const c_char,
}

/// `hipFileFSOps_t`: five function pointers (40 bytes). Ignored by the library.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipFileFSOps_t {
    pub fs_type: Option<unsafe extern "C" fn(*mut c_void) -> *const c_char>,
    pub getRDMADeviceList:
        Option<unsafe extern "C" fn(*mut c_void, *mut *mut libc::sockaddr) -> c_int>,
    pub getRDMADevicePriority: Option<
        unsafe extern "C" fn(*mut c_void, *mut c_char, usize, hoff_t, *mut libc::sockaddr) -> c_int,
    >,
    pub read: Option<
        unsafe extern "C" fn(
            *mut c_void,
            *mut c_char,
            usize,
            hoff_t,
            *mut hipFileRDMAInfo_t,
        ) -> isize,
    >,
    pub write: Option<
        unsafe extern "C" fn(
            *mut c_void,
            *const c_char,
            usize,
            hoff_t,
            *mut hipFileRDMAInfo_t,
        ) -> isize,
    >,
}

pub type hipFileFileHandleType_t = c_int;
pub const hipFileHandleTypeOpaqueFD: hipFileFileHandleType_t = 1;
pub const hipFileHandleTypeOpaqueWin32: hipFileFileHandleType_t = 2;
pub const hipFileHandleTypeUserspaceFS: hipFileFileHandleType_t = 3;

/// The `handle` union of `hipFileDescr_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hipFileDescrHandle {
    pub fd: c_int,
    pub hFile: *mut c_void,
}

/// `hipFileDescr_t` (24 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipFileDescr_t {
    pub type_: hipFileFileHandleType_t,
    pub handle: hipFileDescrHandle,
    pub fs_ops: *const hipFileFSOps_t,
}

// ---- batch -------------------------------------------------------------------------
pub type hipFileOpcode_t = c_int;
pub const hipFileBatchRead: hipFileOpcode_t = 0;
pub const hipFileBatchWrite: hipFileOpcode_t = 1;

pub type hipFileStatus_t = c_int;
pub const hipFileWaiting: hipFileStatus_t = 1;
pub const hipFilePending: hipFileStatus_t = 2;
pub const hipFileInvalid: hipFileStatus_t = 4;
pub const hipFileCanceled: hipFileStatus_t = 8;
pub const hipFileComplete: hipFileStatus_t = 16;
pub const hipFileTimeout: hipFileStatus_t = 32;
pub const hipFileFailed: hipFileStatus_t = 64;

pub type hipFileBatchMode_t = c_int;
pub const hipFileBatch: hipFileBatchMode_t = 1;

/// The `batch` member of `hipFileIOParams_t::u`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipFileIOParamsBatch {
    pub devPtr_base: *mut c_void,
    pub file_offset: i64,
    pub devPtr_offset: i64,
    pub size: usize,
}

/// The `u` union of `hipFileIOParams_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hipFileIOParamsU {
    pub batch: hipFileIOParamsBatch,
}

/// `hipFileIOParams_t` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipFileIOParams_t {
    pub mode: hipFileBatchMode_t,
    pub u: hipFileIOParamsU,
    pub fh: hipFileHandle_t,
    pub opcode: hipFileOpcode_t,
    pub cookie: *mut c_void,
}

/// `hipFileIOEvents_t` (24 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipFileIOEvents_t {
    pub cookie: *mut c_void,
    pub status: hipFileStatus_t,
    pub ret: usize,
}

// ---- parameters --------------------------------------------------------------------
pub type hipFileSizeTConfigParameter_t = c_int;
pub const hipFileParamProfileStats: hipFileSizeTConfigParameter_t = 0;
pub const hipFileParamExecutionMaxIOQueueDepth: hipFileSizeTConfigParameter_t = 1;
pub const hipFileParamExecutionMaxIOThreads: hipFileSizeTConfigParameter_t = 2;
pub const hipFileParamExecutionMinIOThresholdSizeKB: hipFileSizeTConfigParameter_t = 3;
pub const hipFileParamExecutionMaxRequestParallelism: hipFileSizeTConfigParameter_t = 4;
pub const hipFileParamPropertiesMaxDirectIOSizeKB: hipFileSizeTConfigParameter_t = 5;
pub const hipFileParamPropertiesMaxDeviceCacheSizeKB: hipFileSizeTConfigParameter_t = 6;
pub const hipFileParamPropertiesPerBufferCacheSizeKB: hipFileSizeTConfigParameter_t = 7;
pub const hipFileParamPropertiesMaxDevicePinnedMemSizeKB: hipFileSizeTConfigParameter_t = 8;
pub const hipFileParamPropertiesIOBatchsize: hipFileSizeTConfigParameter_t = 9;
pub const hipFileParamPollthresholdSizeKB: hipFileSizeTConfigParameter_t = 10;
pub const hipFileParamPropertiesBatchIOTimeoutMs: hipFileSizeTConfigParameter_t = 11;

pub type hipFileBoolConfigParameter_t = c_int;
pub const hipFileParamPropertiesUsePollMode: hipFileBoolConfigParameter_t = 0;
pub const hipFileParamPropertiesAllowCompatMode: hipFileBoolConfigParameter_t = 1;
pub const hipFileParamForceCompatMode: hipFileBoolConfigParameter_t = 2;
pub const hipFileParamFsMiscApiCheckAggressive: hipFileBoolConfigParameter_t = 3;
pub const hipFileParamExecutionParallelIO: hipFileBoolConfigParameter_t = 4;
pub const hipFileParamProfileNvtx: hipFileBoolConfigParameter_t = 5;
pub const hipFileParamPropertiesAllowSystemMemory: hipFileBoolConfigParameter_t = 6;
pub const hipFileParamUsePcip2pdma: hipFileBoolConfigParameter_t = 7;
pub const hipFileParamPreferIOUring: hipFileBoolConfigParameter_t = 8;
pub const hipFileParamForceOdirectMode: hipFileBoolConfigParameter_t = 9;
pub const hipFileParamSkipTopologyDetection: hipFileBoolConfigParameter_t = 10;
pub const hipFileParamStreamMemopsBypass: hipFileBoolConfigParameter_t = 11;

pub type hipFileStringConfigParameter_t = c_int;
pub const hipFileParamLoggingLevel: hipFileStringConfigParameter_t = 0;
pub const hipFileParamEnvLogfilePath: hipFileStringConfigParameter_t = 1;
pub const hipFileParamLogDir: hipFileStringConfigParameter_t = 2;

// ---- in-process statistics -----------------------------------------------------------
/// `hipFileOpCounter_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipFileOpCounter_t {
    pub ok: u64,
    pub err: u64,
}

/// `hipFileStatsLevel1_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipFileStatsLevel1_t {
    pub read_ops: hipFileOpCounter_t,
    pub write_ops: hipFileOpCounter_t,
    pub hdl_register_ops: hipFileOpCounter_t,
    pub hdl_deregister_ops: hipFileOpCounter_t,
    pub buf_register_ops: hipFileOpCounter_t,
    pub buf_deregister_ops: hipFileOpCounter_t,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_bw_bytes_per_sec: u64,
    pub write_bw_bytes_per_sec: u64,
    pub read_lat_avg_us: u64,
    pub write_lat_avg_us: u64,
    pub read_ops_per_sec: u64,
    pub write_ops_per_sec: u64,
    pub read_lat_sum_us: u64,
    pub write_lat_sum_us: u64,
    pub batch_submit_ops: hipFileOpCounter_t,
    pub batch_complete_ops: hipFileOpCounter_t,
    pub batch_setup_ops: hipFileOpCounter_t,
    pub batch_cancel_ops: hipFileOpCounter_t,
    pub batch_destroy_ops: hipFileOpCounter_t,
    pub batch_enqueued_ops: hipFileOpCounter_t,
    pub batch_posix_enqueued_ops: hipFileOpCounter_t,
    pub batch_processed_ops: hipFileOpCounter_t,
    pub batch_posix_processed_ops: hipFileOpCounter_t,
    pub batch_nvfs_submit_ops: hipFileOpCounter_t,
    pub batch_p2p_submit_ops: hipFileOpCounter_t,
    pub batch_aio_submit_ops: hipFileOpCounter_t,
    pub batch_iouring_submit_ops: hipFileOpCounter_t,
    pub batch_mixed_io_submit_ops: hipFileOpCounter_t,
    pub batch_total_submit_ops: hipFileOpCounter_t,
    pub batch_read_bytes: u64,
    pub batch_write_bytes: u64,
    pub batch_read_bw_bytes: u64,
    pub batch_write_bw_bytes: u64,
    pub batch_submit_lat_avg_us: u64,
    pub batch_completion_lat_avg_us: u64,
    pub batch_submit_ops_per_sec: u64,
    pub batch_complete_ops_per_sec: u64,
    pub batch_submit_lat_sum_us: u64,
    pub batch_completion_lat_sum_us: u64,
    pub last_batch_read_bytes: u64,
    pub last_batch_write_bytes: u64,
}

/// `hipFileStatsLevel2_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipFileStatsLevel2_t {
    pub basic: hipFileStatsLevel1_t,
    pub read_size_kb_hist: [u64; 32],
    pub write_size_kb_hist: [u64; 32],
}

/// `hipFilePerGpuStats_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipFilePerGpuStats_t {
    pub uuid: [c_char; HIPFILE_GPU_UUID_LEN],
    pub read_bytes: u64,
    pub read_bw_bytes_per_sec: u64,
    pub read_utilization: u64,
    pub read_duration_us: u64,
    pub n_total_reads: u64,
    pub n_p2p_reads: u64,
    pub n_nvfs_reads: u64,
    pub n_posix_reads: u64,
    pub n_unaligned_reads: u64,
    pub n_dr_reads: u64,
    pub n_sparse_regions: u64,
    pub n_inline_regions: u64,
    pub n_reads_err: u64,
    pub write_bytes: u64,
    pub write_bw_bytes_per_sec: u64,
    pub write_utilization: u64,
    pub write_duration_us: u64,
    pub n_total_writes: u64,
    pub n_p2p_writes: u64,
    pub n_nvfs_writes: u64,
    pub n_posix_writes: u64,
    pub n_unaligned_writes: u64,
    pub n_dr_writes: u64,
    pub n_writes_err: u64,
    pub n_mmap: u64,
    pub n_mmap_ok: u64,
    pub n_mmap_err: u64,
    pub n_mmap_free: u64,
    pub reg_bytes: u64,
}

/// `hipFileStatsLevel3_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipFileStatsLevel3_t {
    pub detailed: hipFileStatsLevel2_t,
    pub num_gpus: u32,
    pub per_gpu_stats: [hipFilePerGpuStats_t; HIPFILE_MAX_GPUS],
}

// ---- process-stats client API ------------------------------------------
pub type hipFileStatsError_t = c_int;
pub const hipFileStatsSuccess: hipFileStatsError_t = 0;
pub const hipFileStatsInvalidArgument: hipFileStatsError_t = 1;
pub const hipFileStatsTargetProcessNotFound: hipFileStatsError_t = 2;
pub const hipFileStatsTargetProcessNotAccessible: hipFileStatsError_t = 3;
pub const hipFileStatsReportGenerationFailed: hipFileStatsError_t = 4;

/// Opaque `hipFileStatsContext_t`; only pointers to it cross the boundary.
#[repr(C)]
pub struct hipFileStatsContext_t {
    _private: [u8; 0],
}

// ---- layout assertions -----------------------------------------------------------------
const _: () = {
    assert!(size_of::<hipFileError_t>() == 8);
    assert!(offset_of!(hipFileError_t, err) == 0);
    assert!(offset_of!(hipFileError_t, hip_drv_err) == 4);

    assert!(size_of::<hipFileDriverPropsNvfs>() == 32);
    assert!(offset_of!(hipFileDriverPropsNvfs, major_version) == 0);
    assert!(offset_of!(hipFileDriverPropsNvfs, minor_version) == 4);
    assert!(offset_of!(hipFileDriverPropsNvfs, poll_thresh_size) == 8);
    assert!(offset_of!(hipFileDriverPropsNvfs, max_direct_io_size) == 16);
    assert!(offset_of!(hipFileDriverPropsNvfs, driver_status_flags) == 24);
    assert!(offset_of!(hipFileDriverPropsNvfs, driver_control_flags) == 28);
    assert!(size_of::<hipFileDriverProps_t>() == 72);
    assert!(offset_of!(hipFileDriverProps_t, feature_flags) == 32);
    assert!(offset_of!(hipFileDriverProps_t, max_device_cache_size) == 40);
    assert!(offset_of!(hipFileDriverProps_t, per_buffer_cache_size) == 48);
    assert!(offset_of!(hipFileDriverProps_t, max_device_pinned_mem_size) == 56);
    assert!(offset_of!(hipFileDriverProps_t, max_batch_io_count) == 64);
    assert!(offset_of!(hipFileDriverProps_t, max_batch_io_timeout_msecs) == 68);

    assert!(size_of::<hipFileRDMAInfo_t>() == 16);
    assert!(offset_of!(hipFileRDMAInfo_t, desc_len) == 4);
    assert!(offset_of!(hipFileRDMAInfo_t, desc_str) == 8);
    assert!(size_of::<hipFileFSOps_t>() == 40);
    assert!(size_of::<hipFileDescr_t>() == 24);
    assert!(offset_of!(hipFileDescr_t, type_) == 0);
    assert!(offset_of!(hipFileDescr_t, handle) == 8);
    assert!(offset_of!(hipFileDescr_t, fs_ops) == 16);

    assert!(size_of::<hipFileIOParams_t>() == 64);
    assert!(offset_of!(hipFileIOParams_t, mode) == 0);
    assert!(offset_of!(hipFileIOParams_t, u) == 8);
    assert!(offset_of!(hipFileIOParamsBatch, devPtr_base) == 0);
    assert!(offset_of!(hipFileIOParamsBatch, file_offset) == 8);
    assert!(offset_of!(hipFileIOParamsBatch, devPtr_offset) == 16);
    assert!(offset_of!(hipFileIOParamsBatch, size) == 24);
    assert!(offset_of!(hipFileIOParams_t, fh) == 40);
    assert!(offset_of!(hipFileIOParams_t, opcode) == 48);
    assert!(offset_of!(hipFileIOParams_t, cookie) == 56);
    assert!(size_of::<hipFileIOEvents_t>() == 24);
    assert!(offset_of!(hipFileIOEvents_t, cookie) == 0);
    assert!(offset_of!(hipFileIOEvents_t, status) == 8);
    assert!(offset_of!(hipFileIOEvents_t, ret) == 16);

    assert!(size_of::<hipFileOpCounter_t>() == 16);
    assert!(size_of::<hipFileStatsLevel1_t>() == 512);
    assert!(offset_of!(hipFileStatsLevel1_t, read_bytes) == 96);
    assert!(offset_of!(hipFileStatsLevel1_t, batch_submit_ops) == 176);
    assert!(offset_of!(hipFileStatsLevel1_t, batch_read_bytes) == 416);
    assert!(offset_of!(hipFileStatsLevel1_t, last_batch_write_bytes) == 504);
    assert!(size_of::<hipFileStatsLevel2_t>() == 1024);
    assert!(offset_of!(hipFileStatsLevel2_t, read_size_kb_hist) == 512);
    assert!(offset_of!(hipFileStatsLevel2_t, write_size_kb_hist) == 768);
    assert!(size_of::<hipFilePerGpuStats_t>() == 248);
    assert!(offset_of!(hipFilePerGpuStats_t, read_bytes) == 16);
    assert!(offset_of!(hipFilePerGpuStats_t, write_bytes) == 120);
    assert!(offset_of!(hipFilePerGpuStats_t, reg_bytes) == 240);
    assert!(size_of::<hipFileStatsLevel3_t>() == 5000);
    assert!(offset_of!(hipFileStatsLevel3_t, num_gpus) == 1024);
    assert!(offset_of!(hipFileStatsLevel3_t, per_gpu_stats) == 1032);
};
