/*
 * hip_on_cuda.h - internals of libamdhip64.so.7 on CUDA: the HIP ABI (types, numbering, struct
 * layouts of the ROCm release the shim claims), the table of CUDA driver entry points it calls,
 * and the helpers every exported function uses.
 *
 * What the shim is: AMD's HIP runtime API, as the C ABI of ROCm 7 defines it, implemented on
 * the CUDA driver API of libcuda.so.1 (dlopened at run time, never linked), so that a program
 * written for AMD's runtime - hipfile's HIP backend above all - runs unchanged on an NVIDIA
 * GPU, sharing each device's primary context with any CUDA code in the process. Where HIP and
 * CUDA differ, the shim follows HIP (AMD's documentation, and AMD's runtime source where the
 * documentation is silent or stale) and says so at the place.
 *
 * Every exported function is declared with HOC_EXPORT, starts with HOC_BEGIN() (loads and
 * initialises the driver once) and ends through HOC_RETURN(), which records the thread's last
 * error as ROCm 7 does and traces failures when HIP_ON_CUDA_TRACE is set.
 */
#ifndef HIP_ON_CUDA_H
#define HIP_ON_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_api.h"

#define HOC_EXPORT __attribute__((visibility("default")))

/* ---- HIP ABI types --------------------------------------------------------------------- */

typedef int hipError_t;
typedef int hipDevice_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef void *hipDeviceptr_t;
typedef void (*hipHostFn_t)(void *userData);

/* hipError_t (ROCm >= 6 numbering; the values HIP shares with CUDA have CUDA's numbers). */
enum {
    hipSuccess = 0,
    hipErrorInvalidValue = 1,
    hipErrorOutOfMemory = 2,
    hipErrorNotInitialized = 3,
    hipErrorInvalidMemcpyDirection = 21,
    hipErrorNoDevice = 100,
    hipErrorInvalidDevice = 101,
    hipErrorInvalidHandle = 400,
    hipErrorNotFound = 500,
    hipErrorNotReady = 600,
    hipErrorNotSupported = 801,
    hipErrorUnknown = 999,
};

/* hipMemoryType of ROCm >= 6 and of ROCm <= 5 (the numbering changed in 6.0). */
enum {
    hipMemoryTypeUnregistered = 0,
    hipMemoryTypeHost = 1,
    hipMemoryTypeDevice = 2,
    hipMemoryTypeManaged = 3,
    hipMemoryTypeArray = 10,
    hipMemoryTypeUnified = 11,
};
enum {
    hipMemoryTypeHostR5 = 0,
    hipMemoryTypeDeviceR5 = 1,
    hipMemoryTypeArrayR5 = 2,
    hipMemoryTypeUnifiedR5 = 3,
};

/* hipPointerAttribute_t: 32 bytes in every ROCm release. */
typedef struct hipPointerAttribute_t {
    int type;
    int device;
    void *devicePointer;
    void *hostPointer;
    int isManaged;
    unsigned allocationFlags;
} hipPointerAttribute_t;
_Static_assert(sizeof(hipPointerAttribute_t) == 32, "hipPointerAttribute_t is 32 bytes");

/* hipMemcpyKind */
enum {
    hipMemcpyHostToHost = 0,
    hipMemcpyHostToDevice = 1,
    hipMemcpyDeviceToHost = 2,
    hipMemcpyDeviceToDevice = 3,
    hipMemcpyDefault = 4,
    hipMemcpyDeviceToDeviceNoCU = 1024,
};

