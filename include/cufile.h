/*
 * cufile.h - public C interface of libcufile.so.0, the cuFile C ABI (API level 1.19) served
 * by the hipfile engine.
 *
 * Which layouts the library fills: a process's cuFile consumers may have been built against
 * any cufile.h, and the statistics structures grew in 1.19.  So the library reports 1180
 * (cuFileGetVersion()) and fills the 1.15-1.18 statistics layouts (512, 1024 and 5000 bytes),
 * which no consumer has less room for; the 1.19 readv/writev counters are then not reported.
 * A deployment whose every consumer was built against a 1.19 or newer header (this one is)
 * sets HIPFILE_CUFILE_API_LEVEL=1.19: the library then reports 1190 and fills the 1.19
 * layouts declared below (624, 1136 and 5112 bytes).
 *
 * This header belongs to a re-implementation written in Rust.  It is source- and
 * binary-compatible with NVIDIA's cufile.h of cuFile 1.19 (unchanged in 1.20): every name,
 * numeric value, structure tag, structure layout and function signature below is part of
 * that ABI and must never change.  Programs built against either header run against either
 * library.  The comments are ours.
 *
 * How the interface is used: open the driver (or let the first registration open it),
 * register a file descriptor to get a CUfileHandle_t, optionally register GPU or host
 * buffers, then move bytes with cuFileRead()/cuFileWrite() at explicit file offsets, in a
 * batch (cuFileBatchIO*), or ordered on a CUDA stream (cuFileReadAsync/cuFileWriteAsync).
 *
 * Return conventions:
 *   - functions returning CUfileError_t put the outcome in .err (CU_FILE_SUCCESS or a
 *     CUfileOpError); .cu_err holds the CUDA driver's CUresult and is non-zero only when
 *     .err is CU_FILE_CUDA_DRIVER_ERROR;
 *   - functions returning ssize_t return a byte count (>= 0), or -1 with errno set, or a
 *     negated CUfileOpError.  IS_CUFILE_ERR() and CUFILE_ERRSTR() accept either sign.
 *
 * CUDA types: the interface needs only CUresult and CUstream from the CUDA driver API.  When
 * <cuda.h> has already been included, or can be found on the include path, its definitions
 * are used (NVIDIA's header includes <cuda.h> unconditionally).  Otherwise this header
 * declares the two types itself, with cuda.h's own tags and sizes, so that it compiles in
 * plain C or C++ programs on machines without the CUDA toolkit.
 *
 * Target: Linux, x86-64 (LP64).
 */

/* The same include guard as NVIDIA's header, so that including both is harmless. */
#ifndef __CUFILE_H_
#define __CUFILE_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>

/* ---------------------------------------------------------------------------------------
 * CUDA driver API types
 * ------------------------------------------------------------------------------------- */

#if defined(__cuda_cuda_h__)
#define __CUFILE_HAVE_CUDA_TYPES 1
#elif defined(__has_include)
#if __has_include(<cuda.h>)
#include <cuda.h>
#define __CUFILE_HAVE_CUDA_TYPES 1
#endif
#endif

#if !defined(__CUFILE_HAVE_CUDA_TYPES)
/*
 * Stand-ins with cuda.h's tags: CUresult is a 4-byte enum whose success value is 0, CUstream
 * an opaque pointer.  A program that includes the real <cuda.h> must do so before this header.
 */
typedef enum cudaError_enum {
    CUDA_SUCCESS = 0
} CUresult;
typedef struct CUstream_st *CUstream;
#endif

#undef __CUFILE_HAVE_CUDA_TYPES

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Status codes
 * ------------------------------------------------------------------------------------- */

/* Every cuFile-specific status is CUFILEOP_BASE_ERR plus a small number. */
#define CUFILEOP_BASE_ERR 5000

/*
 * The status table, as an X-macro: CUFILE_OP(value, name, message) for every CUfileOpError.
 * The message is written as bare tokens and turned into a string with the # operator, which
 * keeps single spaces between words; cufileop_status_error() returns exactly these texts
 * (programs print them).  Values 5021 and 5032 are not used.
 */
#define CUFILEOP_STATUS_ENTRIES \
    /** The call succeeded. */ \
    CUFILE_OP(0, CU_FILE_SUCCESS, cufile success) \
    /** cuFileDriverClose() at use count 0; statistics calls while the driver is closed; a first open refused because allow_compat_mode is false and there is no GPU-direct path. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 1, CU_FILE_DRIVER_NOT_INITIALIZED, nvidia-fs driver is not loaded. Set allow_compat_mode to true in cufile.json file to enable compatible mode) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 2, CU_FILE_DRIVER_INVALID_PROPS, invalid property) \
    /** A cuFileDriverSet*() value that is 0 or outside its parameter's range. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 3, CU_FILE_DRIVER_UNSUPPORTED_LIMIT, property range error) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 4, CU_FILE_DRIVER_VERSION_MISMATCH, nvidia-fs driver version mismatch) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 5, CU_FILE_DRIVER_VERSION_READ_ERROR, nvidia-fs driver version read error) \
    /** cuFileBufDeregister() while the driver is closed. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 6, CU_FILE_DRIVER_CLOSING, driver shutdown in progress) \
    /** libhipfile.so.0 (the engine) cannot be loaded: every call answers this (the data path as errno). */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 7, CU_FILE_PLATFORM_NOT_SUPPORTED, GPUDirect Storage not supported on current platform) \
    /** cuFileHandleRegister() with a handle type other than CU_FILE_HANDLE_TYPE_OPAQUE_FD. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 8, CU_FILE_IO_NOT_SUPPORTED, GPUDirect Storage not supported on current file) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 9, CU_FILE_DEVICE_NOT_SUPPORTED, GPUDirect Storage not supported on current GPU) \
    /** Never returned by this library (no nvidia-fs is involved). */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 10, CU_FILE_NVFS_DRIVER_ERROR, nvidia-fs driver ioctl error) \
    /** The CUDA driver failed; cu_err holds the CUresult (a code without a HIP twin reads 999).  The data path sets it as errno. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 11, CU_FILE_CUDA_DRIVER_ERROR, CUDA Driver API error) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 12, CU_FILE_CUDA_POINTER_INVALID, invalid device pointer) \
    /** Memory the engine does not serve (managed memory). */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 13, CU_FILE_CUDA_MEMORY_TYPE_INVALID, invalid pointer memory type) \
    /** cuFileBufRegister() with a range that leaves its allocation. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 14, CU_FILE_CUDA_POINTER_RANGE_ERROR, pointer range exceeds allocated address range) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 15, CU_FILE_CUDA_CONTEXT_MISMATCH, cuda context mismatch) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 16, CU_FILE_INVALID_MAPPING_SIZE, access beyond maximum pinned size) \
    /** Set as errno by cuFileRead()/cuFileWrite() for a transfer that does not fit its buffer. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 17, CU_FILE_INVALID_MAPPING_RANGE, access beyond mapped size) \
    /** cuFileHandleRegister() of a descriptor that is neither a regular file nor a block device. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 18, CU_FILE_INVALID_FILE_TYPE, unsupported file type) \
    /** cuFileHandleRegister() of an O_APPEND descriptor; as errno, a transfer on a file opened without the access it needs. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 19, CU_FILE_INVALID_FILE_OPEN_FLAG, unsupported file open flags) \
    /** Never returned by this library (O_DIRECT is not required). */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 20, CU_FILE_DIO_NOT_SET, fd direct IO not set) \
    /** An invalid argument (NULL pointer, out-of-range value, unknown stream); as errno, a negative file offset. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 22, CU_FILE_INVALID_VALUE, invalid arguments) \
    /** cuFileBufRegister() of a base that is already registered. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 23, CU_FILE_MEMORY_ALREADY_REGISTERED, device pointer already registered) \
    /** cuFileBufDeregister() of an address that is not a registered base. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 24, CU_FILE_MEMORY_NOT_REGISTERED, device pointer lookup failure) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 25, CU_FILE_PERMISSION_DENIED, driver or file access error) \
    /** A parameter or slab setter while the driver is open. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 26, CU_FILE_DRIVER_ALREADY_OPEN, driver is already open) \
    /** An unknown or stale file handle (stream-ordered calls; as errno on the data path). */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 27, CU_FILE_HANDLE_NOT_REGISTERED, file descriptor is not registered) \
    /** cuFileHandleRegister() of a descriptor that is already registered. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 28, CU_FILE_HANDLE_ALREADY_REGISTERED, file descriptor is already registered) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 29, CU_FILE_DEVICE_NOT_FOUND, GPU device not found) \
    /** Anything else: the engine accepts no backend, a buffer is still in use, the descriptor cannot be re-opened, an internal failure; as errno, a negative buffer offset. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 30, CU_FILE_INTERNAL_ERROR, internal error) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 31, CU_FILE_GETNEWFD_FAILED, failed to obtain new file descriptor) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 33, CU_FILE_NVFS_SETUP_ERROR, NVFS driver initialization error) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 34, CU_FILE_IO_DISABLED, GPUDirect Storage disabled by config on current file) \
    /** Never returned by this library (see CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR). */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 35, CU_FILE_BATCH_SUBMIT_FAILED, failed to submit batch operation) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 36, CU_FILE_GPU_MEMORY_PINNING_FAILED, failed to allocate pinned GPU Memory) \
    /** Never returned by this library (a full context is CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR). */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 37, CU_FILE_BATCH_FULL, queue full for batch operation) \
    /** Never returned by this library: stream-ordered I/O is served. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 38, CU_FILE_ASYNC_NOT_SUPPORTED, cuFile stream operation not supported) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 39, CU_FILE_INTERNAL_BATCH_SETUP_ERROR, batch setup internal error - retry later) \
    /** cuFileBatchIOSubmit() refused: nothing to submit, or the engine refused the submission. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 40, CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR, batch submit internal error - retry later) \
    /** cuFileBatchIOGetStatus() refused by the engine (unknown context, no room, malformed timeout). */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 41, CU_FILE_INTERNAL_BATCH_GETSTATUS_ERROR, batch get status internal error - retry later) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 42, CU_FILE_INTERNAL_BATCH_CANCEL_ERROR, batch cancel internal error - retry later) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 43, CU_FILE_NOMEM_ERROR, cufile no memory error - retry later) \
    /** Never returned by this library (I/O errors are errno values). */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 44, CU_FILE_IO_ERROR, cufile io error) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 45, CU_FILE_INTERNAL_BUF_REGISTER_ERROR, cufile buf registration error) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 46, CU_FILE_HASH_OPR_ERROR, cufile hash operation error) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 47, CU_FILE_INVALID_CONTEXT_ERROR, cufile invalid context error) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 48, CU_FILE_NVFS_INTERNAL_DRIVER_ERROR, nvfs internal driver error) \
    /** Never returned by this library. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 49, CU_FILE_BATCH_NOCOMPAT_ERROR, compat mode off error) \
    /** Marks the end of the range; never returned. */ \
    CUFILE_OP(CUFILEOP_BASE_ERR + 50, CU_FILE_IO_MAX_ERROR, GPUDirect Storage Max Error)

