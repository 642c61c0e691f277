/*
 * cufile_abi_asserts.c - compile-time proof that a cufile.h declares exactly the cuFile C ABI
 * at API level 1.19 on x86-64 Linux: every macro, every enum constant and enum size, every
 * structure tag, size, alignment, member offset, member size and member type, and the type
 * of every function.  The expected numbers are the ABI's, written out here independently of
 * any header.
 *
 * tests/cufile_header.rs builds and runs it against our include/cufile.h (C11 with and
 * without cuda.h, GNU C11, C++17) and against NVIDIA's own cufile.h from the nvidia-cufile
 * wheel, so both headers must pass the same assertions.  Modes, chosen with -D:
 *   CUFILE_ABI_INCLUDE_CUDA_FIRST  include <cuda.h> before cufile.h
 *   CUFILE_ABI_INCLUDE_CUDA_AFTER  include <cuda.h> after cufile.h
 *   CUFILE_ABI_EXPECT_CUDA_H       cuda.h must have been seen (its guard __cuda_cuda_h__)
 *   CUFILE_ABI_EXPECT_STAND_IN     cuda.h must not have been seen (the header's own CUDA types)
 *   CUFILE_ABI_HAVE_LOFF_T         the build has glibc's loff_t; check it is the callbacks' type
 * Only headers are needed: functions are inspected in unevaluated contexts, so nothing here
 * references a library symbol.  Prints "cufile abi ok" and exits 0 when the run-time checks
 * (message strings and the status macros) pass.
 */

#if defined(CUFILE_ABI_INCLUDE_CUDA_FIRST)
#include <cuda.h>
#endif

#include "cufile.h"

#if defined(CUFILE_ABI_INCLUDE_CUDA_AFTER)
#include <cuda.h>
#endif

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
#include <type_traits>
#define ABI_ASSERT(cond, msg) static_assert(cond, msg)
/* decltype gives a member's declared type; remove_reference drops what subscripts add. */
#define ABI_SAME_TYPE(expr, T) (std::is_same<std::remove_reference<decltype(expr)>::type, T>::value)
#define ABI_SAME_TYPES(T, U) (std::is_same<T, U>::value)
#define ABI_ALIGNOF(T) alignof(T)
#else
#define ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
/* _Generic uses C's type compatibility, after lvalue conversion of `expr`. */
#define ABI_SAME_TYPE(expr, T) _Generic((expr), T: 1, default: 0)
/* Pointers to the two types: no lvalue conversion, and incomplete types are fine. */
#define ABI_SAME_TYPES(T, U) _Generic((T *)0, U *: 1, default: 0)
#define ABI_ALIGNOF(T) _Alignof(T)
#endif