/* Flags. */
#define hipHostMallocPortable 0x1u
#define hipHostMallocMapped 0x2u
#define hipHostMallocWriteCombined 0x4u
#define hipHostMallocUncached 0x10000000u
#define hipHostMallocNumaUser 0x20000000u
#define hipHostMallocCoherent 0x40000000u
#define hipHostMallocNonCoherent 0x80000000u
#define hipHostRegisterPortable 0x1u
#define hipHostRegisterMapped 0x2u
#define hipHostRegisterIoMemory 0x4u
#define hipHostRegisterReadOnly 0x8u /* the same bit as hipExtHostRegisterCoarseGrained */
#define hipExtHostRegisterUncached 0x80000000u
#define hipMemAttachGlobal 0x1u
#define hipMemAttachHost 0x2u
#define hipStreamDefault 0x0u
#define hipStreamNonBlocking 0x1u
#define hipEventBlockingSync 0x1u
#define hipEventDisableTiming 0x2u
#define hipEventInterprocess 0x4u
#define hipEventDisableSystemFence 0x20000000u
#define hipEventReleaseToDevice 0x40000000u
#define hipEventReleaseToSystem 0x80000000u
#define hipStreamWaitValueGte 0x0u
#define hipStreamWaitValueEq 0x1u
#define hipStreamWaitValueAnd 0x2u
#define hipStreamWaitValueNor 0x3u
#define hipInvalidDeviceId (-2)
#define hipStreamLegacy ((hipStream_t)1)
#define hipStreamPerThread ((hipStream_t)2)
/* The `extra` argument of hipModuleLaunchKernel: AMD's values (CUDA ends the list with 0). */
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define HIP_LAUNCH_PARAM_END ((void *)0x03)
/* hipDriverProcAddressQueryResult */
#define HIP_GET_PROC_ADDRESS_SUCCESS 0
#define HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND 1

/* hipDeviceAttribute_t values the shim answers (HIP's numbering, not CUDA's). */
enum {
    hipDeviceAttributeEccEnabled = 0,
    hipDeviceAttributeAccessPolicyMaxWindowSize = 1,
    hipDeviceAttributeAsyncEngineCount = 2,
    hipDeviceAttributeCanMapHostMemory = 3,
    hipDeviceAttributeCanUseHostPointerForRegisteredMem = 4,
    hipDeviceAttributeClockRate = 5,
    hipDeviceAttributeComputeMode = 6,
    hipDeviceAttributeComputePreemptionSupported = 7,
    hipDeviceAttributeConcurrentKernels = 8,
    hipDeviceAttributeConcurrentManagedAccess = 9,
    hipDeviceAttributeCooperativeLaunch = 10,
    hipDeviceAttributeCooperativeMultiDeviceLaunch = 11,
    hipDeviceAttributeDeviceOverlap = 12,
    hipDeviceAttributeDirectManagedMemAccessFromHost = 13,
    hipDeviceAttributeGlobalL1CacheSupported = 14,
    hipDeviceAttributeHostNativeAtomicSupported = 15,
    hipDeviceAttributeIntegrated = 16,
    hipDeviceAttributeIsMultiGpuBoard = 17,
    hipDeviceAttributeKernelExecTimeout = 18,
    hipDeviceAttributeL2CacheSize = 19,
    hipDeviceAttributeLocalL1CacheSupported = 20,
    hipDeviceAttributeComputeCapabilityMajor = 23,
    hipDeviceAttributeManagedMemory = 24,
    hipDeviceAttributeMaxBlocksPerMultiProcessor = 25,
    hipDeviceAttributeMaxBlockDimX = 26,
    hipDeviceAttributeMaxBlockDimY = 27,
    hipDeviceAttributeMaxBlockDimZ = 28,
    hipDeviceAttributeMaxGridDimX = 29,
    hipDeviceAttributeMaxGridDimY = 30,
    hipDeviceAttributeMaxGridDimZ = 31,
    hipDeviceAttributeMaxThreadsPerBlock = 56,
    hipDeviceAttributeMaxThreadsPerMultiProcessor = 57,
    hipDeviceAttributeMaxPitch = 58,
    hipDeviceAttributeMemoryBusWidth = 59,
    hipDeviceAttributeMemoryClockRate = 60,
    hipDeviceAttributeComputeCapabilityMinor = 61,
    hipDeviceAttributeMultiGpuBoardGroupID = 62,
    hipDeviceAttributeMultiprocessorCount = 63,
    hipDeviceAttributePageableMemoryAccess = 65,
    hipDeviceAttributePageableMemoryAccessUsesHostPageTables = 66,
    hipDeviceAttributePciBusId = 67,
    hipDeviceAttributePciDeviceId = 68,
    hipDeviceAttributePciDomainId = 69,
    hipDeviceAttributePersistingL2CacheMaxSize = 70,
    hipDeviceAttributeMaxRegistersPerBlock = 71,
    hipDeviceAttributeMaxRegistersPerMultiprocessor = 72,
    hipDeviceAttributeReservedSharedMemPerBlock = 73,
    hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
    hipDeviceAttributeSharedMemPerBlockOptin = 75,
    hipDeviceAttributeSharedMemPerMultiprocessor = 76,
    hipDeviceAttributeSingleToDoublePrecisionPerfRatio = 77,
    hipDeviceAttributeStreamPrioritiesSupported = 78,
    hipDeviceAttributeSurfaceAlignment = 79,
    hipDeviceAttributeTccDriver = 80,
    hipDeviceAttributeTextureAlignment = 81,
    hipDeviceAttributeTexturePitchAlignment = 82,
    hipDeviceAttributeTotalConstantMemory = 83,
    hipDeviceAttributeUnifiedAddressing = 85,
    hipDeviceAttributeWarpSize = 87,
    hipDeviceAttributeMemoryPoolsSupported = 88,
    hipDeviceAttributeVirtualMemoryManagementSupported = 89,
    hipDeviceAttributeHostRegisterSupported = 90,
    hipDeviceAttributeMemoryPoolSupportedHandleTypes = 91,
    hipDeviceAttributeClockInstructionRate = 10000,
    hipDeviceAttributeMaxSharedMemoryPerMultiprocessor = 10002,
    hipDeviceAttributeCanUseStreamWaitValue = 10013,
    hipDeviceAttributePhysicalMultiProcessorCount = 10015,
};

