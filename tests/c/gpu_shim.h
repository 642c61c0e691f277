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

#endif

#endif /* SUITE_GPU_SHIM_H */