#define SIZE_IS(T, n) ABI_ASSERT(sizeof(T) == (n), "sizeof(" #T ") != " #n)
#define ALIGN_IS(T, n) ABI_ASSERT(ABI_ALIGNOF(T) == (n), "alignof(" #T ") != " #n)
#define OFFSET_IS(T, m, n) ABI_ASSERT(offsetof(T, m) == (n), "offsetof(" #T ", " #m ") != " #n)
#define MEMBER_SIZE_IS(T, m, n) ABI_ASSERT(sizeof(((T *)0)->m) == (n), "sizeof(" #T "." #m ") != " #n)
#define MEMBER_TYPE_IS(T, m, MT) ABI_ASSERT(ABI_SAME_TYPE(((T *)0)->m, MT), #T "." #m " is not " #MT)
/* An array member, compared through a pointer to it (arrays do not survive lvalue conversion). */
#define ARRAY_MEMBER_IS(T, m, ET, n) \
    ABI_ASSERT(ABI_SAME_TYPE(&((T *)0)->m, ET(*)[n]), #T "." #m " is not " #ET "[" #n "]")
#define TYPEDEF_IS(T, U) ABI_ASSERT(ABI_SAME_TYPES(T, U), #T " is not " #U)
#define VALUE_IS(c, n) ABI_ASSERT((long long)(c) == (long long)(n), #c " != " #n)
/* FT is the function's pointer type; &fn is never evaluated, so no symbol is referenced. */
#define FUNCTION_TYPE_IS(fn, FT) ABI_ASSERT(ABI_SAME_TYPE(&fn, FT), #fn " is not " #FT)

/* ---- which CUDA declarations are in use ------------------------------------------------ */
#if defined(CUFILE_ABI_EXPECT_CUDA_H) && !defined(__cuda_cuda_h__)
#error "expected cufile.h to use <cuda.h>"
#endif
#if defined(CUFILE_ABI_EXPECT_STAND_IN) && defined(__cuda_cuda_h__)
#error "expected cufile.h to declare its own CUDA types, but <cuda.h> was included"
#endif
#ifdef __CUFILE_HAVE_CUDA_TYPES
#error "the header's private macro __CUFILE_HAVE_CUDA_TYPES must not outlive it"
#endif

SIZE_IS(CUresult, 4);
VALUE_IS(CUDA_SUCCESS, 0);
TYPEDEF_IS(CUresult, enum cudaError_enum);
TYPEDEF_IS(CUstream, struct CUstream_st *);

/* ---- the types the ABI takes from the system, on x86-64 Linux -------------------------- */
SIZE_IS(off_t, 8);
SIZE_IS(size_t, 8);
SIZE_IS(ssize_t, 8);
SIZE_IS(long, 8);
SIZE_IS(bool, 1);
SIZE_IS(struct timespec, 16);
TYPEDEF_IS(off_t, long);
TYPEDEF_IS(ssize_t, long);
TYPEDEF_IS(sockaddr_t, struct sockaddr);
#if defined(CUFILE_ABI_HAVE_LOFF_T)
SIZE_IS(loff_t, 8);
TYPEDEF_IS(loff_t, long);
/* NVIDIA's header spells the callbacks' offsets loff_t: the same type as off_t here. */
TYPEDEF_IS(loff_t, off_t);
#define CUFILE_ABI_LOFF_T loff_t
#else
#define CUFILE_ABI_LOFF_T off_t
#endif

/* ---- macros ---------------------------------------------------------------------------- */
#if !defined(__CUFILE_H_)
#error "the include guard is __CUFILE_H_"
#endif
#if !defined(CUFILEOP_BASE_ERR) || !defined(CUFILEOP_STATUS_ENTRIES) || !defined(IS_CUFILE_ERR) ||            \
    !defined(CUFILE_ERRSTR) || !defined(IS_CUDA_ERR) || !defined(CU_FILE_CUDA_ERR) ||                          \
    !defined(CU_FILE_P2P_FLAG_PCI_P2PDMA) || !defined(CU_FILE_P2P_FLAG_NVFS) ||                               \
    !defined(CU_FILE_P2P_FLAG_DMABUF) || !defined(CU_FILE_P2P_FLAG_C2C) || !defined(CU_FILE_RDMA_REGISTER) ||  \
    !defined(CU_FILE_RDMA_RELAXED_ORDERING) || !defined(CU_FILE_RDMA_ERR_BASE) ||                             \
    !defined(CU_FILE_RDMA_SUCCESS) || !defined(CU_FILE_RDMA_RESET_TOKEN) ||                                   \
    !defined(CU_FILE_RDMA_RESET_TOKEN_FAILED) || !defined(cuFileDriverClose) ||                               \
    !defined(CU_FILE_STREAM_FIXED_BUF_OFFSET) || !defined(CU_FILE_STREAM_FIXED_FILE_OFFSET) ||                \
    !defined(CU_FILE_STREAM_FIXED_FILE_SIZE) || !defined(CU_FILE_STREAM_PAGE_ALIGNED_INPUTS) ||               \
    !defined(CUFILE_GPU_UUID_LEN)
#error "a macro of the cuFile ABI is missing"
#endif
/* Only the close is renamed; the X-macro's helper is defined and undefined inside the header. */
#if defined(cuFileDriverOpen) || defined(cuFileDriverClose_v2) || defined(CUFILE_OP)
#error "cuFileDriverOpen, cuFileDriverClose_v2 and CUFILE_OP must not be macros"
#endif
#if CUFILEOP_BASE_ERR != 5000 || CU_FILE_RDMA_ERR_BASE != 6000 || CUFILE_GPU_UUID_LEN != 16
#error "a numeric macro of the cuFile ABI has the wrong value (usable in #if)"
#endif

VALUE_IS(CUFILEOP_BASE_ERR, 5000);
VALUE_IS(CU_FILE_RDMA_REGISTER, 1);
VALUE_IS(CU_FILE_RDMA_RELAXED_ORDERING, 2);
VALUE_IS(CU_FILE_RDMA_ERR_BASE, 6000);
VALUE_IS(CU_FILE_RDMA_SUCCESS, 0);
VALUE_IS(CU_FILE_RDMA_RESET_TOKEN, 6001);
VALUE_IS(CU_FILE_RDMA_RESET_TOKEN_FAILED, 6002);
VALUE_IS(CU_FILE_STREAM_FIXED_BUF_OFFSET, 1);
VALUE_IS(CU_FILE_STREAM_FIXED_FILE_OFFSET, 2);
VALUE_IS(CU_FILE_STREAM_FIXED_FILE_SIZE, 4);
VALUE_IS(CU_FILE_STREAM_PAGE_ALIGNED_INPUTS, 8);
VALUE_IS(CUFILE_GPU_UUID_LEN, 16);
VALUE_IS(CU_FILE_P2P_FLAG_PCI_P2PDMA, 1);
VALUE_IS(CU_FILE_P2P_FLAG_NVFS, 2);
VALUE_IS(CU_FILE_P2P_FLAG_DMABUF, 4);
VALUE_IS(CU_FILE_P2P_FLAG_C2C, 8);
ABI_ASSERT(ABI_SAME_TYPE(CU_FILE_P2P_FLAG_PCI_P2PDMA, CUfileP2PFlags_t), "P2P masks are CUfileP2PFlags_t");
ABI_ASSERT(ABI_SAME_TYPE(CU_FILE_P2P_FLAG_NVFS, CUfileP2PFlags_t), "P2P masks are CUfileP2PFlags_t");
ABI_ASSERT(ABI_SAME_TYPE(CU_FILE_P2P_FLAG_DMABUF, CUfileP2PFlags_t), "P2P masks are CUfileP2PFlags_t");
ABI_ASSERT(ABI_SAME_TYPE(CU_FILE_P2P_FLAG_C2C, CUfileP2PFlags_t), "P2P masks are CUfileP2PFlags_t");

/* ---- CUfileOpError: every status ---------------------------------------------------------- */
TYPEDEF_IS(CUfileOpError, enum CUfileOpError);
SIZE_IS(CUfileOpError, 4);
VALUE_IS(CU_FILE_SUCCESS, 0);
VALUE_IS(CU_FILE_DRIVER_NOT_INITIALIZED, 5001);
VALUE_IS(CU_FILE_DRIVER_INVALID_PROPS, 5002);
VALUE_IS(CU_FILE_DRIVER_UNSUPPORTED_LIMIT, 5003);
VALUE_IS(CU_FILE_DRIVER_VERSION_MISMATCH, 5004);
VALUE_IS(CU_FILE_DRIVER_VERSION_READ_ERROR, 5005);
VALUE_IS(CU_FILE_DRIVER_CLOSING, 5006);
VALUE_IS(CU_FILE_PLATFORM_NOT_SUPPORTED, 5007);
VALUE_IS(CU_FILE_IO_NOT_SUPPORTED, 5008);
VALUE_IS(CU_FILE_DEVICE_NOT_SUPPORTED, 5009);
VALUE_IS(CU_FILE_NVFS_DRIVER_ERROR, 5010);
VALUE_IS(CU_FILE_CUDA_DRIVER_ERROR, 5011);
VALUE_IS(CU_FILE_CUDA_POINTER_INVALID, 5012);
VALUE_IS(CU_FILE_CUDA_MEMORY_TYPE_INVALID, 5013);
VALUE_IS(CU_FILE_CUDA_POINTER_RANGE_ERROR, 5014);
VALUE_IS(CU_FILE_CUDA_CONTEXT_MISMATCH, 5015);
VALUE_IS(CU_FILE_INVALID_MAPPING_SIZE, 5016);
VALUE_IS(CU_FILE_INVALID_MAPPING_RANGE, 5017);
VALUE_IS(CU_FILE_INVALID_FILE_TYPE, 5018);
VALUE_IS(CU_FILE_INVALID_FILE_OPEN_FLAG, 5019);
VALUE_IS(CU_FILE_DIO_NOT_SET, 5020);
VALUE_IS(CU_FILE_INVALID_VALUE, 5022);
VALUE_IS(CU_FILE_MEMORY_ALREADY_REGISTERED, 5023);
VALUE_IS(CU_FILE_MEMORY_NOT_REGISTERED, 5024);
VALUE_IS(CU_FILE_PERMISSION_DENIED, 5025);
VALUE_IS(CU_FILE_DRIVER_ALREADY_OPEN, 5026);
VALUE_IS(CU_FILE_HANDLE_NOT_REGISTERED, 5027);
VALUE_IS(CU_FILE_HANDLE_ALREADY_REGISTERED, 5028);
VALUE_IS(CU_FILE_DEVICE_NOT_FOUND, 5029);
VALUE_IS(CU_FILE_INTERNAL_ERROR, 5030);
VALUE_IS(CU_FILE_GETNEWFD_FAILED, 5031);
VALUE_IS(CU_FILE_NVFS_SETUP_ERROR, 5033);
VALUE_IS(CU_FILE_IO_DISABLED, 5034);
VALUE_IS(CU_FILE_BATCH_SUBMIT_FAILED, 5035);
VALUE_IS(CU_FILE_GPU_MEMORY_PINNING_FAILED, 5036);
VALUE_IS(CU_FILE_BATCH_FULL, 5037);
VALUE_IS(CU_FILE_ASYNC_NOT_SUPPORTED, 5038);
VALUE_IS(CU_FILE_INTERNAL_BATCH_SETUP_ERROR, 5039);
VALUE_IS(CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR, 5040);
VALUE_IS(CU_FILE_INTERNAL_BATCH_GETSTATUS_ERROR, 5041);
VALUE_IS(CU_FILE_INTERNAL_BATCH_CANCEL_ERROR, 5042);
VALUE_IS(CU_FILE_NOMEM_ERROR, 5043);
VALUE_IS(CU_FILE_IO_ERROR, 5044);
VALUE_IS(CU_FILE_INTERNAL_BUF_REGISTER_ERROR, 5045);
VALUE_IS(CU_FILE_HASH_OPR_ERROR, 5046);
VALUE_IS(CU_FILE_INVALID_CONTEXT_ERROR, 5047);
VALUE_IS(CU_FILE_NVFS_INTERNAL_DRIVER_ERROR, 5048);
VALUE_IS(CU_FILE_BATCH_NOCOMPAT_ERROR, 5049);
VALUE_IS(CU_FILE_IO_MAX_ERROR, 5050);

/* The X-macro: 49 entries, each value equal to its name's, the values 0 and 5001..5050 less 5021, 5032. */
#define CUFILE_OP(code, name, string) +1
enum { cufile_abi_status_entries = 0 CUFILEOP_STATUS_ENTRIES };
#undef CUFILE_OP
VALUE_IS(cufile_abi_status_entries, 49);
#define CUFILE_OP(code, name, string) ABI_ASSERT((code) == (name), #name " != " #code);
CUFILEOP_STATUS_ENTRIES
#undef CUFILE_OP
#define CUFILE_OP(code, name, string) +(code)
enum { cufile_abi_status_sum = 0 CUFILEOP_STATUS_ENTRIES };
#undef CUFILE_OP
/* 5001..5050 without 5021 and 5032, plus 0 */
VALUE_IS(cufile_abi_status_sum, (5001L + 5050L) * 50L / 2L - 5021L - 5032L);

/* ---- enums --------------------------------------------------------------------------- */
TYPEDEF_IS(CUfileDriverStatusFlags_t, enum CUfileDriverStatusFlags);
SIZE_IS(CUfileDriverStatusFlags_t, 4);
VALUE_IS(CU_FILE_LUSTRE_SUPPORTED, 0);
VALUE_IS(CU_FILE_WEKAFS_SUPPORTED, 1);
VALUE_IS(CU_FILE_NFS_SUPPORTED, 2);
VALUE_IS(CU_FILE_GPFS_SUPPORTED, 3);
VALUE_IS(CU_FILE_NVME_SUPPORTED, 4);
VALUE_IS(CU_FILE_NVMEOF_SUPPORTED, 5);
VALUE_IS(CU_FILE_SCSI_SUPPORTED, 6);
VALUE_IS(CU_FILE_SCALEFLUX_CSD_SUPPORTED, 7);
VALUE_IS(CU_FILE_NVMESH_SUPPORTED, 8);
VALUE_IS(CU_FILE_BEEGFS_SUPPORTED, 9);
VALUE_IS(CU_FILE_NVME_P2P_SUPPORTED, 11);
VALUE_IS(CU_FILE_SCATEFS_SUPPORTED, 12);
VALUE_IS(CU_FILE_VIRTIOFS_SUPPORTED, 13);
VALUE_IS(CU_FILE_PANFS_SUPPORTED, 14);
VALUE_IS(CU_FILE_MAX_TARGET_TYPES, 15);

TYPEDEF_IS(CUfileDriverControlFlags_t, enum CUfileDriverControlFlags);
SIZE_IS(CUfileDriverControlFlags_t, 4);
VALUE_IS(CU_FILE_USE_POLL_MODE, 0);
VALUE_IS(CU_FILE_ALLOW_COMPAT_MODE, 1);
VALUE_IS(CU_FILE_VANILLA_POSIX_IO_MODE, 2);
VALUE_IS(CU_FILE_POSIX_IO_MODE, 2);
VALUE_IS(CU_FILE_FALLBACK_IO_MODE, 4);

TYPEDEF_IS(CUfileFeatureFlags_t, enum CUfileFeatureFlags);
SIZE_IS(CUfileFeatureFlags_t, 4);
VALUE_IS(CU_FILE_DYN_ROUTING_SUPPORTED, 0);
VALUE_IS(CU_FILE_BATCH_IO_SUPPORTED, 1);
VALUE_IS(CU_FILE_STREAMS_SUPPORTED, 2);
VALUE_IS(CU_FILE_PARALLEL_IO_SUPPORTED, 3);
VALUE_IS(CU_FILE_P2P_SUPPORTED, 4);

TYPEDEF_IS(CUfileP2PFlags_t, enum CUfileP2PFlags);
SIZE_IS(CUfileP2PFlags_t, 4);
VALUE_IS(CUFILE_P2PDMA, 0);
VALUE_IS(CUFILE_NVFS, 1);
VALUE_IS(CUFILE_DMABUF, 2);
VALUE_IS(CUFILE_C2C, 3);
VALUE_IS(CUFILE_NVIDIA_PEERMEM, 4);

TYPEDEF_IS(CUfileOpcode_t, enum CUfileOpcode);
SIZE_IS(CUfileOpcode_t, 4);
VALUE_IS(CUFILE_READ, 0);
VALUE_IS(CUFILE_WRITE, 1);

SIZE_IS(enum CUfileFileHandleType, 4);
VALUE_IS(CU_FILE_HANDLE_TYPE_OPAQUE_FD, 1);
VALUE_IS(CU_FILE_HANDLE_TYPE_OPAQUE_WIN32, 2);
VALUE_IS(CU_FILE_HANDLE_TYPE_USERSPACE_FS, 3);

TYPEDEF_IS(CUfileStatus_t, enum CUFILEStatus_enum);
SIZE_IS(CUfileStatus_t, 4);
VALUE_IS(CUFILE_WAITING, 0x01);
VALUE_IS(CUFILE_PENDING, 0x02);
VALUE_IS(CUFILE_INVALID, 0x04);
VALUE_IS(CUFILE_CANCELED, 0x08);
VALUE_IS(CUFILE_COMPLETE, 0x10);
VALUE_IS(CUFILE_TIMEOUT, 0x20);
VALUE_IS(CUFILE_FAILED, 0x40);

TYPEDEF_IS(CUfileBatchMode_t, enum cufileBatchMode);
SIZE_IS(CUfileBatchMode_t, 4);
VALUE_IS(CUFILE_BATCH, 1);

TYPEDEF_IS(CUFileSizeTConfigParameter_t, enum CUFileSizeTConfigParameter_t);
SIZE_IS(CUFileSizeTConfigParameter_t, 4);
VALUE_IS(CUFILE_PARAM_PROFILE_STATS, 0);
VALUE_IS(CUFILE_PARAM_EXECUTION_MAX_IO_QUEUE_DEPTH, 1);
VALUE_IS(CUFILE_PARAM_EXECUTION_MAX_IO_THREADS, 2);
VALUE_IS(CUFILE_PARAM_EXECUTION_MIN_IO_THRESHOLD_SIZE_KB, 3);
VALUE_IS(CUFILE_PARAM_EXECUTION_MAX_REQUEST_PARALLELISM, 4);
VALUE_IS(CUFILE_PARAM_PROPERTIES_MAX_DIRECT_IO_SIZE_KB, 5);
VALUE_IS(CUFILE_PARAM_PROPERTIES_MAX_DEVICE_CACHE_SIZE_KB, 6);
VALUE_IS(CUFILE_PARAM_PROPERTIES_PER_BUFFER_CACHE_SIZE_KB, 7);
VALUE_IS(CUFILE_PARAM_PROPERTIES_MAX_DEVICE_PINNED_MEM_SIZE_KB, 8);
VALUE_IS(CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE, 9);
VALUE_IS(CUFILE_PARAM_POLLTHRESHOLD_SIZE_KB, 10);
VALUE_IS(CUFILE_PARAM_PROPERTIES_BATCH_IO_TIMEOUT_MS, 11);

TYPEDEF_IS(CUFileBoolConfigParameter_t, enum CUFileBoolConfigParameter_t);
SIZE_IS(CUFileBoolConfigParameter_t, 4);
VALUE_IS(CUFILE_PARAM_PROPERTIES_USE_POLL_MODE, 0);
VALUE_IS(CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE, 1);
VALUE_IS(CUFILE_PARAM_FORCE_COMPAT_MODE, 2);
VALUE_IS(CUFILE_PARAM_FS_MISC_API_CHECK_AGGRESSIVE, 3);
VALUE_IS(CUFILE_PARAM_EXECUTION_PARALLEL_IO, 4);
VALUE_IS(CUFILE_PARAM_PROFILE_NVTX, 5);
VALUE_IS(CUFILE_PARAM_PROPERTIES_ALLOW_SYSTEM_MEMORY, 6);
VALUE_IS(CUFILE_PARAM_USE_PCIP2PDMA, 7);
VALUE_IS(CUFILE_PARAM_PREFER_IO_URING, 8);
VALUE_IS(CUFILE_PARAM_FORCE_ODIRECT_MODE, 9);
VALUE_IS(CUFILE_PARAM_SKIP_TOPOLOGY_DETECTION, 10);
VALUE_IS(CUFILE_PARAM_STREAM_MEMOPS_BYPASS, 11);
VALUE_IS(CUFILE_PARAM_PROPERTIES_POSIX_IO_MODE, 12);
VALUE_IS(CUFILE_PARAM_GDS_FALLBACK_IO, 13);

TYPEDEF_IS(CUFileStringConfigParameter_t, enum CUFileStringConfigParameter_t);
SIZE_IS(CUFileStringConfigParameter_t, 4);
VALUE_IS(CUFILE_PARAM_LOGGING_LEVEL, 0);
VALUE_IS(CUFILE_PARAM_ENV_LOGFILE_PATH, 1);
VALUE_IS(CUFILE_PARAM_LOG_DIR, 2);
VALUE_IS(CUFILE_PARAM_RDMA_TRANSPORT, 3);

TYPEDEF_IS(CUFileArrayConfigParameter_t, enum CUFileArrayConfigParameter_t);
SIZE_IS(CUFileArrayConfigParameter_t, 4);
VALUE_IS(CUFILE_PARAM_POSIX_POOL_SLAB_SIZE_KB, 0);
VALUE_IS(CUFILE_PARAM_POSIX_POOL_SLAB_COUNT, 1);
VALUE_IS(CUFILE_PARAM_GPU_BOUNCE_BUFFER_SLAB_SIZE_KB, 2);
VALUE_IS(CUFILE_PARAM_GPU_BOUNCE_BUFFER_SLAB_COUNT, 3);

/* ---- typedefs and structures (layouts of x86-64 Linux, gcc) ------------------------------ */
TYPEDEF_IS(CUfileHandle_t, void *);
TYPEDEF_IS(CUfileBatchHandle_t, void *);

/* CUfileError_t: 8 bytes, aligned to 4 */
TYPEDEF_IS(CUfileError_t, struct CUfileError);
SIZE_IS(CUfileError_t, 8);
ALIGN_IS(CUfileError_t, 4);
OFFSET_IS(CUfileError_t, err, 0);
MEMBER_SIZE_IS(CUfileError_t, err, 4);
MEMBER_TYPE_IS(CUfileError_t, err, CUfileOpError);
OFFSET_IS(CUfileError_t, cu_err, 4);
MEMBER_SIZE_IS(CUfileError_t, cu_err, 4);
MEMBER_TYPE_IS(CUfileError_t, cu_err, CUresult);

/* CUfileDrvProps_t: 56 bytes, aligned to 8 */
TYPEDEF_IS(CUfileDrvProps_t, struct CUfileDrvProps);
SIZE_IS(CUfileDrvProps_t, 56);
ALIGN_IS(CUfileDrvProps_t, 8);
OFFSET_IS(CUfileDrvProps_t, nvfs, 0);
MEMBER_SIZE_IS(CUfileDrvProps_t, nvfs, 32);
OFFSET_IS(CUfileDrvProps_t, nvfs.major_version, 0);
MEMBER_SIZE_IS(CUfileDrvProps_t, nvfs.major_version, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, nvfs.major_version, unsigned int);
OFFSET_IS(CUfileDrvProps_t, nvfs.minor_version, 4);
MEMBER_SIZE_IS(CUfileDrvProps_t, nvfs.minor_version, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, nvfs.minor_version, unsigned int);
OFFSET_IS(CUfileDrvProps_t, nvfs.poll_thresh_size, 8);
MEMBER_SIZE_IS(CUfileDrvProps_t, nvfs.poll_thresh_size, 8);
MEMBER_TYPE_IS(CUfileDrvProps_t, nvfs.poll_thresh_size, size_t);
OFFSET_IS(CUfileDrvProps_t, nvfs.max_direct_io_size, 16);
MEMBER_SIZE_IS(CUfileDrvProps_t, nvfs.max_direct_io_size, 8);
MEMBER_TYPE_IS(CUfileDrvProps_t, nvfs.max_direct_io_size, size_t);
OFFSET_IS(CUfileDrvProps_t, nvfs.dstatusflags, 24);
MEMBER_SIZE_IS(CUfileDrvProps_t, nvfs.dstatusflags, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, nvfs.dstatusflags, unsigned int);
OFFSET_IS(CUfileDrvProps_t, nvfs.dcontrolflags, 28);
MEMBER_SIZE_IS(CUfileDrvProps_t, nvfs.dcontrolflags, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, nvfs.dcontrolflags, unsigned int);
OFFSET_IS(CUfileDrvProps_t, fflags, 32);
MEMBER_SIZE_IS(CUfileDrvProps_t, fflags, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, fflags, unsigned int);
OFFSET_IS(CUfileDrvProps_t, max_device_cache_size, 36);
MEMBER_SIZE_IS(CUfileDrvProps_t, max_device_cache_size, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, max_device_cache_size, unsigned int);
OFFSET_IS(CUfileDrvProps_t, per_buffer_cache_size, 40);
MEMBER_SIZE_IS(CUfileDrvProps_t, per_buffer_cache_size, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, per_buffer_cache_size, unsigned int);
OFFSET_IS(CUfileDrvProps_t, max_device_pinned_mem_size, 44);
MEMBER_SIZE_IS(CUfileDrvProps_t, max_device_pinned_mem_size, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, max_device_pinned_mem_size, unsigned int);
OFFSET_IS(CUfileDrvProps_t, max_batch_io_size, 48);
MEMBER_SIZE_IS(CUfileDrvProps_t, max_batch_io_size, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, max_batch_io_size, unsigned int);
OFFSET_IS(CUfileDrvProps_t, max_batch_io_timeout_msecs, 52);
MEMBER_SIZE_IS(CUfileDrvProps_t, max_batch_io_timeout_msecs, 4);
MEMBER_TYPE_IS(CUfileDrvProps_t, max_batch_io_timeout_msecs, unsigned int);

/* cufileRDMAInfo_t: 16 bytes, aligned to 8 */
TYPEDEF_IS(cufileRDMAInfo_t, struct cufileRDMAInfo);
SIZE_IS(cufileRDMAInfo_t, 16);
ALIGN_IS(cufileRDMAInfo_t, 8);
OFFSET_IS(cufileRDMAInfo_t, version, 0);
MEMBER_SIZE_IS(cufileRDMAInfo_t, version, 4);
MEMBER_TYPE_IS(cufileRDMAInfo_t, version, int);
OFFSET_IS(cufileRDMAInfo_t, desc_len, 4);
MEMBER_SIZE_IS(cufileRDMAInfo_t, desc_len, 4);
MEMBER_TYPE_IS(cufileRDMAInfo_t, desc_len, int);
OFFSET_IS(cufileRDMAInfo_t, desc_str, 8);
MEMBER_SIZE_IS(cufileRDMAInfo_t, desc_str, 8);
MEMBER_TYPE_IS(cufileRDMAInfo_t, desc_str, const char *);

/* CUfileFSOps_t: 40 bytes, aligned to 8 */
TYPEDEF_IS(CUfileFSOps_t, struct CUfileFSOps);
SIZE_IS(CUfileFSOps_t, 40);
ALIGN_IS(CUfileFSOps_t, 8);
OFFSET_IS(CUfileFSOps_t, fs_type, 0);
MEMBER_SIZE_IS(CUfileFSOps_t, fs_type, 8);
MEMBER_TYPE_IS(CUfileFSOps_t, fs_type, const char *(*)(const void *));
OFFSET_IS(CUfileFSOps_t, getRDMADeviceList, 8);
MEMBER_SIZE_IS(CUfileFSOps_t, getRDMADeviceList, 8);
MEMBER_TYPE_IS(CUfileFSOps_t, getRDMADeviceList, int (*)(const void *, sockaddr_t **));
OFFSET_IS(CUfileFSOps_t, getRDMADevicePriority, 16);
MEMBER_SIZE_IS(CUfileFSOps_t, getRDMADevicePriority, 8);
MEMBER_TYPE_IS(CUfileFSOps_t, getRDMADevicePriority, int (*)(const void *, char *, size_t, CUFILE_ABI_LOFF_T, const sockaddr_t *));
OFFSET_IS(CUfileFSOps_t, read, 24);
MEMBER_SIZE_IS(CUfileFSOps_t, read, 8);
MEMBER_TYPE_IS(CUfileFSOps_t, read, ssize_t (*)(const void *, char *, size_t, CUFILE_ABI_LOFF_T, const cufileRDMAInfo_t *));
OFFSET_IS(CUfileFSOps_t, write, 32);
MEMBER_SIZE_IS(CUfileFSOps_t, write, 8);
MEMBER_TYPE_IS(CUfileFSOps_t, write, ssize_t (*)(const void *, const char *, size_t, CUFILE_ABI_LOFF_T, const cufileRDMAInfo_t *));

/* CUfileDescr_t: 24 bytes, aligned to 8 */
TYPEDEF_IS(CUfileDescr_t, struct CUfileDescr_t);
SIZE_IS(CUfileDescr_t, 24);
ALIGN_IS(CUfileDescr_t, 8);
OFFSET_IS(CUfileDescr_t, type, 0);
MEMBER_SIZE_IS(CUfileDescr_t, type, 4);
MEMBER_TYPE_IS(CUfileDescr_t, type, enum CUfileFileHandleType);
OFFSET_IS(CUfileDescr_t, handle, 8);
MEMBER_SIZE_IS(CUfileDescr_t, handle, 8);
OFFSET_IS(CUfileDescr_t, handle.fd, 8);
MEMBER_SIZE_IS(CUfileDescr_t, handle.fd, 4);
MEMBER_TYPE_IS(CUfileDescr_t, handle.fd, int);
OFFSET_IS(CUfileDescr_t, handle.handle, 8);
MEMBER_SIZE_IS(CUfileDescr_t, handle.handle, 8);
MEMBER_TYPE_IS(CUfileDescr_t, handle.handle, void *);
OFFSET_IS(CUfileDescr_t, fs_ops, 16);
MEMBER_SIZE_IS(CUfileDescr_t, fs_ops, 8);
MEMBER_TYPE_IS(CUfileDescr_t, fs_ops, const CUfileFSOps_t *);

/* CUfileHandle_t: 8 bytes, aligned to 8 */
SIZE_IS(CUfileHandle_t, 8);
ALIGN_IS(CUfileHandle_t, 8);

/* CUfileBatchHandle_t: 8 bytes, aligned to 8 */
SIZE_IS(CUfileBatchHandle_t, 8);
ALIGN_IS(CUfileBatchHandle_t, 8);

/* CUfileIOParams_t: 64 bytes, aligned to 8 */
TYPEDEF_IS(CUfileIOParams_t, struct CUfileIOParams);
SIZE_IS(CUfileIOParams_t, 64);
ALIGN_IS(CUfileIOParams_t, 8);
OFFSET_IS(CUfileIOParams_t, mode, 0);
MEMBER_SIZE_IS(CUfileIOParams_t, mode, 4);
MEMBER_TYPE_IS(CUfileIOParams_t, mode, CUfileBatchMode_t);
OFFSET_IS(CUfileIOParams_t, u, 8);
MEMBER_SIZE_IS(CUfileIOParams_t, u, 32);
OFFSET_IS(CUfileIOParams_t, u.batch.devPtr_base, 8);
MEMBER_SIZE_IS(CUfileIOParams_t, u.batch.devPtr_base, 8);
MEMBER_TYPE_IS(CUfileIOParams_t, u.batch.devPtr_base, void *);
OFFSET_IS(CUfileIOParams_t, u.batch.file_offset, 16);
MEMBER_SIZE_IS(CUfileIOParams_t, u.batch.file_offset, 8);
MEMBER_TYPE_IS(CUfileIOParams_t, u.batch.file_offset, off_t);
OFFSET_IS(CUfileIOParams_t, u.batch.devPtr_offset, 24);
MEMBER_SIZE_IS(CUfileIOParams_t, u.batch.devPtr_offset, 8);
MEMBER_TYPE_IS(CUfileIOParams_t, u.batch.devPtr_offset, off_t);
OFFSET_IS(CUfileIOParams_t, u.batch.size, 32);
MEMBER_SIZE_IS(CUfileIOParams_t, u.batch.size, 8);
MEMBER_TYPE_IS(CUfileIOParams_t, u.batch.size, size_t);
OFFSET_IS(CUfileIOParams_t, fh, 40);
MEMBER_SIZE_IS(CUfileIOParams_t, fh, 8);
MEMBER_TYPE_IS(CUfileIOParams_t, fh, CUfileHandle_t);
OFFSET_IS(CUfileIOParams_t, opcode, 48);
MEMBER_SIZE_IS(CUfileIOParams_t, opcode, 4);
MEMBER_TYPE_IS(CUfileIOParams_t, opcode, CUfileOpcode_t);
OFFSET_IS(CUfileIOParams_t, cookie, 56);
MEMBER_SIZE_IS(CUfileIOParams_t, cookie, 8);
MEMBER_TYPE_IS(CUfileIOParams_t, cookie, void *);

/* CUfileIOEvents_t: 24 bytes, aligned to 8 */
TYPEDEF_IS(CUfileIOEvents_t, struct CUfileIOEvents);
SIZE_IS(CUfileIOEvents_t, 24);
ALIGN_IS(CUfileIOEvents_t, 8);
OFFSET_IS(CUfileIOEvents_t, cookie, 0);
MEMBER_SIZE_IS(CUfileIOEvents_t, cookie, 8);
MEMBER_TYPE_IS(CUfileIOEvents_t, cookie, void *);
OFFSET_IS(CUfileIOEvents_t, status, 8);
MEMBER_SIZE_IS(CUfileIOEvents_t, status, 4);
MEMBER_TYPE_IS(CUfileIOEvents_t, status, CUfileStatus_t);
OFFSET_IS(CUfileIOEvents_t, ret, 16);
MEMBER_SIZE_IS(CUfileIOEvents_t, ret, 8);
MEMBER_TYPE_IS(CUfileIOEvents_t, ret, size_t);

/* CUfileIOVec_t: 16 bytes, aligned to 8 */
TYPEDEF_IS(CUfileIOVec_t, struct CUfileIOVec);
SIZE_IS(CUfileIOVec_t, 16);
ALIGN_IS(CUfileIOVec_t, 8);
OFFSET_IS(CUfileIOVec_t, base, 0);
MEMBER_SIZE_IS(CUfileIOVec_t, base, 8);
MEMBER_TYPE_IS(CUfileIOVec_t, base, void *);
OFFSET_IS(CUfileIOVec_t, len, 8);
MEMBER_SIZE_IS(CUfileIOVec_t, len, 8);
MEMBER_TYPE_IS(CUfileIOVec_t, len, size_t);

/* CUfileOpCounter_t: 16 bytes, aligned to 8 */
TYPEDEF_IS(CUfileOpCounter_t, struct CUfileOpCounter);
SIZE_IS(CUfileOpCounter_t, 16);
ALIGN_IS(CUfileOpCounter_t, 8);
OFFSET_IS(CUfileOpCounter_t, ok, 0);
MEMBER_SIZE_IS(CUfileOpCounter_t, ok, 8);
MEMBER_TYPE_IS(CUfileOpCounter_t, ok, uint64_t);
OFFSET_IS(CUfileOpCounter_t, err, 8);
MEMBER_SIZE_IS(CUfileOpCounter_t, err, 8);
MEMBER_TYPE_IS(CUfileOpCounter_t, err, uint64_t);

/* CUfileStatsLevel1_t: 624 bytes, aligned to 8 */
TYPEDEF_IS(CUfileStatsLevel1_t, struct CUfileStatsLevel1);
SIZE_IS(CUfileStatsLevel1_t, 624);
ALIGN_IS(CUfileStatsLevel1_t, 8);
OFFSET_IS(CUfileStatsLevel1_t, read_ops, 0);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, read_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, read_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, write_ops, 16);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, write_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, write_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, hdl_register_ops, 32);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, hdl_register_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, hdl_register_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, hdl_deregister_ops, 48);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, hdl_deregister_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, hdl_deregister_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, buf_register_ops, 64);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, buf_register_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, buf_register_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, buf_deregister_ops, 80);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, buf_deregister_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, buf_deregister_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, read_bytes, 96);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, read_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, read_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, write_bytes, 104);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, write_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, write_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, read_bw_bytes_per_sec, 112);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, read_bw_bytes_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, read_bw_bytes_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, write_bw_bytes_per_sec, 120);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, write_bw_bytes_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, write_bw_bytes_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, read_lat_avg_us, 128);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, read_lat_avg_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, read_lat_avg_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, write_lat_avg_us, 136);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, write_lat_avg_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, write_lat_avg_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, read_ops_per_sec, 144);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, read_ops_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, read_ops_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, write_ops_per_sec, 152);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, write_ops_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, write_ops_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, read_lat_sum_us, 160);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, read_lat_sum_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, read_lat_sum_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, write_lat_sum_us, 168);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, write_lat_sum_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, write_lat_sum_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_submit_ops, 176);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_submit_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_submit_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_complete_ops, 192);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_complete_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_complete_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_setup_ops, 208);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_setup_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_setup_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_cancel_ops, 224);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_cancel_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_cancel_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_destroy_ops, 240);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_destroy_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_destroy_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_enqueued_ops, 256);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_enqueued_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_enqueued_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_posix_enqueued_ops, 272);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_posix_enqueued_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_posix_enqueued_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_processed_ops, 288);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_processed_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_processed_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_posix_processed_ops, 304);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_posix_processed_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_posix_processed_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_nvfs_submit_ops, 320);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_nvfs_submit_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_nvfs_submit_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_p2p_submit_ops, 336);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_p2p_submit_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_p2p_submit_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_aio_submit_ops, 352);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_aio_submit_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_aio_submit_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_iouring_submit_ops, 368);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_iouring_submit_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_iouring_submit_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_mixed_io_submit_ops, 384);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_mixed_io_submit_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_mixed_io_submit_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_total_submit_ops, 400);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_total_submit_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_total_submit_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_read_bytes, 416);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_read_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_read_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_write_bytes, 424);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_write_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_write_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_read_bw_bytes, 432);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_read_bw_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_read_bw_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_write_bw_bytes, 440);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_write_bw_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_write_bw_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_submit_lat_avg_us, 448);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_submit_lat_avg_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_submit_lat_avg_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_completion_lat_avg_us, 456);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_completion_lat_avg_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_completion_lat_avg_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_submit_ops_per_sec, 464);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_submit_ops_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_submit_ops_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_complete_ops_per_sec, 472);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_complete_ops_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_complete_ops_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_submit_lat_sum_us, 480);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_submit_lat_sum_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_submit_lat_sum_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, batch_completion_lat_sum_us, 488);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, batch_completion_lat_sum_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, batch_completion_lat_sum_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, last_batch_read_bytes, 496);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, last_batch_read_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, last_batch_read_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, last_batch_write_bytes, 504);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, last_batch_write_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, last_batch_write_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, readv_ops, 512);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, readv_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, readv_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, writev_ops, 528);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, writev_ops, 16);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, writev_ops, CUfileOpCounter_t);
OFFSET_IS(CUfileStatsLevel1_t, readv_bytes, 544);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, readv_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, readv_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, writev_bytes, 552);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, writev_bytes, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, writev_bytes, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, readv_bw_bytes_per_sec, 560);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, readv_bw_bytes_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, readv_bw_bytes_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, writev_bw_bytes_per_sec, 568);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, writev_bw_bytes_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, writev_bw_bytes_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, readv_lat_avg_us, 576);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, readv_lat_avg_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, readv_lat_avg_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, writev_lat_avg_us, 584);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, writev_lat_avg_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, writev_lat_avg_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, readv_ops_per_sec, 592);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, readv_ops_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, readv_ops_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, writev_ops_per_sec, 600);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, writev_ops_per_sec, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, writev_ops_per_sec, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, readv_lat_sum_us, 608);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, readv_lat_sum_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, readv_lat_sum_us, uint64_t);
OFFSET_IS(CUfileStatsLevel1_t, writev_lat_sum_us, 616);
MEMBER_SIZE_IS(CUfileStatsLevel1_t, writev_lat_sum_us, 8);
MEMBER_TYPE_IS(CUfileStatsLevel1_t, writev_lat_sum_us, uint64_t);

