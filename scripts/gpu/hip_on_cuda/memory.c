/*
 * memory.c - allocations, host registration, pointer attributes, copies and fills.
 */
#include <string.h>

#include "hip_on_cuda.h"

#define DPTR(p) ((CUdeviceptr)(uintptr_t)(p))

/* HIP's host memory is usable by every device and mapped into their address space whatever the
 * flags (on AMD, pinned memory belongs to no device and hipHostGetDevicePointer works for all
 * of it): CUDA gets PORTABLE | DEVICEMAP always. */
static const unsigned HOST_ALLOC_ALWAYS = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP;

/* ---- device and managed memory ---------------------------------------------------------- */

/* Size 0 gives NULL and hipSuccess (CUDA refuses size 0). */
HOC_EXPORT hipError_t hipMalloc(void **ptr, size_t size)
{
    if (ptr == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    *ptr = NULL;
    if (size == 0)
        HOC_RETURN(hipSuccess);
    hipError_t e = hoc_ctx();
    CUdeviceptr d = 0;
    if (e == hipSuccess)
        e = HOC_CU(MemAlloc(&d, size));
    if (e == hipSuccess)
        *ptr = (void *)(uintptr_t)d;
    HOC_RETURN(e);
}

/* NULL is a no-op; freeing waits for the device's work on the memory (CUDA's cuMemFree
 * synchronises as HIP's hipFree does). */
HOC_EXPORT hipError_t hipFree(void *ptr)
{
    HOC_BEGIN();
    if (ptr == NULL)
        HOC_RETURN(hipSuccess);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(MemFree(DPTR(ptr))));
}

HOC_EXPORT hipError_t hipMallocManaged(void **ptr, size_t size, unsigned flags)
{
    if (ptr == NULL || size == 0 || (flags != hipMemAttachGlobal && flags != hipMemAttachHost))
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(MemAllocManaged);
    hipError_t e = hoc_ctx();
    CUdeviceptr d = 0;
    if (e == hipSuccess)
        e = HOC_CU(MemAllocManaged(&d, size, flags == hipMemAttachGlobal ? CU_MEM_ATTACH_GLOBAL : CU_MEM_ATTACH_HOST));
    *ptr = e == hipSuccess ? (void *)(uintptr_t)d : NULL;
    HOC_RETURN(e);
}

HOC_EXPORT hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    if (free_bytes == NULL || total_bytes == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(MemGetInfo);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(MemGetInfo(free_bytes, total_bytes)));
}

/* ---- pinned host memory ----------------------------------------------------------------- */

static hipError_t host_malloc(void **ptr, size_t size, unsigned flags)
{
    const unsigned known = hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined |
                           hipHostMallocUncached | hipHostMallocNumaUser | hipHostMallocCoherent |
                           hipHostMallocNonCoherent;
    const unsigned coherence = hipHostMallocCoherent | hipHostMallocNonCoherent;
    if (ptr == NULL || (flags & ~known) != 0 || (flags & coherence) == coherence ||
        ((flags & hipHostMallocUncached) && (flags & coherence)))
        return hipErrorInvalidValue;
    hipError_t e = hoc_ready();
    if (e != hipSuccess)
        return e;
    *ptr = NULL;
    if (size == 0)
        return hipSuccess;
    e = hoc_ctx();
    if (e != hipSuccess)
        return e;
    /* Coherence, NUMA and caching flags are AMD memory-system controls with no CUDA
     * counterpart: accepted and ignored. */
    unsigned cu_flags = HOST_ALLOC_ALWAYS | ((flags & hipHostMallocWriteCombined) ? CU_MEMHOSTALLOC_WRITECOMBINED : 0);
    return HOC_CU(MemHostAlloc(ptr, size, cu_flags));
}

HOC_EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned flags)
{
    HOC_RETURN(host_malloc(ptr, size, flags));
}

/* ROCm 7's name for hipHostMalloc, with the flags of cudaHostAlloc. */
HOC_EXPORT hipError_t hipHostAlloc(void **ptr, size_t size, unsigned flags)
{
    const unsigned allowed =
        hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined | hipHostMallocUncached;
    if ((flags & ~allowed) != 0)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_RETURN(host_malloc(ptr, size, flags));
}