/* hipDeviceProp_tR0600 (the layout of ROCm 6 and 7, whose headers map hipGetDeviceProperties
 * to hipGetDevicePropertiesR0600): 1472 bytes. */
typedef struct hipDeviceArch_t {
    unsigned hasGlobalInt32Atomics : 1;
    unsigned hasGlobalFloatAtomicExch : 1;
    unsigned hasSharedInt32Atomics : 1;
    unsigned hasSharedFloatAtomicExch : 1;
    unsigned hasFloatAtomicAdd : 1;
    unsigned hasGlobalInt64Atomics : 1;
    unsigned hasSharedInt64Atomics : 1;
    unsigned hasDoubles : 1;
    unsigned hasWarpVote : 1;
    unsigned hasWarpBallot : 1;
    unsigned hasWarpShuffle : 1;
    unsigned hasFunnelShift : 1;
    unsigned hasThreadFenceSystem : 1;
    unsigned hasSyncThreadsExt : 1;
    unsigned hasSurfaceFuncs : 1;
    unsigned has3dGrid : 1;
    unsigned hasDynamicParallelism : 1;
} hipDeviceArch_t;

typedef struct hipDeviceProp_tR0600 {
    char name[256];
    char uuid[16];
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int kernelExecTimeoutEnabled;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int maxTexture1D;
    int maxTexture1DMipmap;
    int maxTexture1DLinear;
    int maxTexture2D[2];
    int maxTexture2DMipmap[2];
    int maxTexture2DLinear[3];
    int maxTexture2DGather[2];
    int maxTexture3D[3];
    int maxTexture3DAlt[3];
    int maxTextureCubemap;
    int maxTexture1DLayered[2];
    int maxTexture2DLayered[3];
    int maxTextureCubemapLayered[2];
    int maxSurface1D;
    int maxSurface2D[2];
    int maxSurface3D[3];
    int maxSurface1DLayered[2];
    int maxSurface2DLayered[3];
    int maxSurfaceCubemap;
    int maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int tccDriver;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int streamPrioritiesSupported;
    int globalL1CacheSupported;
    int localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int multiGpuBoardGroupID;
    int hostNativeAtomicSupported;
    int singleToDoublePrecisionPerfRatio;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int canUseHostPointerForRegisteredMem;
    int cooperativeLaunch;
    int cooperativeMultiDeviceLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables;
    int directManagedMemAccessFromHost;
    int maxBlocksPerMultiProcessor;
    int accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported;
    int sparseHipArraySupported;
    int hostRegisterReadOnlySupported;
    int timelineSemaphoreInteropSupported;
    int memoryPoolsSupported;
    int gpuDirectRDMASupported;
    unsigned int gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned int memoryPoolSupportedHandleTypes;
    int deferredMappingHipArraySupported;
    int ipcEventSupported;
    int clusterLaunch;
    int unifiedFunctionPointers;
    int reserved[63];
    int hipReserved[32];
    char gcnArchName[256];
    size_t maxSharedMemoryPerMultiProcessor;
    int clockInstructionRate;
    hipDeviceArch_t arch;
    unsigned int *hdpMemFlushCntl;
    unsigned int *hdpRegFlushCntl;
    int cooperativeMultiDeviceUnmatchedFunc;
    int cooperativeMultiDeviceUnmatchedGridDim;
    int cooperativeMultiDeviceUnmatchedBlockDim;
    int cooperativeMultiDeviceUnmatchedSharedMem;
    int isLargeBar;
    int asicRevision;
} hipDeviceProp_tR0600;
_Static_assert(sizeof(hipDeviceProp_tR0600) == 1472, "hipDeviceProp_tR0600 is ROCm 7's 1472 bytes");

