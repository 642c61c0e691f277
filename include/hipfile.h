/*
 * hipfile.h - public C interface of libhipfile.so.0 (hipFile API level 0.5.0).
 *
 * This header belongs to a re-implementation of AMD's hipFile written in Rust.  It is
 * source- and binary-compatible with the hipFile 0.5 header: every name, numeric value,
 * structure layout and function signature below is part of that ABI and must never change.
 * The comments are ours.
 *
 * The interface moves data directly between files and GPU memory, in the style of
 * NVIDIA's cuFile.  A typical program opens the driver, registers a file descriptor
 * (and optionally a GPU buffer), then calls hipFileRead()/hipFileWrite() with byte
 * offsets, or queues the same work on a HIP stream or in a batch.
 *
 * Functions returning hipFileError_t report the outcome in .err (hipFileSuccess or one
 * of hipFileOpError_t); when .err is hipFileHipDriverError, .hip_drv_err carries the
 * failing GPU runtime code.  Functions returning ssize_t report a byte count (>= 0) or
 * a negative code: -1 means "see errno", any other negative value is a negated
 * hipFileOpError_t or a negated hipError_t.
 *
 * When <hip/hip_runtime_api.h> is available and a HIP platform macro
 * (__HIP_PLATFORM_AMD__ or __HIP_PLATFORM_NVIDIA__) is defined, the real HIP types are
 * used.  Otherwise this header declares the two HIP types it needs itself (hipError_t,
 * hipStream_t), so that it also compiles in plain C or C++ programs on machines without
 * ROCm.
 *
 * Target: Linux (LP64).  Only symbols marked HIPFILE_API are exported by the library.
 */

#pragma once
#ifndef HIPFILE_H
#define HIPFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

/* ---------------------------------------------------------------------------------------
 * HIP runtime types
 * ------------------------------------------------------------------------------------- */

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_NVIDIA__)
#if defined(__has_include)
#if __has_include(<hip/hip_runtime_api.h>)
#define __HIPFILE_USE_HIP_RUNTIME_API 1
#endif
#else
/* Without __has_include we cannot probe; a HIP platform macro says HIP is in use. */
#define __HIPFILE_USE_HIP_RUNTIME_API 1
#endif
#endif

#if defined(__HIPFILE_USE_HIP_RUNTIME_API)
#include <hip/hip_runtime_api.h>
#elif !defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H)
/*
 * Stand-ins for the two HIP types this interface uses, with HIP's own tags and sizes:
 * hipError_t is a 4-byte enum whose success value is 0, hipStream_t an opaque pointer
 * (on NVIDIA platforms it carries the application's CUstream).
 */
typedef enum hipError_t {
    hipSuccess = 0
} hipError_t;
typedef struct ihipStream_t *hipStream_t;
#endif

#undef __HIPFILE_USE_HIP_RUNTIME_API

/* ---------------------------------------------------------------------------------------
 * Macros
 * ------------------------------------------------------------------------------------- */

/* Marks the functions the shared library exports. */
#if defined(__GNUC__) || defined(__clang__)
#define HIPFILE_API __attribute__((visibility("default")))
#else
#define HIPFILE_API
#endif

/* [[nodiscard]] where the language has it (C++17 and later, C23 and later); private. */
#if defined(__cplusplus)
#if __cplusplus >= 201703L
#define __HIPFILE_NODISCARD [[nodiscard]]
#else
#define __HIPFILE_NODISCARD
#endif
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L
#define __HIPFILE_NODISCARD [[nodiscard]]
#else
#define __HIPFILE_NODISCARD
#endif

/* API level implemented by this header and reported by hipFileGetVersion(). */
#define HIPFILE_VERSION_MAJOR 0
#define HIPFILE_VERSION_MINOR 5
#define HIPFILE_VERSION_PATCH 0

/* Every hipFile-specific error code is HIPFILE_BASE_ERR plus a small number. */
#define HIPFILE_BASE_ERR 5000

/*
 * True when a code (as returned in hipFileError_t.err, or negated by the ssize_t
 * functions) is a hipFile error rather than success, -1/errno or a HIP error.
 * The argument may be an int, a hipFileOpError_t or the ssize_t result of hipFileRead/Write:
 * it is converted to int explicitly (every error value fits), so abs() gets the type it
 * takes and -Wall -Wextra stay quiet (-Wabsolute-value).
 */
#define IS_HIPFILE_ERR(hip_op_err) (abs((int)(hip_op_err)) > HIPFILE_BASE_ERR)

