/*
 * abi_asserts.c - compile-time proof that include/hipfile.h and include/hipfile-stats.h
 * declare exactly the hipFile 0.5 ABI: every macro value,
 * every enum constant, every struct size, offset and member type, and the type of every
 * exported function.  src/ffi/abi.rs asserts the same numbers on the Rust side.
 *
 * Built and run by tests/abi_header.rs in several modes:
 *   gcc -std=c11 -Wall -Wextra -Werror -pedantic                          (stand-in HIP types)
 *   gcc ... -D__HIP_PLATFORM_AMD__ -DHIPFILE_EXPECT_REAL_HIP               (real <hip/hip_runtime_api.h>)
 *   gcc ... -DHIPFILE_PREDEFINE_DRV_MACROS -D'IS_HIP_DRV_ERR(e)=...' ...   (#ifndef guards honoured)
 *   g++ -x c++ -std=c++17 -Wall -Wextra -Werror                            (extern "C", [[nodiscard]])
 * It needs only the headers: nothing here references a library symbol (function types
 * are inspected in unevaluated contexts), so it links without libhipfile.  It prints
 * "abi ok" and exits 0 when every runtime check passes.
 */

#include "hipfile.h"
#include "hipfile-stats.h"

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
#include <type_traits>
#define ABI_ASSERT(cond, msg) static_assert(cond, msg)
/* decltype gives a member's declared type; subscripts give references, hence remove_reference. */
#define ABI_SAME_TYPE(expr, T) (std::is_same<std::remove_reference<decltype(expr)>::type, T>::value)
#else
#define ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
/* _Generic uses C's type compatibility, after lvalue conversion of `expr`. */
#define ABI_SAME_TYPE(expr, T) _Generic((expr), T: 1, default: 0)
#endif

#define SIZE_IS(T, n) ABI_ASSERT(sizeof(T) == (n), "sizeof(" #T ") != " #n)
#define OFFSET_IS(T, m, n) ABI_ASSERT(offsetof(T, m) == (n), "offsetof(" #T ", " #m ") != " #n)
#define VALUE_IS(c, n) ABI_ASSERT((long long)(c) == (long long)(n), #c " != " #n)
#define MEMBER_TYPE_IS(T, m, MT) ABI_ASSERT(ABI_SAME_TYPE(((T *)0)->m, MT), #T "." #m " is not " #MT)
/* FT is the function's pointer type; &fn is never evaluated, so no symbol is referenced. */
#define FUNCTION_TYPE_IS(fn, FT) ABI_ASSERT(ABI_SAME_TYPE(&fn, FT), #fn " is not " #FT)

/* ---- which HIP declarations are in use -------------------------------------------------- */
#if defined(HIPFILE_EXPECT_REAL_HIP) && !defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H)
#error "expected hipfile.h to include the real <hip/hip_runtime_api.h>"
#endif
#if !defined(HIPFILE_EXPECT_REAL_HIP) && defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H)
#error "hipfile.h included <hip/hip_runtime_api.h> without a HIP platform macro"
#endif

SIZE_IS(hipError_t, 4);
VALUE_IS(hipSuccess, 0);
SIZE_IS(hipStream_t, sizeof(void *));

/* ---- macros ------------------------------------------------------------------------ */
#if !defined(HIPFILE_API) || !defined(HIPFILE_VERSION_MAJOR) || !defined(HIPFILE_VERSION_MINOR) ||               \
    !defined(HIPFILE_VERSION_PATCH) || !defined(HIPFILE_BASE_ERR) || !defined(IS_HIPFILE_ERR) ||                  \
    !defined(HIPFILE_ERRSTR) || !defined(IS_HIP_DRV_ERR) || !defined(HIP_DRV_ERR) ||                              \
    !defined(HIPFILE_RDMA_REGISTER) || !defined(HIPFILE_RDMA_RELAXED_ORDERING) ||                                 \
    !defined(HIPFILE_STREAM_FIXED_BUF_OFFSET) || !defined(HIPFILE_STREAM_FIXED_FILE_OFFSET) ||                    \
    !defined(HIPFILE_STREAM_FIXED_FILE_SIZE) || !defined(HIPFILE_STREAM_PAGE_ALIGNED_INPUTS) ||                   \
    !defined(HIPFILE_STREAM_FLAGS_MASK) || !defined(HIPFILE_MAX_GPUS) || !defined(HIPFILE_GPU_UUID_LEN)
#error "a macro of the hipFile 0.5 header is missing"
#endif
#ifdef __HIPFILE_NODISCARD
#error "__HIPFILE_NODISCARD must be #undef'd at the end of hipfile.h"
#endif
#if HIPFILE_VERSION_MAJOR != 0 || HIPFILE_VERSION_MINOR != 5 || HIPFILE_VERSION_PATCH != 0
#error "API level must be 0.5.0"
#endif
#if HIPFILE_BASE_ERR != 5000
#error "HIPFILE_BASE_ERR must be 5000"
#endif