/*
 * The status of an operation.  CU_FILE_IO_MAX_ERROR is 5050 from API level 1.15 on (programs
 * built against older headers know it as 5039, now CU_FILE_INTERNAL_BATCH_SETUP_ERROR).
 */
typedef enum CUfileOpError {
#define CUFILE_OP(code, name, string) name = code,
    CUFILEOP_STATUS_ENTRIES
#undef CUFILE_OP
} CUfileOpError;

/*
 * The message of a status (header-only, not a library symbol); "unknown cufile error" for a
 * value outside the table.
 */
static inline const char *cufileop_status_error(CUfileOpError status)
{
    switch (status) {
#define CUFILE_OP(code, name, string) \
    case name:                        \
        return #string;
        CUFILEOP_STATUS_ENTRIES
#undef CUFILE_OP
    default:
        return "unknown cufile error";
    }
}

/* Outcome of the functions that do not return a byte count (8 bytes, returned in registers). */
typedef struct CUfileError {
    CUfileOpError err; /* CU_FILE_SUCCESS or the failure */
    CUresult cu_err;   /* the CUDA driver's code when err == CU_FILE_CUDA_DRIVER_ERROR, else 0 */
} CUfileError_t;

/*
 * True when a status (a CUfileOpError, or the negative result of cuFileRead()/cuFileWrite())
 * is a cuFile error: strictly above 5000 in magnitude.  The argument is converted to int, as
 * passing it to abs() does anyway; the explicit conversion keeps -Wextra quiet for ssize_t.
 */
#define IS_CUFILE_ERR(err) (abs((int)(err)) > CUFILEOP_BASE_ERR)

/* Message of a status given with either sign. */
#define CUFILE_ERRSTR(err) cufileop_status_error((CUfileOpError)abs((int)(err)))

/* True when a CUfileError_t reports a failure of the CUDA driver. */
#define IS_CUDA_ERR(status) ((status).err == CU_FILE_CUDA_DRIVER_ERROR)

/* The CUDA driver's code inside a CUfileError_t. */
#define CU_FILE_CUDA_ERR(status) ((status).cu_err)

/* ---------------------------------------------------------------------------------------
 * Driver properties and flags
 *
 * The three flag sets below are bit NUMBERS: a property word has bit (1u << value) set when
 * the item applies.
 * ------------------------------------------------------------------------------------- */

/* Storage kinds the kernel DMA path supports (CUfileDrvProps_t.nvfs.dstatusflags). */
typedef enum CUfileDriverStatusFlags {
    CU_FILE_LUSTRE_SUPPORTED = 0,
    CU_FILE_WEKAFS_SUPPORTED = 1,
    CU_FILE_NFS_SUPPORTED = 2,
    CU_FILE_GPFS_SUPPORTED = 3,
    CU_FILE_NVME_SUPPORTED = 4,
    CU_FILE_NVMEOF_SUPPORTED = 5,
    CU_FILE_SCSI_SUPPORTED = 6,
    CU_FILE_SCALEFLUX_CSD_SUPPORTED = 7,
    CU_FILE_NVMESH_SUPPORTED = 8,
    CU_FILE_BEEGFS_SUPPORTED = 9,
    /* 10 is reserved */
    CU_FILE_NVME_P2P_SUPPORTED = 11, /* deprecated: says nothing about PCI P2P DMA */
    CU_FILE_SCATEFS_SUPPORTED = 12,
    CU_FILE_VIRTIOFS_SUPPORTED = 13,
    CU_FILE_PANFS_SUPPORTED = 14,
    CU_FILE_MAX_TARGET_TYPES /* 15: the number of the entries above plus the reserved one */
} CUfileDriverStatusFlags_t;

/* Modes the driver runs in (CUfileDrvProps_t.nvfs.dcontrolflags). */
typedef enum CUfileDriverControlFlags {
    CU_FILE_USE_POLL_MODE = 0,
    CU_FILE_ALLOW_COMPAT_MODE = 1,
    CU_FILE_VANILLA_POSIX_IO_MODE = 2,
    CU_FILE_POSIX_IO_MODE = CU_FILE_VANILLA_POSIX_IO_MODE, /* older spelling, same bit */
    CU_FILE_FALLBACK_IO_MODE = 4
} CUfileDriverControlFlags_t;

/* Capabilities of the library (CUfileDrvProps_t.fflags). */
typedef enum CUfileFeatureFlags {
    CU_FILE_DYN_ROUTING_SUPPORTED = 0,
    CU_FILE_BATCH_IO_SUPPORTED = 1,
    CU_FILE_STREAMS_SUPPORTED = 2,
    CU_FILE_PARALLEL_IO_SUPPORTED = 3,
    CU_FILE_P2P_SUPPORTED = 4
} CUfileFeatureFlags_t;

/*
 * Peer-to-peer transports, as bit numbers.  cuFileDriverGetP2PFlags()/SetP2PFlags() exchange
 * MASKS of them: the CU_FILE_P2P_FLAG_* values below.
 */
typedef enum CUfileP2PFlags {
    CUFILE_P2PDMA = 0,
    CUFILE_NVFS = 1,
    CUFILE_DMABUF = 2,
    CUFILE_C2C = 3,
    CUFILE_NVIDIA_PEERMEM = 4
} CUfileP2PFlags_t;

#define CU_FILE_P2P_FLAG_PCI_P2PDMA ((CUfileP2PFlags_t)(1 << CUFILE_P2PDMA))
#define CU_FILE_P2P_FLAG_NVFS ((CUfileP2PFlags_t)(1 << CUFILE_NVFS))
#define CU_FILE_P2P_FLAG_DMABUF ((CUfileP2PFlags_t)(1 << CUFILE_DMABUF))
#define CU_FILE_P2P_FLAG_C2C ((CUfileP2PFlags_t)(1 << CUFILE_C2C))

/* Direction of a batch entry. */
typedef enum CUfileOpcode {
    CUFILE_READ = 0,
    CUFILE_WRITE
} CUfileOpcode_t;

/*
 * What cuFileDriverGetProperties() reports.  Sizes are in KiB; max_batch_io_size is the
 * largest entry count cuFileBatchIOSetUp() accepts, max_batch_io_timeout_msecs milliseconds.
 * nvfs.major_version/minor_version are the version of the kernel's nvidia-fs driver (0.0
 * without one), not of this library.
 */
