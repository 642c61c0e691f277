/*
 * cufile.h - public C interface of libcufile.so.0, the cuFile C ABI (API level 1.19,
 * cuFileGetVersion() == 1190) served by the hipfile engine.
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
    CUFILE_OP(0, CU_FILE_SUCCESS, cufile success) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 1, CU_FILE_DRIVER_NOT_INITIALIZED, nvidia-fs driver is not loaded. Set allow_compat_mode to true in cufile.json file to enable compatible mode) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 2, CU_FILE_DRIVER_INVALID_PROPS, invalid property) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 3, CU_FILE_DRIVER_UNSUPPORTED_LIMIT, property range error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 4, CU_FILE_DRIVER_VERSION_MISMATCH, nvidia-fs driver version mismatch) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 5, CU_FILE_DRIVER_VERSION_READ_ERROR, nvidia-fs driver version read error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 6, CU_FILE_DRIVER_CLOSING, driver shutdown in progress) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 7, CU_FILE_PLATFORM_NOT_SUPPORTED, GPUDirect Storage not supported on current platform) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 8, CU_FILE_IO_NOT_SUPPORTED, GPUDirect Storage not supported on current file) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 9, CU_FILE_DEVICE_NOT_SUPPORTED, GPUDirect Storage not supported on current GPU) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 10, CU_FILE_NVFS_DRIVER_ERROR, nvidia-fs driver ioctl error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 11, CU_FILE_CUDA_DRIVER_ERROR, CUDA Driver API error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 12, CU_FILE_CUDA_POINTER_INVALID, invalid device pointer) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 13, CU_FILE_CUDA_MEMORY_TYPE_INVALID, invalid pointer memory type) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 14, CU_FILE_CUDA_POINTER_RANGE_ERROR, pointer range exceeds allocated address range) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 15, CU_FILE_CUDA_CONTEXT_MISMATCH, cuda context mismatch) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 16, CU_FILE_INVALID_MAPPING_SIZE, access beyond maximum pinned size) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 17, CU_FILE_INVALID_MAPPING_RANGE, access beyond mapped size) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 18, CU_FILE_INVALID_FILE_TYPE, unsupported file type) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 19, CU_FILE_INVALID_FILE_OPEN_FLAG, unsupported file open flags) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 20, CU_FILE_DIO_NOT_SET, fd direct IO not set) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 22, CU_FILE_INVALID_VALUE, invalid arguments) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 23, CU_FILE_MEMORY_ALREADY_REGISTERED, device pointer already registered) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 24, CU_FILE_MEMORY_NOT_REGISTERED, device pointer lookup failure) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 25, CU_FILE_PERMISSION_DENIED, driver or file access error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 26, CU_FILE_DRIVER_ALREADY_OPEN, driver is already open) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 27, CU_FILE_HANDLE_NOT_REGISTERED, file descriptor is not registered) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 28, CU_FILE_HANDLE_ALREADY_REGISTERED, file descriptor is already registered) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 29, CU_FILE_DEVICE_NOT_FOUND, GPU device not found) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 30, CU_FILE_INTERNAL_ERROR, internal error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 31, CU_FILE_GETNEWFD_FAILED, failed to obtain new file descriptor) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 33, CU_FILE_NVFS_SETUP_ERROR, NVFS driver initialization error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 34, CU_FILE_IO_DISABLED, GPUDirect Storage disabled by config on current file) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 35, CU_FILE_BATCH_SUBMIT_FAILED, failed to submit batch operation) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 36, CU_FILE_GPU_MEMORY_PINNING_FAILED, failed to allocate pinned GPU Memory) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 37, CU_FILE_BATCH_FULL, queue full for batch operation) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 38, CU_FILE_ASYNC_NOT_SUPPORTED, cuFile stream operation not supported) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 39, CU_FILE_INTERNAL_BATCH_SETUP_ERROR, batch setup internal error - retry later) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 40, CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR, batch submit internal error - retry later) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 41, CU_FILE_INTERNAL_BATCH_GETSTATUS_ERROR, batch get status internal error - retry later) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 42, CU_FILE_INTERNAL_BATCH_CANCEL_ERROR, batch cancel internal error - retry later) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 43, CU_FILE_NOMEM_ERROR, cufile no memory error - retry later) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 44, CU_FILE_IO_ERROR, cufile io error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 45, CU_FILE_INTERNAL_BUF_REGISTER_ERROR, cufile buf registration error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 46, CU_FILE_HASH_OPR_ERROR, cufile hash operation error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 47, CU_FILE_INVALID_CONTEXT_ERROR, cufile invalid context error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 48, CU_FILE_NVFS_INTERNAL_DRIVER_ERROR, nvfs internal driver error) \
    CUFILE_OP(CUFILEOP_BASE_ERR + 49, CU_FILE_BATCH_NOCOMPAT_ERROR, compat mode off error) \
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

/*
 * Registers the file *descr names; on success *fh is its handle.  Opens the driver if it is
 * not open (counted by cuFileUseCount()).
 */