VALUE_IS(HIPFILE_VERSION_MAJOR, 0);
VALUE_IS(HIPFILE_VERSION_MINOR, 5);
VALUE_IS(HIPFILE_VERSION_PATCH, 0);
VALUE_IS(HIPFILE_BASE_ERR, 5000);
VALUE_IS(HIPFILE_RDMA_REGISTER, 1);
VALUE_IS(HIPFILE_RDMA_RELAXED_ORDERING, 2);
VALUE_IS(HIPFILE_STREAM_FIXED_BUF_OFFSET, 1);
VALUE_IS(HIPFILE_STREAM_FIXED_FILE_OFFSET, 2);
VALUE_IS(HIPFILE_STREAM_FIXED_FILE_SIZE, 4);
VALUE_IS(HIPFILE_STREAM_PAGE_ALIGNED_INPUTS, 8);
VALUE_IS(HIPFILE_STREAM_FLAGS_MASK, 0xf);
VALUE_IS(HIPFILE_STREAM_FIXED_BUF_OFFSET | HIPFILE_STREAM_FIXED_FILE_OFFSET | HIPFILE_STREAM_FIXED_FILE_SIZE |
             HIPFILE_STREAM_PAGE_ALIGNED_INPUTS,
         HIPFILE_STREAM_FLAGS_MASK);
VALUE_IS(HIPFILE_MAX_GPUS, 16);
VALUE_IS(HIPFILE_GPU_UUID_LEN, 16);

/* ---- scalar types ------------------------------------------------------------------ */
SIZE_IS(hoff_t, 8);
ABI_ASSERT((hoff_t)-1 < 0, "hoff_t must be signed");
ABI_ASSERT(ABI_SAME_TYPE((hoff_t)0, off_t), "hoff_t must be off_t");
SIZE_IS(hipFileHandle_t, 8);
SIZE_IS(hipFileBatchHandle_t, 8);
ABI_ASSERT(ABI_SAME_TYPE((hipFileHandle_t)0, void *), "hipFileHandle_t must be void *");
ABI_ASSERT(ABI_SAME_TYPE((hipFileBatchHandle_t)0, void *), "hipFileBatchHandle_t must be void *");
SIZE_IS(ssize_t, 8);

/* ---- errors ------------------------------------------------------------------------ */
SIZE_IS(hipFileOpError_t, 4);
VALUE_IS(hipFileSuccess, 0);
VALUE_IS(hipFileDriverNotInitialized, 5001);
VALUE_IS(hipFileDriverInvalidProps, 5002);
VALUE_IS(hipFileDriverUnsupportedLimit, 5003);
VALUE_IS(hipFileDriverVersionMismatch, 5004);
VALUE_IS(hipFileDriverVersionReadError, 5005);
VALUE_IS(hipFileDriverClosing, 5006);
VALUE_IS(hipFilePlatformNotSupported, 5007);
VALUE_IS(hipFileIONotSupported, 5008);
VALUE_IS(hipFileDeviceNotSupported, 5009);
VALUE_IS(hipFileDriverError, 5010);
VALUE_IS(hipFileHipDriverError, 5011);
VALUE_IS(hipFileHipPointerInvalid, 5012);
VALUE_IS(hipFileHipMemoryTypeInvalid, 5013);
VALUE_IS(hipFileHipPointerRangeError, 5014);
VALUE_IS(hipFileHipContextMismatch, 5015);
VALUE_IS(hipFileInvalidMappingSize, 5016);
VALUE_IS(hipFileInvalidMappingRange, 5017);
VALUE_IS(hipFileInvalidFileType, 5018);
VALUE_IS(hipFileInvalidFileOpenFlag, 5019);
VALUE_IS(hipFileDIONotSet, 5020);
VALUE_IS(hipFileInvalidValue, 5022);
VALUE_IS(hipFileMemoryAlreadyRegistered, 5023);
VALUE_IS(hipFileMemoryNotRegistered, 5024);
VALUE_IS(hipFilePermissionDenied, 5025);
VALUE_IS(hipFileDriverAlreadyOpen, 5026);
VALUE_IS(hipFileHandleNotRegistered, 5027);
VALUE_IS(hipFileHandleAlreadyRegistered, 5028);
VALUE_IS(hipFileDeviceNotFound, 5029);
VALUE_IS(hipFileInternalError, 5030);
VALUE_IS(hipFileGetNewFDFailed, 5031);
VALUE_IS(hipFileDriverSetupError, 5033);
VALUE_IS(hipFileIODisabled, 5034);
VALUE_IS(hipFileBatchSubmitFailed, 5035);
VALUE_IS(hipFileGPUMemoryPinningFailed, 5036);
VALUE_IS(hipFileBatchFull, 5037);
VALUE_IS(hipFileAsyncNotSupported, 5038);
VALUE_IS(hipFileIOMaxError, 5039);