/* CUfileStatsLevel2_t: 1136 bytes, aligned to 8 */
TYPEDEF_IS(CUfileStatsLevel2_t, struct CUfileStatsLevel2);
SIZE_IS(CUfileStatsLevel2_t, 1136);
ALIGN_IS(CUfileStatsLevel2_t, 8);
OFFSET_IS(CUfileStatsLevel2_t, basic, 0);
MEMBER_SIZE_IS(CUfileStatsLevel2_t, basic, 624);
MEMBER_TYPE_IS(CUfileStatsLevel2_t, basic, CUfileStatsLevel1_t);
OFFSET_IS(CUfileStatsLevel2_t, read_size_kb_hist, 624);
MEMBER_SIZE_IS(CUfileStatsLevel2_t, read_size_kb_hist, 256);
ARRAY_MEMBER_IS(CUfileStatsLevel2_t, read_size_kb_hist, uint64_t, 32);
OFFSET_IS(CUfileStatsLevel2_t, write_size_kb_hist, 880);
MEMBER_SIZE_IS(CUfileStatsLevel2_t, write_size_kb_hist, 256);
ARRAY_MEMBER_IS(CUfileStatsLevel2_t, write_size_kb_hist, uint64_t, 32);

/* CUfilePerGpuStats_t: 248 bytes, aligned to 8 */
TYPEDEF_IS(CUfilePerGpuStats_t, struct CUfilePerGpuStats);
SIZE_IS(CUfilePerGpuStats_t, 248);
ALIGN_IS(CUfilePerGpuStats_t, 8);
OFFSET_IS(CUfilePerGpuStats_t, uuid, 0);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, uuid, 16);
ARRAY_MEMBER_IS(CUfilePerGpuStats_t, uuid, char, CUFILE_GPU_UUID_LEN);
OFFSET_IS(CUfilePerGpuStats_t, read_bytes, 16);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, read_bytes, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, read_bytes, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, read_bw_bytes_per_sec, 24);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, read_bw_bytes_per_sec, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, read_bw_bytes_per_sec, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, read_utilization, 32);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, read_utilization, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, read_utilization, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, read_duration_us, 40);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, read_duration_us, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, read_duration_us, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_total_reads, 48);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_total_reads, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_total_reads, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_p2p_reads, 56);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_p2p_reads, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_p2p_reads, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_nvfs_reads, 64);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_nvfs_reads, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_nvfs_reads, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_posix_reads, 72);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_posix_reads, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_posix_reads, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_unaligned_reads, 80);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_unaligned_reads, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_unaligned_reads, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_dr_reads, 88);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_dr_reads, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_dr_reads, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_sparse_regions, 96);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_sparse_regions, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_sparse_regions, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_inline_regions, 104);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_inline_regions, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_inline_regions, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_reads_err, 112);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_reads_err, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_reads_err, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, writes_bytes, 120);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, writes_bytes, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, writes_bytes, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, write_bw_bytes_per_sec, 128);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, write_bw_bytes_per_sec, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, write_bw_bytes_per_sec, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, write_utilization, 136);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, write_utilization, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, write_utilization, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, write_duration_us, 144);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, write_duration_us, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, write_duration_us, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_total_writes, 152);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_total_writes, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_total_writes, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_p2p_writes, 160);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_p2p_writes, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_p2p_writes, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_nvfs_writes, 168);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_nvfs_writes, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_nvfs_writes, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_posix_writes, 176);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_posix_writes, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_posix_writes, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_unaligned_writes, 184);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_unaligned_writes, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_unaligned_writes, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_dr_writes, 192);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_dr_writes, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_dr_writes, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_writes_err, 200);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_writes_err, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_writes_err, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_mmap, 208);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_mmap, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_mmap, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_mmap_ok, 216);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_mmap_ok, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_mmap_ok, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_mmap_err, 224);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_mmap_err, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_mmap_err, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, n_mmap_free, 232);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, n_mmap_free, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, n_mmap_free, uint64_t);
OFFSET_IS(CUfilePerGpuStats_t, reg_bytes, 240);
MEMBER_SIZE_IS(CUfilePerGpuStats_t, reg_bytes, 8);
MEMBER_TYPE_IS(CUfilePerGpuStats_t, reg_bytes, uint64_t);