typedef struct CUfileDrvProps {
    struct {
        unsigned int major_version;
        unsigned int minor_version;
        size_t poll_thresh_size;   /* I/O up to this size completes by polling (KiB) */
        size_t max_direct_io_size; /* largest piece handed to the file system at once (KiB) */
        unsigned int dstatusflags; /* bits numbered by CUfileDriverStatusFlags_t */
        unsigned int dcontrolflags; /* bits numbered by CUfileDriverControlFlags_t */
    } nvfs;
    unsigned int fflags;                     /* bits numbered by CUfileFeatureFlags_t */
    unsigned int max_device_cache_size;      /* GPU bounce memory per GPU (KiB) */
    unsigned int per_buffer_cache_size;      /* one bounce buffer (KiB) */
    unsigned int max_device_pinned_mem_size; /* budget for pinning GPU memory (KiB) */
    unsigned int max_batch_io_size;
    unsigned int max_batch_io_timeout_msecs;
} CUfileDrvProps_t;

/* ---------------------------------------------------------------------------------------
 * File registration
 * ------------------------------------------------------------------------------------- */

typedef struct sockaddr sockaddr_t;

/* Description of an RDMA registration, passed to user-space file system callbacks. */
typedef struct cufileRDMAInfo {
    int version;
    int desc_len;
    const char *desc_str;
} cufileRDMAInfo_t;

/* Flags of cuFileBufRegister() (RDMA registrations; this implementation accepts and ignores them). */
#define CU_FILE_RDMA_REGISTER 1
#define CU_FILE_RDMA_RELAXED_ORDERING (1 << 1)

/* Statuses exchanged between RDMA helpers; they never appear in a CUfileOpError. */
#define CU_FILE_RDMA_ERR_BASE 6000
#define CU_FILE_RDMA_SUCCESS 0
#define CU_FILE_RDMA_RESET_TOKEN (CU_FILE_RDMA_ERR_BASE + 1)
#define CU_FILE_RDMA_RESET_TOKEN_FAILED (CU_FILE_RDMA_ERR_BASE + 2)

/*
 * Callbacks of a user-space file system (CU_FILE_HANDLE_TYPE_USERSPACE_FS); a NULL entry
 * means "use the kernel's file system".  The file-offset parameters are Linux's loff_t, the
 * same type as off_t on LP64 Linux (long); off_t is spelled here so that the header does not
 * depend on glibc's feature-test macros.
 */
typedef struct CUfileFSOps {
    /* name of the file system type; NULL: found with fstat */
    const char *(*fs_type)(const void *handle);
    /* host addresses of the RDMA devices to use; none: no restriction */
    int (*getRDMADeviceList)(const void *handle, sockaddr_t **hostaddrs);
    /* priority of a device for an I/O (-1: no preference) */
    int (*getRDMADevicePriority)(const void *handle, char *, size_t, off_t, const sockaddr_t *hostaddr);
    /* reads and writes; NULL: through the kernel's file system */
    ssize_t (*read)(const void *handle, char *, size_t, off_t, const cufileRDMAInfo_t *);
    ssize_t (*write)(const void *handle, const char *, size_t, off_t, const cufileRDMAInfo_t *);
} CUfileFSOps_t;

/* Kind of object a CUfileDescr_t names (an enum tag only; there is no typedef). */
enum CUfileFileHandleType {
    CU_FILE_HANDLE_TYPE_OPAQUE_FD = 1,    /* a Linux file descriptor */
    CU_FILE_HANDLE_TYPE_OPAQUE_WIN32 = 2, /* a Windows handle (not supported on Linux) */
    CU_FILE_HANDLE_TYPE_USERSPACE_FS = 3  /* a descriptor served by fs_ops */
};

/* What cuFileHandleRegister() registers.  fs_ops may be NULL. */
typedef struct CUfileDescr_t {
    enum CUfileFileHandleType type;
    union {
        int fd;       /* CU_FILE_HANDLE_TYPE_OPAQUE_FD, USERSPACE_FS */
        void *handle; /* CU_FILE_HANDLE_TYPE_OPAQUE_WIN32 */
    } handle;
    const CUfileFSOps_t *fs_ops;
} CUfileDescr_t;

/* A registered file. */
typedef void *CUfileHandle_t;

/* The library exports every function declared from here to the matching pop. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif

/**
 * @brief Registers an open file descriptor and returns its handle.
 *
 * Regular files and block devices, opened with or without O_DIRECT.  Opens the driver
 * implicitly when it is closed (the open counts in cuFileUseCount()); the engine keeps
 * descriptors of its own (see hipFileHandleRegister() in hipfile.h).
 *
 * @param fh     Receives the handle (written only on success).
 * @param descr  type CU_FILE_HANDLE_TYPE_OPAQUE_FD and handle.fd; fs_ops is ignored.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE              `fh` or `descr` is NULL, or the descriptor is
 *                                            not open.
 * @retval CU_FILE_IO_NOT_SUPPORTED           `descr->type` is not CU_FILE_HANDLE_TYPE_OPAQUE_FD.
 * @retval CU_FILE_INVALID_FILE_TYPE          Neither a regular file nor a block device.
 * @retval CU_FILE_INVALID_FILE_OPEN_FLAG     The descriptor was opened with O_APPEND.
 * @retval CU_FILE_HANDLE_ALREADY_REGISTERED  The descriptor is already registered.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED     The implicit open was refused (allow_compat_mode
 *                                            false and no GPU-direct path).
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED     libhipfile.so.0 cannot be loaded.
 * @retval CU_FILE_INTERNAL_ERROR             The engine cannot duplicate or re-open the
 *                                            descriptor.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * NVIDIA's cuFile asks udev about the file's disk and refuses every file where it has no
 * record (CU_FILE_HANDLE_NOT_REGISTERED); this library does not need udev.
 */
CUfileError_t cuFileHandleRegister(CUfileHandle_t *fh, CUfileDescr_t *descr);

/**
 * @brief Forgets a file handle.
 *
 * The caller closes its own descriptor afterwards.  NULL, unknown and stale handles are
 * ignored, as is a handle with I/O in flight on another thread.
 *
 * @param fh  A handle from cuFileHandleRegister().
 * @par Thread safety
 * Safe from any thread; it never waits for I/O.
 * @par Differences
 * As NVIDIA's cuFile.
 */
void cuFileHandleDeregister(CUfileHandle_t fh);

/**
 * @brief Registers device or host memory for repeated I/O.
 *
 * Registration is optional: unregistered device and host pointers work too.  Opens the
 * driver implicitly when it is closed.
 *
 * @param bufPtr_base  Start of the buffer.
 * @param length       Bytes, at least 1.
 * @param flags        0 or CU_FILE_RDMA_* bits, accepted and ignored.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE               `bufPtr_base` is NULL, `length` is 0, or the
 *                                             CUDA driver does not know the pointer.
 * @retval CU_FILE_MEMORY_ALREADY_REGISTERED   The base is already registered.
 * @retval CU_FILE_CUDA_MEMORY_TYPE_INVALID    Managed memory (the engine does not serve it).
 * @retval CU_FILE_CUDA_POINTER_RANGE_ERROR    The range leaves its allocation.
 * @retval CU_FILE_CUDA_DRIVER_ERROR           The CUDA driver failed (CUresult in cu_err).
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED      The implicit open was refused.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED      libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * NVIDIA's cuFile maps device memory for DMA at registration; nothing is mapped here.
 */
CUfileError_t cuFileBufRegister(const void *bufPtr_base, size_t length, int flags);

/**
 * @brief Undoes cuFileBufRegister().
 *
 * @param bufPtr_base  The base given at registration.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           `bufPtr_base` is NULL.
 * @retval CU_FILE_DRIVER_CLOSING          The driver is closed (its last close dropped every
 *                                         registration).
 * @retval CU_FILE_MEMORY_NOT_REGISTERED   Not a registered base.
 * @retval CU_FILE_INTERNAL_ERROR          A transfer on another thread still uses it.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileBufDeregister(const void *bufPtr_base);

/* ---------------------------------------------------------------------------------------
 * Synchronous I/O
 *
 * The memory used is bufPtr_base + bufPtr_offset; bufPtr_base may be a registered base or any
 * device or host pointer.  The result is the number of bytes moved (fewer than size only for
 * a read that reaches the end of the file), or -1 with errno, or a negated CUfileOpError.
 * ------------------------------------------------------------------------------------- */