HOC_EXPORT hipError_t hipHostFree(void *ptr)
{
    HOC_BEGIN();
    if (ptr == NULL)
        HOC_RETURN(hipSuccess);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(MemFreeHost(ptr)));
}

/*
 * HIP accepts Portable, Mapped, IoMemory, the coarse-grained/read-only bit (8) and Uncached;
 * anything else, a NULL pointer or size 0 is hipErrorInvalidValue. As with hipHostMalloc, the
 * registration is for every device and mapped whatever the flags ("hipHostRegisterDefault:
 * memory is mapped and portable"). Bit 8 is hipHostRegisterReadOnly in CUDA's spelling but
 * hipExtHostRegisterCoarseGrained on AMD, where devices may still write the memory: it is not
 * passed on as CUDA's read-only registration.
 */
HOC_EXPORT hipError_t hipHostRegister(void *ptr, size_t size, unsigned flags)
{
    const unsigned known = hipHostRegisterPortable | hipHostRegisterMapped | hipHostRegisterIoMemory |
                           hipHostRegisterReadOnly | hipExtHostRegisterUncached;
    if (ptr == NULL || size == 0 || (flags & ~known) != 0)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(MemHostRegister);
    hipError_t e = hoc_ctx();
    unsigned cu_flags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                        ((flags & hipHostRegisterIoMemory) ? CU_MEMHOSTREGISTER_IOMEMORY : 0);
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(MemHostRegister(ptr, size, cu_flags)));
}

HOC_EXPORT hipError_t hipHostUnregister(void *ptr)
{
    if (ptr == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(MemHostUnregister);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(MemHostUnregister(ptr)));
}

/* HIP requires flags == 0. */
HOC_EXPORT hipError_t hipHostGetDevicePointer(void **dev_ptr, void *host_ptr, unsigned flags)
{
    if (dev_ptr == NULL || host_ptr == NULL || flags != 0)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    hipError_t e = hoc_ctx();
    CUdeviceptr d = 0;
    if (e == hipSuccess)
        e = HOC_CU(MemHostGetDevicePointer(&d, host_ptr, 0));
    if (e == hipSuccess)
        *dev_ptr = (void *)(uintptr_t)d;
    HOC_RETURN(e);
}

HOC_EXPORT hipError_t hipHostGetFlags(unsigned *flags, void *host_ptr)
{
    if (flags == NULL || host_ptr == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(MemHostGetFlags);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(MemHostGetFlags(flags, host_ptr)));
}

/* ---- pointer attributes ---------------------------------------------------------------- */

/*
 * ROCm >= 6 (AMD's runtime source; its documentation still describes the ROCm 5 behaviour):
 * memory the runtime does not know, NULL included, is hipSuccess with type
 * hipMemoryTypeUnregistered and device hipInvalidDeviceId; only a NULL `attributes` is
 * hipErrorInvalidValue. ROCm <= 5 (HIP_ON_CUDA_HIP_VERSION below 60000000) answers
 * hipErrorInvalidValue for unknown memory and uses the old numbering. hostPointer is set for
 * host and managed memory only, allocationFlags is what CUDA reports for pinned allocations
 * (its own flags, 0 elsewhere).
 */