/* CUfileStatsLevel3_t: 5112 bytes, aligned to 8 */
TYPEDEF_IS(CUfileStatsLevel3_t, struct CUfileStatsLevel3);
SIZE_IS(CUfileStatsLevel3_t, 5112);
ALIGN_IS(CUfileStatsLevel3_t, 8);
OFFSET_IS(CUfileStatsLevel3_t, detailed, 0);
MEMBER_SIZE_IS(CUfileStatsLevel3_t, detailed, 1136);
MEMBER_TYPE_IS(CUfileStatsLevel3_t, detailed, CUfileStatsLevel2_t);
OFFSET_IS(CUfileStatsLevel3_t, num_gpus, 1136);
MEMBER_SIZE_IS(CUfileStatsLevel3_t, num_gpus, 4);
MEMBER_TYPE_IS(CUfileStatsLevel3_t, num_gpus, uint32_t);
OFFSET_IS(CUfileStatsLevel3_t, per_gpu_stats, 1144);
MEMBER_SIZE_IS(CUfileStatsLevel3_t, per_gpu_stats, 3968);
ARRAY_MEMBER_IS(CUfileStatsLevel3_t, per_gpu_stats, CUfilePerGpuStats_t, 16);
/* ---- functions: every exported name, with its exact type ------------------------------ */
/* files and buffers */
FUNCTION_TYPE_IS(cuFileHandleRegister, CUfileError_t (*)(CUfileHandle_t *, CUfileDescr_t *));
FUNCTION_TYPE_IS(cuFileHandleDeregister, void (*)(CUfileHandle_t));
FUNCTION_TYPE_IS(cuFileBufRegister, CUfileError_t (*)(const void *, size_t, int));
FUNCTION_TYPE_IS(cuFileBufDeregister, CUfileError_t (*)(const void *));
/* synchronous I/O */
FUNCTION_TYPE_IS(cuFileRead, ssize_t (*)(CUfileHandle_t, void *, size_t, off_t, off_t));
FUNCTION_TYPE_IS(cuFileWrite, ssize_t (*)(CUfileHandle_t, const void *, size_t, off_t, off_t));
/* driver */
FUNCTION_TYPE_IS(cuFileDriverOpen, CUfileError_t (*)(void));
FUNCTION_TYPE_IS(cuFileDriverClose_v2, CUfileError_t (*)(void));
/* Through the macro, the close a program compiles against is cuFileDriverClose_v2. */
FUNCTION_TYPE_IS(cuFileDriverClose, CUfileError_t (*)(void));
/* The legacy name, declared before the macro (looked up by name with dlsym or ctypes). */
#pragma push_macro("cuFileDriverClose")
#undef cuFileDriverClose
FUNCTION_TYPE_IS(cuFileDriverClose, CUfileError_t (*)(void));
#pragma pop_macro("cuFileDriverClose")
FUNCTION_TYPE_IS(cuFileUseCount, long (*)(void));
FUNCTION_TYPE_IS(cuFileDriverGetProperties, CUfileError_t (*)(CUfileDrvProps_t *));
FUNCTION_TYPE_IS(cuFileDriverSetPollMode, CUfileError_t (*)(bool, size_t));
FUNCTION_TYPE_IS(cuFileDriverSetMaxDirectIOSize, CUfileError_t (*)(size_t));
FUNCTION_TYPE_IS(cuFileDriverSetMaxCacheSize, CUfileError_t (*)(size_t));
FUNCTION_TYPE_IS(cuFileDriverSetMaxPinnedMemSize, CUfileError_t (*)(size_t));
/* batch */
FUNCTION_TYPE_IS(cuFileBatchIOSetUp, CUfileError_t (*)(CUfileBatchHandle_t *, unsigned));
FUNCTION_TYPE_IS(cuFileBatchIOSubmit, CUfileError_t (*)(CUfileBatchHandle_t, unsigned, CUfileIOParams_t *, unsigned int));
FUNCTION_TYPE_IS(cuFileBatchIOGetStatus,
                 CUfileError_t (*)(CUfileBatchHandle_t, unsigned, unsigned *, CUfileIOEvents_t *, struct timespec *));