/* Message for a hipFile error code given with either sign (int or ssize_t). */
#define HIPFILE_ERRSTR(hip_op_err) hipFileGetOpErrorString((hipFileOpError_t)abs((int)(hip_op_err)))

/* True when a hipFileError_t reports a failure of the GPU runtime. */
#ifndef IS_HIP_DRV_ERR
#define IS_HIP_DRV_ERR(hip_err) (hip_err.err == hipFileHipDriverError)
#endif

/* The GPU runtime's code inside a hipFileError_t. */
#ifndef HIP_DRV_ERR
#define HIP_DRV_ERR(hip_err) (hip_err.hip_drv_err)
#endif

/* Flags of hipFileBufRegister() (RDMA; accepted and ignored by this implementation). */
#define HIPFILE_RDMA_REGISTER 1
#define HIPFILE_RDMA_RELAXED_ORDERING (1 << 1)

/*
 * Flags of hipFileStreamRegister().  Each FIXED flag promises that the matching value
 * behind the pointer given to hipFileReadAsync()/hipFileWriteAsync() will not change
 * after submission, so it is read at submission instead of when the stream reaches
 * the operation.  PAGE_ALIGNED_INPUTS promises page-aligned sizes and offsets.
 */
#define HIPFILE_STREAM_FIXED_BUF_OFFSET 1
#define HIPFILE_STREAM_FIXED_FILE_OFFSET (1 << 1)
#define HIPFILE_STREAM_FIXED_FILE_SIZE (1 << 2)
#define HIPFILE_STREAM_PAGE_ALIGNED_INPUTS (1 << 3)
#define HIPFILE_STREAM_FLAGS_MASK 0xf

/* Bounds of the statistics structures (hipFileStatsLevel3_t). */
#define HIPFILE_MAX_GPUS 16
#define HIPFILE_GPU_UUID_LEN 16

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Scalar types
 * ------------------------------------------------------------------------------------- */

/* A file offset in bytes (signed, 64 bits on Linux x86-64). */
typedef off_t hoff_t;

/* Opaque token naming a registered file; never dereference it. */
typedef void *hipFileHandle_t;

/* Opaque token naming a batch context; never dereference it. */
typedef void *hipFileBatchHandle_t;

/* ---------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------- */

/* Status codes.  5021 and 5032 are not assigned. */
typedef enum hipFileOpError {
    hipFileSuccess = 0,
    hipFileDriverNotInitialized = HIPFILE_BASE_ERR + 1,
    hipFileDriverInvalidProps = HIPFILE_BASE_ERR + 2,
    hipFileDriverUnsupportedLimit = HIPFILE_BASE_ERR + 3,
    hipFileDriverVersionMismatch = HIPFILE_BASE_ERR + 4,
    hipFileDriverVersionReadError = HIPFILE_BASE_ERR + 5,
    hipFileDriverClosing = HIPFILE_BASE_ERR + 6,
    hipFilePlatformNotSupported = HIPFILE_BASE_ERR + 7,
    hipFileIONotSupported = HIPFILE_BASE_ERR + 8,
    hipFileDeviceNotSupported = HIPFILE_BASE_ERR + 9,
    hipFileDriverError = HIPFILE_BASE_ERR + 10,
    hipFileHipDriverError = HIPFILE_BASE_ERR + 11,
    hipFileHipPointerInvalid = HIPFILE_BASE_ERR + 12,
    hipFileHipMemoryTypeInvalid = HIPFILE_BASE_ERR + 13,
    hipFileHipPointerRangeError = HIPFILE_BASE_ERR + 14,
    hipFileHipContextMismatch = HIPFILE_BASE_ERR + 15,
    hipFileInvalidMappingSize = HIPFILE_BASE_ERR + 16,
    hipFileInvalidMappingRange = HIPFILE_BASE_ERR + 17,
    hipFileInvalidFileType = HIPFILE_BASE_ERR + 18,
    hipFileInvalidFileOpenFlag = HIPFILE_BASE_ERR + 19,
    hipFileDIONotSet = HIPFILE_BASE_ERR + 20,
    hipFileInvalidValue = HIPFILE_BASE_ERR + 22,
    hipFileMemoryAlreadyRegistered = HIPFILE_BASE_ERR + 23,
    hipFileMemoryNotRegistered = HIPFILE_BASE_ERR + 24,
    hipFilePermissionDenied = HIPFILE_BASE_ERR + 25,
    hipFileDriverAlreadyOpen = HIPFILE_BASE_ERR + 26,
    hipFileHandleNotRegistered = HIPFILE_BASE_ERR + 27,
    hipFileHandleAlreadyRegistered = HIPFILE_BASE_ERR + 28,
    hipFileDeviceNotFound = HIPFILE_BASE_ERR + 29,
    hipFileInternalError = HIPFILE_BASE_ERR + 30,
    hipFileGetNewFDFailed = HIPFILE_BASE_ERR + 31,
    hipFileDriverSetupError = HIPFILE_BASE_ERR + 33,
    hipFileIODisabled = HIPFILE_BASE_ERR + 34,
    hipFileBatchSubmitFailed = HIPFILE_BASE_ERR + 35,
    hipFileGPUMemoryPinningFailed = HIPFILE_BASE_ERR + 36,
    hipFileBatchFull = HIPFILE_BASE_ERR + 37,
    hipFileAsyncNotSupported = HIPFILE_BASE_ERR + 38,
    hipFileIOMaxError = HIPFILE_BASE_ERR + 39
} hipFileOpError_t;

