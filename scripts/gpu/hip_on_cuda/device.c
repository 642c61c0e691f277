/*
 * device.c - device attributes and properties: HIP's attribute numbers and ROCm 7's
 * hipDeviceProp_t, answered from CUDA's device attributes by two tables.
 */
#include <stdio.h>
#include <string.h>

#include "hip_on_cuda.h"

/* HIP attribute -> the CUDA attribute with the same meaning. */
static const struct {
    int hip;
    int cu;
} ATTRIBUTES[] = {
    { hipDeviceAttributeEccEnabled, CU_DEVICE_ATTRIBUTE_ECC_ENABLED },
    { hipDeviceAttributeAccessPolicyMaxWindowSize, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE },
    { hipDeviceAttributeAsyncEngineCount, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT },
    { hipDeviceAttributeCanMapHostMemory, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY },
    { hipDeviceAttributeCanUseHostPointerForRegisteredMem, CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM },
    { hipDeviceAttributeClockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE },
    { hipDeviceAttributeComputeMode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE },
    { hipDeviceAttributeComputePreemptionSupported, CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED },
    { hipDeviceAttributeConcurrentKernels, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS },
    { hipDeviceAttributeConcurrentManagedAccess, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS },
    { hipDeviceAttributeCooperativeLaunch, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH },
    { hipDeviceAttributeCooperativeMultiDeviceLaunch, CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH },
    { hipDeviceAttributeDeviceOverlap, CU_DEVICE_ATTRIBUTE_GPU_OVERLAP },
    { hipDeviceAttributeDirectManagedMemAccessFromHost, CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST },
    { hipDeviceAttributeGlobalL1CacheSupported, CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED },
    { hipDeviceAttributeHostNativeAtomicSupported, CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED },
    { hipDeviceAttributeIntegrated, CU_DEVICE_ATTRIBUTE_INTEGRATED },
    { hipDeviceAttributeIsMultiGpuBoard, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD },
    { hipDeviceAttributeKernelExecTimeout, CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT },
    { hipDeviceAttributeL2CacheSize, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE },
    { hipDeviceAttributeLocalL1CacheSupported, CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED },
    { hipDeviceAttributeComputeCapabilityMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR },
    { hipDeviceAttributeManagedMemory, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY },
    { hipDeviceAttributeMaxBlocksPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR },
    { hipDeviceAttributeMaxBlockDimX, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X },
    { hipDeviceAttributeMaxBlockDimY, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y },
    { hipDeviceAttributeMaxBlockDimZ, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z },
    { hipDeviceAttributeMaxGridDimX, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X },
    { hipDeviceAttributeMaxGridDimY, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y },
    { hipDeviceAttributeMaxGridDimZ, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z },
    { hipDeviceAttributeMaxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK },
    { hipDeviceAttributeMaxThreadsPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR },
    { hipDeviceAttributeMaxPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH },
    { hipDeviceAttributeMemoryBusWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH },
    { hipDeviceAttributeMemoryClockRate, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE },
    { hipDeviceAttributeComputeCapabilityMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR },
    { hipDeviceAttributeMultiGpuBoardGroupID, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID },
    { hipDeviceAttributeMultiprocessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT },
    { hipDeviceAttributePageableMemoryAccess, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS },
    { hipDeviceAttributePageableMemoryAccessUsesHostPageTables,
      CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES },
    { hipDeviceAttributePciBusId, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID },
    { hipDeviceAttributePciDeviceId, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID },
    { hipDeviceAttributePciDomainId, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID },
    { hipDeviceAttributePersistingL2CacheMaxSize, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE },
    { hipDeviceAttributeMaxRegistersPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK },
    { hipDeviceAttributeMaxRegistersPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR },
    { hipDeviceAttributeReservedSharedMemPerBlock, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK },
    { hipDeviceAttributeMaxSharedMemoryPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK },
    { hipDeviceAttributeSharedMemPerBlockOptin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN },
    { hipDeviceAttributeSharedMemPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR },
    { hipDeviceAttributeSingleToDoublePrecisionPerfRatio, CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO },
    { hipDeviceAttributeStreamPrioritiesSupported, CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED },
    { hipDeviceAttributeSurfaceAlignment, CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT },
    { hipDeviceAttributeTccDriver, CU_DEVICE_ATTRIBUTE_TCC_DRIVER },
    { hipDeviceAttributeTextureAlignment, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT },
    { hipDeviceAttributeTexturePitchAlignment, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT },
    { hipDeviceAttributeTotalConstantMemory, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY },
    { hipDeviceAttributeUnifiedAddressing, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING },
    { hipDeviceAttributeWarpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE },
    { hipDeviceAttributeMemoryPoolsSupported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED },
    { hipDeviceAttributeVirtualMemoryManagementSupported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED },
    { hipDeviceAttributeHostRegisterSupported, CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED },
    { hipDeviceAttributeMemoryPoolSupportedHandleTypes, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES },
    /* AMD-specific attributes with a CUDA meaning: the clock of device-side clock() (the SM
     * clock), the shared memory of a multiprocessor, and the multiprocessors physically present. */
    { hipDeviceAttributeClockInstructionRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE },
    { hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR },
    { hipDeviceAttributePhysicalMultiProcessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT },
};