FUNCTION_TYPE_IS(cuFileBatchIOCancel, CUfileError_t (*)(CUfileBatchHandle_t));
FUNCTION_TYPE_IS(cuFileBatchIODestroy, void (*)(CUfileBatchHandle_t));
/* stream-ordered */
FUNCTION_TYPE_IS(cuFileReadAsync,
                 CUfileError_t (*)(CUfileHandle_t, void *, size_t *, off_t *, off_t *, ssize_t *, CUstream));
FUNCTION_TYPE_IS(cuFileWriteAsync,
                 CUfileError_t (*)(CUfileHandle_t, void *, size_t *, off_t *, off_t *, ssize_t *, CUstream));
FUNCTION_TYPE_IS(cuFileStreamRegister, CUfileError_t (*)(CUstream, unsigned));
FUNCTION_TYPE_IS(cuFileStreamDeregister, CUfileError_t (*)(CUstream));
/* vectored */
FUNCTION_TYPE_IS(cuFileReadv, ssize_t (*)(CUfileHandle_t, const CUfileIOVec_t *, size_t, off_t, unsigned));
FUNCTION_TYPE_IS(cuFileWritev, ssize_t (*)(CUfileHandle_t, const CUfileIOVec_t *, size_t, off_t, unsigned));
/* version, topology */
FUNCTION_TYPE_IS(cuFileGetVersion, CUfileError_t (*)(int *));
FUNCTION_TYPE_IS(cuFileExportPCIeTopology, CUfileError_t (*)(const char *));
/* parameters */
FUNCTION_TYPE_IS(cuFileGetParameterSizeT, CUfileError_t (*)(CUFileSizeTConfigParameter_t, size_t *));
FUNCTION_TYPE_IS(cuFileGetParameterBool, CUfileError_t (*)(CUFileBoolConfigParameter_t, bool *));
FUNCTION_TYPE_IS(cuFileGetParameterString, CUfileError_t (*)(CUFileStringConfigParameter_t, char *, int));
FUNCTION_TYPE_IS(cuFileGetParameterMinMaxValue, CUfileError_t (*)(CUFileSizeTConfigParameter_t, size_t *, size_t *));
FUNCTION_TYPE_IS(cuFileSetParameterSizeT, CUfileError_t (*)(CUFileSizeTConfigParameter_t, size_t));
FUNCTION_TYPE_IS(cuFileSetParameterBool, CUfileError_t (*)(CUFileBoolConfigParameter_t, bool));
FUNCTION_TYPE_IS(cuFileSetParameterString, CUfileError_t (*)(CUFileStringConfigParameter_t, const char *));
FUNCTION_TYPE_IS(cuFileSetParameterPosixPoolSlabArray, CUfileError_t (*)(const size_t *, const size_t *, int));
FUNCTION_TYPE_IS(cuFileGetParameterPosixPoolSlabArray, CUfileError_t (*)(size_t *, size_t *, int));
FUNCTION_TYPE_IS(cuFileSetParameterGpuBounceBufferSlabArray, CUfileError_t (*)(const size_t *, const size_t *, int));
FUNCTION_TYPE_IS(cuFileGetParameterGpuBounceBufferSlabArray, CUfileError_t (*)(size_t *, size_t *, int));
/* statistics */
FUNCTION_TYPE_IS(cuFileSetStatsLevel, CUfileError_t (*)(int));
FUNCTION_TYPE_IS(cuFileGetStatsLevel, CUfileError_t (*)(int *));
FUNCTION_TYPE_IS(cuFileStatsStart, CUfileError_t (*)(void));
FUNCTION_TYPE_IS(cuFileStatsStop, CUfileError_t (*)(void));
FUNCTION_TYPE_IS(cuFileStatsReset, CUfileError_t (*)(void));
FUNCTION_TYPE_IS(cuFileGetStatsL1, CUfileError_t (*)(CUfileStatsLevel1_t *));
FUNCTION_TYPE_IS(cuFileGetStatsL2, CUfileError_t (*)(CUfileStatsLevel2_t *));
FUNCTION_TYPE_IS(cuFileGetStatsL3, CUfileError_t (*)(CUfileStatsLevel3_t *));
/* GPU / P2P */
FUNCTION_TYPE_IS(cuFileGetBARSizeInKB, CUfileError_t (*)(int, size_t *));
FUNCTION_TYPE_IS(cuFileDriverGetP2PFlags, CUfileError_t (*)(CUfileDriverStatusFlags_t, CUfileP2PFlags_t *));
FUNCTION_TYPE_IS(cuFileDriverSetP2PFlags, CUfileError_t (*)(CUfileDriverStatusFlags_t, CUfileP2PFlags_t));
/* the header-only message function (static inline, not exported) */
FUNCTION_TYPE_IS(cufileop_status_error, const char *(*)(CUfileOpError));

