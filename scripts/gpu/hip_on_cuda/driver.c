/*
 * driver.c - loading libcuda, the shim's settings, contexts and devices.
 *
 * Settings (environment, read once):
 *   HIP_ON_CUDA_LIBCUDA         the CUDA driver library to dlopen (default libcuda.so.1; tests
 *                               name the simulator's library here)
 *   HIP_ON_CUDA_HIP_VERSION     the HIP_VERSION to report (default 70000000, ROCm 7.0.0); below
 *                               60000000 the shim answers with ROCm 5's hipMemoryType numbering
 *                               and pointer rules, as such a runtime would
 *   HIP_ON_CUDA_DEFAULT_STREAM  "legacy" (default: HIP's NULL stream, CUDA's legacy stream) or
 *                               "per-thread" (what a HIP program built for the per-thread default
 *                               stream gets: each thread's own implicit stream)
 *   HIP_ON_CUDA_TRACE           1: print every failing call on stderr; 2: every call
 *
 * Contexts: HIP has a current device per thread and no contexts; CUDA has a current context per
 * thread. The shim uses each device's primary context (the one the CUDA runtime and hipfile's
 * CUDA backend use, so memory and streams are shared with CUDA code in the process): a thread
 * without a current context gets its HIP device's primary context made current on its first
 * call that needs one (device 0 unless hipSetDevice chose another), as the CUDA runtime does.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_on_cuda.h"

struct hoc_state hoc;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static hipError_t load_error = hipErrorNotInitialized;
static CUcontext primary[HOC_MAX_DEVICES];
static CUdevice cu_devices[HOC_MAX_DEVICES];

/* The HIP device chosen by hipSetDevice on this thread (-1: none yet, device 0). */
static __thread int tls_device = -1;

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return fallback;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    return (end != NULL && *end == '\0') ? (int)n : fallback;
}

/* A load failure is said once on stderr whatever the trace setting: without it a program only
 * sees hipInit fail. */