/* ---- The CUDA driver entry points ------------------------------------------------------ */

/*
 * X(required, field, "symbol", return type, (parameters)): every driver function the shim
 * calls, by the exact versioned symbol the driver exports, with that symbol's C prototype.
 * A missing required one makes hipInit fail (naming it); a missing optional one makes the HIP
 * functions that need it answer hipErrorNotSupported.
 */
#define HOC_CU_FUNCS(X)                                                                                   \
    X(1, Init, "cuInit", CUresult, (unsigned flags))                                                      \
    X(1, DriverGetVersion, "cuDriverGetVersion", CUresult, (int *version))                               \
    X(1, DeviceGetCount, "cuDeviceGetCount", CUresult, (int *count))                                     \
    X(1, DeviceGet, "cuDeviceGet", CUresult, (CUdevice * device, int ordinal))                           \
    X(1, DeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *value, int attribute, CUdevice dev)) \
    X(1, DeviceGetName, "cuDeviceGetName", CUresult, (char *name, int len, CUdevice dev))                \
    X(0, DeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t * bytes, CUdevice dev))                \
    X(0, DeviceGetPCIBusId, "cuDeviceGetPCIBusId", CUresult, (char *id, int len, CUdevice dev))          \
    X(1, DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext * ctx, CUdevice dev))  \
    X(1, CtxGetCurrent, "cuCtxGetCurrent", CUresult, (CUcontext * ctx))                                  \
    X(1, CtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext ctx))                                    \
    X(1, CtxPushCurrent, "cuCtxPushCurrent_v2", CUresult, (CUcontext ctx))                               \
    X(1, CtxPopCurrent, "cuCtxPopCurrent_v2", CUresult, (CUcontext * ctx))                               \
    X(1, CtxGetDevice, "cuCtxGetDevice", CUresult, (CUdevice * dev))                                     \
    X(1, CtxSynchronize, "cuCtxSynchronize", CUresult, (void))                                           \
    X(1, MemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr * p, size_t bytes))                           \
    X(1, MemFree, "cuMemFree_v2", CUresult, (CUdeviceptr p))                                             \
    X(0, MemAllocManaged, "cuMemAllocManaged", CUresult, (CUdeviceptr * p, size_t bytes, unsigned flags)) \
    X(1, MemHostAlloc, "cuMemHostAlloc", CUresult, (void **p, size_t bytes, unsigned flags))             \
    X(1, MemFreeHost, "cuMemFreeHost", CUresult, (void *p))                                              \
    X(0, MemHostRegister, "cuMemHostRegister_v2", CUresult, (void *p, size_t bytes, unsigned flags))     \
    X(0, MemHostUnregister, "cuMemHostUnregister", CUresult, (void *p))                                  \
    X(1, MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", CUresult,                              \
      (CUdeviceptr * dev, void *host, unsigned flags))                                                    \
    X(0, MemHostGetFlags, "cuMemHostGetFlags", CUresult, (unsigned *flags, void *p))                     \
    X(0, MemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t * free_bytes, size_t * total_bytes))           \
    X(1, MemGetAddressRange, "cuMemGetAddressRange_v2", CUresult,                                        \
      (CUdeviceptr * base, size_t * size, CUdeviceptr p))                                                 \
    X(1, PointerGetAttribute, "cuPointerGetAttribute", CUresult, (void *data, int attribute, CUdeviceptr p)) \
    X(1, PointerGetAttributes, "cuPointerGetAttributes", CUresult,                                       \
      (unsigned count, int *attributes, void **data, CUdeviceptr p))                                      \
    X(1, Memcpy, "cuMemcpy", CUresult, (CUdeviceptr dst, CUdeviceptr src, size_t bytes))                 \
    X(1, MemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr dst, const void *src, size_t bytes))      \
    X(1, MemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void *dst, CUdeviceptr src, size_t bytes))            \
    X(0, MemcpyAsync, "cuMemcpyAsync", CUresult, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s)) \
    X(1, MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult,                                              \
      (CUdeviceptr dst, const void *src, size_t bytes, CUstream s))                                       \
    X(1, MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult,                                              \
      (void *dst, CUdeviceptr src, size_t bytes, CUstream s))                                             \
    X(1, MemsetD8, "cuMemsetD8_v2", CUresult, (CUdeviceptr dst, unsigned char value, size_t count))      \
    X(0, MemsetD8Async, "cuMemsetD8Async", CUresult,                                                     \
      (CUdeviceptr dst, unsigned char value, size_t count, CUstream s))                                   \
    X(1, StreamCreate, "cuStreamCreate", CUresult, (CUstream * s, unsigned flags))                       \
    X(1, StreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream s))                                    \
    X(1, StreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream s))                               \
    X(1, StreamQuery, "cuStreamQuery", CUresult, (CUstream s))                                           \
    X(1, StreamGetCtx, "cuStreamGetCtx", CUresult, (CUstream s, CUcontext * ctx))                        \
    X(0, StreamGetFlags, "cuStreamGetFlags", CUresult, (CUstream s, unsigned *flags))                    \
    X(0, StreamGetId, "cuStreamGetId", CUresult, (CUstream s, unsigned long long *id))                   \
    X(0, StreamWaitEvent, "cuStreamWaitEvent", CUresult, (CUstream s, CUevent e, unsigned flags))        \
    X(0, LaunchHostFunc, "cuLaunchHostFunc", CUresult, (CUstream s, CUhostFn fn, void *data))            \
    X(0, StreamWaitValue32, "cuStreamWaitValue32_v2", CUresult,                                          \
      (CUstream s, CUdeviceptr addr, uint32_t value, unsigned flags))                                     \
    X(0, StreamWaitValue64, "cuStreamWaitValue64_v2", CUresult,                                          \
      (CUstream s, CUdeviceptr addr, uint64_t value, unsigned flags))                                     \
    X(0, StreamWriteValue32, "cuStreamWriteValue32_v2", CUresult,                                        \
      (CUstream s, CUdeviceptr addr, uint32_t value, unsigned flags))                                     \
    X(0, StreamWriteValue64, "cuStreamWriteValue64_v2", CUresult,                                        \
      (CUstream s, CUdeviceptr addr, uint64_t value, unsigned flags))                                     \
    X(1, EventCreate, "cuEventCreate", CUresult, (CUevent * e, unsigned flags))                          \
    X(1, EventRecord, "cuEventRecord", CUresult, (CUevent e, CUstream s))                                \
    X(1, EventSynchronize, "cuEventSynchronize", CUresult, (CUevent e))                                  \
    X(0, EventQuery, "cuEventQuery", CUresult, (CUevent e))                                              \
    X(1, EventDestroy, "cuEventDestroy_v2", CUresult, (CUevent e))                                       \
    X(0, EventElapsedTime, "cuEventElapsedTime", CUresult, (float *ms, CUevent start, CUevent end))      \
    X(0, ModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule * m, const void *image))                \
    X(0, ModuleLoad, "cuModuleLoad", CUresult, (CUmodule * m, const char *path))                         \
    X(0, ModuleUnload, "cuModuleUnload", CUresult, (CUmodule m))                                         \
    X(0, ModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction * f, CUmodule m, const char *name)) \
    X(0, FuncGetParamInfo, "cuFuncGetParamInfo", CUresult,                                               \
      (CUfunction f, size_t index, size_t *offset, size_t *size))                                         \
    X(0, LaunchKernel, "cuLaunchKernel", CUresult,                                                       \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,       \
       unsigned shared, CUstream s, void **params, void **extra))                                         \
    X(0, LaunchCooperativeKernel, "cuLaunchCooperativeKernel", CUresult,                                 \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,       \
       unsigned shared, CUstream s, void **params))                                                       \
    X(0, OccupancyMaxActiveBlocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor", CUresult,              \
      (int *blocks, CUfunction f, int block_size, size_t dynamic_shared))

