/*
 * cufile_test.h - what the C programs that test libcufile.so.0 share: exact checks with a
 * count of failures, the CUDA driver API loaded at run time ($CUFILE_SUITE_CUDA, the
 * simulator's libhipsim.so in the tests, else libcuda.so.1), the byte pattern of the scratch
 * files, and the cuFile version the library must report.
 */
#ifndef CUFILE_TEST_H
#define CUFILE_TEST_H

#include "cufile.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks, failures;

#define CHECK(cond, ...)                                             \
    do {                                                             \
        checks++;                                                    \
        if (!(cond)) {                                               \
            failures++;                                              \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);     \
            fprintf(stderr, __VA_ARGS__);                            \
            fputc('\n', stderr);                                     \
        }                                                            \
    } while (0)

/* A CUfileError_t with the expected err, and cu_err 0 unless it is a CUDA driver error. */
#define ST(call, expect)                                                                     \
    do {                                                                                     \
        CUfileError_t s_ = (call);                                                           \
        CHECK(s_.err == (CUfileOpError)(expect) &&                                           \
                  (s_.err == CU_FILE_CUDA_DRIVER_ERROR || s_.cu_err == CUDA_SUCCESS),        \
              "%s -> %d (cu_err %d), expected %d", #call, (int)s_.err, (int)s_.cu_err,      \
              (int)(expect));                                                                \
    } while (0)

/* A data-path result of -1 with this errno. */
#define FAILS_WITH(expr, want_errno)                                                         \
    do {                                                                                     \
        errno = 0;                                                                           \
        ssize_t r_ = (expr);                                                                 \
        int e_ = errno;                                                                      \
        CHECK(r_ == -1 && e_ == (want_errno), "%s -> %zd errno %d, expected -1 errno %d",    \
              #expr, r_, e_, (int)(want_errno));                                             \
    } while (0)

/* ---- the CUDA driver API, loaded at run time ---------------------------------------- */

typedef unsigned long long devptr_t;
static struct {
    int (*init)(unsigned);
    int (*device_get)(int *, int);
    int (*primary_retain)(void **, int);
    int (*ctx_set_current)(void *);
    int (*mem_alloc)(devptr_t *, size_t);
    int (*mem_free)(devptr_t);
    int (*htod)(devptr_t, const void *, size_t);
    int (*dtoh)(void *, devptr_t, size_t);
    int (*host_alloc)(void **, size_t, unsigned);
    int (*free_host)(void *);
    int (*stream_create)(void **, unsigned);
    int (*stream_sync)(void *);
    int (*stream_destroy)(void *);
    int (*pci_bus_id)(char *, int, int); /* optional */
} cu;

static inline void *need(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "the CUDA driver lacks %s\n", name);
        exit(2);
    }
    return p;
}

static inline void cuda_setup(void)
{
    const char *path = getenv("CUFILE_SUITE_CUDA");
    void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    void *ctx = NULL;
    int dev = 0;
    if (!lib) {
        fprintf(stderr, "no CUDA driver: %s\n", dlerror());
        exit(2);
    }
    *(void **)&cu.init = need(lib, "cuInit");
    *(void **)&cu.device_get = need(lib, "cuDeviceGet");
    *(void **)&cu.primary_retain = need(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.ctx_set_current = need(lib, "cuCtxSetCurrent");
    *(void **)&cu.mem_alloc = need(lib, "cuMemAlloc_v2");
    *(void **)&cu.mem_free = need(lib, "cuMemFree_v2");
    *(void **)&cu.htod = need(lib, "cuMemcpyHtoD_v2");
    *(void **)&cu.dtoh = need(lib, "cuMemcpyDtoH_v2");
    *(void **)&cu.host_alloc = need(lib, "cuMemHostAlloc");
    *(void **)&cu.free_host = need(lib, "cuMemFreeHost");
    *(void **)&cu.stream_create = need(lib, "cuStreamCreate");
    *(void **)&cu.stream_sync = need(lib, "cuStreamSynchronize");
    *(void **)&cu.stream_destroy = need(lib, "cuStreamDestroy_v2");
    *(void **)&cu.pci_bus_id = dlsym(lib, "cuDeviceGetPCIBusId");
    if (cu.init(0) || cu.device_get(&dev, 0) || cu.primary_retain(&ctx, dev) ||
        cu.ctx_set_current(ctx)) {
        fprintf(stderr, "CUDA initialisation failed\n");
        exit(2);
    }
}

static inline void *dev_alloc(size_t n)
{
    devptr_t p = 0;
    if (cu.mem_alloc(&p, n)) {
        fprintf(stderr, "cuMemAlloc(%zu) failed\n", n);
        exit(2);
    }
    return (void *)(uintptr_t)p;
}

static inline void dev_free(void *p) { cu.mem_free((devptr_t)(uintptr_t)p); }
static inline void upload(void *dst, const void *src, size_t n) { cu.htod((devptr_t)(uintptr_t)dst, src, n); }
static inline void download(void *dst, const void *src, size_t n) { cu.dtoh(dst, (devptr_t)(uintptr_t)src, n); }

/* ---- the scratch files' bytes ------------------------------------------------------ */

static inline unsigned char byte_at(size_t i) { return (unsigned char)((i * 2654435761u) >> 13); }

static inline void fill_pattern(unsigned char *p, size_t n, size_t from)
{
    for (size_t i = 0; i < n; i++)
        p[i] = byte_at(from + i);
}

/* Whether `n` bytes at `got` are the pattern from file offset `from`. */
static inline int is_pattern(const unsigned char *got, size_t n, size_t from)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != byte_at(from + i))
            return 0;
    return 1;
}

/* The version the library must report: 1190 where the environment declares 1.19 consumers
 * (HIPFILE_CUFILE_API_LEVEL=1.19), else 1180 (the 1.15..1.18 layouts). */
static inline int expected_version(void)
{
    const char *l = getenv("HIPFILE_CUFILE_API_LEVEL");
    return l && (strcmp(l, "1.19") == 0 || strcmp(l, "1190") == 0) ? 1190 : 1180;
}

#endif