SIZE_IS(hipFileError_t, 8);
OFFSET_IS(hipFileError_t, err, 0);
OFFSET_IS(hipFileError_t, hip_drv_err, 4);
MEMBER_TYPE_IS(hipFileError_t, err, hipFileOpError_t);
MEMBER_TYPE_IS(hipFileError_t, hip_drv_err, hipError_t);

/* ---- driver properties ------------------------------------------------------------- */
SIZE_IS(hipFileDriverStatusFlags_t, 4);
VALUE_IS(hipFileLustreSupported, 0);
VALUE_IS(hipFileWekaFSSupported, 1);
VALUE_IS(hipFileNFSSupported, 2);
VALUE_IS(hipFileGPFSSupported, 3);
VALUE_IS(hipFileNVMeSupported, 4);
VALUE_IS(hipFileNVMeoFSupported, 5);
VALUE_IS(hipFileSCSISupported, 6);
VALUE_IS(hipFileScaleFluxCSDSupported, 7);
VALUE_IS(hipFileNVMeshSupported, 8);
VALUE_IS(hipFileBeeGFSSupported, 9);
VALUE_IS(hipFileNVMeP2PSupported, 11);
VALUE_IS(hipFileScatefsSupported, 12);

SIZE_IS(hipFileDriverControlFlags_t, 4);
VALUE_IS(hipFileUsePollMode, 0);
VALUE_IS(hipFileAllowCompatMode, 1);

SIZE_IS(hipFileFeatureFlags_t, 4);
VALUE_IS(hipFileDynRoutingSupported, 0);
VALUE_IS(hipFileBatchIOSupported, 1);
VALUE_IS(hipFileStreamsSupported, 2);
VALUE_IS(hipFileParallelIOSupported, 3);

SIZE_IS(hipFileDriverProps_t, 72);
SIZE_IS(((hipFileDriverProps_t *)0)->nvfs, 32);
OFFSET_IS(hipFileDriverProps_t, nvfs, 0);
OFFSET_IS(hipFileDriverProps_t, nvfs.major_version, 0);
OFFSET_IS(hipFileDriverProps_t, nvfs.minor_version, 4);
OFFSET_IS(hipFileDriverProps_t, nvfs.poll_thresh_size, 8);
OFFSET_IS(hipFileDriverProps_t, nvfs.max_direct_io_size, 16);
OFFSET_IS(hipFileDriverProps_t, nvfs.driver_status_flags, 24);
OFFSET_IS(hipFileDriverProps_t, nvfs.driver_control_flags, 28);
OFFSET_IS(hipFileDriverProps_t, feature_flags, 32);
OFFSET_IS(hipFileDriverProps_t, max_device_cache_size, 40);
OFFSET_IS(hipFileDriverProps_t, per_buffer_cache_size, 48);
OFFSET_IS(hipFileDriverProps_t, max_device_pinned_mem_size, 56);
OFFSET_IS(hipFileDriverProps_t, max_batch_io_count, 64);
OFFSET_IS(hipFileDriverProps_t, max_batch_io_timeout_msecs, 68);
MEMBER_TYPE_IS(hipFileDriverProps_t, nvfs.major_version, unsigned);
MEMBER_TYPE_IS(hipFileDriverProps_t, nvfs.minor_version, unsigned);
MEMBER_TYPE_IS(hipFileDriverProps_t, nvfs.poll_thresh_size, uint64_t);
MEMBER_TYPE_IS(hipFileDriverProps_t, nvfs.max_direct_io_size, uint64_t);
MEMBER_TYPE_IS(hipFileDriverProps_t, nvfs.driver_status_flags, unsigned);
MEMBER_TYPE_IS(hipFileDriverProps_t, nvfs.driver_control_flags, unsigned);
MEMBER_TYPE_IS(hipFileDriverProps_t, feature_flags, unsigned);
MEMBER_TYPE_IS(hipFileDriverProps_t, max_device_cache_size, uint64_t);
MEMBER_TYPE_IS(hipFileDriverProps_t, per_buffer_cache_size, uint64_t);
MEMBER_TYPE_IS(hipFileDriverProps_t, max_device_pinned_mem_size, uint64_t);
MEMBER_TYPE_IS(hipFileDriverProps_t, max_batch_io_count, unsigned);
MEMBER_TYPE_IS(hipFileDriverProps_t, max_batch_io_timeout_msecs, unsigned);