#define HOC_CU_FIELD(required, field, symbol, ret, params) ret(*field) params;
struct hoc_cu {
    HOC_CU_FUNCS(HOC_CU_FIELD)
};
#undef HOC_CU_FIELD

#define HOC_MAX_DEVICES 64

/* Process-wide state, set once by the loader (driver.c) and read-only afterwards, except the
 * primary contexts, which are retained on first use. */
struct hoc_state {
    struct hoc_cu cu;
    int device_count;
    int driver_version;
    /* HIP_VERSION reported (major * 10^7 + minor * 10^5 + patch). */
    int hip_version;
    /* HIP_ON_CUDA_DEFAULT_STREAM=per-thread: the NULL stream is the caller's per-thread stream. */
    int per_thread_default;
    /* HIP_ON_CUDA_TRACE: 1 traces failures, 2 every call. */
    int trace;
};
extern struct hoc_state hoc;

/* ---- Helpers (errors.c, driver.c) -------------------------------------------------------- */

/* The first HIP_VERSION with ROCm 6's hipMemoryType numbering and pointer-attribute rules. */
#define HOC_ROCM6 60000000

/* Loads and initialises the driver once; the outcome of that, for every later call. */
hipError_t hoc_ready(void);
/* Records `e` as the calling thread's last error (failures only, as ROCm 7) and traces it. */
hipError_t hoc_ret(hipError_t e, const char *fn);
/* HIP's number for a CUDA result: the same number where HIP has that error, else Unknown. */
hipError_t hoc_from_cu(CUresult r);
/* Makes a context current on the calling thread if it has none: its HIP device's primary
 * context, as HIP has a current device on every thread. */