/*
 * Result of most calls, returned by value (8 bytes).  hip_drv_err is meaningful only
 * when err == hipFileHipDriverError; it is hipSuccess otherwise.
 */
typedef struct __HIPFILE_NODISCARD hipFileError {
    hipFileOpError_t err;
    hipError_t hip_drv_err;
} hipFileError_t;

/* ---------------------------------------------------------------------------------------
 * Driver properties
 * ------------------------------------------------------------------------------------- */

/* Bit numbers of hipFileDriverProps_t.nvfs.driver_status_flags (10 is reserved). */
typedef enum hipFileDriverStatusFlags {
    hipFileLustreSupported = 0,
    hipFileWekaFSSupported = 1,
    hipFileNFSSupported = 2,
    hipFileGPFSSupported = 3,
    hipFileNVMeSupported = 4,
    hipFileNVMeoFSupported = 5,
    hipFileSCSISupported = 6,
    hipFileScaleFluxCSDSupported = 7,
    hipFileNVMeshSupported = 8,
    hipFileBeeGFSSupported = 9,
    hipFileNVMeP2PSupported = 11,
    hipFileScatefsSupported = 12
} hipFileDriverStatusFlags_t;

/* Bit numbers of hipFileDriverProps_t.nvfs.driver_control_flags. */
typedef enum hipFileDriverControlFlags {
    hipFileUsePollMode = 0,
    hipFileAllowCompatMode = 1
} hipFileDriverControlFlags_t;

/* Bit numbers of hipFileDriverProps_t.feature_flags. */
typedef enum hipFileFeatureFlags {
    hipFileDynRoutingSupported = 0,
    hipFileBatchIOSupported = 1,
    hipFileStreamsSupported = 2,
    hipFileParallelIOSupported = 3
} hipFileFeatureFlags_t;

/*
 * What hipFileDriverGetProperties() reports.  Sizes are in KiB.  Note that this layout
 * differs from cuFile's CUfileDrvProps_t (several fields are 64-bit here).
 */
typedef struct hipFileDriverProps {
    struct {
        unsigned major_version;
        unsigned minor_version;
        uint64_t poll_thresh_size;
        uint64_t max_direct_io_size;
        unsigned driver_status_flags;
        unsigned driver_control_flags;
    } nvfs;
    unsigned feature_flags;
    uint64_t max_device_cache_size;
    uint64_t per_buffer_cache_size;
    uint64_t max_device_pinned_mem_size;
    unsigned max_batch_io_count;
    unsigned max_batch_io_timeout_msecs;
} hipFileDriverProps_t;

/* ---------------------------------------------------------------------------------------
 * File descriptors and (unused) RDMA hooks
 * ------------------------------------------------------------------------------------- */

/* RDMA description handed to user-space file system hooks. */
typedef struct hipFileRDMAInfo {
    int version;
    int desc_len;
    const char *desc_str;
} hipFileRDMAInfo_t;

/* Hooks of a user-space file system.  Present for compatibility; never called. */
typedef struct hipFileFSOps {
    const char *(*fs_type)(void *handle);
    int (*getRDMADeviceList)(void *handle, struct sockaddr **hostaddrs);
    int (*getRDMADevicePriority)(void *handle, char *, size_t, hoff_t, struct sockaddr *hostaddr);
    ssize_t (*read)(void *handle, char *, size_t, hoff_t, hipFileRDMAInfo_t *);
    ssize_t (*write)(void *handle, const char *, size_t, hoff_t, hipFileRDMAInfo_t *);
} hipFileFSOps_t;