/* ---- file handles ------------------------------------------------------------------ */
SIZE_IS(hipFileRDMAInfo_t, 16);
OFFSET_IS(hipFileRDMAInfo_t, version, 0);
OFFSET_IS(hipFileRDMAInfo_t, desc_len, 4);
OFFSET_IS(hipFileRDMAInfo_t, desc_str, 8);
MEMBER_TYPE_IS(hipFileRDMAInfo_t, version, int);
MEMBER_TYPE_IS(hipFileRDMAInfo_t, desc_len, int);
MEMBER_TYPE_IS(hipFileRDMAInfo_t, desc_str, const char *);

SIZE_IS(hipFileFSOps_t, 40);
OFFSET_IS(hipFileFSOps_t, fs_type, 0);
OFFSET_IS(hipFileFSOps_t, getRDMADeviceList, 8);
OFFSET_IS(hipFileFSOps_t, getRDMADevicePriority, 16);
OFFSET_IS(hipFileFSOps_t, read, 24);
OFFSET_IS(hipFileFSOps_t, write, 32);
MEMBER_TYPE_IS(hipFileFSOps_t, fs_type, const char *(*)(void *));
MEMBER_TYPE_IS(hipFileFSOps_t, getRDMADeviceList, int (*)(void *, struct sockaddr **));
MEMBER_TYPE_IS(hipFileFSOps_t, getRDMADevicePriority, int (*)(void *, char *, size_t, hoff_t, struct sockaddr *));
MEMBER_TYPE_IS(hipFileFSOps_t, read, ssize_t (*)(void *, char *, size_t, hoff_t, hipFileRDMAInfo_t *));
MEMBER_TYPE_IS(hipFileFSOps_t, write, ssize_t (*)(void *, const char *, size_t, hoff_t, hipFileRDMAInfo_t *));

SIZE_IS(hipFileFileHandleType_t, 4);
VALUE_IS(hipFileHandleTypeOpaqueFD, 1);
VALUE_IS(hipFileHandleTypeOpaqueWin32, 2);
VALUE_IS(hipFileHandleTypeUserspaceFS, 3);

SIZE_IS(hipFileDescr_t, 24);
OFFSET_IS(hipFileDescr_t, type, 0);
OFFSET_IS(hipFileDescr_t, handle, 8);
OFFSET_IS(hipFileDescr_t, handle.fd, 8);
OFFSET_IS(hipFileDescr_t, handle.hFile, 8);
OFFSET_IS(hipFileDescr_t, fs_ops, 16);
SIZE_IS(((hipFileDescr_t *)0)->handle, 8);
MEMBER_TYPE_IS(hipFileDescr_t, type, hipFileFileHandleType_t);
MEMBER_TYPE_IS(hipFileDescr_t, handle.fd, int);
MEMBER_TYPE_IS(hipFileDescr_t, handle.hFile, void *);
MEMBER_TYPE_IS(hipFileDescr_t, fs_ops, const hipFileFSOps_t *);

/* ---- batch ------------------------------------------------------------------------- */
SIZE_IS(hipFileOpcode_t, 4);
VALUE_IS(hipFileBatchRead, 0);
VALUE_IS(hipFileBatchWrite, 1);

SIZE_IS(hipFileStatus_t, 4);
VALUE_IS(hipFileWaiting, 1);
VALUE_IS(hipFilePending, 2);
VALUE_IS(hipFileInvalid, 4);
VALUE_IS(hipFileCanceled, 8);
VALUE_IS(hipFileComplete, 16);
VALUE_IS(hipFileTimeout, 32);
VALUE_IS(hipFileFailed, 64);

SIZE_IS(hipFileBatchMode_t, 4);
VALUE_IS(hipFileBatch, 1);

SIZE_IS(hipFileIOParams_t, 64);
SIZE_IS(((hipFileIOParams_t *)0)->u, 32);
OFFSET_IS(hipFileIOParams_t, mode, 0);
OFFSET_IS(hipFileIOParams_t, u, 8);
OFFSET_IS(hipFileIOParams_t, u.batch, 8);
OFFSET_IS(hipFileIOParams_t, u.batch.devPtr_base, 8);
OFFSET_IS(hipFileIOParams_t, u.batch.file_offset, 16);
OFFSET_IS(hipFileIOParams_t, u.batch.devPtr_offset, 24);
OFFSET_IS(hipFileIOParams_t, u.batch.size, 32);
OFFSET_IS(hipFileIOParams_t, fh, 40);
OFFSET_IS(hipFileIOParams_t, opcode, 48);
OFFSET_IS(hipFileIOParams_t, cookie, 56);
MEMBER_TYPE_IS(hipFileIOParams_t, mode, hipFileBatchMode_t);
MEMBER_TYPE_IS(hipFileIOParams_t, u.batch.devPtr_base, void *);
MEMBER_TYPE_IS(hipFileIOParams_t, u.batch.file_offset, int64_t);
MEMBER_TYPE_IS(hipFileIOParams_t, u.batch.devPtr_offset, int64_t);
MEMBER_TYPE_IS(hipFileIOParams_t, u.batch.size, size_t);
MEMBER_TYPE_IS(hipFileIOParams_t, fh, hipFileHandle_t);
MEMBER_TYPE_IS(hipFileIOParams_t, opcode, hipFileOpcode_t);
MEMBER_TYPE_IS(hipFileIOParams_t, cookie, void *);