HOC_EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attr, const void *ptr)
{
    if (attr == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    const int rocm6 = hoc.hip_version >= HOC_ROCM6;
    memset(attr, 0, sizeof *attr);
    attr->device = hipInvalidDeviceId;
    if (ptr == NULL)
        HOC_RETURN(rocm6 ? hipSuccess : hipErrorInvalidValue);
    hipError_t e = hoc_ctx();
    if (e != hipSuccess)
        HOC_RETURN(e);

    unsigned memtype = 0;
    int ordinal = hipInvalidDeviceId;
    unsigned managed = 0;
    CUdeviceptr dptr = 0;
    void *hptr = NULL;
    int which[] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                    CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                    CU_POINTER_ATTRIBUTE_HOST_POINTER };
    void *data[] = { &memtype, &ordinal, &managed, &dptr, &hptr };
    e = HOC_CU(PointerGetAttributes(5, which, data, DPTR(ptr)));
    if (e != hipSuccess)
        HOC_RETURN(e);
    if (memtype == 0) {
        /* CUDA (>= 11) describes unknown memory as type 0, as ROCm 6 does. */
        attr->type = hipMemoryTypeUnregistered;
        HOC_RETURN(rocm6 ? hipSuccess : hipErrorInvalidValue);
    }
    int host = memtype == CU_MEMORYTYPE_HOST;
    if (managed) {
        attr->type = rocm6 ? hipMemoryTypeManaged : hipMemoryTypeUnifiedR5;
    } else if (memtype == CU_MEMORYTYPE_HOST) {
        attr->type = rocm6 ? hipMemoryTypeHost : hipMemoryTypeHostR5;
    } else if (memtype == CU_MEMORYTYPE_DEVICE) {
        attr->type = rocm6 ? hipMemoryTypeDevice : hipMemoryTypeDeviceR5;
    } else if (memtype == CU_MEMORYTYPE_ARRAY) {
        attr->type = rocm6 ? hipMemoryTypeArray : hipMemoryTypeArrayR5;
    } else {
        attr->type = rocm6 ? hipMemoryTypeUnified : hipMemoryTypeUnifiedR5;
    }
    attr->device = ordinal;
    attr->devicePointer = (void *)(uintptr_t)dptr;
    attr->hostPointer = (host || managed) ? hptr : NULL;
    attr->isManaged = managed ? 1 : 0;
    unsigned flags = 0;
    if (host && hoc.cu.MemHostGetFlags != NULL && hoc.cu.MemHostGetFlags(&flags, (void *)ptr) == 0)
        attr->allocationFlags = flags;
    HOC_RETURN(hipSuccess);
}

/* Device, pinned and managed allocations; hipErrorNotFound for anything else (CUDA's answer has
 * the same number). */
HOC_EXPORT hipError_t hipMemGetAddressRange(hipDeviceptr_t *base, size_t *size, hipDeviceptr_t ptr)
{
    if (base == NULL || size == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    hipError_t e = hoc_ctx();
    CUdeviceptr b = 0;
    size_t n = 0;
    if (e == hipSuccess)
        e = HOC_CU(MemGetAddressRange(&b, &n, DPTR(ptr)));
    if (e == hipSuccess) {
        *base = (void *)(uintptr_t)b;
        *size = n;
    }
    HOC_RETURN(e);
}

/* ---- copies ------------------------------------------------------------------------------ */

static int valid_kind(int kind)
{
    return (kind >= hipMemcpyHostToHost && kind <= hipMemcpyDefault) || kind == hipMemcpyDeviceToDeviceNoCU;
}

/* A copy queued on `s` (a CUDA stream); host-to-device and device-to-host by their own entry
 * points, everything else by unified addressing. */
static hipError_t copy_async(void *dst, const void *src, size_t n, int kind, CUstream s)
{
    switch (kind) {
    case hipMemcpyHostToDevice:
        return HOC_CU(MemcpyHtoDAsync(DPTR(dst), src, n, s));
    case hipMemcpyDeviceToHost:
        return HOC_CU(MemcpyDtoHAsync(dst, DPTR(src), n, s));
    default:
        if (hoc.cu.MemcpyAsync == NULL)
            return hipErrorNotSupported;
        return HOC_CU(MemcpyAsync(DPTR(dst), DPTR(src), n, s));
    }
}

/*
 * Synchronous: returns when the bytes have arrived. On the NULL stream, so it waits for the
 * work of blocking streams queued before it, as HIP's hipMemcpy does; that is CUDA's legacy
 * stream, which every thread shares (HIP's NULL stream is shared by the threads of a device
 * too). Under HIP_ON_CUDA_DEFAULT_STREAM=per-thread it is the thread's own stream.
 */
static hipError_t copy_sync(void *dst, const void *src, size_t n, int kind)
{
    if (!valid_kind(kind))
        return hipErrorInvalidMemcpyDirection;
    if (n == 0)
        return hipSuccess;
    hipError_t e = hoc_ctx();
    if (e != hipSuccess)
        return e;
    if (hoc.per_thread_default) {
        e = copy_async(dst, src, n, kind, CU_STREAM_PER_THREAD);
        return e != hipSuccess ? e : HOC_CU(StreamSynchronize(CU_STREAM_PER_THREAD));
    }
    switch (kind) {
    case hipMemcpyHostToDevice:
        return HOC_CU(MemcpyHtoD(DPTR(dst), src, n));
    case hipMemcpyDeviceToHost:
        return HOC_CU(MemcpyDtoH(dst, DPTR(src), n));
    default:
        return HOC_CU(Memcpy(DPTR(dst), DPTR(src), n));
    }
}

static hipError_t copy_queued(void *dst, const void *src, size_t n, int kind, hipStream_t stream)
{
    if (!valid_kind(kind))
        return hipErrorInvalidMemcpyDirection;
    if (n == 0)
        return hipSuccess;
    hipError_t e = hoc_ctx();
    return e != hipSuccess ? e : copy_async(dst, src, n, kind, hoc_stream(stream));
}

HOC_EXPORT hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind)
{
    HOC_BEGIN();
    HOC_RETURN(copy_sync(dst, src, n, kind));
}