/* Kind of handle stored in hipFileDescr_t.  Only OpaqueFD is supported on Linux. */
typedef enum hipFileFileHandleType {
    hipFileHandleTypeOpaqueFD = 1,
    hipFileHandleTypeOpaqueWin32 = 2,
    hipFileHandleTypeUserspaceFS = 3
} hipFileFileHandleType_t;

/* Describes the file given to hipFileHandleRegister(). */
typedef struct hipFileDescr {
    hipFileFileHandleType_t type;
    union {
        int fd;
        void *hFile;
    } handle;
    const hipFileFSOps_t *fs_ops;
} hipFileDescr_t;

/* ---------------------------------------------------------------------------------------
 * Batch I/O
 * ------------------------------------------------------------------------------------- */

/* Direction of one batch entry. */
typedef enum hipFileOpcode {
    hipFileBatchRead = 0,
    hipFileBatchWrite = 1
} hipFileOpcode_t;

/* State of one batch entry as reported by hipFileBatchIOGetStatus(). */
typedef enum hipFileStatus {
    hipFileWaiting = 1 << 0,
    hipFilePending = 1 << 1,
    hipFileInvalid = 1 << 2,
    hipFileCanceled = 1 << 3,
    hipFileComplete = 1 << 4,
    hipFileTimeout = 1 << 5,
    hipFileFailed = 1 << 6
} hipFileStatus_t;

/* Kind of a batch entry; hipFileBatch is the only one. */
typedef enum hipFileBatchMode {
    hipFileBatch = 1
} hipFileBatchMode_t;

/* One request of hipFileBatchIOSubmit().  The library copies it at submission. */
typedef struct hipFileIOParams {
    hipFileBatchMode_t mode;
    union {
        struct {
            void *devPtr_base;
            int64_t file_offset;
            int64_t devPtr_offset;
            size_t size;
        } batch;
    } u;
    hipFileHandle_t fh;
    hipFileOpcode_t opcode;
    void *cookie;
} hipFileIOParams_t;

/*
 * One finished request returned by hipFileBatchIOGetStatus().  With hipFileComplete,
 * ret is the byte count; with hipFileFailed it is a negative code stored in a size_t.
 */
typedef struct hipFileIOEvents {
    void *cookie;
    hipFileStatus_t status;
    size_t ret;
} hipFileIOEvents_t;

/* ---------------------------------------------------------------------------------------
 * Configuration parameters (values are 0, 1, 2, ... in this order)
 * ------------------------------------------------------------------------------------- */

/* Parameters of hipFileGetParameterSizeT() / hipFileSetParameterSizeT(). */
typedef enum hipFileSizeTConfigParameter_t {
    hipFileParamProfileStats,
    hipFileParamExecutionMaxIOQueueDepth,
    hipFileParamExecutionMaxIOThreads,
    hipFileParamExecutionMinIOThresholdSizeKB,
    hipFileParamExecutionMaxRequestParallelism,
    hipFileParamPropertiesMaxDirectIOSizeKB,
    hipFileParamPropertiesMaxDeviceCacheSizeKB,
    hipFileParamPropertiesPerBufferCacheSizeKB,
    hipFileParamPropertiesMaxDevicePinnedMemSizeKB,
    hipFileParamPropertiesIOBatchsize,
    hipFileParamPollthresholdSizeKB,
    hipFileParamPropertiesBatchIOTimeoutMs
} hipFileSizeTConfigParameter_t;

/* Parameters of hipFileGetParameterBool() / hipFileSetParameterBool(). */
typedef enum hipFileBoolConfigParameter_t {
    hipFileParamPropertiesUsePollMode,
    hipFileParamPropertiesAllowCompatMode,
    hipFileParamForceCompatMode,
    hipFileParamFsMiscApiCheckAggressive,
    hipFileParamExecutionParallelIO,
    hipFileParamProfileNvtx,
    hipFileParamPropertiesAllowSystemMemory,
    hipFileParamUsePcip2pdma,
    hipFileParamPreferIOUring,
    hipFileParamForceOdirectMode,
    hipFileParamSkipTopologyDetection,
    hipFileParamStreamMemopsBypass
} hipFileBoolConfigParameter_t;

/* Parameters of hipFileGetParameterString() / hipFileSetParameterString(). */
typedef enum hipFileStringConfigParameter_t {
    hipFileParamLoggingLevel,
    hipFileParamEnvLogfilePath,
    hipFileParamLogDir
} hipFileStringConfigParameter_t;

/* ---------------------------------------------------------------------------------------
 * In-process statistics (filled by hipFileGetStatsL1/L2/L3)
 * ------------------------------------------------------------------------------------- */