/* ---- run-time checks --------------------------------------------------------------------- */

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("FAILED: %s\n", what);
        failures++;
    }
}

/* Every status with the exact message programs print. */
static const struct {
    int value;
    const char *message;
} expected_messages[] = {
    {0, "cufile success"},
    {5001, "nvidia-fs driver is not loaded. Set allow_compat_mode to true in cufile.json file to enable compatible mode"},
    {5002, "invalid property"},
    {5003, "property range error"},
    {5004, "nvidia-fs driver version mismatch"},
    {5005, "nvidia-fs driver version read error"},
    {5006, "driver shutdown in progress"},
    {5007, "GPUDirect Storage not supported on current platform"},
    {5008, "GPUDirect Storage not supported on current file"},
    {5009, "GPUDirect Storage not supported on current GPU"},
    {5010, "nvidia-fs driver ioctl error"},
    {5011, "CUDA Driver API error"},
    {5012, "invalid device pointer"},
    {5013, "invalid pointer memory type"},
    {5014, "pointer range exceeds allocated address range"},
    {5015, "cuda context mismatch"},
    {5016, "access beyond maximum pinned size"},
    {5017, "access beyond mapped size"},
    {5018, "unsupported file type"},
    {5019, "unsupported file open flags"},
    {5020, "fd direct IO not set"},
    {5022, "invalid arguments"},
    {5023, "device pointer already registered"},
    {5024, "device pointer lookup failure"},
    {5025, "driver or file access error"},
    {5026, "driver is already open"},
    {5027, "file descriptor is not registered"},
    {5028, "file descriptor is already registered"},
    {5029, "GPU device not found"},
    {5030, "internal error"},
    {5031, "failed to obtain new file descriptor"},
    {5033, "NVFS driver initialization error"},
    {5034, "GPUDirect Storage disabled by config on current file"},
    {5035, "failed to submit batch operation"},
    {5036, "failed to allocate pinned GPU Memory"},
    {5037, "queue full for batch operation"},
    {5038, "cuFile stream operation not supported"},
    {5039, "batch setup internal error - retry later"},
    {5040, "batch submit internal error - retry later"},
    {5041, "batch get status internal error - retry later"},
    {5042, "batch cancel internal error - retry later"},
    {5043, "cufile no memory error - retry later"},
    {5044, "cufile io error"},
    {5045, "cufile buf registration error"},
    {5046, "cufile hash operation error"},
    {5047, "cufile invalid context error"},
    {5048, "nvfs internal driver error"},
    {5049, "compat mode off error"},
    {5050, "GPUDirect Storage Max Error"},
    /* values outside the table */
    {1, "unknown cufile error"},
    {5000, "unknown cufile error"},
    {5021, "unknown cufile error"},
    {5032, "unknown cufile error"},
    {5051, "unknown cufile error"},
    {6001, "unknown cufile error"},
};

