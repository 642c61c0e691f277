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

/**
 * Status codes, returned in hipFileError_t.err by most functions and negated by
 * hipFileRead()/hipFileWrite() and the stream-ordered results.  5021 and 5032 are not
 * assigned.  Each comment says when this library returns the code; "never returned" codes
 * exist for source compatibility with AMD's header.
 */
typedef enum hipFileOpError {
    /** The call succeeded. */
    hipFileSuccess = 0,
    /**
     * hipFileDriverClose() with no driver reference held.  (hipFileRead()/hipFileWrite() on a
     * closed driver return -1 with errno EINVAL instead.)
     */
    hipFileDriverNotInitialized = HIPFILE_BASE_ERR + 1,
    /** Never returned by this library. */
    hipFileDriverInvalidProps = HIPFILE_BASE_ERR + 2,
    /** Never returned by this library. */
    hipFileDriverUnsupportedLimit = HIPFILE_BASE_ERR + 3,
    /** Never returned by this library. */
    hipFileDriverVersionMismatch = HIPFILE_BASE_ERR + 4,
    /** Never returned by this library. */
    hipFileDriverVersionReadError = HIPFILE_BASE_ERR + 5,
    /**
     * hipFileBufDeregister() while no driver reference is held, or hipFileBufRegister(),
     * hipFileReadAsync() or hipFileWriteAsync() when the last reference was dropped while it ran.
     */
    hipFileDriverClosing = HIPFILE_BASE_ERR + 6,
    /** Never returned by this library. */
    hipFilePlatformNotSupported = HIPFILE_BASE_ERR + 7,
    /** hipFileHandleRegister() with a handle type other than hipFileHandleTypeOpaqueFD. */
    hipFileIONotSupported = HIPFILE_BASE_ERR + 8,
    /** Never returned by this library. */
    hipFileDeviceNotSupported = HIPFILE_BASE_ERR + 9,
    /** Never returned by this library. */
    hipFileDriverError = HIPFILE_BASE_ERR + 10,
    /**
     * The GPU runtime failed; hip_drv_err holds its code in HIP's numbering (CUDA driver codes are
     * translated as HIP translates them).
     */
    hipFileHipDriverError = HIPFILE_BASE_ERR + 11,
    /**
     * Never returned by this library (an address the runtime does not know is
     * hipFileInvalidValue).
     */
    hipFileHipPointerInvalid = HIPFILE_BASE_ERR + 12,
    /**
     * Memory no backend can serve: managed memory, or host memory while host I/O is off
     * (HIPFILE_HOST=false).
     */
    hipFileHipMemoryTypeInvalid = HIPFILE_BASE_ERR + 13,
    /** hipFileBufRegister() with a range that does not lie inside one GPU allocation. */
    hipFileHipPointerRangeError = HIPFILE_BASE_ERR + 14,
    /** Never returned by this library. */
    hipFileHipContextMismatch = HIPFILE_BASE_ERR + 15,
    /** Never returned by this library. */
    hipFileInvalidMappingSize = HIPFILE_BASE_ERR + 16,
    /** Never returned by this library. */
    hipFileInvalidMappingRange = HIPFILE_BASE_ERR + 17,
    /** Never returned by this library. */
    hipFileInvalidFileType = HIPFILE_BASE_ERR + 18,
    /**
     * hipFileHandleRegister() with a descriptor opened with O_APPEND (positional writes would land
     * at the end).
     */
    hipFileInvalidFileOpenFlag = HIPFILE_BASE_ERR + 19,
    /** Never returned by this library: descriptors without O_DIRECT are accepted. */
    hipFileDIONotSet = HIPFILE_BASE_ERR + 20,
    /**
     * An argument is invalid: a NULL pointer, a value out of range, a transfer that does not fit
     * its buffer, an unknown batch context or stream.
     */
    hipFileInvalidValue = HIPFILE_BASE_ERR + 22,
    /** hipFileBufRegister() of a base address that is already registered. */
    hipFileMemoryAlreadyRegistered = HIPFILE_BASE_ERR + 23,
    /** hipFileBufDeregister() of an address that is not a registered base (NULL included). */
    hipFileMemoryNotRegistered = HIPFILE_BASE_ERR + 24,
    /** Never returned by this library (a failed open or access is reported with errno). */
    hipFilePermissionDenied = HIPFILE_BASE_ERR + 25,
    /**
     * hipFileSetParameterSizeT/Bool/String() while the driver is open: parameters are set while it
     * is closed.
     */
    hipFileDriverAlreadyOpen = HIPFILE_BASE_ERR + 26,
    /**
     * A file handle that is NULL, unknown, deregistered or dropped by the last
     * hipFileDriverClose().
     */
    hipFileHandleNotRegistered = HIPFILE_BASE_ERR + 27,
    /** hipFileHandleRegister() of a descriptor that is already registered (the same open file). */
    hipFileHandleAlreadyRegistered = HIPFILE_BASE_ERR + 28,
    /** Never returned by this library. */
    hipFileDeviceNotFound = HIPFILE_BASE_ERR + 29,
    /**
     * Anything else: a descriptor that cannot be inspected or re-opened (or a socket), no backend
     * accepts the request, a buffer still in use, a batch entry naming an unregistered file or
     * host memory, an internal failure.
     */
    hipFileInternalError = HIPFILE_BASE_ERR + 30,
    /** Never returned by this library. */
    hipFileGetNewFDFailed = HIPFILE_BASE_ERR + 31,
    /** Never returned by this library. */
    hipFileDriverSetupError = HIPFILE_BASE_ERR + 33,
    /** Never returned by this library. */
    hipFileIODisabled = HIPFILE_BASE_ERR + 34,
    /** Never returned by this library (a refused batch submission reports the reason). */
    hipFileBatchSubmitFailed = HIPFILE_BASE_ERR + 35,
    /** Never returned by this library. */
    hipFileGPUMemoryPinningFailed = HIPFILE_BASE_ERR + 36,
    /** hipFileBatchIOSubmit() with more requests than the batch context has room for. */
    hipFileBatchFull = HIPFILE_BASE_ERR + 37,
    /** Never returned by this library: stream-ordered I/O works on every backend. */
    hipFileAsyncNotSupported = HIPFILE_BASE_ERR + 38,
    /** Marks the end of the range; never returned. */
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

/*
 * Conventions of the comments below (the API reference in docs/api/ is generated from them):
 * each exported function has a @brief, its @param list, what it returns and every status it
 * can report (@retval), its thread safety and how it differs from AMD's hipFile and NVIDIA's
 * cuFile.  Two rules hold for every function and are not repeated:
 *   - a function returning hipFileError_t or ssize_t answers hipFileInternalError
 *     (-hipFileInternalError) when an internal failure (a Rust panic) is caught at the C
 *     boundary; nothing unwinds into the caller;
 *   - every function may be called from any thread; POSIX thread cancellation is held off for
 *     the duration of the call (a pending cancel acts at the caller's next cancellation
 *     point), and fork() after the library was used is not supported.
 */

/* ---- Error strings ------------------------------------------------------------------------ */

/**
 * @brief Returns the English message of a status code.
 *
 * The message is a fixed string; a value that is not a hipFileOpError_t (a negative one
 * included: use HIPFILE_ERRSTR() for either sign) gets "Unknown hipFile error".
 *
 * @param status  A hipFileOpError_t value.
 * @return A static NUL-terminated string, never NULL; it must not be freed.
 * @par Thread safety
 * Safe from any thread; needs no driver reference.
 * @par Differences
 * The same messages as AMD's hipFile.
 */
HIPFILE_API const char *hipFileGetOpErrorString(hipFileOpError_t status);

/* ---- Files and buffers -------------------------------------------------------------------- */

/**
 * @brief Registers an open file descriptor and returns its handle.
 *
 * The library inspects the descriptor (statx, open flags, mount) and keeps descriptors of its
 * own: a dup of the caller's and, for regular files and block devices, a twin opened with
 * O_DIRECT (or without it, when the caller's has it) through /proc/self/fd.  The caller may
 * close its descriptor afterwards; if it then reuses the number for another file, the old
 * handle still reaches the old file and the new file can be registered.  Directories, pipes
 * and character devices register (their I/O fails or works as the system call does); sockets
 * do not.  Opens the driver implicitly (to one reference) when it is closed, once the
 * descriptor was inspected successfully.
 *
 * @param fh     Receives the handle (written only on success); an opaque token, never
 *               dereferenced, that goes stale on deregistration or when the driver closes.
 * @param descr  type must be hipFileHandleTypeOpaqueFD and handle.fd the descriptor;
 *               fs_ops is ignored.
 * @return hipFileSuccess, or one of the statuses below in .err.
 * @retval hipFileInvalidValue             `fh` or `descr` is NULL.
 * @retval hipFileIONotSupported           `descr->type` is not hipFileHandleTypeOpaqueFD.
 * @retval hipFileInvalidFileOpenFlag      The descriptor was opened with O_APPEND.
 * @retval hipFileHandleAlreadyRegistered  The same open file is already registered through
 *                                         this descriptor number.
 * @retval hipFileInternalError            The descriptor cannot be inspected (not open:
 *                                         statx or fcntl fails), is a socket, the mount table
 *                                         cannot be read, or it cannot be duplicated or
 *                                         re-opened.
 * @par Thread safety
 * Safe from any thread; registering different descriptors concurrently from a closed driver
 * leaves exactly one implicit reference.
 * @par Differences
 * AMD's hipFile accepts O_APPEND descriptors and does its I/O through the caller's
 * descriptor; NVIDIA's cuFile refuses O_APPEND with the same code.  Both, like this library,
 * accept descriptors opened without O_DIRECT.
 */
HIPFILE_API hipFileError_t hipFileHandleRegister(hipFileHandle_t *fh, hipFileDescr_t *descr);

/**
 * @brief Forgets a file handle.
 *
 * The handle goes at once: later calls with it get hipFileHandleNotRegistered, and the
 * caller's descriptor can be registered again.  The call then waits for the stream-ordered
 * operations queued on the handle (as hipFileStreamDeregister() waits for a stream's).
 * Synchronous and batch I/O already running on other threads finish with the file.  The
 * library's own descriptors of the file are closed once no I/O uses them; the caller's
 * descriptor stays open.  NULL, unknown and stale handles and a closed driver are ignored.
 *
 * @param fh  A handle from hipFileHandleRegister().
 * @par Thread safety
 * Safe from any thread; it waits only for the stream-ordered operations queued on `fh`.
 * @par Differences
 * AMD's hipFile frees the handle whatever is queued on it; an earlier version of this library
 * ignored the call while I/O held the file.
 */
HIPFILE_API void hipFileHandleDeregister(hipFileHandle_t fh);

/**
 * @brief Registers a buffer of GPU (or host) memory for repeated I/O.
 *
 * Later transfers whose `buffer_base` is exactly this address use the registration (its
 * length bounds them) instead of asking the GPU runtime about the pointer.  Registration is
 * optional: unregistered pointers work, bounded by the end of their allocation.  Device
 * memory must lie inside one allocation; host memory (pageable or pinned) is accepted while
 * host I/O is on (HIPFILE_HOST, hipFileParamPropertiesAllowSystemMemory).  Opens the driver
 * implicitly (to one reference) when it is closed, before any check, so even a refused
 * registration leaves it open.
 *
 * @param buffer_base  Start of the buffer.
 * @param length       Bytes; 0 is accepted (no transfer through it then fits).
 * @param flags        HIPFILE_RDMA_* bits, accepted and ignored.
 * @return hipFileSuccess, or one of the statuses below in .err.
 * @retval hipFileMemoryAlreadyRegistered  `buffer_base` is already a registered base.
 * @retval hipFileInvalidValue             `buffer_base` is NULL, or the GPU runtime does not
 *                                         know the pointer or its allocation.
 * @retval hipFileHipMemoryTypeInvalid     Memory no backend serves: managed memory, or host
 *                                         memory while host I/O is off.
 * @retval hipFileHipPointerRangeError     The range does not lie inside one allocation.
 * @retval hipFileHipDriverError           The GPU runtime failed (code in hip_drv_err).
 * @retval hipFileDriverClosing            The driver was closed to zero while the call ran.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * AMD's hipFile refuses host memory with hipFileHipMemoryTypeInvalid; this library serves it
 * through its host backend.  NVIDIA's cuFile accepts host memory too.
 */
HIPFILE_API hipFileError_t hipFileBufRegister(const void *buffer_base, size_t length, int flags);

/**
 * @brief Undoes hipFileBufRegister().
 *
 * @param buffer_base  The base address given at registration.
 * @return hipFileSuccess, or one of the statuses below in .err.
 * @retval hipFileDriverClosing        The driver is closed (its close already dropped every
 *                                     registration).
 * @retval hipFileMemoryNotRegistered  `buffer_base` is not a registered base (NULL included).
 * @retval hipFileInternalError        A transfer on another thread still uses the buffer;
 *                                     it stays registered.
 * @par Thread safety
 * Safe from any thread; it never waits for I/O.
 * @par Differences
 * As AMD's hipFile.
 */
HIPFILE_API hipFileError_t hipFileBufDeregister(const void *buffer_base);

/* ---- Synchronous I/O ---------------------------------------------------------------------- */

/**
 * @brief Reads from a registered file into GPU or host memory.
 *
 * Reads up to `size` bytes at `file_offset` into `buffer_base + buffer_offset` and returns
 * when the bytes are in memory.  `buffer_base` may be a registered base (its registered
 * length bounds the transfer) or any pointer the GPU runtime knows (bounded by the end of its
 * allocation; pageable host memory is unbounded).  The backend is chosen per call: the
 * GPU-direct fastpath when every one of its rules holds (device memory; an O_DIRECT-capable
 * regular file on ext4 data=ordered or xfs, or a block device; offset, size and address
 * aligned to max(the file's direct-I/O alignment, 4 KiB)), else the fallback (pinned bounce
 * buffers, parallel chunks) for device memory, or the host backend for host memory.  A
 * fastpath failure with ENODEV or EREMOTEIO is retried on the fallback.  Sizes above
 * 0x7ffff000 are clamped (a short count, no error).  A size of 0 with valid arguments returns
 * 0 without I/O.  After a short read at end of file on the fastpath, device bytes after the
 * count up to the end of that file block are unspecified.
 *
 * @param fh             A handle from hipFileHandleRegister().
 * @param buffer_base    Destination: a registered base, or any device or host pointer.
 * @param size           Bytes to read.
 * @param file_offset    Offset in the file, not negative.
 * @param buffer_offset  Offset from `buffer_base`, not negative, inside the buffer.
 * @return The number of bytes read (fewer than `size` only at end of file, 0 at or after
 *         it); -1 with errno set; or a negative status below.
 * @retval -1 (errno EINVAL)            The driver is not open; an offset is negative; or the
 *                                      GPU runtime failed with hipErrorInvalidValue.
 * @retval -1 (other errno)             The system call failed (EIO, EBADF for a descriptor
 *                                      opened without read access, EISDIR, ESPIPE, EFAULT
 *                                      for an invalid host address, ...).
 * @retval -hipFileHandleNotRegistered  `fh` is NULL, unknown or stale.
 * @retval -hipFileInvalidValue         `buffer_base` is NULL, or the transfer does not fit
 *                                      the buffer (`buffer_offset` must lie inside it).
 * @retval -hipFileHipMemoryTypeInvalid Memory no backend serves (managed memory; host memory
 *                                      while host I/O is off).
 * @retval -hipFileInternalError        No backend accepts the request (for example compat
 *                                      mode off and the fastpath refuses); the log names each
 *                                      backend's reason.
 * @retval -(hipError_t)                The GPU runtime failed with this code (HIP numbering).
 * @par Thread safety
 * Any number of concurrent reads and writes on the same or different handles; each call is
 * positional and independent.
 * @par Differences
 * AMD's hipFile refuses host memory (-hipFileHipMemoryTypeInvalid) and returns
 * -hipErrorInvalidValue as -1 without setting errno; here -1 always comes with errno.  The
 * fallback here is multi-threaded with pinned bounce buffers and reads cold, aligned data
 * with O_DIRECT.
 */
HIPFILE_API ssize_t hipFileRead(hipFileHandle_t fh, void *buffer_base, size_t size, hoff_t file_offset,
                                hoff_t buffer_offset);

/**
 * @brief Writes GPU or host memory to a registered file.
 *
 * The counterpart of hipFileRead(), with the same buffer rules, backends and clamping.  The
 * data is durable when the call returns: one fdatasync per call on the fallback and host
 * paths (HIPFILE_FALLBACK_SYNC_WRITES=false turns it off).  A write that fails part-way
 * returns the count of the contiguous prefix that reached the file (-1 with errno only when
 * nothing did), and the file is left no longer than the larger of its size before the call
 * and the end of that prefix.  A size of 0 with valid arguments returns 0 and syncs nothing.
 *
 * @param fh             A handle from hipFileHandleRegister().
 * @param buffer_base    Source: a registered base, or any device or host pointer.
 * @param size           Bytes to write.
 * @param file_offset    Offset in the file, not negative.
 * @param buffer_offset  Offset from `buffer_base`, not negative, inside the buffer.
 * @return The number of bytes written; -1 with errno set; or a negative status below.
 * @retval -1 (errno EINVAL)            The driver is not open; an offset is negative; or the
 *                                      GPU runtime failed with hipErrorInvalidValue.
 * @retval -1 (other errno)             The system call failed (ENOSPC, EIO, EBADF for a
 *                                      descriptor opened without write access, ...), before
 *                                      any byte reached the file.
 * @retval -hipFileHandleNotRegistered  `fh` is NULL, unknown or stale.
 * @retval -hipFileInvalidValue         `buffer_base` is NULL, or the transfer does not fit
 *                                      the buffer.
 * @retval -hipFileHipMemoryTypeInvalid Memory no backend serves.
 * @retval -hipFileInternalError        No backend accepts the request.
 * @retval -(hipError_t)                The GPU runtime failed with this code.
 * @par Thread safety
 * As hipFileRead(); concurrent writes to overlapping ranges land in an unspecified order.
 * @par Differences
 * AMD's hipFile syncs after every chunk on its fallback and refuses host memory.  A writer to
 * /dev/null and other character devices succeeds (fdatasync's EINVAL there is ignored).
 */
HIPFILE_API ssize_t hipFileWrite(hipFileHandle_t fh, const void *buffer_base, size_t size, hoff_t file_offset,
                                 hoff_t buffer_offset);

/* ---- Driver ------------------------------------------------------------------------------- */

/**
 * @brief Takes one reference on the driver, opening it on the first.
 *
 * The first reference loads the GPU runtime (HIPFILE_PLATFORM, else a runtime already in the
 * process, else the first that loads and reports a device, else host-only), takes a snapshot
 * of the configuration (staged parameters > environment > defaults) and creates the engine;
 * worker threads and pinned memory come with the first request that needs them.  Every
 * further call only counts.  Registration calls open the driver implicitly (to one
 * reference) when it is closed.
 *
 * @return hipFileSuccess in .err.
 * @retval hipFileSuccess  Always: a machine without a usable GPU runtime opens in host-only
 *                         mode (logged), where host memory still works.
 * @par Thread safety
 * Safe from any thread; concurrent opens and closes are counted exactly.
 * @par Differences
 * AMD's hipFile: the same count.  This library chooses its GPU runtime at run time (HIP or
 * the CUDA driver API) instead of being built for one.
 */
HIPFILE_API hipFileError_t hipFileDriverOpen(void);

/**
 * @brief Drops one driver reference; the last one releases everything.
 *
 * When the count reaches 0, every file and buffer registration is dropped (handles go
 * stale), every batch context is cancelled, drained and removed (its handle goes stale),
 * queued stream-ordered operations finish, and the engine's threads and pinned memory are
 * freed before the call returns.  Stream registrations survive.  Parameters staged while
 * closed are reset.
 *
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileSuccess               A reference was dropped.
 * @retval hipFileDriverNotInitialized  No reference was held; nothing changed.
 * @par Thread safety
 * Safe from any thread.  The last close waits for batch and stream work already queued; I/O
 * still running on another thread keeps the file and buffer it uses until it returns.
 * @par Differences
 * AMD's hipFile 0.5: batch contexts are cleared the same way.  NVIDIA's cuFile: the same
 * reference-counted close (cuFileDriverClose_v2).
 */
HIPFILE_API hipFileError_t hipFileDriverClose(void);

/**
 * @brief Returns the number of driver references held.
 *
 * Explicit opens plus the one implicit open of a registration, minus closes.
 *
 * @return The count (0 when the driver is closed), or -1 after an internal failure.
 * @par Thread safety
 * Safe from any thread; the value may change as soon as it is read.
 * @par Differences
 * As AMD's hipFile.
 */
HIPFILE_API int64_t hipFileUseCount(void);

/**
 * @brief Describes the driver's limits and features.
 *
 * Sizes are in KiB.  With the driver open the values in force; with it closed, those the next
 * open would use (staged parameters, environment, defaults).  nvfs.major_version and
 * minor_version carry the API level (0.5); driver_status_flags has hipFileNVMeSupported when
 * the GPU runtime has GPU-direct entry points; driver_control_flags the poll and compat-mode
 * bits; feature_flags batch I/O, streams and parallel I/O.
 *
 * @param props  Receives the properties (written only on success).
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `props` is NULL.
 * @par Thread safety
 * Safe from any thread; a concurrent hipFileDriverSet*() call may or may not be seen.
 * @par Differences
 * AMD's hipFile: a stub answering hipFileInternalError.  This library implements it with
 * cuFile's semantics (it also works while the driver is closed, as cuFile's does).
 */
HIPFILE_API hipFileError_t hipFileDriverGetProperties(hipFileDriverProps_t *props);

/**
 * @brief Sets poll mode and its size threshold (KiB).
 *
 * The values are stored and reported (hipFileParamPropertiesUsePollMode,
 * hipFileParamPollthresholdSizeKB); completion polling does not change how this library
 * waits.  With the driver open they apply at once; with it closed they are staged for the
 * next open, as a parameter set through hipFileSetParameterBool() would be.
 *
 * @param poll                 Whether to poll.
 * @param poll_threshold_size  Largest transfer (KiB) completed by polling.
 * @return hipFileSuccess in .err.
 * @retval hipFileSuccess  Always.
 * @par Thread safety
 * Safe from any thread; I/O started before the call keeps the old value.
 * @par Differences
 * AMD's hipFile: a stub answering hipFileInternalError.  NVIDIA's cuFile refuses a threshold
 * outside its range (libcufile.so.0 does too); this function accepts any value.
 */
HIPFILE_API hipFileError_t hipFileDriverSetPollMode(bool poll, size_t poll_threshold_size);

/**
 * @brief Sets the largest single direct transfer (KiB).
 *
 * Stored and reported (hipFileParamPropertiesMaxDirectIOSizeKB); the engine does not cut
 * requests by it.  Applies at once while open, staged while closed.
 *
 * @param max_direct_io_size  Size in KiB, at least 1.
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `max_direct_io_size` is 0.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * AMD's hipFile: a stub answering hipFileInternalError.
 */
HIPFILE_API hipFileError_t hipFileDriverSetMaxDirectIOSize(size_t max_direct_io_size);

/**
 * @brief Sets the pinned bounce-buffer budget (KiB).
 *
 * The same knob as hipFileParamPropertiesMaxDeviceCacheSizeKB and HIPFILE_BOUNCE_BUDGET.
 * While the driver is open the engine takes the new budget at once and frees pooled buffers
 * above it (those of a first request's fill, which are one registration, only when the
 * driver closes); while closed the value is staged for the next open.
 *
 * @param max_cache_size  Budget in KiB, at least 4 (never less than one chunk is used).
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `max_cache_size` is below 4.
 * @par Thread safety
 * Safe from any thread; requests already running keep the buffers they hold.
 * @par Differences
 * AMD's hipFile: a stub answering hipFileInternalError.
 */
HIPFILE_API hipFileError_t hipFileDriverSetMaxCacheSize(size_t max_cache_size);

/**
 * @brief Sets the limit of pinned GPU memory (KiB).
 *
 * Stored and reported (hipFileParamPropertiesMaxDevicePinnedMemSizeKB); this library pins no
 * GPU memory.  Applies at once while open, staged while closed.
 *
 * @param max_pinned_size  Size in KiB, at least 1.
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `max_pinned_size` is 0.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * AMD's hipFile: a stub answering hipFileInternalError.
 */
HIPFILE_API hipFileError_t hipFileDriverSetMaxPinnedMemSize(size_t max_pinned_size);

/* ---- Batch I/O ---------------------------------------------------------------------------- */

/**
 * @brief Creates a batch context.
 *
 * A context holds up to `max_nr` requests submitted and not yet reaped.  Works while the
 * driver is closed and does not open it.
 *
 * @param batch_idp  Receives the context's handle (written only on success).
 * @param max_nr     Capacity, 1 to hipFileParamPropertiesIOBatchsize (default and most 128).
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `batch_idp` is NULL, or `max_nr` is 0 or above the limit.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As AMD's hipFile 0.5 and NVIDIA's cuFile.
 */
HIPFILE_API hipFileError_t hipFileBatchIOSetUp(hipFileBatchHandle_t *batch_idp, unsigned max_nr);

/**
 * @brief Queues requests on a batch context; all of them or none.
 *
 * Checks, in this order and before any request is read: the array (NULL with `nr` > 0), the
 * context, `nr == 0`, the room left in the context; then reads exactly `nr` requests and
 * checks each (the first that fails decides, and nothing is queued).  The requests are copied:
 * the array may be reused when the call returns.  Each request runs on the engine's batch
 * threads through the same backends as hipFileRead()/hipFileWrite(); its outcome is
 * collected with hipFileBatchIOGetStatus().  Batch requests take device memory only.
 *
 * @param batch_idp  A context from hipFileBatchIOSetUp().
 * @param nr         Number of requests in `iocbp`.
 * @param iocbp      The requests (mode hipFileBatch, opcode, handle, buffer, offsets, size,
 *                   cookie).
 * @param flags      Reserved; ignored.
 * @return hipFileSuccess, or one of the statuses below in .err.
 * @retval hipFileInvalidValue          `iocbp` is NULL with `nr` > 0; the context is unknown
 *                                      or destroyed; `nr` is 0; or a request has a NULL
 *                                      buffer, a negative offset, a size that does not fit its
 *                                      buffer, an unknown opcode or a mode other than
 *                                      hipFileBatch.
 * @retval hipFileBatchFull             More requests than the context has room for.
 * @retval hipFileHipMemoryTypeInvalid  A request's memory is managed, or host memory while
 *                                      host I/O is off.
 * @retval hipFileInternalError         The driver is closed (or closed during the call), a
 *                                      request names an unregistered file handle, or its
 *                                      memory is host memory.
 * @retval hipFileHipDriverError        The GPU runtime failed while resolving a request's
 *                                      pointer (code in hip_drv_err).
 * @par Thread safety
 * Safe from any thread; several threads may submit to one context.
 * @par Differences
 * As AMD's hipFile 0.5 (all-or-nothing, the same codes).  NVIDIA's cuFile reports refused
 * submissions with its own batch codes (libcufile.so.0 does too).
 */
HIPFILE_API hipFileError_t hipFileBatchIOSubmit(hipFileBatchHandle_t batch_idp, unsigned nr, hipFileIOParams_t *iocbp,
                                                unsigned flags);

/**
 * @brief Collects finished requests of a batch context.
 *
 * Waits until at least `min_nr` requests have ended (capped at the number outstanding), or
 * `timeout` has passed (NULL: no limit; zero: no wait), then stores up to `*nr` ended
 * requests in `iocbp`, each reported exactly once, and their number in `*nr`.  An event's
 * status is hipFileComplete (ret: bytes moved), hipFileFailed (ret: -errno for a system
 * error, -hipFileHipDriverError for a GPU runtime failure, -status otherwise, stored in a
 * size_t) or hipFileCanceled.
 *
 * @param batch_idp  A context from hipFileBatchIOSetUp().
 * @param min_nr     Requests to wait for, at most `*nr`.
 * @param nr         In: room in `iocbp` (at least 1); out: events stored.
 * @param iocbp      Receives the events.
 * @param timeout    Longest wait, or NULL.
 * @return hipFileSuccess, or the status below in .err (even when the wait timed out).
 * @retval hipFileInvalidValue  The context is unknown or destroyed; `nr` or `iocbp` is NULL;
 *                              `*nr` is 0; `min_nr` > `*nr`; or `timeout` is malformed
 *                              (negative, or tv_nsec of a second or more).
 * @par Thread safety
 * Safe from any thread; with several callers on one context each event goes to one of them.
 * @par Differences
 * AMD's hipFile 0.5 implements it the same way; older AMD releases answer
 * hipFileInternalError.
 */
HIPFILE_API hipFileError_t hipFileBatchIOGetStatus(hipFileBatchHandle_t batch_idp, unsigned min_nr, unsigned *nr,
                                                   hipFileIOEvents_t *iocbp, struct timespec *timeout);

/**
 * @brief Cancels the requests of a batch context that have not started.
 *
 * They end as hipFileCanceled (reported by a later hipFileBatchIOGetStatus()); requests
 * already running finish.
 *
 * @param batch_idp  A context from hipFileBatchIOSetUp().
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  The context is unknown or destroyed.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As AMD's hipFile 0.5.
 */
HIPFILE_API hipFileError_t hipFileBatchIOCancel(hipFileBatchHandle_t batch_idp);

/**
 * @brief Destroys a batch context.
 *
 * The handle goes stale at once; requests not started are cancelled and running ones waited
 * for before the call returns.  Unknown and stale handles are ignored.
 *
 * @param batch_idp  A context from hipFileBatchIOSetUp().
 * @par Thread safety
 * Safe from any thread; it may wait for running requests.
 * @par Differences
 * As AMD's hipFile 0.5 (older releases do nothing).
 */
HIPFILE_API void hipFileBatchIODestroy(hipFileBatchHandle_t batch_idp);

/* ---- Stream-ordered I/O ------------------------------------------------------------------- */

/**
 * @brief Queues a read on a GPU stream and returns at once.
 *
 * The read starts when the work queued before it on `stream` is done and finishes before
 * later work on `stream` runs.  It reads `*size_p`, `*file_offset_p` and `*buffer_offset_p`
 * when it starts (their values at this call when the stream was registered with the
 * matching HIPFILE_STREAM_FIXED_* flag) and stores its result in `*bytes_read_p`: the byte
 * count (short at end of file), -1 for an operating-system error of the POSIX path,
 * -hipFileInternalError when the GPU-direct path fails with an error the POSIX path does not
 * take over (EIO, say), or -hipFileOpError otherwise (-hipFileInvalidValue when the size grew
 * after submission or the values no longer fit the buffer), as AMD's hipFile reports them.
 * A successful call stores 0 there first.  Every backend serves it (the GPU-direct fastpath,
 * falling back on ENODEV/EREMOTEIO; the fallback through pinned staging memory shared by all
 * streams; host memory).  Operations on one stream run in submission order; a NULL stream is
 * the default stream.  A size of 0 completes here and queues nothing.  The pointed-to values
 * must stay valid until the stream has passed the operation.  Each operation is one launch
 * of a small staging kernel on the stream, on NVIDIA and AMD GPUs; on a GPU the library
 * carries no kernel for, the operation runs during this call, after the stream's earlier
 * work.
 *
 * @param fh               A handle from hipFileHandleRegister().
 * @param buffer_base      Destination: a registered base, or any device or host pointer.
 * @param size_p           Bytes to read.
 * @param file_offset_p    Offset in the file.
 * @param buffer_offset_p  Offset from `buffer_base`.
 * @param bytes_read_p     Receives the result when the operation has run.
 * @param stream           A hipStream_t (on NVIDIA the application's CUstream), or NULL.
 * @return hipFileSuccess when the operation was queued (or completed, for size 0), or one
 *         of the statuses below in .err.
 * @retval hipFileInvalidValue         The driver was closed (this call opened it and queued
 *                                     nothing); a pointer argument is NULL; an offset is
 *                                     negative; the transfer does not fit the buffer; or the
 *                                     buffer is device memory of another device than the
 *                                     stream's.
 * @retval hipFileHandleNotRegistered  `fh` is NULL, unknown or stale.
 * @retval hipFileDriverClosing        Another thread closed the driver to zero while this call
 *                                     ran (queued nothing).
 * @retval hipFileHipDriverError       The GPU runtime failed (the pointer or stream query,
 *                                     the kernel's launch); code in hip_drv_err.
 * @retval hipFileInternalError        Memory no backend serves, or the stream-ordered I/O
 *                                     threads cannot be started.
 * @par Thread safety
 * Safe from any thread; several threads may queue on one stream (the order between them is
 * the order of their calls).
 * @par Differences
 * AMD's hipFile 0.5 serves the fastpath on streams without a fallback, and older releases
 * only the POSIX path; here every backend serves it, with failover at the same stream
 * position.  NVIDIA's cuFile: the same contract (cuFileReadAsync).
 */
HIPFILE_API hipFileError_t hipFileReadAsync(hipFileHandle_t fh, void *buffer_base, size_t *size_p,
                                            hoff_t *file_offset_p, hoff_t *buffer_offset_p, ssize_t *bytes_read_p,
                                            hipStream_t stream);

/**
 * @brief Queues a write on a GPU stream and returns at once.
 *
 * The counterpart of hipFileReadAsync(), with the same parameters, ordering, results and
 * statuses; the data written is the buffer's content when the operation runs.  A write that
 * fails part-way reports the error in `*bytes_written_p`, not a count.
 *
 * @param fh                A handle from hipFileHandleRegister().
 * @param buffer_base       Source: a registered base, or any device or host pointer.
 * @param size_p            Bytes to write.
 * @param file_offset_p     Offset in the file.
 * @param buffer_offset_p   Offset from `buffer_base`.
 * @param bytes_written_p   Receives the result when the operation has run.
 * @param stream            A hipStream_t (on NVIDIA the application's CUstream), or NULL.
 * @return hipFileSuccess when the operation was queued, or one of the statuses below in .err.
 * @retval hipFileInvalidValue         As hipFileReadAsync().
 * @retval hipFileHandleNotRegistered  As hipFileReadAsync().
 * @retval hipFileDriverClosing        As hipFileReadAsync().
 * @retval hipFileHipDriverError       As hipFileReadAsync().
 * @retval hipFileInternalError        As hipFileReadAsync().
 * @par Thread safety
 * As hipFileReadAsync().
 * @par Differences
 * As hipFileReadAsync().
 */
HIPFILE_API hipFileError_t hipFileWriteAsync(hipFileHandle_t fh, void *buffer_base, size_t *size_p,
                                             hoff_t *file_offset_p, hoff_t *buffer_offset_p,
                                             ssize_t *bytes_written_p, hipStream_t stream);

/**
 * @brief Registers a stream with HIPFILE_STREAM_* promises.
 *
 * Registration is optional (an unregistered stream behaves as one registered with flags 0).
 * The FIXED flags let the library read the matching value at submission; PAGE_ALIGNED_INPUTS
 * is accepted.  With the driver open, the pinned staging memory of the stream's device is
 * allocated now if it was not yet (it is shared by the device's streams).  Does not touch the
 * driver's use count; registrations survive hipFileDriverClose().  The registration belongs
 * to the stream, not to its address: where the runtime tells streams apart (hipStreamGetId,
 * cuStreamGetId), a stream destroyed without hipFileStreamDeregister() passes nothing to a
 * later stream created at the same address.
 *
 * @param stream  A hipStream_t (on NVIDIA a CUstream), or NULL for the default stream.
 * @param flags   HIPFILE_STREAM_* bits (HIPFILE_STREAM_FLAGS_MASK).
 * @return hipFileSuccess, or one of the statuses below in .err.
 * @retval hipFileInvalidValue    `flags` has bits outside HIPFILE_STREAM_FLAGS_MASK, or the
 *                                stream is already registered.
 * @retval hipFileHipDriverError  The GPU runtime does not know the stream (code in
 *                                hip_drv_err).
 * @retval hipFileInternalError   The stream-ordered I/O threads cannot be started (the
 *                                registration is undone).
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As AMD's hipFile 0.5.
 */
HIPFILE_API hipFileError_t hipFileStreamRegister(hipStream_t stream, unsigned flags);

/**
 * @brief Forgets a registered stream.
 *
 * Waits until the operations queued on the stream have finished, then forgets the
 * registration.  A registration of a stream that was destroyed meanwhile (without being
 * deregistered) is forgotten too.
 *
 * @param stream  A registered stream.
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  The stream is not registered.
 * @par Thread safety
 * Safe from any thread; it may wait for the stream's queued work.
 * @par Differences
 * As AMD's hipFile 0.5; this library waits for the stream's queued operations first.
 */
HIPFILE_API hipFileError_t hipFileStreamDeregister(hipStream_t stream);

/* ---- Version ------------------------------------------------------------------------------ */

/**
 * @brief Stores the API level this library implements (0.5.0).
 *
 * Writes HIPFILE_VERSION_MAJOR, HIPFILE_VERSION_MINOR and HIPFILE_VERSION_PATCH through each
 * pointer that is not NULL (all three may be NULL).  This is the hipFile API level, not the
 * version of this implementation (docs/install.md, "Version numbers").
 *
 * @param major  Receives 0, or NULL.
 * @param minor  Receives 5, or NULL.
 * @param patch  Receives 0, or NULL.
 * @return hipFileSuccess in .err.
 * @retval hipFileSuccess  Always.
 * @par Thread safety
 * Safe from any thread; needs no driver reference and does not take one.
 * @par Differences
 * As AMD's hipFile 0.5.
 */
HIPFILE_API hipFileError_t hipFileGetVersion(unsigned *major, unsigned *minor, unsigned *patch);

/* ---- Parameters --------------------------------------------------------------------------- */

/**
 * @brief Reads a size parameter.
 *
 * While the driver is open, the value in force; while closed, what the next open would use
 * (staged value > environment > default).  Values the library resolves are reported resolved
 * (the actual thread count, not 0 for "automatic").  docs/configuration.md lists every
 * parameter.
 *
 * @param param  A hipFileSizeTConfigParameter_t value.
 * @param value  Receives the value (written only on success).
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `param` is unknown or `value` is NULL.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * AMD's hipFile: a stub answering hipFileInternalError.  This library follows cuFile's
 * semantics.
 */
HIPFILE_API hipFileError_t hipFileGetParameterSizeT(hipFileSizeTConfigParameter_t param, size_t *value);

/**
 * @brief Reads a boolean parameter.
 *
 * As hipFileGetParameterSizeT().
 *
 * @param param  A hipFileBoolConfigParameter_t value.
 * @param value  Receives the value (written only on success).
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `param` is unknown or `value` is NULL.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As hipFileGetParameterSizeT().
 */
HIPFILE_API hipFileError_t hipFileGetParameterBool(hipFileBoolConfigParameter_t param, bool *value);

/**
 * @brief Copies a string parameter into a buffer.
 *
 * Copies the value and its terminating NUL into `desc_str`; nothing is written when it does
 * not fit.  Values as for hipFileGetParameterSizeT() (the logging level and log file come
 * from HIPFILE_LOG and HIPFILE_LOG_FILE when not staged).
 *
 * @param param     A hipFileStringConfigParameter_t value.
 * @param desc_str  Receives the text.
 * @param len       Bytes of room in `desc_str`.
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `param` is unknown, `desc_str` is NULL, `len` is not
 *                              positive, or the value and its NUL do not fit in `len` bytes.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As hipFileGetParameterSizeT().
 */
HIPFILE_API hipFileError_t hipFileGetParameterString(hipFileStringConfigParameter_t param, char *desc_str, int len);

/**
 * @brief Stages a size parameter for the next driver open.
 *
 * Only while the driver is closed.  The value is applied at the next open, ahead of the
 * environment, and reset when the driver closes to zero.  Ranges: hipFileParamProfileStats
 * 0-3; hipFileParamExecutionMaxIOThreads 1-64; hipFileParamPropertiesPerBufferCacheSizeKB a
 * multiple of 4 from 4 to 1048576; hipFileParamPropertiesMaxDeviceCacheSizeKB at least 4;
 * hipFileParamPropertiesIOBatchsize 1-128; the others any value.
 *
 * @param param  A hipFileSizeTConfigParameter_t value.
 * @param value  The value.
 * @return hipFileSuccess, or one of the statuses below in .err.
 * @retval hipFileInvalidValue       `param` is unknown, or `value` is outside its range.
 * @retval hipFileDriverAlreadyOpen  The driver is open.
 * @par Thread safety
 * Safe from any thread; a concurrent open makes it fail with hipFileDriverAlreadyOpen or
 * see the value, never half of it.
 * @par Differences
 * AMD's hipFile: a stub answering hipFileInternalError.  This library follows cuFile's
 * semantics.
 */
HIPFILE_API hipFileError_t hipFileSetParameterSizeT(hipFileSizeTConfigParameter_t param, size_t value);

/**
 * @brief Stages a boolean parameter for the next driver open.
 *
 * As hipFileSetParameterSizeT(); every value is accepted.
 *
 * @param param  A hipFileBoolConfigParameter_t value.
 * @param value  The value.
 * @return hipFileSuccess, or one of the statuses below in .err.
 * @retval hipFileInvalidValue       `param` is unknown.
 * @retval hipFileDriverAlreadyOpen  The driver is open.
 * @par Thread safety
 * As hipFileSetParameterSizeT().
 * @par Differences
 * As hipFileSetParameterSizeT().
 */
HIPFILE_API hipFileError_t hipFileSetParameterBool(hipFileBoolConfigParameter_t param, bool value);

/**
 * @brief Stages a string parameter (copied) for the next driver open.
 *
 * As hipFileSetParameterSizeT().  The logging level and log file are stored and reported;
 * logging itself is set up from HIPFILE_LOG and HIPFILE_LOG_FILE.
 *
 * @param param     A hipFileStringConfigParameter_t value.
 * @param desc_str  NUL-terminated UTF-8 text; for hipFileParamLogDir an existing directory
 *                  (or empty).
 * @return hipFileSuccess, or one of the statuses below in .err.
 * @retval hipFileInvalidValue       `param` is unknown; `desc_str` is NULL or not UTF-8; or a
 *                                   log directory that does not exist.
 * @retval hipFileDriverAlreadyOpen  The driver is open.
 * @par Thread safety
 * As hipFileSetParameterSizeT().
 * @par Differences
 * As hipFileSetParameterSizeT().
 */
HIPFILE_API hipFileError_t hipFileSetParameterString(hipFileStringConfigParameter_t param, const char *desc_str);

/* ---- In-process statistics ---------------------------------------------------------------- */

/**
 * @brief Copies this process's level 1 statistics.
 *
 * The counters of every backend since the process first used the library (host-memory I/O
 * included), taken as one snapshot; works whether or not the driver is open.  Counting
 * follows the statistics level (hipFileParamProfileStats, HIPFILE_STATS_LEVEL; 0 counts
 * nothing).  The batch_* fields and the per-second rates are not tracked and read 0.
 *
 * @param stats  Receives the statistics.
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `stats` is NULL.
 * @par Thread safety
 * Safe from any thread; counters of I/O running on other threads may or may not be included.
 * @par Differences
 * AMD's hipFile 0.5 attributes I/O to the calling thread's current device and counts GPU
 * memory only; here I/O is attributed to the buffer's device and every backend counts.
 */
HIPFILE_API hipFileError_t hipFileGetStatsL1(hipFileStatsLevel1_t *stats);

/**
 * @brief Copies this process's level 2 statistics.
 *
 * Level 1 plus the read and write size histograms (KiB buckets); as hipFileGetStatsL1().
 *
 * @param stats  Receives the statistics.
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `stats` is NULL.
 * @par Thread safety
 * As hipFileGetStatsL1().
 * @par Differences
 * As hipFileGetStatsL1().
 */
HIPFILE_API hipFileError_t hipFileGetStatsL2(hipFileStatsLevel2_t *stats);

/**
 * @brief Copies this process's level 3 statistics.
 *
 * Level 2 plus per-GPU counters indexed by device ordinal (num_gpus counts the GPUs with
 * any record, so scan all 16 entries); GPU-direct operations count in n_p2p_*, the fallback
 * and host paths in n_posix_*.  As hipFileGetStatsL1().
 *
 * @param stats  Receives the statistics.
 * @return hipFileSuccess, or the status below in .err.
 * @retval hipFileInvalidValue  `stats` is NULL.
 * @par Thread safety
 * As hipFileGetStatsL1().
 * @par Differences
 * As hipFileGetStatsL1().
 */
HIPFILE_API hipFileError_t hipFileGetStatsL3(hipFileStatsLevel3_t *stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#undef __HIPFILE_NODISCARD

#endif /* HIPFILE_H */