/* Count of successful and failed calls of one kind. */
typedef struct hipFileOpCounter {
    uint64_t ok;
    uint64_t err;
} hipFileOpCounter_t;

/*
 * Process-wide totals.  Latencies are in microseconds, bandwidths in bytes per second.
 * Fields the library does not track read as 0.
 */
typedef struct hipFileStatsLevel1 {
    hipFileOpCounter_t read_ops;
    hipFileOpCounter_t write_ops;
    hipFileOpCounter_t hdl_register_ops;
    hipFileOpCounter_t hdl_deregister_ops;
    hipFileOpCounter_t buf_register_ops;
    hipFileOpCounter_t buf_deregister_ops;
    uint64_t read_bytes;
    uint64_t write_bytes;
    uint64_t read_bw_bytes_per_sec;
    uint64_t write_bw_bytes_per_sec;
    uint64_t read_lat_avg_us;
    uint64_t write_lat_avg_us;
    uint64_t read_ops_per_sec;
    uint64_t write_ops_per_sec;
    uint64_t read_lat_sum_us;
    uint64_t write_lat_sum_us;
    hipFileOpCounter_t batch_submit_ops;
    hipFileOpCounter_t batch_complete_ops;
    hipFileOpCounter_t batch_setup_ops;
    hipFileOpCounter_t batch_cancel_ops;
    hipFileOpCounter_t batch_destroy_ops;
    hipFileOpCounter_t batch_enqueued_ops;
    hipFileOpCounter_t batch_posix_enqueued_ops;
    hipFileOpCounter_t batch_processed_ops;
    hipFileOpCounter_t batch_posix_processed_ops;
    hipFileOpCounter_t batch_nvfs_submit_ops;
    hipFileOpCounter_t batch_p2p_submit_ops;
    hipFileOpCounter_t batch_aio_submit_ops;
    hipFileOpCounter_t batch_iouring_submit_ops;
    hipFileOpCounter_t batch_mixed_io_submit_ops;
    hipFileOpCounter_t batch_total_submit_ops;
    uint64_t batch_read_bytes;
    uint64_t batch_write_bytes;
    uint64_t batch_read_bw_bytes;
    uint64_t batch_write_bw_bytes;
    uint64_t batch_submit_lat_avg_us;
    uint64_t batch_completion_lat_avg_us;
    uint64_t batch_submit_ops_per_sec;
    uint64_t batch_complete_ops_per_sec;
    uint64_t batch_submit_lat_sum_us;
    uint64_t batch_completion_lat_sum_us;
    uint64_t last_batch_read_bytes;
    uint64_t last_batch_write_bytes;
} hipFileStatsLevel1_t;

/* Level 1 plus request-size histograms (bucketed by KiB). */
typedef struct hipFileStatsLevel2 {
    hipFileStatsLevel1_t basic;
    uint64_t read_size_kb_hist[32];
    uint64_t write_size_kb_hist[32];
} hipFileStatsLevel2_t;

/* Counters of one GPU. */
typedef struct hipFilePerGpuStats {
    char uuid[HIPFILE_GPU_UUID_LEN];
    uint64_t read_bytes;
    uint64_t read_bw_bytes_per_sec;
    uint64_t read_utilization;
    uint64_t read_duration_us;
    uint64_t n_total_reads;
    uint64_t n_p2p_reads;
    uint64_t n_nvfs_reads;
    uint64_t n_posix_reads;
    uint64_t n_unaligned_reads;
    uint64_t n_dr_reads;
    uint64_t n_sparse_regions;
    uint64_t n_inline_regions;
    uint64_t n_reads_err;
    uint64_t write_bytes;
    uint64_t write_bw_bytes_per_sec;
    uint64_t write_utilization;
    uint64_t write_duration_us;
    uint64_t n_total_writes;
    uint64_t n_p2p_writes;
    uint64_t n_nvfs_writes;
    uint64_t n_posix_writes;
    uint64_t n_unaligned_writes;
    uint64_t n_dr_writes;
    uint64_t n_writes_err;
    uint64_t n_mmap;
    uint64_t n_mmap_ok;
    uint64_t n_mmap_err;
    uint64_t n_mmap_free;
    uint64_t reg_bytes;
} hipFilePerGpuStats_t;

/* Level 2 plus per-GPU counters; only the first num_gpus entries are meaningful. */
typedef struct hipFileStatsLevel3 {
    hipFileStatsLevel2_t detailed;
    uint32_t num_gpus;
    hipFilePerGpuStats_t per_gpu_stats[HIPFILE_MAX_GPUS];
} hipFileStatsLevel3_t;