SIZE_IS(hipFileIOEvents_t, 24);
OFFSET_IS(hipFileIOEvents_t, cookie, 0);
OFFSET_IS(hipFileIOEvents_t, status, 8);
OFFSET_IS(hipFileIOEvents_t, ret, 16);
MEMBER_TYPE_IS(hipFileIOEvents_t, cookie, void *);
MEMBER_TYPE_IS(hipFileIOEvents_t, status, hipFileStatus_t);
MEMBER_TYPE_IS(hipFileIOEvents_t, ret, size_t);

/* ---- configuration parameters ------------------------------------------------------ */
SIZE_IS(hipFileSizeTConfigParameter_t, 4);
VALUE_IS(hipFileParamProfileStats, 0);
VALUE_IS(hipFileParamExecutionMaxIOQueueDepth, 1);
VALUE_IS(hipFileParamExecutionMaxIOThreads, 2);
VALUE_IS(hipFileParamExecutionMinIOThresholdSizeKB, 3);
VALUE_IS(hipFileParamExecutionMaxRequestParallelism, 4);
VALUE_IS(hipFileParamPropertiesMaxDirectIOSizeKB, 5);
VALUE_IS(hipFileParamPropertiesMaxDeviceCacheSizeKB, 6);
VALUE_IS(hipFileParamPropertiesPerBufferCacheSizeKB, 7);
VALUE_IS(hipFileParamPropertiesMaxDevicePinnedMemSizeKB, 8);
VALUE_IS(hipFileParamPropertiesIOBatchsize, 9);
VALUE_IS(hipFileParamPollthresholdSizeKB, 10);
VALUE_IS(hipFileParamPropertiesBatchIOTimeoutMs, 11);

SIZE_IS(hipFileBoolConfigParameter_t, 4);
VALUE_IS(hipFileParamPropertiesUsePollMode, 0);
VALUE_IS(hipFileParamPropertiesAllowCompatMode, 1);
VALUE_IS(hipFileParamForceCompatMode, 2);
VALUE_IS(hipFileParamFsMiscApiCheckAggressive, 3);
VALUE_IS(hipFileParamExecutionParallelIO, 4);
VALUE_IS(hipFileParamProfileNvtx, 5);
VALUE_IS(hipFileParamPropertiesAllowSystemMemory, 6);
VALUE_IS(hipFileParamUsePcip2pdma, 7);
VALUE_IS(hipFileParamPreferIOUring, 8);
VALUE_IS(hipFileParamForceOdirectMode, 9);
VALUE_IS(hipFileParamSkipTopologyDetection, 10);
VALUE_IS(hipFileParamStreamMemopsBypass, 11);

SIZE_IS(hipFileStringConfigParameter_t, 4);
VALUE_IS(hipFileParamLoggingLevel, 0);
VALUE_IS(hipFileParamEnvLogfilePath, 1);
VALUE_IS(hipFileParamLogDir, 2);

/* ---- in-process statistics --------------------------------------------------------- */
SIZE_IS(hipFileOpCounter_t, 16);
OFFSET_IS(hipFileOpCounter_t, ok, 0);
OFFSET_IS(hipFileOpCounter_t, err, 8);
MEMBER_TYPE_IS(hipFileOpCounter_t, ok, uint64_t);
MEMBER_TYPE_IS(hipFileOpCounter_t, err, uint64_t);

/* 6 counters (96) + 10 u64 (80) + 15 counters (240) + 12 u64 (96) = 512 bytes. */
SIZE_IS(hipFileStatsLevel1_t, 512);
#define L1_COUNTER(m, off)                                                                                            \
    OFFSET_IS(hipFileStatsLevel1_t, m, off);                                                                          \
    MEMBER_TYPE_IS(hipFileStatsLevel1_t, m, hipFileOpCounter_t)
#define L1_U64(m, off)                                                                                                \
    OFFSET_IS(hipFileStatsLevel1_t, m, off);                                                                          \
    MEMBER_TYPE_IS(hipFileStatsLevel1_t, m, uint64_t)