/**
 * @brief Reads from a registered file into device or host memory.
 *
 * Any alignment, device, pinned or pageable host memory, O_DIRECT or not.  A size of 0
 * returns 0 at once.  Failures are always -1 with errno: a POSIX value from the system call,
 * or a CUfileOpError value.
 *
 * @param fh             A handle from cuFileHandleRegister().
 * @param bufPtr_base    A registered base, or any device or host pointer.
 * @param size           Bytes to read.
 * @param file_offset    Offset in the file.
 * @param bufPtr_offset  Offset from `bufPtr_base`.
 * @return Bytes read (fewer only at end of file), or -1 with errno as below.
 * @retval -1 (errno EINVAL)                          `fh` or `bufPtr_base` is NULL, or the
 *                                                    driver is closed.
 * @retval -1 (errno CU_FILE_INVALID_VALUE)           `file_offset` is negative.
 * @retval -1 (errno CU_FILE_INTERNAL_ERROR)          `bufPtr_offset` is negative, or the
 *                                                    engine accepts no backend.
 * @retval -1 (errno CU_FILE_HANDLE_NOT_REGISTERED)   `fh` is unknown or stale.
 * @retval -1 (errno CU_FILE_INVALID_MAPPING_RANGE)   The transfer does not fit its buffer.
 * @retval -1 (errno CU_FILE_CUDA_MEMORY_TYPE_INVALID) Managed memory.
 * @retval -1 (errno CU_FILE_INVALID_FILE_OPEN_FLAG)  The file was opened without read access.
 * @retval -1 (errno CU_FILE_CUDA_DRIVER_ERROR)       The CUDA driver failed.
 * @retval -1 (errno CU_FILE_PLATFORM_NOT_SUPPORTED)  libhipfile.so.0 cannot be loaded.
 * @retval -1 (other errno)                           The system call failed (EIO, ...).
 * @par Thread safety
 * Any number of concurrent reads and writes.
 * @par Differences
 * NVIDIA's cuFile also returns negated CUfileOpError values; this library answers only counts
 * or -1 with errno.  The data moves through host memory (compat mode), never by DMA.
 */
ssize_t cuFileRead(CUfileHandle_t fh, void *bufPtr_base, size_t size, off_t file_offset, off_t bufPtr_offset);

/**
 * @brief Writes device or host memory to a registered file.
 *
 * The counterpart of cuFileRead(), with the same rules and failures (EBADF becomes errno
 * CU_FILE_INVALID_FILE_OPEN_FLAG for a file opened without write access).  The data is
 * durable when the call returns.  A write that fails part-way returns the count of the
 * contiguous prefix that reached the file (see hipFileWrite()).
 *
 * @param fh             A handle from cuFileHandleRegister().
 * @param bufPtr_base    A registered base, or any device or host pointer.
 * @param size           Bytes to write.
 * @param file_offset    Offset in the file.
 * @param bufPtr_offset  Offset from `bufPtr_base`.
 * @return Bytes written, or -1 with errno as for cuFileRead().
 * @retval -1 (errno)  As cuFileRead(); ENOSPC and other system-call errors too.
 * @par Thread safety
 * As cuFileRead().
 * @par Differences
 * As cuFileRead().
 */
ssize_t cuFileWrite(CUfileHandle_t fh, const void *bufPtr_base, size_t size, off_t file_offset,
                    off_t bufPtr_offset);

/* ---------------------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------------------- */

/**
 * @brief Opens the driver, or adds one reference when it is open.
 *
 * The first open reads the configuration (cufile.json, CUFILE_* variables, values staged
 * with cuFileSetParameter*()) and pushes the engine's knobs into libhipfile.so.0 before it
 * opens the engine.
 *
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  allow_compat_mode is false and there is no
 *                                         GPU-direct path (the open is refused, as cuFile
 *                                         refuses it without nvidia-fs).
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * NVIDIA's cuFile loads nvidia-fs here; this library needs no kernel module.
 */
CUfileError_t cuFileDriverOpen(void);

/**
 * @brief Drops one driver reference; the last one releases everything.
 *
 * The last close releases every handle, buffer and batch context, forgets the P2P flags and
 * ends the statistics window.  Programs compiled with this header call it under its exported
 * name cuFileDriverClose_v2 (this header maps the name with a macro); both exported names
 * are this same reference-counted close.
 *
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The use count is already 0.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile 1.19.
 */
CUfileError_t cuFileDriverClose(void);
#define cuFileDriverClose cuFileDriverClose_v2
/**
 * @brief The exported name of cuFileDriverClose(), to which this header maps that name.
 *
 * @return As cuFileDriverClose().
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The use count is already 0.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile 1.19.
 */
CUfileError_t cuFileDriverClose(void);

/**
 * @brief Returns the driver's use count.
 *
 * Explicit opens plus implicit ones, minus closes; the engine's count, shared with hipFile
 * calls in the same process.
 *
 * @return The count; 0 when libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
long cuFileUseCount(void);

/**
 * @brief Describes the running configuration and capabilities.
 *
 * nvfs.major_version and minor_version are 0 (no nvidia-fs behind this library);
 * dcontrolflags has the compat-mode bit as configured; fflags has dynamic routing, and batch,
 * streams and parallel I/O as the engine reports them; sizes are KiB.  Works while the driver
 * is closed, without opening it: what the next open would use, values staged with
 * cuFileSetParameter*() and the legacy setters included (as cuFile 1.17+).
 *
 * @param props  Receives the properties.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           `props` is NULL.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * NVIDIA's cuFile reports the nvidia-fs version and its supported file systems; its 1.15
 * opens the driver (use count 1) when called while closed.
 */
CUfileError_t cuFileDriverGetProperties(CUfileDrvProps_t *props);

/**
 * @brief Sets poll mode and its threshold (KiB).
 *
 * Stored and reported; applied at once while open, staged while closed as
 * cuFileSetParameterBool(CUFILE_PARAM_PROPERTIES_USE_POLL_MODE) and
 * cuFileSetParameterSizeT(CUFILE_PARAM_POLLTHRESHOLD_SIZE_KB) stage (so the next open applies
 * them ahead of the configuration file).  The same holds for the three setters below.
 *
 * @param poll                 Whether to poll.
 * @param poll_threshold_size  Threshold in KiB, within the range of
 *                             CUFILE_PARAM_POLLTHRESHOLD_SIZE_KB (4 and up).
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_DRIVER_UNSUPPORTED_LIMIT  The threshold is 0 or outside the range (SIZE_MAX
 *                                           included); nothing is staged or applied.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED    libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileDriverSetPollMode(bool poll, size_t poll_threshold_size);

/**
 * @brief Sets the largest direct transfer (KiB), 64 to 16384.
 *
 * Stored and reported; applied at once while open, staged while closed.
 *
 * @param max_direct_io_size  Size in KiB.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_DRIVER_UNSUPPORTED_LIMIT  Outside 64 to 16384 (SIZE_MAX included).
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED    libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileDriverSetMaxDirectIOSize(size_t max_direct_io_size);

/**
 * @brief Sets the engine's pinned bounce-buffer budget (KiB).
 *
 * See hipFileDriverSetMaxCacheSize() in hipfile.h.  Applied at once while open, staged while
 * closed.
 *
 * @param max_cache_size  Budget in KiB, at least 4.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE             Above GPU 0's BAR1 size (the maximum
 *                                           cuFileGetParameterMinMaxValue() reports), or,
 *                                           where that is unknown, a budget whose byte count
 *                                           does not fit a size_t.
 * @retval CU_FILE_DRIVER_UNSUPPORTED_LIMIT  0, or a value the engine refuses (below 4).
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED    libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * NVIDIA's cuFile sizes its GPU bounce buffers with it; here it is host memory.
 */
CUfileError_t cuFileDriverSetMaxCacheSize(size_t max_cache_size);

/**
 * @brief Sets the limit of pinned GPU memory (KiB), at least 64.
 *
 * Stored and reported; nothing is pinned in GPU memory here.  Applied at once while open,
 * staged while closed.
 *
 * @param max_pinned_size  Size in KiB.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE             Above GPU 0's BAR1 size (the maximum
 *                                           cuFileGetParameterMinMaxValue() reports), or,
 *                                           where that is unknown, a size whose byte count
 *                                           does not fit a size_t (SIZE_MAX).
 * @retval CU_FILE_DRIVER_UNSUPPORTED_LIMIT  Below 64.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED    libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileDriverSetMaxPinnedMemSize(size_t max_pinned_size);

/* ---------------------------------------------------------------------------------------
 * Batch I/O
 * ------------------------------------------------------------------------------------- */

/* State of one batch entry, as reported by cuFileBatchIOGetStatus() (single bits). */
typedef enum CUFILEStatus_enum {
    CUFILE_WAITING = 0x000001,  /* not yet submitted */
    CUFILE_PENDING = 0x000002,  /* submitted, not finished */
    CUFILE_INVALID = 0x000004,  /* malformed, or could not be queued */
    CUFILE_CANCELED = 0x000008, /* cancelled before it finished */
    CUFILE_COMPLETE = 0x0000010,
    CUFILE_TIMEOUT = 0x0000020,
    CUFILE_FAILED = 0x0000040
} CUfileStatus_t;