/* ---------------------------------------------------------------------------------------
 * Functions
 * ------------------------------------------------------------------------------------- */

/* Strict ISO C99 builds get no struct timespec from <time.h>; the tag is all we need. */
struct timespec;

/**
 * Returns a fixed English message for `status`; an unknown value gets a generic
 * message.  Never NULL; the string is static and must not be freed.
 */
HIPFILE_API const char *hipFileGetOpErrorString(hipFileOpError_t status);

/**
 * Registers the file described by `descr` and stores a new handle in `*fh` (written
 * only on success).  Opens the driver implicitly if no reference is held.
 * Returns hipFileSuccess; hipFileInvalidValue for a NULL argument;
 * hipFileIONotSupported for a handle type other than hipFileHandleTypeOpaqueFD;
 * hipFileInvalidFileOpenFlag for a descriptor opened with O_APPEND;
 * hipFileHandleAlreadyRegistered when the descriptor is already registered;
 * hipFileInternalError when the descriptor cannot be inspected or re-opened.
 */
HIPFILE_API hipFileError_t hipFileHandleRegister(hipFileHandle_t *fh, hipFileDescr_t *descr);

/**
 * Forgets a file handle.  The application's descriptor stays open.  NULL, unknown or
 * stale handles are ignored.
 */
HIPFILE_API void hipFileHandleDeregister(hipFileHandle_t fh);

/**
 * Registers `length` bytes of GPU (or host) memory starting at `buffer_base`, so that
 * later transfers through exactly this address skip the look-up.  `flags` takes
 * HIPFILE_RDMA_* values, which are ignored.  Opens the driver implicitly if needed.
 * Returns hipFileSuccess; hipFileInvalidValue for NULL or an unknown pointer;
 * hipFileMemoryAlreadyRegistered; hipFileHipMemoryTypeInvalid for memory this library
 * cannot serve; hipFileHipPointerRangeError when the range leaves its allocation;
 * hipFileHipDriverError (with hip_drv_err) when the GPU runtime fails.
 */
HIPFILE_API hipFileError_t hipFileBufRegister(const void *buffer_base, size_t length, int flags);

/**
 * Undoes hipFileBufRegister() for `buffer_base`.
 * Returns hipFileSuccess; hipFileDriverClosing when the driver is not open;
 * hipFileMemoryNotRegistered for an address that is not registered (NULL included);
 * hipFileInternalError while a transfer still uses the buffer.
 */
HIPFILE_API hipFileError_t hipFileBufDeregister(const void *buffer_base);

/**
 * Reads `size` bytes at `file_offset` of the file into `buffer_base + buffer_offset`.
 * Returns the number of bytes read (short or 0 at end of file); -1 with errno set
 * (EINVAL when the driver is not open or an offset is negative; the system call's
 * errno otherwise); -hipFileHandleNotRegistered, -hipFileInvalidValue,
 * -hipFileHipMemoryTypeInvalid, -hipFileInternalError, or a negated hipError_t.
 * Sizes above 0x7ffff000 bytes are clamped.
 */
HIPFILE_API ssize_t hipFileRead(hipFileHandle_t fh, void *buffer_base, size_t size, hoff_t file_offset,
                                hoff_t buffer_offset);

/**
 * Writes `size` bytes from `buffer_base + buffer_offset` at `file_offset` of the file.
 * Return values as for hipFileRead().
 */
HIPFILE_API ssize_t hipFileWrite(hipFileHandle_t fh, const void *buffer_base, size_t size, hoff_t file_offset,
                                 hoff_t buffer_offset);

/**
 * Takes one reference on the driver (opening it on the first).
 * Returns hipFileSuccess, or hipFileDriverSetupError / hipFileInternalError when
 * initialisation fails.
 */
HIPFILE_API hipFileError_t hipFileDriverOpen(void);

/**
 * Drops one reference; the last one drops every file and buffer registration and
 * cancels outstanding batch work.
 * Returns hipFileSuccess, or hipFileDriverNotInitialized when no reference is held.
 */
HIPFILE_API hipFileError_t hipFileDriverClose(void);

/** Returns the number of driver references currently held, or -1 on internal failure. */
HIPFILE_API int64_t hipFileUseCount(void);

/**
 * Fills `*props` with the driver's properties and limits; with the driver closed, those the
 * next open would use.
 * Returns hipFileSuccess, or hipFileInvalidValue when `props` is NULL.
 */
HIPFILE_API hipFileError_t hipFileDriverGetProperties(hipFileDriverProps_t *props);