#define CUFILE_ABI_STR2(x) #x
#define CUFILE_ABI_STR(x) CUFILE_ABI_STR2(x)

int main(void)
{
    size_t i;
    char what[160];
    for (i = 0; i < sizeof(expected_messages) / sizeof(expected_messages[0]); i++) {
        int value = expected_messages[i].value;
        const char *message = expected_messages[i].message;
        snprintf(what, sizeof(what), "cufileop_status_error(%d) is \"%s\"", value, message);
        expect(strcmp(cufileop_status_error((CUfileOpError)value), message) == 0, what);
        snprintf(what, sizeof(what), "CUFILE_ERRSTR(-%d) is \"%s\"", value, message);
        expect(strcmp(CUFILE_ERRSTR(-value), message) == 0, what);
    }

    /* Above 5000 in magnitude, either sign, from an int, a CUfileOpError or an ssize_t. */
    expect(!IS_CUFILE_ERR(0), "IS_CUFILE_ERR(0) is false");
    expect(!IS_CUFILE_ERR(5000), "IS_CUFILE_ERR(5000) is false");
    expect(!IS_CUFILE_ERR(-5000), "IS_CUFILE_ERR(-5000) is false");
    expect(!IS_CUFILE_ERR(-1), "IS_CUFILE_ERR(-1) is false");
    expect(IS_CUFILE_ERR(5001), "IS_CUFILE_ERR(5001) is true");
    expect(IS_CUFILE_ERR(CU_FILE_IO_MAX_ERROR), "IS_CUFILE_ERR(CU_FILE_IO_MAX_ERROR) is true");
    {
        ssize_t ret = -(ssize_t)CU_FILE_HANDLE_NOT_REGISTERED;
        expect(IS_CUFILE_ERR(ret), "IS_CUFILE_ERR(-(ssize_t)5027) is true");
        expect(strcmp(CUFILE_ERRSTR(ret), "file descriptor is not registered") == 0, "CUFILE_ERRSTR(ssize_t -5027)");
    }

    {
        CUfileError_t cuda_failure;
        CUfileError_t other_failure;
        cuda_failure.err = CU_FILE_CUDA_DRIVER_ERROR;
        cuda_failure.cu_err = (CUresult)700;
        other_failure.err = CU_FILE_INVALID_VALUE;
        other_failure.cu_err = CUDA_SUCCESS;
        expect(IS_CUDA_ERR(cuda_failure), "IS_CUDA_ERR for CU_FILE_CUDA_DRIVER_ERROR");
        expect(!IS_CUDA_ERR(other_failure), "!IS_CUDA_ERR for CU_FILE_INVALID_VALUE");
        expect((int)CU_FILE_CUDA_ERR(cuda_failure) == 700, "CU_FILE_CUDA_ERR gives cu_err");
    }

    expect(strcmp(CUFILE_ABI_STR(cuFileDriverClose), "cuFileDriverClose_v2") == 0,
           "cuFileDriverClose expands to cuFileDriverClose_v2");

    if (failures != 0) {
        printf("%d run-time check(s) failed\n", failures);
        return 1;
    }
    printf("cufile abi ok\n");
    return 0;
}
