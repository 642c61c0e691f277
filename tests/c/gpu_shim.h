/*
 * gpu_shim.h - the few GPU runtime calls tests/c/suite.c needs, chosen at compile time.
 *
 *   -DSUITE_GPU_HIP  (default)  HIP runtime API: libamdhip64.so, or the simulator
 *                                libhipsim.so (crates/hipsim) on machines without a GPU.
 *   -DSUITE_GPU_CUDA            CUDA runtime API (libcudart.so); link with -lcudart.
 *
 * No vendor header is needed: the prototypes are declared here with an int return value
 * (hipError_t and cudaError_t are int-sized enums whose success value is 0), so the suite
 * builds on any machine that has the runtime library to link against.
 */
#ifndef SUITE_GPU_SHIM_H
#define SUITE_GPU_SHIM_H

#include <stddef.h>
#include <stdint.h>

#if defined(SUITE_GPU_CUDA) && defined(SUITE_GPU_HIP)
#error "define at most one of SUITE_GPU_CUDA and SUITE_GPU_HIP"
#endif
#if !defined(SUITE_GPU_CUDA) && !defined(SUITE_GPU_HIP)
#define SUITE_GPU_HIP 1
#endif

#if defined(SUITE_GPU_CUDA)

int cudaMalloc(void **ptr, size_t size);
int cudaFree(void *ptr);
int cudaMemcpy(void *dst, const void *src, size_t count, int kind);
int cudaMallocHost(void **ptr, size_t size);
int cudaFreeHost(void *ptr);
int cudaMemset(void *ptr, int value, size_t count);
int cudaSetDevice(int device);
int cudaDeviceSynchronize(void);
const char *cudaGetErrorString(int error);
int cudaMallocManaged(void **ptr, size_t size, unsigned flags);

#define GPU_SHIM_NAME "CUDA runtime"
#define GPU_MEMCPY_H2D 1 /* cudaMemcpyHostToDevice */
#define GPU_MEMCPY_D2H 2 /* cudaMemcpyDeviceToHost */
#define GPU_MEM_ATTACH_GLOBAL 1u /* cudaMemAttachGlobal */

static inline int gpu_malloc(void **p, size_t n) { return cudaMalloc(p, n); }
static inline int gpu_free(void *p) { return cudaFree(p); }
static inline int gpu_h2d(void *dst, const void *src, size_t n) { return cudaMemcpy(dst, src, n, GPU_MEMCPY_H2D); }
static inline int gpu_d2h(void *dst, const void *src, size_t n) { return cudaMemcpy(dst, src, n, GPU_MEMCPY_D2H); }
static inline int gpu_host_alloc(void **p, size_t n) { return cudaMallocHost(p, n); }
static inline int gpu_host_free(void *p) { return cudaFreeHost(p); }
static inline int gpu_memset(void *p, int v, size_t n) { return cudaMemset(p, v, n); }
static inline int gpu_set_device(int d) { return cudaSetDevice(d); }
static inline int gpu_sync(void) { return cudaDeviceSynchronize(); }
static inline const char *gpu_errstr(int e) { return cudaGetErrorString(e); }
static inline int gpu_malloc_managed(void **p, size_t n) { return cudaMallocManaged(p, n, GPU_MEM_ATTACH_GLOBAL); }

/* Streams and events for the async group: the runtime API's streams and the driver API's
 * (libcuda: link with -lcuda), created by the application as a CUDA program does. */
int cudaStreamCreate(hipStream_t *s);
int cudaStreamDestroy(hipStream_t s);
int cudaStreamSynchronize(hipStream_t s);
int cudaEventCreate(void **e);
int cudaEventRecord(void *e, hipStream_t s);
int cudaEventSynchronize(void *e);
int cudaEventDestroy(void *e);
int cudaHostAlloc(void **p, size_t n, unsigned flags);
int cudaHostGetDevicePointer(void **d, void *h, unsigned flags);
int cuStreamCreate(hipStream_t *s, unsigned flags);
int cuStreamDestroy_v2(hipStream_t s);
int cuStreamWaitValue32_v2(hipStream_t s, unsigned long long addr, unsigned value, unsigned flags);

#define GPU_STREAM_RT_NAME "cudaStreamCreate"
#define GPU_STREAM_DRV_NAME "cuStreamCreate"
static inline int gpu_stream_create(hipStream_t *s) { return cudaStreamCreate(s); }
static inline int gpu_stream_create_drv(hipStream_t *s) { return cuStreamCreate(s, 0); }
static inline int gpu_stream_destroy(hipStream_t s) { return cudaStreamDestroy(s); }
static inline int gpu_stream_destroy_drv(hipStream_t s) { return cuStreamDestroy_v2(s); }
static inline int gpu_stream_sync(hipStream_t s) { return cudaStreamSynchronize(s); }
static inline int gpu_event_create(void **e) { return cudaEventCreate(e); }
static inline int gpu_event_record(void *e, hipStream_t s) { return cudaEventRecord(e, s); }
static inline int gpu_event_sync(void *e) { return cudaEventSynchronize(e); }
static inline int gpu_event_destroy(void *e) { return cudaEventDestroy(e); }
/* A word of mapped pinned memory (cudaHostAllocMapped) and a stream wait until it equals
 * `value` (CU_STREAM_WAIT_VALUE_EQ). */