/**
 * Enables or disables completion polling for transfers up to `poll_threshold_size` KiB.
 * With the driver closed the value is staged for the next open.
 * Returns hipFileSuccess, or hipFileInvalidValue for an unacceptable value.
 */
HIPFILE_API hipFileError_t hipFileDriverSetPollMode(bool poll, size_t poll_threshold_size);

/**
 * Sets the largest single direct transfer, in KiB.  Return codes as for
 * hipFileDriverSetPollMode().
 */
HIPFILE_API hipFileError_t hipFileDriverSetMaxDirectIOSize(size_t max_direct_io_size);

/**
 * Sets the bounce-buffer budget per GPU, in KiB.  Return codes as for
 * hipFileDriverSetPollMode().
 */
HIPFILE_API hipFileError_t hipFileDriverSetMaxCacheSize(size_t max_cache_size);

/**
 * Sets the maximum amount of pinned memory per GPU, in KiB.  Return codes as for
 * hipFileDriverSetPollMode().
 */
HIPFILE_API hipFileError_t hipFileDriverSetMaxPinnedMemSize(size_t max_pinned_size);

/**
 * Creates a batch context accepting up to `max_nr` outstanding requests (1 to 128) and
 * stores its handle in `*batch_idp`.
 * Returns hipFileSuccess, or hipFileInvalidValue for a NULL pointer or a bad `max_nr`.
 */
HIPFILE_API hipFileError_t hipFileBatchIOSetUp(hipFileBatchHandle_t *batch_idp, unsigned max_nr);

/**
 * Queues `nr` requests from `iocbp` on a batch context; all are accepted or none. The
 * context and `nr` are checked before any request is read. `flags` is reserved.
 * Returns hipFileSuccess; hipFileInvalidValue for an unknown context, `nr == 0` or a
 * malformed request; hipFileBatchFull for more requests than the context has room for;
 * hipFileInternalError for an unregistered file handle or unusable memory;
 * hipFileHipDriverError (with hip_drv_err) when the GPU runtime fails.
 */
HIPFILE_API hipFileError_t hipFileBatchIOSubmit(hipFileBatchHandle_t batch_idp, unsigned nr, hipFileIOParams_t *iocbp,
                                                unsigned flags);

/**
 * Collects up to `*nr` finished requests into `iocbp`, waiting until at least `min_nr`
 * are finished or `timeout` (NULL: no limit) has passed, and stores the count in `*nr`.
 * Each request is reported once.
 * Returns hipFileSuccess, or hipFileInvalidValue for an unknown context, NULL `nr` or
 * `iocbp`, `*nr == 0`, `min_nr > *nr` or a malformed timeout.
 */
HIPFILE_API hipFileError_t hipFileBatchIOGetStatus(hipFileBatchHandle_t batch_idp, unsigned min_nr, unsigned *nr,
                                                   hipFileIOEvents_t *iocbp, struct timespec *timeout);

/**
 * Cancels the requests of a batch context that have not started yet.
 * Returns hipFileSuccess, or hipFileInvalidValue for an unknown context.
 */
HIPFILE_API hipFileError_t hipFileBatchIOCancel(hipFileBatchHandle_t batch_idp);

/**
 * Cancels what has not started, waits for what is running, and frees the context.
 * Unknown handles are ignored.
 */
HIPFILE_API void hipFileBatchIODestroy(hipFileBatchHandle_t batch_idp);

/**
 * Queues a read on `stream` and returns at once, with *bytes_read_p set to 0.
 * The read starts when the work queued before it on `stream` is done.  It reads
 * *size_p, *file_offset_p and *buffer_offset_p then (unless the stream was registered
 * with the matching HIPFILE_STREAM_FIXED_* flag: then their values at this call), and
 * stores the byte count (short at end of file) or -hipFileOpError (-hipFileInvalidValue
 * when the values no longer fit the buffer or the size grew, -hipFileInternalError for an
 * operating-system error: never -1, whose errno would not be the caller's) in
 * *bytes_read_p before later work on `stream` runs.  Every backend serves
 * it: GPU-direct I/O (falling back to the POSIX path on ENODEV/EREMOTEIO), the POSIX
 * path through the stream's own pinned buffers, and host memory.  Operations on one
 * stream run in the order they were queued.  A NULL stream is the default stream.
 * The caller keeps the pointed-to values alive until the stream has passed the
 * operation.  A size of 0 completes here (nothing is queued).
 * Returns hipFileSuccess; hipFileInvalidValue for a NULL pointer, bad bounds, a buffer
 * on another device than the stream, or when the driver was not open (it is then
 * opened, but nothing is queued); hipFileHandleNotRegistered; hipFileHipDriverError
 * (with hip_drv_err) when the GPU runtime fails; hipFileInternalError for memory no
 * backend serves.
 */