hipError_t hoc_ctx(void);
/* The retained primary context of device `ordinal` (NULL and *err set on failure). */
CUcontext hoc_primary(int ordinal, hipError_t *err);
/* The HIP device of the calling thread (the device of its current context, if any). */
hipError_t hoc_current_device(int *ordinal);
/* The HIP device ordinal of a CUDA context. */
hipError_t hoc_ordinal_of_ctx(CUcontext ctx, int *ordinal);
/* The CUdevice of a valid HIP device ordinal. */
CUdevice hoc_cu_device(int ordinal);
/* hipErrorInvalidDevice unless 0 <= ordinal < device count. */
hipError_t hoc_check_device(int ordinal);
/* The CUDA stream for a HIP stream: the NULL stream is the legacy stream (as in HIP), or the
 * per-thread stream under HIP_ON_CUDA_DEFAULT_STREAM=per-thread. */
CUstream hoc_stream(hipStream_t s);
/* The device address of memory the runtime knows (device, pinned, registered, managed). */
hipError_t hoc_device_address(const void *p, CUdeviceptr *out);
/* Whether the thread's NULL stream is the per-thread stream. */
static inline int hoc_null_is_per_thread(hipStream_t s)
{
    return s == NULL && hoc.per_thread_default;
}

#define HOC_BEGIN()                                                                                \
    do {                                                                                           \
        hipError_t hoc_e_ = hoc_ready();                                                           \
        if (hoc_e_ != hipSuccess)                                                                  \
            return hoc_ret(hoc_e_, __func__);                                                      \
    } while (0)
#define HOC_RETURN(e) return hoc_ret((e), __func__)
#define HOC_CU(call) hoc_from_cu(hoc.cu.call)
/* An optional driver entry point, or hipErrorNotSupported from the calling function. */
#define HOC_NEED(field)                                                                            \
    do {                                                                                           \
        if (hoc.cu.field == NULL)                                                                  \
            HOC_RETURN(hipErrorNotSupported);                                                      \
    } while (0)


/* ---- The exported HIP API (defined in driver.c, errors.c, memory.c, streams.c, device.c,
 * modules.c and exports.c) ----------------------------------------------------------------- */