CUfileError_t cuFileHandleRegister(CUfileHandle_t *fh, CUfileDescr_t *descr);

/* Forgets a handle.  The caller closes its own file descriptor afterwards. */
void cuFileHandleDeregister(CUfileHandle_t fh);

/*
 * Registers the memory [bufPtr_base, bufPtr_base + length) (device or host memory) for
 * repeated I/O.  flags: 0 or CU_FILE_RDMA_* bits.
 */
CUfileError_t cuFileBufRegister(const void *bufPtr_base, size_t length, int flags);

/* Undoes cuFileBufRegister(); bufPtr_base is the base given there. */
CUfileError_t cuFileBufDeregister(const void *bufPtr_base);

/* ---------------------------------------------------------------------------------------
 * Synchronous I/O
 *
 * The memory used is bufPtr_base + bufPtr_offset; bufPtr_base may be a registered base or any
 * device or host pointer.  The result is the number of bytes moved (fewer than size only for
 * a read that reaches the end of the file), or -1 with errno, or a negated CUfileOpError.
 * ------------------------------------------------------------------------------------- */

ssize_t cuFileRead(CUfileHandle_t fh, void *bufPtr_base, size_t size, off_t file_offset, off_t bufPtr_offset);
ssize_t cuFileWrite(CUfileHandle_t fh, const void *bufPtr_base, size_t size, off_t file_offset,
                    off_t bufPtr_offset);

/* ---------------------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------------------- */

/* Opens the driver, or adds one to its use count when it is open. */
CUfileError_t cuFileDriverOpen(void);

/*
 * Takes one from the use count; the last close releases every handle, buffer and batch.
 * CU_FILE_DRIVER_NOT_INITIALIZED when the count is already 0.  Both exported names,
 * cuFileDriverClose and cuFileDriverClose_v2, are this reference-counted close: programs
 * compiled with this header call cuFileDriverClose_v2 (the macro below), programs that look
 * the name up at run time may use either.
 */
CUfileError_t cuFileDriverClose(void);
#define cuFileDriverClose cuFileDriverClose_v2
CUfileError_t cuFileDriverClose(void);

/* The driver's use count: explicit opens plus implicit ones, minus closes. */
long cuFileUseCount(void);

/* Fills *props with the running configuration and capabilities. */
CUfileError_t cuFileDriverGetProperties(CUfileDrvProps_t *props);

/* Poll for completion of I/O up to poll_threshold_size KiB (poll true), or never. */
CUfileError_t cuFileDriverSetPollMode(bool poll, size_t poll_threshold_size);

/* Setters of the properties above; every size in KiB. */
CUfileError_t cuFileDriverSetMaxDirectIOSize(size_t max_direct_io_size);
CUfileError_t cuFileDriverSetMaxCacheSize(size_t max_cache_size);
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

/* Creates a batch context for up to nr entries in flight. */
CUfileError_t cuFileBatchIOSetUp(CUfileBatchHandle_t *batch_idp, unsigned nr);

/* Queues nr entries of iocbp.  flags: 0. */
CUfileError_t cuFileBatchIOSubmit(CUfileBatchHandle_t batch_idp, unsigned nr, CUfileIOParams_t *iocbp,
                                  unsigned int flags);

/*
 * Waits until at least min_nr entries have finished or *timeout has passed (NULL: no limit),
 * then reports up to *nr finished entries into iocbp and stores their number in *nr.
 */
CUfileError_t cuFileBatchIOGetStatus(CUfileBatchHandle_t batch_idp, unsigned min_nr, unsigned *nr,
                                     CUfileIOEvents_t *iocbp, struct timespec *timeout);

/* Cancels every entry of the batch that has not finished. */
CUfileError_t cuFileBatchIOCancel(CUfileBatchHandle_t batch_idp);

/* Releases the batch context. */
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

/*
 * Queue a read or a write on stream.  The size and offsets are read through their pointers
 * when the stream reaches the operation (unless a FIXED flag says otherwise); the result, as
 * cuFileRead()/cuFileWrite() would return it, is stored in *bytes_read_p / *bytes_written_p
 * by the time the stream has passed the operation.
 */
CUfileError_t cuFileReadAsync(CUfileHandle_t fh, void *bufPtr_base, size_t *size_p, off_t *file_offset_p,
                              off_t *bufPtr_offset_p, ssize_t *bytes_read_p, CUstream stream);
CUfileError_t cuFileWriteAsync(CUfileHandle_t fh, void *bufPtr_base, size_t *size_p, off_t *file_offset_p,
                               off_t *bufPtr_offset_p, ssize_t *bytes_written_p, CUstream stream);