L1_COUNTER(read_ops, 0);
L1_COUNTER(write_ops, 16);
L1_COUNTER(hdl_register_ops, 32);
L1_COUNTER(hdl_deregister_ops, 48);
L1_COUNTER(buf_register_ops, 64);
L1_COUNTER(buf_deregister_ops, 80);
L1_U64(read_bytes, 96);
L1_U64(write_bytes, 104);
L1_U64(read_bw_bytes_per_sec, 112);
L1_U64(write_bw_bytes_per_sec, 120);
L1_U64(read_lat_avg_us, 128);
L1_U64(write_lat_avg_us, 136);
L1_U64(read_ops_per_sec, 144);
L1_U64(write_ops_per_sec, 152);
L1_U64(read_lat_sum_us, 160);
L1_U64(write_lat_sum_us, 168);
L1_COUNTER(batch_submit_ops, 176);
L1_COUNTER(batch_complete_ops, 192);
L1_COUNTER(batch_setup_ops, 208);
L1_COUNTER(batch_cancel_ops, 224);
L1_COUNTER(batch_destroy_ops, 240);
L1_COUNTER(batch_enqueued_ops, 256);
L1_COUNTER(batch_posix_enqueued_ops, 272);
L1_COUNTER(batch_processed_ops, 288);
L1_COUNTER(batch_posix_processed_ops, 304);
L1_COUNTER(batch_nvfs_submit_ops, 320);
L1_COUNTER(batch_p2p_submit_ops, 336);
L1_COUNTER(batch_aio_submit_ops, 352);
L1_COUNTER(batch_iouring_submit_ops, 368);
L1_COUNTER(batch_mixed_io_submit_ops, 384);
L1_COUNTER(batch_total_submit_ops, 400);
L1_U64(batch_read_bytes, 416);
L1_U64(batch_write_bytes, 424);
L1_U64(batch_read_bw_bytes, 432);
L1_U64(batch_write_bw_bytes, 440);
L1_U64(batch_submit_lat_avg_us, 448);
L1_U64(batch_completion_lat_avg_us, 456);
L1_U64(batch_submit_ops_per_sec, 464);
L1_U64(batch_complete_ops_per_sec, 472);
L1_U64(batch_submit_lat_sum_us, 480);
L1_U64(batch_completion_lat_sum_us, 488);
L1_U64(last_batch_read_bytes, 496);
L1_U64(last_batch_write_bytes, 504);

SIZE_IS(hipFileStatsLevel2_t, 1024);
OFFSET_IS(hipFileStatsLevel2_t, basic, 0);
OFFSET_IS(hipFileStatsLevel2_t, read_size_kb_hist, 512);
OFFSET_IS(hipFileStatsLevel2_t, write_size_kb_hist, 768);
MEMBER_TYPE_IS(hipFileStatsLevel2_t, basic, hipFileStatsLevel1_t);
SIZE_IS(((hipFileStatsLevel2_t *)0)->read_size_kb_hist, 32 * 8);
SIZE_IS(((hipFileStatsLevel2_t *)0)->write_size_kb_hist, 32 * 8);
MEMBER_TYPE_IS(hipFileStatsLevel2_t, read_size_kb_hist[0], uint64_t);
MEMBER_TYPE_IS(hipFileStatsLevel2_t, write_size_kb_hist[0], uint64_t);

/* uuid (16) + 29 u64 (232) = 248 bytes. */
SIZE_IS(hipFilePerGpuStats_t, 248);
OFFSET_IS(hipFilePerGpuStats_t, uuid, 0);
SIZE_IS(((hipFilePerGpuStats_t *)0)->uuid, 16);
#define GPU_U64(m, off)                                                                                               \
    OFFSET_IS(hipFilePerGpuStats_t, m, off);                                                                          \
    MEMBER_TYPE_IS(hipFilePerGpuStats_t, m, uint64_t)
GPU_U64(read_bytes, 16);
GPU_U64(read_bw_bytes_per_sec, 24);
GPU_U64(read_utilization, 32);
GPU_U64(read_duration_us, 40);
GPU_U64(n_total_reads, 48);
GPU_U64(n_p2p_reads, 56);
GPU_U64(n_nvfs_reads, 64);
GPU_U64(n_posix_reads, 72);
GPU_U64(n_unaligned_reads, 80);
GPU_U64(n_dr_reads, 88);
GPU_U64(n_sparse_regions, 96);
GPU_U64(n_inline_regions, 104);
GPU_U64(n_reads_err, 112);
GPU_U64(write_bytes, 120);
GPU_U64(write_bw_bytes_per_sec, 128);
GPU_U64(write_utilization, 136);
GPU_U64(write_duration_us, 144);
GPU_U64(n_total_writes, 152);
GPU_U64(n_p2p_writes, 160);
GPU_U64(n_nvfs_writes, 168);
GPU_U64(n_posix_writes, 176);
GPU_U64(n_unaligned_writes, 184);
GPU_U64(n_dr_writes, 192);
GPU_U64(n_writes_err, 200);
GPU_U64(n_mmap, 208);
GPU_U64(n_mmap_ok, 216);
GPU_U64(n_mmap_err, 224);
GPU_U64(n_mmap_free, 232);
GPU_U64(reg_bytes, 240);
MEMBER_TYPE_IS(hipFilePerGpuStats_t, uuid[0], char);