HOC_EXPORT hipError_t hipInit(unsigned flags);
HOC_EXPORT hipError_t hipRuntimeGetVersion(int *version);
HOC_EXPORT hipError_t hipDriverGetVersion(int *version);
HOC_EXPORT hipError_t hipGetDeviceCount(int *count);
HOC_EXPORT hipError_t hipGetDevice(int *device);
HOC_EXPORT hipError_t hipSetDevice(int device);
HOC_EXPORT hipError_t hipDeviceGet(hipDevice_t *device, int ordinal);
HOC_EXPORT hipError_t hipDeviceSynchronize(void);
HOC_EXPORT const char *hipGetErrorName(hipError_t e);
HOC_EXPORT const char *hipGetErrorString(hipError_t e);
HOC_EXPORT hipError_t hipDrvGetErrorName(hipError_t e, const char **out);
HOC_EXPORT hipError_t hipDrvGetErrorString(hipError_t e, const char **out);
HOC_EXPORT hipError_t hipGetLastError(void);
HOC_EXPORT hipError_t hipPeekAtLastError(void);
HOC_EXPORT hipError_t hipMalloc(void **ptr, size_t size);
HOC_EXPORT hipError_t hipFree(void *ptr);
HOC_EXPORT hipError_t hipMallocManaged(void **ptr, size_t size, unsigned flags);
HOC_EXPORT hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total_bytes);
HOC_EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned flags);
HOC_EXPORT hipError_t hipHostAlloc(void **ptr, size_t size, unsigned flags);
HOC_EXPORT hipError_t hipHostFree(void *ptr);
HOC_EXPORT hipError_t hipHostRegister(void *ptr, size_t size, unsigned flags);
HOC_EXPORT hipError_t hipHostUnregister(void *ptr);
HOC_EXPORT hipError_t hipHostGetDevicePointer(void **dev_ptr, void *host_ptr, unsigned flags);
HOC_EXPORT hipError_t hipHostGetFlags(unsigned *flags, void *host_ptr);
HOC_EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attr, const void *ptr);
HOC_EXPORT hipError_t hipMemGetAddressRange(hipDeviceptr_t *base, size_t *size, hipDeviceptr_t ptr);
HOC_EXPORT hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind);
HOC_EXPORT hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, const void *src, size_t n);
HOC_EXPORT hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t n);
HOC_EXPORT hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n);
HOC_EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, int kind, hipStream_t stream);
HOC_EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, const void *src, size_t n, hipStream_t stream);
HOC_EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t stream);
HOC_EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t stream);
HOC_EXPORT hipError_t hipMemset(void *dst, int value, size_t n);
HOC_EXPORT hipError_t hipMemsetAsync(void *dst, int value, size_t n, hipStream_t stream);
HOC_EXPORT hipError_t hipStreamCreate(hipStream_t *s);
HOC_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags);
HOC_EXPORT hipError_t hipStreamDestroy(hipStream_t s);
HOC_EXPORT hipError_t hipStreamSynchronize(hipStream_t s);
HOC_EXPORT hipError_t hipStreamQuery(hipStream_t s);
HOC_EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t event, unsigned flags);
HOC_EXPORT hipError_t hipStreamGetDevice(hipStream_t s, hipDevice_t *device);
HOC_EXPORT hipError_t hipStreamGetFlags(hipStream_t s, unsigned *flags);
HOC_EXPORT hipError_t hipStreamGetId(hipStream_t s, unsigned long long *id);
HOC_EXPORT hipError_t hipLaunchHostFunc(hipStream_t s, hipHostFn_t fn, void *data);
HOC_EXPORT hipError_t hipStreamWaitValue32(hipStream_t s, void *ptr, uint32_t value, unsigned flags, uint32_t mask);
HOC_EXPORT hipError_t hipStreamWaitValue64(hipStream_t s, void *ptr, uint64_t value, unsigned flags, uint64_t mask);
HOC_EXPORT hipError_t hipStreamWriteValue32(hipStream_t s, void *ptr, uint32_t value, unsigned flags);
HOC_EXPORT hipError_t hipStreamWriteValue64(hipStream_t s, void *ptr, uint64_t value, unsigned flags);
HOC_EXPORT hipError_t hipEventCreate(hipEvent_t *event);
HOC_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags);
HOC_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t s);
HOC_EXPORT hipError_t hipEventSynchronize(hipEvent_t event);
HOC_EXPORT hipError_t hipEventQuery(hipEvent_t event);
HOC_EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop);
HOC_EXPORT hipError_t hipEventDestroy(hipEvent_t event);
HOC_EXPORT hipError_t hipDeviceGetAttribute(int *value, int attribute, int device);
HOC_EXPORT hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device);
HOC_EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device);
HOC_EXPORT hipError_t hipDeviceComputeCapability(int *major, int *minor, hipDevice_t device);
HOC_EXPORT hipError_t hipDeviceGetPCIBusId(char *id, int len, int device);
HOC_EXPORT hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600 *prop, int device);
HOC_EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *image);
HOC_EXPORT hipError_t hipModuleLoad(hipModule_t *module, const char *path);
HOC_EXPORT hipError_t hipModuleUnload(hipModule_t module);
HOC_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *name);
HOC_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared, hipStream_t stream, void **kernel_params, void **extra);
HOC_EXPORT hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared, hipStream_t stream, void **kernel_params);
HOC_EXPORT hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, hipFunction_t f, int block_size, size_t dynamic_shared);
HOC_EXPORT hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hip_version, uint64_t flags, int *status);