/* CUDA's v1 stream memory operations attribute (92), whose name differs between CUDA releases. */
#define CU_ATTRIBUTE_STREAM_MEM_OPS_V1 92

static hipError_t cu_attribute(int *value, int cu, int ordinal)
{
    return HOC_CU(DeviceGetAttribute(value, cu, hoc_cu_device(ordinal)));
}

/*
 * hipDeviceAttributeCanUseStreamWaitValue: whether hipStreamWaitValue32/64 work. CUDA 12 and
 * later drivers support stream memory operations on every device (the _v2 entry points); an
 * older driver says so through its v1 attribute.
 */
static hipError_t can_use_stream_wait_value(int *value, int ordinal)
{
    *value = 0;
    if (hoc.cu.StreamWaitValue32 == NULL)
        return hipSuccess;
    if (hoc.driver_version >= 12000) {
        *value = 1;
        return hipSuccess;
    }
    int v1 = 0;
    if (cu_attribute(&v1, CU_ATTRIBUTE_STREAM_MEM_OPS_V1, ordinal) == hipSuccess)
        *value = v1 != 0;
    return hipSuccess;
}

/* Attributes HIP has and this table does not are hipErrorInvalidValue, as HIP answers an
 * attribute it does not know. */
HOC_EXPORT hipError_t hipDeviceGetAttribute(int *value, int attribute, int device)
{
    if (value == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    hipError_t e = hoc_check_device(device);
    if (e != hipSuccess)
        HOC_RETURN(e);
    if (attribute == hipDeviceAttributeCanUseStreamWaitValue)
        HOC_RETURN(can_use_stream_wait_value(value, device));
    for (size_t i = 0; i < sizeof ATTRIBUTES / sizeof ATTRIBUTES[0]; i++)
        if (ATTRIBUTES[i].hip == attribute)
            HOC_RETURN(cu_attribute(value, ATTRIBUTES[i].cu, device));
    HOC_RETURN(hipErrorInvalidValue);
}

HOC_EXPORT hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device)
{
    if (name == NULL || len <= 0)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    hipError_t e = hoc_check_device(device);
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(DeviceGetName(name, len, hoc_cu_device(device))));
}

HOC_EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device)
{
    if (bytes == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(DeviceTotalMem);
    hipError_t e = hoc_check_device(device);
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(DeviceTotalMem(bytes, hoc_cu_device(device))));
}

HOC_EXPORT hipError_t hipDeviceComputeCapability(int *major, int *minor, hipDevice_t device)
{
    if (major == NULL || minor == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    hipError_t e = hoc_check_device(device);
    if (e == hipSuccess)
        e = cu_attribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    if (e == hipSuccess)
        e = cu_attribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    HOC_RETURN(e);
}

HOC_EXPORT hipError_t hipDeviceGetPCIBusId(char *id, int len, int device)
{
    if (id == NULL || len <= 0)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(DeviceGetPCIBusId);
    hipError_t e = hoc_check_device(device);
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(DeviceGetPCIBusId(id, len, hoc_cu_device(device))));
}

/* ---- hipDeviceProp_t ----------------------------------------------------------------------- */

#define INT_FIELD(field, cu) { offsetof(hipDeviceProp_tR0600, field), sizeof(int), cu }
#define SIZE_FIELD(field, cu) { offsetof(hipDeviceProp_tR0600, field), sizeof(size_t), cu }