/* How a CUfileIOParams_t is to be read (its first field). */
typedef enum cufileBatchMode {
    CUFILE_BATCH = 1
} CUfileBatchMode_t;

/* One entry of cuFileBatchIOSubmit(). */
typedef struct CUfileIOParams {
    CUfileBatchMode_t mode; /* CUFILE_BATCH; must stay the first field */
    union {
        struct {
            void *devPtr_base; /* device or host memory */
            off_t file_offset;
            off_t devPtr_offset;
            size_t size;
        } batch;
    } u;
    CUfileHandle_t fh;
    CUfileOpcode_t opcode;
    void *cookie; /* returned unchanged in the entry's CUfileIOEvents_t */
} CUfileIOParams_t;

/* One completion reported by cuFileBatchIOGetStatus(). */
typedef struct CUfileIOEvents {
    void *cookie;
    CUfileStatus_t status;
    size_t ret; /* bytes moved, or a negative error code stored unsigned (read it as ssize_t) */
} CUfileIOEvents_t;

/* A batch context. */
typedef void *CUfileBatchHandle_t;

/* Strict ISO C99 builds get no struct timespec from <time.h>; the tag is all that is needed. */
struct timespec;

/**
 * @brief Creates a batch context for up to `nr` entries in flight.
 *
 * Opens the driver implicitly when it is closed.
 *
 * @param batch_idp  Receives the context.
 * @param nr         Capacity, 1 to the batch size (CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE,
 *                   at most 128 in the engine).
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           `batch_idp` is NULL, `nr` is 0 or above the limit.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The implicit open was refused.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileBatchIOSetUp(CUfileBatchHandle_t *batch_idp, unsigned nr);

/**
 * @brief Queues `nr` entries of `iocbp`; all of them or none.
 *
 * The engine checks the context, its room and every entry before anything runs (see
 * hipFileBatchIOSubmit() in hipfile.h); entries take device memory only.
 *
 * @param batch_idp  A context from cuFileBatchIOSetUp().
 * @param nr         Entries in `iocbp`.
 * @param iocbp      The entries.
 * @param flags      0.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR  `nr` is 0, `iocbp` is NULL, or the engine
 *                                              refused the submission (unknown context, no
 *                                              room, a malformed entry, host memory, ...).
 * @retval CU_FILE_CUDA_DRIVER_ERROR            The CUDA driver failed (CUresult in cu_err).
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED       libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile, whose batch path also answers its internal batch code.
 */
CUfileError_t cuFileBatchIOSubmit(CUfileBatchHandle_t batch_idp, unsigned nr, CUfileIOParams_t *iocbp,
                                  unsigned int flags);

/**
 * @brief Collects finished entries of a batch context.
 *
 * Waits until at least `min_nr` entries have finished or `*timeout` has passed (NULL: no
 * limit), then reports up to `*nr` of them into `iocbp`, each once, and stores their number
 * in `*nr`.  A failed entry's ret is a negative code stored unsigned (-errno for a system
 * error).
 *
 * @param batch_idp  A context from cuFileBatchIOSetUp().
 * @param min_nr     Entries to wait for.
 * @param nr         In: room in `iocbp`; out: events stored.
 * @param iocbp      Receives the events.
 * @param timeout    Longest wait, or NULL.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE                   `nr` or `iocbp` is NULL, or `min_nr` >
 *                                                 `*nr`.
 * @retval CU_FILE_INTERNAL_BATCH_GETSTATUS_ERROR  The engine refused the call (unknown
 *                                                 context, `*nr` of 0, malformed timeout).
 * @retval CU_FILE_CUDA_DRIVER_ERROR               The CUDA driver failed.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED          libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread; each event goes to one caller.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileBatchIOGetStatus(CUfileBatchHandle_t batch_idp, unsigned min_nr, unsigned *nr,
                                     CUfileIOEvents_t *iocbp, struct timespec *timeout);

/**
 * @brief Cancels the entries of a batch context that have not started.
 *
 * @param batch_idp  A context; NULL and unknown contexts are not an error.
 * @return CU_FILE_SUCCESS, or the status below in .err.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileBatchIOCancel(CUfileBatchHandle_t batch_idp);

/**
 * @brief Releases a batch context.
 *
 * Entries not started are cancelled, running ones waited for.  Unknown contexts are ignored.
 *
 * @param batch_idp  A context from cuFileBatchIOSetUp().
 * @par Thread safety
 * Safe from any thread; it may wait for running entries.
 * @par Differences
 * As NVIDIA's cuFile.
 */
void cuFileBatchIODestroy(CUfileBatchHandle_t batch_idp);

/* ---------------------------------------------------------------------------------------
 * Stream-ordered I/O
 * ------------------------------------------------------------------------------------- */

/*
 * Flags of cuFileStreamRegister().  Each FIXED flag promises that the value behind the
 * matching pointer of cuFileReadAsync()/cuFileWriteAsync() does not change after the call,
 * so it may be read at submission instead of when the stream reaches the operation.
 * PAGE_ALIGNED_INPUTS promises page-aligned sizes and offsets.
 */
#define CU_FILE_STREAM_FIXED_BUF_OFFSET 1
#define CU_FILE_STREAM_FIXED_FILE_OFFSET 2
#define CU_FILE_STREAM_FIXED_FILE_SIZE 4
#define CU_FILE_STREAM_PAGE_ALIGNED_INPUTS 8

/**
 * @brief Queues a read on a CUDA stream.
 *
 * Served by the engine's stream-ordered I/O (hipFileReadAsync() in hipfile.h): the size and
 * offsets are read when the stream reaches the operation (at submission with the matching
 * CU_FILE_STREAM_FIXED_* flag), and the result, as cuFileRead() would return it but with -1
 * for a system error and a negated status otherwise, is in `*bytes_read_p` by the time the
 * stream has passed the operation.  Opens the driver implicitly when it is closed.
 *
 * @param fh               A handle from cuFileHandleRegister().
 * @param bufPtr_base      Device or host memory.
 * @param size_p           Bytes to read.
 * @param file_offset_p    Offset in the file.
 * @param bufPtr_offset_p  Offset from `bufPtr_base`.
 * @param bytes_read_p     Receives the result.
 * @param stream           A CUstream, or NULL.
 * @return CU_FILE_SUCCESS when queued, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE            `size_p` or `bytes_read_p` is NULL, another
 *                                          pointer is NULL, an offset is negative, the
 *                                          transfer does not fit, or the buffer is on another
 *                                          device than the stream.
 * @retval CU_FILE_HANDLE_NOT_REGISTERED    `fh` is unknown or stale.
 * @retval CU_FILE_CUDA_DRIVER_ERROR        The CUDA driver failed (CUresult in cu_err).
 * @retval CU_FILE_INTERNAL_ERROR           Memory the engine does not serve, or the stream's
 *                                          worker cannot start.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED   The implicit open was refused.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED   libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * The same contract as NVIDIA's cuFile; here each operation is one launch of a small
 * staging kernel that copies what the engine stages in pinned memory.
 */
CUfileError_t cuFileReadAsync(CUfileHandle_t fh, void *bufPtr_base, size_t *size_p, off_t *file_offset_p,
                              off_t *bufPtr_offset_p, ssize_t *bytes_read_p, CUstream stream);

/**
 * @brief Queues a write on a CUDA stream.
 *
 * The counterpart of cuFileReadAsync(), with the same rules and statuses.
 *
 * @param fh               A handle from cuFileHandleRegister().
 * @param bufPtr_base      Device or host memory.
 * @param size_p           Bytes to write.
 * @param file_offset_p    Offset in the file.
 * @param bufPtr_offset_p  Offset from `bufPtr_base`.
 * @param bytes_written_p  Receives the result.
 * @param stream           A CUstream, or NULL.
 * @return CU_FILE_SUCCESS when queued, or one of the statuses of cuFileReadAsync() in .err.
 * @retval CU_FILE_INVALID_VALUE           As cuFileReadAsync().
 * @retval CU_FILE_HANDLE_NOT_REGISTERED   As cuFileReadAsync().
 * @retval CU_FILE_CUDA_DRIVER_ERROR       As cuFileReadAsync().
 * @retval CU_FILE_INTERNAL_ERROR          As cuFileReadAsync().
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  As cuFileReadAsync().
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  As cuFileReadAsync().
 * @par Thread safety
 * As cuFileReadAsync().
 * @par Differences
 * As cuFileReadAsync().
 */
CUfileError_t cuFileWriteAsync(CUfileHandle_t fh, void *bufPtr_base, size_t *size_p, off_t *file_offset_p,
                               off_t *bufPtr_offset_p, ssize_t *bytes_written_p, CUstream stream);