static void say(const char *what, const char *detail)
{
    fprintf(stderr, "hip_on_cuda: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

static void load(void)
{
    hoc.trace = env_int("HIP_ON_CUDA_TRACE", 0);
    hoc.hip_version = env_int("HIP_ON_CUDA_HIP_VERSION", 70000000);
    const char *ds = getenv("HIP_ON_CUDA_DEFAULT_STREAM");
    hoc.per_thread_default = ds != NULL && strcmp(ds, "per-thread") == 0;

    const char *path = getenv("HIP_ON_CUDA_LIBCUDA");
    if (path == NULL || *path == '\0')
        path = "libcuda.so.1";
    /* RTLD_LOCAL: the driver's symbols (or the simulator's HIP face) stay out of the global
     * scope, where the program resolves HIP names to this library. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        say("cannot load the CUDA driver", dlerror());
        load_error = hipErrorNoDevice;
        return;
    }
#define HOC_CU_RESOLVE(required, field, symbol, ret, params)                                       \
    *(void **)&hoc.cu.field = dlsym(lib, symbol);                                                  \
    if (hoc.cu.field == NULL && (required)) {                                                      \
        say("the CUDA driver lacks a required entry point", symbol);                               \
        load_error = hipErrorNotInitialized;                                                       \
        return;                                                                                    \
    }
    HOC_CU_FUNCS(HOC_CU_RESOLVE)
#undef HOC_CU_RESOLVE

    CUresult r = hoc.cu.Init(0);
    if (r != 0) {
        char n[32];
        snprintf(n, sizeof n, "CUresult %d", (int)r);
        say("cuInit failed", n);
        load_error = hoc_from_cu(r);
        return;
    }
    if (hoc.cu.DriverGetVersion(&hoc.driver_version) != 0)
        hoc.driver_version = 0;
    int n = 0;
    if (hoc.cu.DeviceGetCount(&n) != 0 || n < 0)
        n = 0;
    hoc.device_count = n < HOC_MAX_DEVICES ? n : HOC_MAX_DEVICES;
    for (int i = 0; i < hoc.device_count; i++)
        if (hoc.cu.DeviceGet(&cu_devices[i], i) != 0)
            cu_devices[i] = (CUdevice)i;
    load_error = hipSuccess;
    if (hoc.trace)
        fprintf(stderr, "hip_on_cuda: %s loaded, CUDA driver %d, %d device(s), HIP_VERSION %d, NULL stream %s\n",
                path, hoc.driver_version, hoc.device_count, hoc.hip_version,
                hoc.per_thread_default ? "per-thread" : "legacy");
}

hipError_t hoc_ready(void)
{
    pthread_once(&load_once, load);
    return load_error;
}

CUdevice hoc_cu_device(int ordinal)
{
    return cu_devices[ordinal];
}

hipError_t hoc_check_device(int ordinal)
{
    return (ordinal >= 0 && ordinal < hoc.device_count) ? hipSuccess : hipErrorInvalidDevice;
}

CUcontext hoc_primary(int ordinal, hipError_t *err)
{
    *err = hoc_check_device(ordinal);
    if (*err != hipSuccess)
        return NULL;
    CUcontext c = __atomic_load_n(&primary[ordinal], __ATOMIC_ACQUIRE);
    if (c != NULL)
        return c;
    /* Retained once per device and kept for the life of the process; two threads racing here
     * retain twice, which only raises the driver's reference count. */
    *err = HOC_CU(DevicePrimaryCtxRetain(&c, cu_devices[ordinal]));
    if (*err != hipSuccess)
        return NULL;
    __atomic_store_n(&primary[ordinal], c, __ATOMIC_RELEASE);
    return c;
}

/* Only contexts already retained are compared: retaining another device's primary context
 * would initialise that device. */
static int ordinal_of_retained(CUcontext ctx)
{
    for (int i = 0; ctx != NULL && i < hoc.device_count; i++)
        if (__atomic_load_n(&primary[i], __ATOMIC_ACQUIRE) == ctx)
            return i;
    return -1;
}

static int ordinal_of_cu_device(CUdevice d)
{
    for (int i = 0; i < hoc.device_count; i++)
        if (cu_devices[i] == d)
            return i;
    return -1;
}

hipError_t hoc_ordinal_of_ctx(CUcontext ctx, int *ordinal)
{
    int i = ordinal_of_retained(ctx);
    if (i >= 0) {
        *ordinal = i;
        return hipSuccess;
    }
    /* Another context (the application's own, or a primary context retained by someone else):
     * ask the driver for its device with it current for a moment. */
    CUdevice d;
    hipError_t e = HOC_CU(CtxPushCurrent(ctx));
    if (e != hipSuccess)
        return e;
    e = HOC_CU(CtxGetDevice(&d));
    CUcontext popped;
    hoc.cu.CtxPopCurrent(&popped);
    if (e != hipSuccess)
        return e;
    i = ordinal_of_cu_device(d);
    if (i < 0)
        return hipErrorInvalidDevice;
    *ordinal = i;
    return hipSuccess;
}

hipError_t hoc_ctx(void)
{
    CUcontext cur = NULL;
    hipError_t e = HOC_CU(CtxGetCurrent(&cur));
    if (e != hipSuccess || cur != NULL)
        return e;
    if (hoc.device_count == 0)
        return hipErrorNoDevice;
    CUcontext c = hoc_primary(tls_device < 0 ? 0 : tls_device, &e);
    return c == NULL ? e : HOC_CU(CtxSetCurrent(c));
}

hipError_t hoc_current_device(int *ordinal)
{
    CUcontext cur = NULL;
    hipError_t e = HOC_CU(CtxGetCurrent(&cur));
    if (e != hipSuccess)
        return e;
    if (cur == NULL) {
        if (hoc.device_count == 0)
            return hipErrorNoDevice;
        *ordinal = tls_device < 0 ? 0 : tls_device;
        return hipSuccess;
    }
    int i = ordinal_of_retained(cur);
    if (i < 0) {
        /* A context of the application's own: its device. */
        CUdevice d;
        e = HOC_CU(CtxGetDevice(&d));
        if (e != hipSuccess)
            return e;
        i = ordinal_of_cu_device(d);
        if (i < 0)
            return hipErrorInvalidDevice;
    }
    *ordinal = i;
    return hipSuccess;
}

CUstream hoc_stream(hipStream_t s)
{
    /* hipStreamLegacy (1) and hipStreamPerThread (2) have CUDA's values: they pass as they are. */
    return hoc_null_is_per_thread(s) ? CU_STREAM_PER_THREAD : (CUstream)s;
}

hipError_t hoc_device_address(const void *p, CUdeviceptr *out)
{
    if (p == NULL)
        return hipErrorInvalidValue;
    *out = 0;
    CUresult r = hoc.cu.PointerGetAttribute(out, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, (CUdeviceptr)(uintptr_t)p);
    /* HIP answers hipErrorInvalidValue for memory its runtime does not know, whatever CUDA's
     * reason. */
    return (r != 0 || *out == 0) ? hipErrorInvalidValue : hipSuccess;
}

/* ---- initialisation, versions, devices ------------------------------------------------- */

HOC_EXPORT hipError_t hipInit(unsigned flags)
{
    if (flags != 0)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_RETURN(hipSuccess);
}

/* Both versions are HIP_VERSION: HIP reports the same number for the runtime and the driver. */
static hipError_t get_version(int *version, const char *fn)
{
    if (version == NULL)
        return hoc_ret(hipErrorInvalidValue, fn);
    hoc_ready();
    *version = hoc.hip_version;
    return hoc_ret(hipSuccess, fn);
}

HOC_EXPORT hipError_t hipRuntimeGetVersion(int *version)
{
    return get_version(version, __func__);
}

HOC_EXPORT hipError_t hipDriverGetVersion(int *version)
{
    return get_version(version, __func__);
}

/* Zero devices is hipErrorNoDevice with *count = 0, as HIP answers. */
HOC_EXPORT hipError_t hipGetDeviceCount(int *count)
{
    if (count == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    *count = 0;
    HOC_BEGIN();
    *count = hoc.device_count;
    HOC_RETURN(hoc.device_count > 0 ? hipSuccess : hipErrorNoDevice);
}

HOC_EXPORT hipError_t hipGetDevice(int *device)
{
    if (device == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_RETURN(hoc_current_device(device));
}

HOC_EXPORT hipError_t hipSetDevice(int device)
{
    HOC_BEGIN();
    hipError_t e;
    CUcontext c = hoc_primary(device, &e);
    if (c == NULL)
        HOC_RETURN(e);
    e = HOC_CU(CtxSetCurrent(c));
    if (e == hipSuccess)
        tls_device = device;
    HOC_RETURN(e);
}

HOC_EXPORT hipError_t hipDeviceGet(hipDevice_t *device, int ordinal)
{
    if (device == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    hipError_t e = hoc_check_device(ordinal);
    if (e == hipSuccess)
        *device = ordinal;
    HOC_RETURN(e);
}

/* Waits for every stream of the current device and returns the first failure of their work. */
HOC_EXPORT hipError_t hipDeviceSynchronize(void)
{
    HOC_BEGIN();
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(CtxSynchronize()));
}