HIPFILE_API hipFileError_t hipFileReadAsync(hipFileHandle_t fh, void *buffer_base, size_t *size_p,
                                            hoff_t *file_offset_p, hoff_t *buffer_offset_p, ssize_t *bytes_read_p,
                                            hipStream_t stream);

/**
 * Queues a write on `stream`; the counterpart of hipFileReadAsync(), with the same
 * return codes.
 */
HIPFILE_API hipFileError_t hipFileWriteAsync(hipFileHandle_t fh, void *buffer_base, size_t *size_p,
                                             hoff_t *file_offset_p, hoff_t *buffer_offset_p,
                                             ssize_t *bytes_written_p, hipStream_t stream);

/**
 * Registers `stream` with HIPFILE_STREAM_* `flags` (unregistered streams work too, as
 * with flags 0).  Registrations survive hipFileDriverClose().
 * Returns hipFileSuccess; hipFileInvalidValue for unknown flag bits or a stream
 * already registered; hipFileHipDriverError (with hip_drv_err) when the GPU runtime
 * rejects the stream.
 */
HIPFILE_API hipFileError_t hipFileStreamRegister(hipStream_t stream, unsigned flags);

/**
 * Forgets a registered stream, after the operations queued on it have finished.
 * Returns hipFileSuccess, or hipFileInvalidValue when the stream is not registered.
 */
HIPFILE_API hipFileError_t hipFileStreamDeregister(hipStream_t stream);

/**
 * Stores HIPFILE_VERSION_MAJOR/MINOR/PATCH through each non-NULL pointer.
 * Always returns hipFileSuccess.
 */
HIPFILE_API hipFileError_t hipFileGetVersion(unsigned *major, unsigned *minor, unsigned *patch);

/**
 * Reads a size parameter into `*value`: the staged value while the driver is closed,
 * the value in force while it is open.
 * Returns hipFileSuccess, or hipFileInvalidValue for NULL `value` or an unknown `param`.
 */
HIPFILE_API hipFileError_t hipFileGetParameterSizeT(hipFileSizeTConfigParameter_t param, size_t *value);

/** Reads a boolean parameter; as hipFileGetParameterSizeT(). */
HIPFILE_API hipFileError_t hipFileGetParameterBool(hipFileBoolConfigParameter_t param, bool *value);

/**
 * Copies a string parameter, NUL-terminated, into `desc_str` (`len` bytes of room).
 * Returns hipFileSuccess, or hipFileInvalidValue for NULL `desc_str`, an unknown
 * `param` or a buffer too small.
 */
HIPFILE_API hipFileError_t hipFileGetParameterString(hipFileStringConfigParameter_t param, char *desc_str, int len);

/**
 * Stages a size parameter for the next driver open.
 * Returns hipFileSuccess; hipFileDriverAlreadyOpen while the driver is open;
 * hipFileInvalidValue for an unknown `param` or an unacceptable value.
 */
HIPFILE_API hipFileError_t hipFileSetParameterSizeT(hipFileSizeTConfigParameter_t param, size_t value);

/** Stages a boolean parameter; as hipFileSetParameterSizeT(). */
HIPFILE_API hipFileError_t hipFileSetParameterBool(hipFileBoolConfigParameter_t param, bool value);

/**
 * Stages a string parameter (copied); as hipFileSetParameterSizeT(), plus
 * hipFileInvalidValue for a NULL `desc_str`.
 */
HIPFILE_API hipFileError_t hipFileSetParameterString(hipFileStringConfigParameter_t param, const char *desc_str);

/**
 * Fills `*stats` with the process-wide level 1 statistics.
 * Returns hipFileSuccess; hipFileInvalidValue when `stats` is NULL;
 * hipFileInternalError when statistics are unavailable.
 */
HIPFILE_API hipFileError_t hipFileGetStatsL1(hipFileStatsLevel1_t *stats);

/** Fills `*stats` with level 2 statistics; as hipFileGetStatsL1(). */
HIPFILE_API hipFileError_t hipFileGetStatsL2(hipFileStatsLevel2_t *stats);

/** Fills `*stats` with level 3 (per-GPU) statistics; as hipFileGetStatsL1(). */
HIPFILE_API hipFileError_t hipFileGetStatsL3(hipFileStatsLevel3_t *stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#undef __HIPFILE_NODISCARD

#endif /* HIPFILE_H */