/**
 * @brief Declares a stream's CU_FILE_STREAM_* promises.
 *
 * Opens the driver implicitly when it is closed; see hipFileStreamRegister() in hipfile.h.
 *
 * @param stream  A CUstream, or NULL.
 * @param flags   CU_FILE_STREAM_* bits.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           Unknown flag bits, or the stream is already
 *                                         registered.
 * @retval CU_FILE_CUDA_DRIVER_ERROR       The CUDA driver does not know the stream, or its
 *                                         buffers cannot be allocated.
 * @retval CU_FILE_INTERNAL_ERROR          The stream's worker cannot start.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The implicit open was refused.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileStreamRegister(CUstream stream, unsigned flags);

/**
 * @brief Undoes cuFileStreamRegister(), after the stream's queued operations finished.
 *
 * @param stream  A registered stream.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           The stream is not registered.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread; it may wait for the stream's queued work.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileStreamDeregister(CUstream stream);

/* ---------------------------------------------------------------------------------------
 * Vectored I/O
 * ------------------------------------------------------------------------------------- */

/* One piece of memory of cuFileReadv()/cuFileWritev(). */
typedef struct CUfileIOVec {
    void *base; /* device or host memory */
    size_t len;
} CUfileIOVec_t;

/**
 * @brief Reads one contiguous file range into several buffers.
 *
 * The pieces of `iov` are filled in order from `file_offset` on; entries of length 0 are
 * skipped; a short piece (end of file) ends the call.
 *
 * @param fh           A handle from cuFileHandleRegister().
 * @param iov          The pieces (device or host memory).
 * @param iovcnt       Number of pieces.
 * @param file_offset  Offset in the file.
 * @param flags        0.
 * @return Bytes read in total, or -1 with errno.
 * @retval -1 (errno EINVAL)                 `fh` is NULL, `iov` is NULL with `iovcnt` > 0, or a
 *                                           piece with a length has a NULL base.
 * @retval -1 (errno CU_FILE_INVALID_VALUE)  `file_offset` is negative.
 * @retval -1 (errno)                        A piece failed as cuFileRead() fails; what earlier
 *                                           pieces moved is not reported.
 * @par Thread safety
 * As cuFileRead().
 * @par Differences
 * As NVIDIA's cuFile 1.19.
 */
ssize_t cuFileReadv(CUfileHandle_t fh, const CUfileIOVec_t *iov, size_t iovcnt, off_t file_offset,
                    unsigned flags);

/**
 * @brief Writes several buffers to one contiguous file range.
 *
 * The counterpart of cuFileReadv(), with the same rules and failures.
 *
 * @param fh           A handle from cuFileHandleRegister().
 * @param iov          The pieces (device or host memory).
 * @param iovcnt       Number of pieces.
 * @param file_offset  Offset in the file.
 * @param flags        0.
 * @return Bytes written in total, or -1 with errno.
 * @retval -1 (errno)  As cuFileReadv().
 * @par Thread safety
 * As cuFileRead().
 * @par Differences
 * As NVIDIA's cuFile 1.19.
 */
ssize_t cuFileWritev(CUfileHandle_t fh, const CUfileIOVec_t *iov, size_t iovcnt, off_t file_offset,
                     unsigned flags);

/* ---------------------------------------------------------------------------------------
 * Version and topology
 * ------------------------------------------------------------------------------------- */

/**
 * @brief Stores the API level: 1000 * major + 10 * minor, 1180 here.
 *
 * 1180 names the structure layouts filled (cuFile 1.15-1.18's statistics); 1190 where
 * HIPFILE_CUFILE_API_LEVEL=1.19 declares 1.19 consumers only (see the top of this file).
 *
 * @param version  Receives 1180 (or 1190).
 * @return CU_FILE_SUCCESS, or the status below in .err.
 * @retval CU_FILE_INVALID_VALUE  `version` is NULL.
 * @par Thread safety
 * Safe from any thread; needs no driver.
 * @par Differences
 * NVIDIA's library reports its own release.
 */
CUfileError_t cuFileGetVersion(int *version);

/**
 * @brief Writes a description of the PCIe topology to a file.
 *
 * No topology is detected behind the POSIX path: the file gets a comment line and `null`.
 *
 * @param filename  Path of the file to write.
 * @return CU_FILE_SUCCESS, or the status below in .err.
 * @retval CU_FILE_INVALID_VALUE  `filename` is NULL or empty, or the file cannot be written.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * NVIDIA's cuFile writes the topology it detected.
 */
CUfileError_t cuFileExportPCIeTopology(const char *filename);

/* ---------------------------------------------------------------------------------------
 * Parameters
 *
 * The configuration keys a program may read and set, grouped by type.  Setters work only
 * while the driver is closed (CU_FILE_DRIVER_ALREADY_OPEN otherwise); the next open applies
 * what was set, ahead of the environment and of the configuration file.  Getters report the
 * running value while the driver is open.
 * ------------------------------------------------------------------------------------- */

typedef enum CUFileSizeTConfigParameter_t {
    CUFILE_PARAM_PROFILE_STATS,                            /* 0 */
    CUFILE_PARAM_EXECUTION_MAX_IO_QUEUE_DEPTH,             /* 1 */
    CUFILE_PARAM_EXECUTION_MAX_IO_THREADS,                 /* 2 */
    CUFILE_PARAM_EXECUTION_MIN_IO_THRESHOLD_SIZE_KB,       /* 3 */
    CUFILE_PARAM_EXECUTION_MAX_REQUEST_PARALLELISM,        /* 4 */
    CUFILE_PARAM_PROPERTIES_MAX_DIRECT_IO_SIZE_KB,         /* 5 */
    CUFILE_PARAM_PROPERTIES_MAX_DEVICE_CACHE_SIZE_KB,      /* 6 */
    CUFILE_PARAM_PROPERTIES_PER_BUFFER_CACHE_SIZE_KB,      /* 7 */
    CUFILE_PARAM_PROPERTIES_MAX_DEVICE_PINNED_MEM_SIZE_KB, /* 8 */
    CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE,                  /* 9 */
    CUFILE_PARAM_POLLTHRESHOLD_SIZE_KB,                    /* 10 */
    CUFILE_PARAM_PROPERTIES_BATCH_IO_TIMEOUT_MS            /* 11 */
} CUFileSizeTConfigParameter_t;

typedef enum CUFileBoolConfigParameter_t {
    CUFILE_PARAM_PROPERTIES_USE_POLL_MODE,       /* 0 */
    CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE,   /* 1 */
    CUFILE_PARAM_FORCE_COMPAT_MODE,              /* 2 */
    CUFILE_PARAM_FS_MISC_API_CHECK_AGGRESSIVE,   /* 3 */
    CUFILE_PARAM_EXECUTION_PARALLEL_IO,          /* 4 */
    CUFILE_PARAM_PROFILE_NVTX,                   /* 5, deprecated */
    CUFILE_PARAM_PROPERTIES_ALLOW_SYSTEM_MEMORY, /* 6 */
    CUFILE_PARAM_USE_PCIP2PDMA,                  /* 7 */
    CUFILE_PARAM_PREFER_IO_URING,                /* 8 */
    CUFILE_PARAM_FORCE_ODIRECT_MODE,             /* 9 */
    CUFILE_PARAM_SKIP_TOPOLOGY_DETECTION,        /* 10 */
    CUFILE_PARAM_STREAM_MEMOPS_BYPASS,           /* 11 */
    CUFILE_PARAM_PROPERTIES_POSIX_IO_MODE,       /* 12 */
    CUFILE_PARAM_GDS_FALLBACK_IO                 /* 13 */
} CUFileBoolConfigParameter_t;

typedef enum CUFileStringConfigParameter_t {
    CUFILE_PARAM_LOGGING_LEVEL,    /* 0 */
    CUFILE_PARAM_ENV_LOGFILE_PATH, /* 1 */
    CUFILE_PARAM_LOG_DIR,          /* 2 */
    CUFILE_PARAM_RDMA_TRANSPORT    /* 3 */
} CUFileStringConfigParameter_t;

/*
 * Array-valued keys, for reference only: no function takes this type; the slab arrays have
 * their own calls below.
 */
typedef enum CUFileArrayConfigParameter_t {
    CUFILE_PARAM_POSIX_POOL_SLAB_SIZE_KB,        /* 0 */
    CUFILE_PARAM_POSIX_POOL_SLAB_COUNT,          /* 1 */
    CUFILE_PARAM_GPU_BOUNCE_BUFFER_SLAB_SIZE_KB, /* 2 */
    CUFILE_PARAM_GPU_BOUNCE_BUFFER_SLAB_COUNT    /* 3 */
} CUFileArrayConfigParameter_t;