HOC_EXPORT hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, const void *src, size_t n)
{
    HOC_BEGIN();
    HOC_RETURN(copy_sync(dst, src, n, hipMemcpyHostToDevice));
}

HOC_EXPORT hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t n)
{
    HOC_BEGIN();
    HOC_RETURN(copy_sync(dst, src, n, hipMemcpyDeviceToHost));
}

HOC_EXPORT hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n)
{
    HOC_BEGIN();
    HOC_RETURN(copy_sync(dst, src, n, hipMemcpyDeviceToDevice));
}

HOC_EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, int kind, hipStream_t stream)
{
    HOC_BEGIN();
    HOC_RETURN(copy_queued(dst, src, n, kind, stream));
}

HOC_EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, const void *src, size_t n, hipStream_t stream)
{
    HOC_BEGIN();
    HOC_RETURN(copy_queued(dst, src, n, hipMemcpyHostToDevice, stream));
}

HOC_EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t stream)
{
    HOC_BEGIN();
    HOC_RETURN(copy_queued(dst, src, n, hipMemcpyDeviceToHost, stream));
}

HOC_EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t stream)
{
    HOC_BEGIN();
    HOC_RETURN(copy_queued(dst, src, n, hipMemcpyDeviceToDevice, stream));
}

/* ---- fills ------------------------------------------------------------------------------- */

/* Fills with the low byte of `value`. HIP's hipMemset is asynchronous for device memory, as
 * CUDA's cuMemsetD8 is (both return before the fill for device memory). */
HOC_EXPORT hipError_t hipMemset(void *dst, int value, size_t n)
{
    HOC_BEGIN();
    if (n == 0)
        HOC_RETURN(hipSuccess);
    if (dst == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    hipError_t e = hoc_ctx();
    if (e != hipSuccess)
        HOC_RETURN(e);
    if (hoc.per_thread_default && hoc.cu.MemsetD8Async != NULL)
        HOC_RETURN(HOC_CU(MemsetD8Async(DPTR(dst), (unsigned char)value, n, CU_STREAM_PER_THREAD)));
    HOC_RETURN(HOC_CU(MemsetD8(DPTR(dst), (unsigned char)value, n)));
}

HOC_EXPORT hipError_t hipMemsetAsync(void *dst, int value, size_t n, hipStream_t stream)
{
    HOC_BEGIN();
    if (n == 0)
        HOC_RETURN(hipSuccess);
    if (dst == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_NEED(MemsetD8Async);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(MemsetD8Async(DPTR(dst), (unsigned char)value, n, hoc_stream(stream))));
}