/* X(name): every exported function, for hipGetProcAddress. */
#define HOC_HIP_EXPORTS(X) \
    X(hipInit) \
    X(hipRuntimeGetVersion) \
    X(hipDriverGetVersion) \
    X(hipGetDeviceCount) \
    X(hipGetDevice) \
    X(hipSetDevice) \
    X(hipDeviceGet) \
    X(hipDeviceSynchronize) \
    X(hipGetErrorName) \
    X(hipGetErrorString) \
    X(hipDrvGetErrorName) \
    X(hipDrvGetErrorString) \
    X(hipGetLastError) \
    X(hipPeekAtLastError) \
    X(hipMalloc) \
    X(hipFree) \
    X(hipMallocManaged) \
    X(hipMemGetInfo) \
    X(hipHostMalloc) \
    X(hipHostAlloc) \
    X(hipHostFree) \
    X(hipHostRegister) \
    X(hipHostUnregister) \
    X(hipHostGetDevicePointer) \
    X(hipHostGetFlags) \
    X(hipPointerGetAttributes) \
    X(hipMemGetAddressRange) \
    X(hipMemcpy) \
    X(hipMemcpyHtoD) \
    X(hipMemcpyDtoH) \
    X(hipMemcpyDtoD) \
    X(hipMemcpyAsync) \
    X(hipMemcpyHtoDAsync) \
    X(hipMemcpyDtoHAsync) \
    X(hipMemcpyDtoDAsync) \
    X(hipMemset) \
    X(hipMemsetAsync) \
    X(hipStreamCreate) \
    X(hipStreamCreateWithFlags) \
    X(hipStreamDestroy) \
    X(hipStreamSynchronize) \
    X(hipStreamQuery) \
    X(hipStreamWaitEvent) \
    X(hipStreamGetDevice) \
    X(hipStreamGetFlags) \
    X(hipStreamGetId) \
    X(hipLaunchHostFunc) \
    X(hipStreamWaitValue32) \
    X(hipStreamWaitValue64) \
    X(hipStreamWriteValue32) \
    X(hipStreamWriteValue64) \
    X(hipEventCreate) \
    X(hipEventCreateWithFlags) \
    X(hipEventRecord) \
    X(hipEventSynchronize) \
    X(hipEventQuery) \
    X(hipEventElapsedTime) \
    X(hipEventDestroy) \
    X(hipDeviceGetAttribute) \
    X(hipDeviceGetName) \
    X(hipDeviceTotalMem) \
    X(hipDeviceComputeCapability) \
    X(hipDeviceGetPCIBusId) \
    X(hipGetDevicePropertiesR0600) \
    X(hipModuleLoadData) \
    X(hipModuleLoad) \
    X(hipModuleUnload) \
    X(hipModuleGetFunction) \
    X(hipModuleLaunchKernel) \
    X(hipModuleLaunchCooperativeKernel) \
    X(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor) \
    X(hipGetProcAddress)

#endif /* HIP_ON_CUDA_H */