static inline int gpu_host_alloc_mapped(void **p, size_t n) { return cudaHostAlloc(p, n, 2u); }
static inline int gpu_stream_wait_value32(hipStream_t s, void *word, unsigned value)
{
    void *d = NULL;
    int rc = cudaHostGetDevicePointer(&d, word, 0);
    return rc != 0 ? rc : cuStreamWaitValue32_v2(s, (unsigned long long)(uintptr_t)d, value, 1u);
}

#else /* SUITE_GPU_HIP */

/* When the real HIP header was included (HIP platform macro defined), its prototypes win. */
#if !defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H)
int hipMalloc(void **ptr, size_t size);
int hipFree(void *ptr);
int hipMemcpy(void *dst, const void *src, size_t size, int kind);
int hipHostMalloc(void **ptr, size_t size, unsigned flags);
int hipHostFree(void *ptr);
int hipMemset(void *ptr, int value, size_t size);
int hipSetDevice(int device);
int hipDeviceSynchronize(void);
const char *hipGetErrorString(int error);
int hipMallocManaged(void **ptr, size_t size, unsigned flags);
int hipStreamCreate(hipStream_t *s);
int hipStreamCreateWithFlags(hipStream_t *s, unsigned flags);
int hipStreamDestroy(hipStream_t s);
int hipStreamSynchronize(hipStream_t s);
typedef struct ihipEvent_t *hipEvent_t;
int hipEventCreate(hipEvent_t *e);
int hipEventRecord(hipEvent_t e, hipStream_t s);
int hipEventSynchronize(hipEvent_t e);
int hipEventDestroy(hipEvent_t e);
int hipStreamWaitValue32(hipStream_t s, void *ptr, uint32_t value, unsigned flags, uint32_t mask);
#endif

#define GPU_SHIM_NAME "HIP runtime"
#define GPU_MEMCPY_H2D 1 /* hipMemcpyHostToDevice */
#define GPU_MEMCPY_D2H 2 /* hipMemcpyDeviceToHost */
#define GPU_MEM_ATTACH_GLOBAL 1u /* hipMemAttachGlobal */

static inline int gpu_malloc(void **p, size_t n) { return (int)hipMalloc(p, n); }
static inline int gpu_free(void *p) { return (int)hipFree(p); }
static inline int gpu_h2d(void *dst, const void *src, size_t n) { return (int)hipMemcpy(dst, src, n, GPU_MEMCPY_H2D); }
static inline int gpu_d2h(void *dst, const void *src, size_t n) { return (int)hipMemcpy(dst, src, n, GPU_MEMCPY_D2H); }
static inline int gpu_host_alloc(void **p, size_t n) { return (int)hipHostMalloc(p, n, 0u); }
static inline int gpu_host_free(void *p) { return (int)hipHostFree(p); }
static inline int gpu_memset(void *p, int v, size_t n) { return (int)hipMemset(p, v, n); }
static inline int gpu_set_device(int d) { return (int)hipSetDevice(d); }
static inline int gpu_sync(void) { return (int)hipDeviceSynchronize(); }
static inline const char *gpu_errstr(int e) { return hipGetErrorString(e); }
static inline int gpu_malloc_managed(void **p, size_t n) { return (int)hipMallocManaged(p, n, GPU_MEM_ATTACH_GLOBAL); }

/* Streams and events for the async group (the second kind: created with explicit flags). */
#define GPU_STREAM_RT_NAME "hipStreamCreate"
#define GPU_STREAM_DRV_NAME "hipStreamCreateWithFlags"
static inline int gpu_stream_create(hipStream_t *s) { return (int)hipStreamCreate(s); }
static inline int gpu_stream_create_drv(hipStream_t *s) { return (int)hipStreamCreateWithFlags(s, 0u); }
static inline int gpu_stream_destroy(hipStream_t s) { return (int)hipStreamDestroy(s); }
static inline int gpu_stream_destroy_drv(hipStream_t s) { return (int)hipStreamDestroy(s); }
static inline int gpu_stream_sync(hipStream_t s) { return (int)hipStreamSynchronize(s); }
static inline int gpu_event_create(void **e) { return (int)hipEventCreate((hipEvent_t *)e); }
static inline int gpu_event_record(void *e, hipStream_t s) { return (int)hipEventRecord((hipEvent_t)e, s); }
static inline int gpu_event_sync(void *e) { return (int)hipEventSynchronize((hipEvent_t)e); }
static inline int gpu_event_destroy(void *e) { return (int)hipEventDestroy((hipEvent_t)e); }
/* A word of mapped pinned memory (hipHostMallocMapped) and a stream wait until it equals
 * `value` (hipStreamWaitValueEq). */
static inline int gpu_host_alloc_mapped(void **p, size_t n) { return (int)hipHostMalloc(p, n, 2u); }
static inline int gpu_stream_wait_value32(hipStream_t s, void *word, unsigned value)
{
    return (int)hipStreamWaitValue32(s, word, value, 1u, 0xffffffffu);
}

#endif

#endif /* SUITE_GPU_SHIM_H */