/* Declares a stream's CU_FILE_STREAM_* promises; undone by cuFileStreamDeregister(). */
CUfileError_t cuFileStreamRegister(CUstream stream, unsigned flags);
CUfileError_t cuFileStreamDeregister(CUstream stream);

/* ---------------------------------------------------------------------------------------
 * Vectored I/O
 * ------------------------------------------------------------------------------------- */

/* One piece of memory of cuFileReadv()/cuFileWritev(). */
typedef struct CUfileIOVec {
    void *base; /* device or host memory */
    size_t len;
} CUfileIOVec_t;

/*
 * Reads or writes the iovcnt pieces of iov, in order, as one contiguous range of the file
 * starting at file_offset.  flags: 0.  Results as for cuFileRead()/cuFileWrite().
 */
ssize_t cuFileReadv(CUfileHandle_t fh, const CUfileIOVec_t *iov, size_t iovcnt, off_t file_offset,
                    unsigned flags);
ssize_t cuFileWritev(CUfileHandle_t fh, const CUfileIOVec_t *iov, size_t iovcnt, off_t file_offset,
                     unsigned flags);

/* ---------------------------------------------------------------------------------------
 * Version and topology
 * ------------------------------------------------------------------------------------- */

/* API level as 1000 * major + 10 * minor: 1190 for this interface. */
CUfileError_t cuFileGetVersion(int *version);

/* Writes a JSON description of the machine's PCIe topology to the file filename. */
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

CUfileError_t cuFileGetParameterSizeT(CUFileSizeTConfigParameter_t param, size_t *value);
CUfileError_t cuFileGetParameterBool(CUFileBoolConfigParameter_t param, bool *value);
/* Copies the value and its terminating NUL into desc_str; len must leave room for both. */
CUfileError_t cuFileGetParameterString(CUFileStringConfigParameter_t param, char *desc_str, int len);
/* The range a size parameter accepts. */
CUfileError_t cuFileGetParameterMinMaxValue(CUFileSizeTConfigParameter_t param, size_t *min_value,
                                            size_t *max_value);
CUfileError_t cuFileSetParameterSizeT(CUFileSizeTConfigParameter_t param, size_t value);
CUfileError_t cuFileSetParameterBool(CUFileBoolConfigParameter_t param, bool value);
CUfileError_t cuFileSetParameterString(CUFileStringConfigParameter_t param, const char *desc_str);

/* ---------------------------------------------------------------------------------------
 * Statistics
 * ------------------------------------------------------------------------------------- */

/* Statistics level: 0 off, 1 counters (L1), 2 plus size histograms (L2), 3 plus per GPU (L3). */
CUfileError_t cuFileSetStatsLevel(int level);
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
    /* vectored I/O (API level 1.19; the structure is 624 bytes from then on, 512 before) */
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

/* Start, stop and zero the collection (the driver must be open). */
CUfileError_t cuFileStatsStart(void);
CUfileError_t cuFileStatsStop(void);
CUfileError_t cuFileStatsReset(void);

/* Copy the statistics (the 1.19 layouts above) into *stats; needs a level at least as high. */
CUfileError_t cuFileGetStatsL1(CUfileStatsLevel1_t *stats);
CUfileError_t cuFileGetStatsL2(CUfileStatsLevel2_t *stats);
CUfileError_t cuFileGetStatsL3(CUfileStatsLevel3_t *stats);

/* ---------------------------------------------------------------------------------------
 * GPU memory windows, staging slabs, peer-to-peer
 * ------------------------------------------------------------------------------------- */

/* Size of GPU gpuIndex's BAR1 window in KiB. */
CUfileError_t cuFileGetBARSizeInKB(int gpuIndex, size_t *barSize);

/*
 * The host staging pool (POSIX path) and the GPU bounce-buffer pool, as len pairs of slab size
 * (KiB) and slab count.  Setters work only while the driver is closed; getters need len equal
 * to the current number of slabs.
 */
CUfileError_t cuFileSetParameterPosixPoolSlabArray(const size_t *size_values, const size_t *count_values,
                                                   int len);
CUfileError_t cuFileGetParameterPosixPoolSlabArray(size_t *size_values, size_t *count_values, int len);
CUfileError_t cuFileSetParameterGpuBounceBufferSlabArray(const size_t *size_values, const size_t *count_values,
                                                         int len);
CUfileError_t cuFileGetParameterGpuBounceBufferSlabArray(size_t *size_values, size_t *count_values, int len);

/* The peer-to-peer transports (a mask of CU_FILE_P2P_FLAG_*) used for a kind of storage. */
CUfileError_t cuFileDriverGetP2PFlags(CUfileDriverStatusFlags_t status_flag, CUfileP2PFlags_t *p2p_flags);
CUfileError_t cuFileDriverSetP2PFlags(CUfileDriverStatusFlags_t status_flag, CUfileP2PFlags_t p2p_flags);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __CUFILE_H_ */