/**
 * @brief Reads a size parameter.
 *
 * While closed, a value staged with cuFileSetParameterSizeT() or a legacy setter, else the
 * one the next open uses; parameters the engine holds (docs/configuration.md) are read from
 * it.  CUFILE_PARAM_PROFILE_STATS is the configured level (profile.cufile_stats), not the one
 * cuFileSetStatsLevel() put in force.
 *
 * @param param  A CUFileSizeTConfigParameter_t value.
 * @param value  Receives the value.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           Unknown `param`, or `value` is NULL.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileGetParameterSizeT(CUFileSizeTConfigParameter_t param, size_t *value);

/**
 * @brief Reads a boolean parameter.
 *
 * As cuFileGetParameterSizeT().
 *
 * @param param  A CUFileBoolConfigParameter_t value.
 * @param value  Receives the value.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           Unknown `param`, or `value` is NULL.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileGetParameterBool(CUFileBoolConfigParameter_t param, bool *value);

/**
 * @brief Copies a string parameter and its NUL into `desc_str`.
 *
 * All `len` bytes are written: the text, then NULs (as strncpy()).  The log file path
 * (CUFILE_PARAM_ENV_LOGFILE_PATH) is cut to `len` - 1 bytes where it is longer; the others
 * need room for the text and its NUL.
 *
 * @param param     A CUFileStringConfigParameter_t value.
 * @param desc_str  Receives the text.
 * @param len       Bytes of room.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           Unknown `param`, `desc_str` NULL, `len` 0 or less
 *                                         or too small (nothing is written then), or
 *                                         CUFILE_PARAM_ENV_LOGFILE_PATH while
 *                                         CUFILE_LOGFILE_PATH is unset.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileGetParameterString(CUFileStringConfigParameter_t param, char *desc_str, int len);

/**
 * @brief The range a size parameter accepts (cuFile 1.19's ranges; a maximum of 0 means no
 * upper bound).
 *
 * The maxima of CUFILE_PARAM_PROPERTIES_MAX_DEVICE_CACHE_SIZE_KB and
 * CUFILE_PARAM_PROPERTIES_MAX_DEVICE_PINNED_MEM_SIZE_KB are GPU 0's BAR1 size in KiB, as
 * NVIDIA's library reports both (0 where it cannot be read, or without a GPU).
 *
 * @param param      A CUFileSizeTConfigParameter_t value.
 * @param min_value  Receives the minimum.
 * @param max_value  Receives the maximum.
 * @return CU_FILE_SUCCESS, or the status below in .err.
 * @retval CU_FILE_INVALID_VALUE  Unknown `param`, a parameter without a range
 *                                (CUFILE_PARAM_PROFILE_STATS), or a NULL pointer.
 * @par Thread safety
 * Safe from any thread; needs no driver.
 * @par Differences
 * As NVIDIA's cuFile 1.19 (1.15 allows 0 to 32 threads).
 */
CUfileError_t cuFileGetParameterMinMaxValue(CUFileSizeTConfigParameter_t param, size_t *min_value,
                                            size_t *max_value);

/**
 * @brief Stages a size parameter for the next open (only while closed).
 *
 * The next open applies it ahead of the CUFILE_* variables and the configuration file; a
 * value outside the parameter's range is then logged and the configured value kept.
 *
 * @param param  A CUFileSizeTConfigParameter_t value.
 * @param value  The value.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           Unknown `param`.
 * @retval CU_FILE_DRIVER_ALREADY_OPEN     The driver is open.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileSetParameterSizeT(CUFileSizeTConfigParameter_t param, size_t value);

/**
 * @brief Stages a boolean parameter for the next open (only while closed).
 *
 * CUFILE_PARAM_PROFILE_NVTX (deprecated) is stored and read back; no NVTX range is emitted.
 *
 * @param param  A CUFileBoolConfigParameter_t value.
 * @param value  The value.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           Unknown `param`.
 * @retval CU_FILE_DRIVER_ALREADY_OPEN     The driver is open.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileSetParameterBool(CUFileBoolConfigParameter_t param, bool value);

/**
 * @brief Stages a string parameter for the next open (only while closed).
 *
 * @param param     A CUFileStringConfigParameter_t value.
 * @param desc_str  NUL-terminated text.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           Unknown `param`, or `desc_str` is NULL.
 * @retval CU_FILE_DRIVER_ALREADY_OPEN     The driver is open.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileSetParameterString(CUFileStringConfigParameter_t param, const char *desc_str);

/* ---------------------------------------------------------------------------------------
 * Statistics
 * ------------------------------------------------------------------------------------- */

/**
 * @brief Sets the statistics level: 0 off, 1 counters, 2 histograms, 3 per GPU.
 *
 * cuFileGetStatsLevel() and cuFileGetStatsL1/L2/L3() follow it at once; the engine records
 * at the level in force at the next open.  It beats profile.cufile_stats for the level in
 * force (the parameter CUFILE_PARAM_PROFILE_STATS keeps the configured value).
 *
 * @param level  0 to 3.
 * @return CU_FILE_SUCCESS, or the status below in .err.
 * @retval CU_FILE_INVALID_VALUE  `level` is outside 0 to 3.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileSetStatsLevel(int level);

/**
 * @brief Reads the statistics level in force (while closed: what the next open uses).
 *
 * @param level  Receives 0 to 3.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           `level` is NULL.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileGetStatsLevel(int *level);

/* Length of a GPU's UUID in CUfilePerGpuStats_t. */
#define CUFILE_GPU_UUID_LEN 16

/* Calls that succeeded and calls that failed. */
typedef struct CUfileOpCounter {
    uint64_t ok;
    uint64_t err;
} CUfileOpCounter_t;

/* Level 1: counters, bytes, bandwidths (bytes/s), latencies (us) and rates (ops/s). */
typedef struct CUfileStatsLevel1 {
    CUfileOpCounter_t read_ops;
    CUfileOpCounter_t write_ops;
    CUfileOpCounter_t hdl_register_ops;
    CUfileOpCounter_t hdl_deregister_ops;
    CUfileOpCounter_t buf_register_ops;
    CUfileOpCounter_t buf_deregister_ops;
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
    CUfileOpCounter_t batch_submit_ops;
    CUfileOpCounter_t batch_complete_ops;
    CUfileOpCounter_t batch_setup_ops;
    CUfileOpCounter_t batch_cancel_ops;
    CUfileOpCounter_t batch_destroy_ops;
    CUfileOpCounter_t batch_enqueued_ops;
    CUfileOpCounter_t batch_posix_enqueued_ops;
    CUfileOpCounter_t batch_processed_ops;
    CUfileOpCounter_t batch_posix_processed_ops;
    CUfileOpCounter_t batch_nvfs_submit_ops;
    CUfileOpCounter_t batch_p2p_submit_ops;
    CUfileOpCounter_t batch_aio_submit_ops;
    CUfileOpCounter_t batch_iouring_submit_ops;
    CUfileOpCounter_t batch_mixed_io_submit_ops;
    CUfileOpCounter_t batch_total_submit_ops;
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
    /* vectored I/O (API level 1.19; the structure is 624 bytes from then on, 512 before;
       filled only under HIPFILE_CUFILE_API_LEVEL=1.19) */
    CUfileOpCounter_t readv_ops;
    CUfileOpCounter_t writev_ops;
    uint64_t readv_bytes;
    uint64_t writev_bytes;
    uint64_t readv_bw_bytes_per_sec;
    uint64_t writev_bw_bytes_per_sec;
    uint64_t readv_lat_avg_us;
    uint64_t writev_lat_avg_us;
    uint64_t readv_ops_per_sec;
    uint64_t writev_ops_per_sec;
    uint64_t readv_lat_sum_us;
    uint64_t writev_lat_sum_us;
} CUfileStatsLevel1_t;

/* Level 2: level 1 plus 32-bucket histograms of I/O sizes in KiB. */
typedef struct CUfileStatsLevel2 {
    CUfileStatsLevel1_t basic;
    uint64_t read_size_kb_hist[32];
    uint64_t write_size_kb_hist[32];
} CUfileStatsLevel2_t;

/* Per-GPU figures of level 3. */
typedef struct CUfilePerGpuStats {
    char uuid[CUFILE_GPU_UUID_LEN];
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
    uint64_t writes_bytes;
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
} CUfilePerGpuStats_t;

/* Level 3: level 2 plus the figures of up to 16 GPUs (num_gpus of them valid). */
typedef struct CUfileStatsLevel3 {
    CUfileStatsLevel2_t detailed;
    uint32_t num_gpus;
    CUfilePerGpuStats_t per_gpu_stats[16];
} CUfileStatsLevel3_t;