/* Property -> CUDA attribute. A property whose attribute the driver does not answer stays 0. */
static const struct {
    size_t offset;
    size_t size;
    int cu;
} PROPERTIES[] = {
    SIZE_FIELD(sharedMemPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
    INT_FIELD(regsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK),
    INT_FIELD(warpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE),
    SIZE_FIELD(memPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH),
    INT_FIELD(maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
    INT_FIELD(maxThreadsDim[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
    INT_FIELD(maxThreadsDim[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
    INT_FIELD(maxThreadsDim[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z),
    INT_FIELD(maxGridSize[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
    INT_FIELD(maxGridSize[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
    INT_FIELD(maxGridSize[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z),
    INT_FIELD(clockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
    SIZE_FIELD(totalConstMem, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY),
    INT_FIELD(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
    INT_FIELD(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
    SIZE_FIELD(textureAlignment, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT),
    SIZE_FIELD(texturePitchAlignment, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT),
    INT_FIELD(deviceOverlap, CU_DEVICE_ATTRIBUTE_GPU_OVERLAP),
    INT_FIELD(multiProcessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
    INT_FIELD(kernelExecTimeoutEnabled, CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT),
    INT_FIELD(integrated, CU_DEVICE_ATTRIBUTE_INTEGRATED),
    INT_FIELD(canMapHostMemory, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY),
    INT_FIELD(computeMode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE),
    SIZE_FIELD(surfaceAlignment, CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT),
    INT_FIELD(concurrentKernels, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS),
    INT_FIELD(ECCEnabled, CU_DEVICE_ATTRIBUTE_ECC_ENABLED),
    INT_FIELD(pciBusID, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
    INT_FIELD(pciDeviceID, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
    INT_FIELD(pciDomainID, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
    INT_FIELD(tccDriver, CU_DEVICE_ATTRIBUTE_TCC_DRIVER),
    INT_FIELD(asyncEngineCount, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT),
    INT_FIELD(unifiedAddressing, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING),
    INT_FIELD(memoryClockRate, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
    INT_FIELD(memoryBusWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
    INT_FIELD(l2CacheSize, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
    INT_FIELD(persistingL2CacheMaxSize, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE),
    INT_FIELD(maxThreadsPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR),
    INT_FIELD(streamPrioritiesSupported, CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED),
    INT_FIELD(globalL1CacheSupported, CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED),
    INT_FIELD(localL1CacheSupported, CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED),
    SIZE_FIELD(sharedMemPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
    INT_FIELD(regsPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR),
    INT_FIELD(managedMemory, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY),
    INT_FIELD(isMultiGpuBoard, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD),
    INT_FIELD(multiGpuBoardGroupID, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID),
    INT_FIELD(hostNativeAtomicSupported, CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED),
    INT_FIELD(singleToDoublePrecisionPerfRatio, CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO),
    INT_FIELD(pageableMemoryAccess, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS),
    INT_FIELD(concurrentManagedAccess, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS),
    INT_FIELD(computePreemptionSupported, CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED),
    INT_FIELD(canUseHostPointerForRegisteredMem, CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM),
    INT_FIELD(cooperativeLaunch, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH),
    INT_FIELD(cooperativeMultiDeviceLaunch, CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH),
    SIZE_FIELD(sharedMemPerBlockOptin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
    INT_FIELD(pageableMemoryAccessUsesHostPageTables, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES),
    INT_FIELD(directManagedMemAccessFromHost, CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST),
    INT_FIELD(maxBlocksPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR),
    INT_FIELD(accessPolicyMaxWindowSize, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE),
    SIZE_FIELD(reservedSharedMemPerBlock, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK),
    INT_FIELD(hostRegisterSupported, CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED),
    INT_FIELD(memoryPoolsSupported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED),
    SIZE_FIELD(maxSharedMemoryPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
    INT_FIELD(clockInstructionRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
};

/*
 * ROCm 6 and 7 bind hipGetDeviceProperties to this symbol with the 1472-byte struct; the shim
 * does not export the older hipGetDeviceProperties of ROCm 5's smaller struct, which a caller
 * built against ROCm 7 headers never calls. gcnArchName names the CUDA architecture.
 */
HOC_EXPORT hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600 *prop, int device)
{
    if (prop == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    hipError_t e = hoc_check_device(device);
    if (e != hipSuccess)
        HOC_RETURN(e);
    memset(prop, 0, sizeof *prop);
    e = HOC_CU(DeviceGetName(prop->name, (int)sizeof prop->name, hoc_cu_device(device)));
    if (e != hipSuccess)
        HOC_RETURN(e);
    if (hoc.cu.DeviceTotalMem != NULL)
        hoc.cu.DeviceTotalMem(&prop->totalGlobalMem, hoc_cu_device(device));
    for (size_t i = 0; i < sizeof PROPERTIES / sizeof PROPERTIES[0]; i++) {
        int v = 0;
        if (cu_attribute(&v, PROPERTIES[i].cu, device) != hipSuccess)
            continue;
        char *field = (char *)prop + PROPERTIES[i].offset;
        if (PROPERTIES[i].size == sizeof(size_t)) {
            size_t wide = (size_t)(unsigned)v;
            memcpy(field, &wide, sizeof wide);
        } else {
            memcpy(field, &v, sizeof v);
        }
    }
    snprintf(prop->gcnArchName, sizeof prop->gcnArchName, "sm_%d%d", prop->major, prop->minor);
    /* Every capability flag of the AMD architecture record holds on a CUDA device of compute
     * capability 6 or later. */
    prop->arch.hasGlobalInt32Atomics = prop->arch.hasGlobalFloatAtomicExch = 1;
    prop->arch.hasSharedInt32Atomics = prop->arch.hasSharedFloatAtomicExch = 1;
    prop->arch.hasFloatAtomicAdd = prop->arch.hasGlobalInt64Atomics = prop->arch.hasSharedInt64Atomics = 1;
    prop->arch.hasDoubles = prop->arch.hasWarpVote = prop->arch.hasWarpBallot = prop->arch.hasWarpShuffle = 1;
    prop->arch.hasFunnelShift = prop->arch.hasThreadFenceSystem = prop->arch.hasSyncThreadsExt = 1;
    prop->arch.hasSurfaceFuncs = prop->arch.has3dGrid = prop->arch.hasDynamicParallelism = 1;
    HOC_RETURN(hipSuccess);
}