/* detailed (1024) + num_gpus (4) + padding (4) + 16 * 248 (3968) = 5000 bytes. */
SIZE_IS(hipFileStatsLevel3_t, 5000);
OFFSET_IS(hipFileStatsLevel3_t, detailed, 0);
OFFSET_IS(hipFileStatsLevel3_t, num_gpus, 1024);
OFFSET_IS(hipFileStatsLevel3_t, per_gpu_stats, 1032);
MEMBER_TYPE_IS(hipFileStatsLevel3_t, detailed, hipFileStatsLevel2_t);
MEMBER_TYPE_IS(hipFileStatsLevel3_t, num_gpus, uint32_t);
MEMBER_TYPE_IS(hipFileStatsLevel3_t, per_gpu_stats[0], hipFilePerGpuStats_t);
SIZE_IS(((hipFileStatsLevel3_t *)0)->per_gpu_stats, 16 * 248);

/* ---- process-stats client -------------------------------------------------- */
SIZE_IS(hipFileStatsError_t, 4);
VALUE_IS(hipFileStatsSuccess, 0);
VALUE_IS(hipFileStatsInvalidArgument, 1);
VALUE_IS(hipFileStatsTargetProcessNotFound, 2);
VALUE_IS(hipFileStatsTargetProcessNotAccessible, 3);
VALUE_IS(hipFileStatsReportGenerationFailed, 4);

/* ---- function types (written independently of the header) ------------------- */
FUNCTION_TYPE_IS(hipFileGetOpErrorString, const char *(*)(hipFileOpError_t));
FUNCTION_TYPE_IS(hipFileHandleRegister, hipFileError_t (*)(hipFileHandle_t *, hipFileDescr_t *));
FUNCTION_TYPE_IS(hipFileHandleDeregister, void (*)(hipFileHandle_t));
FUNCTION_TYPE_IS(hipFileBufRegister, hipFileError_t (*)(const void *, size_t, int));
FUNCTION_TYPE_IS(hipFileBufDeregister, hipFileError_t (*)(const void *));
FUNCTION_TYPE_IS(hipFileRead, ssize_t (*)(hipFileHandle_t, void *, size_t, hoff_t, hoff_t));
FUNCTION_TYPE_IS(hipFileWrite, ssize_t (*)(hipFileHandle_t, const void *, size_t, hoff_t, hoff_t));
FUNCTION_TYPE_IS(hipFileDriverOpen, hipFileError_t (*)(void));
FUNCTION_TYPE_IS(hipFileDriverClose, hipFileError_t (*)(void));
FUNCTION_TYPE_IS(hipFileUseCount, int64_t (*)(void));
FUNCTION_TYPE_IS(hipFileDriverGetProperties, hipFileError_t (*)(hipFileDriverProps_t *));
FUNCTION_TYPE_IS(hipFileDriverSetPollMode, hipFileError_t (*)(bool, size_t));
FUNCTION_TYPE_IS(hipFileDriverSetMaxDirectIOSize, hipFileError_t (*)(size_t));
FUNCTION_TYPE_IS(hipFileDriverSetMaxCacheSize, hipFileError_t (*)(size_t));
FUNCTION_TYPE_IS(hipFileDriverSetMaxPinnedMemSize, hipFileError_t (*)(size_t));
FUNCTION_TYPE_IS(hipFileBatchIOSetUp, hipFileError_t (*)(hipFileBatchHandle_t *, unsigned));
FUNCTION_TYPE_IS(hipFileBatchIOSubmit,
                 hipFileError_t (*)(hipFileBatchHandle_t, unsigned, hipFileIOParams_t *, unsigned));
FUNCTION_TYPE_IS(hipFileBatchIOGetStatus, hipFileError_t (*)(hipFileBatchHandle_t, unsigned, unsigned *,
                                                             hipFileIOEvents_t *, struct timespec *));
FUNCTION_TYPE_IS(hipFileBatchIOCancel, hipFileError_t (*)(hipFileBatchHandle_t));
FUNCTION_TYPE_IS(hipFileBatchIODestroy, void (*)(hipFileBatchHandle_t));
FUNCTION_TYPE_IS(hipFileReadAsync,
                 hipFileError_t (*)(hipFileHandle_t, void *, size_t *, hoff_t *, hoff_t *, ssize_t *, hipStream_t));
FUNCTION_TYPE_IS(hipFileWriteAsync,
                 hipFileError_t (*)(hipFileHandle_t, void *, size_t *, hoff_t *, hoff_t *, ssize_t *, hipStream_t));