/**
 * @brief Resumes counting after cuFileStatsStop() (the stopped interval is left out).
 *
 * The counters shown are the engine's since the driver opened or the last reset; rates,
 * averages and GPU identities are shown as the engine computes them.  Needs a level above 0
 * (cuFileSetStatsLevel(); a stop sets it to 0).
 *
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The driver is closed.
 * @retval CU_FILE_INTERNAL_ERROR          The statistics level is 0 (as NVIDIA's library).
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileStatsStart(void);

/**
 * @brief Freezes the counters cuFileGetStatsL1/L2/L3() report and sets the level to 0.
 *
 * As in NVIDIA's library, collection ends: cuFileGetStatsLevel() reads 0 and
 * cuFileGetStatsL1/L2/L3() refuse until a level is set again; a later cuFileStatsStart()
 * resumes from the frozen counters.
 *
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The driver is closed.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileStatsStop(void);

/**
 * @brief Zeroes the counters cuFileGetStatsL1/L2/L3() report.
 *
 * The counters shown are the engine's since the driver opened or the last reset; rates,
 * averages and GPU identities are shown as the engine computes them.
 *
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The driver is closed.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile.
 */
CUfileError_t cuFileStatsReset(void);

/**
 * @brief Copies the level 1 statistics (cuFile 1.18's layout, 512 bytes; 624 with the readv/writev counters under HIPFILE_CUFILE_API_LEVEL=1.19).
 *
 * Counters, bytes, bandwidths, latencies; the readv/writev counters (1.19 layout only) are
 * this library's own.  Needs a statistics level of at least 1.
 *
 * @param stats  Receives the statistics.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           `stats` is NULL (checked first, while closed too), or
 *                                         the level in force is below 1.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The driver is closed.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * The counts come from the engine, so hipFile calls of the same process are included.
 */
CUfileError_t cuFileGetStatsL1(CUfileStatsLevel1_t *stats);

/**
 * @brief Copies the level 2 statistics (cuFile 1.18's layout, 1024 bytes; 1136 under HIPFILE_CUFILE_API_LEVEL=1.19).
 *
 * Level 1 plus the read and write size histograms. Needs a statistics level of at least 2.
 *
 * @param stats  Receives the statistics.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           `stats` is NULL (checked first, while closed too), or
 *                                         the level in force is below 2.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The driver is closed.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * The counts come from the engine, so hipFile calls of the same process are included.
 */
CUfileError_t cuFileGetStatsL2(CUfileStatsLevel2_t *stats);

/**
 * @brief Copies the level 3 statistics (cuFile 1.18's layout, 5000 bytes; 5112 under HIPFILE_CUFILE_API_LEVEL=1.19).
 *
 * Level 2 plus per-GPU records. Needs a statistics level of at least 3.
 *
 * @param stats  Receives the statistics.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           `stats` is NULL (checked first, while closed too), or
 *                                         the level in force is below 3.
 * @retval CU_FILE_DRIVER_NOT_INITIALIZED  The driver is closed.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * The counts come from the engine, so hipFile calls of the same process are included.
 */
CUfileError_t cuFileGetStatsL3(CUfileStatsLevel3_t *stats);

/* ---------------------------------------------------------------------------------------
 * GPU memory windows, staging slabs, peer-to-peer
 * ------------------------------------------------------------------------------------- */

/**
 * @brief Size of a GPU's BAR1 window in KiB.
 *
 * The device's second memory BAR in its sysfs resource file, found from the PCI bus id the
 * CUDA driver gives; 0, with a warning in the log, where it cannot be read (no bus id, no
 * sysfs, a device not on PCI).
 *
 * @param gpuIndex  A CUDA device ordinal.
 * @param barSize   Receives the size.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE      `barSize` is NULL, or `gpuIndex` is not a device.
 * @retval CU_FILE_CUDA_DRIVER_ERROR  No CUDA driver in the process (cu_err
 *                                    CUDA_ERROR_NOT_INITIALIZED).
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile (nothing here uses BAR1).
 */
CUfileError_t cuFileGetBARSizeInKB(int gpuIndex, size_t *barSize);

/**
 * @brief Stages the slabs of the host staging pool (only while closed).
 *
 * Stored and reported; the engine's own pinned pool is sized by
 * CUFILE_PARAM_PROPERTIES_MAX_DEVICE_CACHE_SIZE_KB.
 *
 * @param size_values   `len` slab sizes in KiB.
 * @param count_values  `len` slab counts.
 * @param len           Number of slabs, at least 1.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           A NULL array, or `len` is not positive.
 * @retval CU_FILE_DRIVER_ALREADY_OPEN     The driver is open.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * NVIDIA's cuFile allocates these pools; here they are stored and reported.
 */
CUfileError_t cuFileSetParameterPosixPoolSlabArray(const size_t *size_values, const size_t *count_values,
                                                   int len);

/**
 * @brief Reads the slabs of the host staging pool.
 *
 * What was set through the API or the configuration file, else the defaults.
 *
 * @param size_values   Receives `len` slab sizes in KiB.
 * @param count_values  Receives `len` slab counts.
 * @param len           Must equal the current number of slabs.
 * @return CU_FILE_SUCCESS, or the status below in .err.
 * @retval CU_FILE_INVALID_VALUE  A NULL array, `len` is not positive, or `len` differs from
 *                                the number of slabs.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile 1.19.
 */
CUfileError_t cuFileGetParameterPosixPoolSlabArray(size_t *size_values, size_t *count_values, int len);

/**
 * @brief Stages the slabs of the GPU bounce-buffer pool (only while closed).
 *
 * Stored and reported; the engine's own pinned pool is sized by
 * CUFILE_PARAM_PROPERTIES_MAX_DEVICE_CACHE_SIZE_KB.
 *
 * @param size_values   `len` slab sizes in KiB.
 * @param count_values  `len` slab counts.
 * @param len           Number of slabs, at least 1.
 * @return CU_FILE_SUCCESS, or one of the statuses below in .err.
 * @retval CU_FILE_INVALID_VALUE           A NULL array, or `len` is not positive.
 * @retval CU_FILE_DRIVER_ALREADY_OPEN     The driver is open.
 * @retval CU_FILE_PLATFORM_NOT_SUPPORTED  libhipfile.so.0 cannot be loaded.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * NVIDIA's cuFile allocates these pools; here they are stored and reported.
 */
CUfileError_t cuFileSetParameterGpuBounceBufferSlabArray(const size_t *size_values, const size_t *count_values,
                                                         int len);

/**
 * @brief Reads the slabs of the GPU bounce-buffer pool.
 *
 * What was set through the API or the configuration file, else the defaults.
 *
 * @param size_values   Receives `len` slab sizes in KiB.
 * @param count_values  Receives `len` slab counts.
 * @param len           Must equal the current number of slabs.
 * @return CU_FILE_SUCCESS, or the status below in .err.
 * @retval CU_FILE_INVALID_VALUE  A NULL array, `len` is not positive, or `len` differs from
 *                                the number of slabs.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As NVIDIA's cuFile 1.19.
 */
CUfileError_t cuFileGetParameterGpuBounceBufferSlabArray(size_t *size_values, size_t *count_values, int len);

/**
 * @brief Reads the peer-to-peer transports set for a kind of storage.
 *
 * @param status_flag  A CUfileDriverStatusFlags_t value (0 to 14).
 * @param p2p_flags    Receives a mask of CU_FILE_P2P_FLAG_* (0 until set).
 * @return CU_FILE_SUCCESS, or the status below in .err.
 * @retval CU_FILE_INVALID_VALUE  `status_flag` is out of range, or `p2p_flags` is NULL.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * Stored and reported only: no peer-to-peer transport is used.
 */
CUfileError_t cuFileDriverGetP2PFlags(CUfileDriverStatusFlags_t status_flag, CUfileP2PFlags_t *p2p_flags);

/**
 * @brief Sets the peer-to-peer transports for a kind of storage.
 *
 * Only CU_FILE_P2P_FLAG_PCI_P2PDMA is accepted (as on x86-64); 0 is accepted and changes
 * nothing.  The flags are forgotten when the driver closes to zero.
 *
 * @param status_flag  A CUfileDriverStatusFlags_t value (0 to 14).
 * @param p2p_flags    0 or CU_FILE_P2P_FLAG_PCI_P2PDMA.
 * @return CU_FILE_SUCCESS, or the status below in .err.
 * @retval CU_FILE_INVALID_VALUE  `status_flag` is out of range, or another mask.
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * Stored and reported only: no peer-to-peer transport is used.
 */
CUfileError_t cuFileDriverSetP2PFlags(CUfileDriverStatusFlags_t status_flag, CUfileP2PFlags_t p2p_flags);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __CUFILE_H_ */