FUNCTION_TYPE_IS(hipFileStreamRegister, hipFileError_t (*)(hipStream_t, unsigned));
FUNCTION_TYPE_IS(hipFileStreamDeregister, hipFileError_t (*)(hipStream_t));
FUNCTION_TYPE_IS(hipFileGetVersion, hipFileError_t (*)(unsigned *, unsigned *, unsigned *));
FUNCTION_TYPE_IS(hipFileGetParameterSizeT, hipFileError_t (*)(hipFileSizeTConfigParameter_t, size_t *));
FUNCTION_TYPE_IS(hipFileGetParameterBool, hipFileError_t (*)(hipFileBoolConfigParameter_t, bool *));
FUNCTION_TYPE_IS(hipFileGetParameterString, hipFileError_t (*)(hipFileStringConfigParameter_t, char *, int));
FUNCTION_TYPE_IS(hipFileSetParameterSizeT, hipFileError_t (*)(hipFileSizeTConfigParameter_t, size_t));
FUNCTION_TYPE_IS(hipFileSetParameterBool, hipFileError_t (*)(hipFileBoolConfigParameter_t, bool));
FUNCTION_TYPE_IS(hipFileSetParameterString, hipFileError_t (*)(hipFileStringConfigParameter_t, const char *));
FUNCTION_TYPE_IS(hipFileGetStatsL1, hipFileError_t (*)(hipFileStatsLevel1_t *));
FUNCTION_TYPE_IS(hipFileGetStatsL2, hipFileError_t (*)(hipFileStatsLevel2_t *));
FUNCTION_TYPE_IS(hipFileGetStatsL3, hipFileError_t (*)(hipFileStatsLevel3_t *));
FUNCTION_TYPE_IS(hipFileStatsCreateContext, hipFileStatsError_t (*)(hipFileStatsContext_t **, int));
FUNCTION_TYPE_IS(hipFileStatsCloseContext, void (*)(hipFileStatsContext_t *));
FUNCTION_TYPE_IS(hipFileStatsConnectToTargetProcess, hipFileStatsError_t (*)(hipFileStatsContext_t *));
FUNCTION_TYPE_IS(hipFileStatsPollTargetProcess, hipFileStatsError_t (*)(const hipFileStatsContext_t *, bool));
FUNCTION_TYPE_IS(hipFileStatsGenerateReport, hipFileStatsError_t (*)(const hipFileStatsContext_t *, int));

#ifdef __cplusplus
/* Redeclaring with C linkage is an error unless the headers already gave these C linkage. */
extern "C" {
const char *hipFileGetOpErrorString(hipFileOpError_t status);
hipFileError_t hipFileGetStatsL3(hipFileStatsLevel3_t *stats);
hipFileStatsError_t hipFileStatsGenerateReport(const hipFileStatsContext_t *context, int fd);
}
#endif

/* HIPFILE_ERRSTR names hipFileGetOpErrorString; only its type is inspected (not evaluated). */
ABI_ASSERT(ABI_SAME_TYPE(HIPFILE_ERRSTR(-5022), const char *), "HIPFILE_ERRSTR must yield const char *");

/* ---- runtime checks of the function-like macros ----------------------------------------- */
static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "abi_asserts: FAILED: %s\n", what);
        failures++;
    }
}

#define CHECK(cond) check((cond) ? 1 : 0, #cond)

int main(void)
{
    /* Non-constant inputs, so the macros are exercised at run time as well. */
    volatile int base = HIPFILE_BASE_ERR;
    hipFileError_t drv = {hipFileHipDriverError, (hipError_t)3};
    hipFileError_t ok = {hipFileSuccess, hipSuccess};

    CHECK(!IS_HIPFILE_ERR(5000));
    CHECK(!IS_HIPFILE_ERR(-5000));
    CHECK(!IS_HIPFILE_ERR(base));
    CHECK(IS_HIPFILE_ERR(base + 1));
    CHECK(IS_HIPFILE_ERR(5001));
    CHECK(IS_HIPFILE_ERR(-5022));
    CHECK(IS_HIPFILE_ERR(-(base + 22)));
    CHECK(IS_HIPFILE_ERR(hipFileIOMaxError));
    CHECK(!IS_HIPFILE_ERR(0));
    CHECK(!IS_HIPFILE_ERR(-1));
    CHECK(!IS_HIPFILE_ERR(-999));

#ifdef HIPFILE_PREDEFINE_DRV_MACROS
    /* The build predefined both macros; the header must have kept these definitions. */
    CHECK(IS_HIP_DRV_ERR(drv) == 4242);
    CHECK(HIP_DRV_ERR(drv) == 4343);
    (void)drv;
    (void)ok;
#else
    CHECK(IS_HIP_DRV_ERR(drv));
    CHECK(!IS_HIP_DRV_ERR(ok));
    CHECK(HIP_DRV_ERR(drv) == (hipError_t)3);
    CHECK(HIP_DRV_ERR(ok) == hipSuccess);
#endif

    if (failures != 0) {
        fprintf(stderr, "abi_asserts: %d runtime check(s) failed\n", failures);
        return 1;
    }
    printf("abi ok\n");
    return 0;
}
