/*
 * errors.c - hipError_t: HIP's names and texts, the one table that translates CUDA results,
 * and the per-thread last error.
 */
#include <stdio.h>

#include "hip_on_cuda.h"

/*
 * Every hipError_t of ROCm 7 with hipGetErrorName's name and hipGetErrorString's text (AMD's
 * own strings). `twin`: CUDA's driver API has a result with the same number and meaning, so a
 * CUresult of that number is reported as this error unchanged; every other CUresult becomes
 * hipErrorUnknown (what HIP's own CUDA-result translation does for codes it has no twin for).
 */
static const struct hoc_error {
    int code;
    int twin;
    const char *name;
    const char *text;
} ERRORS[] = {
    { 0, 1, "hipSuccess", "no error" },
    { 1, 1, "hipErrorInvalidValue", "invalid argument" },
    { 2, 1, "hipErrorOutOfMemory", "out of memory" },
    { 3, 1, "hipErrorNotInitialized", "initialization error" },
    { 4, 1, "hipErrorDeinitialized", "driver shutting down" },
    { 5, 1, "hipErrorProfilerDisabled", "profiler disabled while using external profiling tool" },
    { 6, 1, "hipErrorProfilerNotInitialized", "profiler is not initialized" },
    { 7, 1, "hipErrorProfilerAlreadyStarted", "profiler already started" },
    { 8, 1, "hipErrorProfilerAlreadyStopped", "profiler already stopped" },
    { 9, 0, "hipErrorInvalidConfiguration", "invalid configuration argument" },
    { 12, 0, "hipErrorInvalidPitchValue", "invalid pitch argument" },
    { 13, 0, "hipErrorInvalidSymbol", "invalid device symbol" },
    { 17, 0, "hipErrorInvalidDevicePointer", "invalid device pointer" },
    { 21, 0, "hipErrorInvalidMemcpyDirection", "invalid copy direction for memcpy" },
    { 35, 0, "hipErrorInsufficientDriver", "driver version is insufficient for runtime version" },
    { 52, 0, "hipErrorMissingConfiguration", "__global__ function call is not configured" },
    { 53, 0, "hipErrorPriorLaunchFailure", "unspecified launch failure in prior launch" },
    { 98, 0, "hipErrorInvalidDeviceFunction", "invalid device function" },
    { 100, 1, "hipErrorNoDevice", "no ROCm-capable device is detected" },
    { 101, 1, "hipErrorInvalidDevice", "invalid device ordinal" },
    { 200, 1, "hipErrorInvalidImage", "device kernel image is invalid" },
    { 201, 1, "hipErrorInvalidContext", "invalid device context" },
    { 202, 1, "hipErrorContextAlreadyCurrent", "context is already current context" },
    { 205, 1, "hipErrorMapFailed", "mapping of buffer object failed" },
    { 206, 1, "hipErrorUnmapFailed", "unmapping of buffer object failed" },
    { 207, 1, "hipErrorArrayIsMapped", "array is mapped" },
    { 208, 1, "hipErrorAlreadyMapped", "resource already mapped" },
    { 209, 1, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device" },
    { 210, 1, "hipErrorAlreadyAcquired", "resource already acquired" },
    { 211, 1, "hipErrorNotMapped", "resource not mapped" },
    { 212, 1, "hipErrorNotMappedAsArray", "resource not mapped as array" },
    { 213, 1, "hipErrorNotMappedAsPointer", "resource not mapped as pointer" },
    { 214, 1, "hipErrorECCNotCorrectable", "uncorrectable ECC error encountered" },
    { 215, 1, "hipErrorUnsupportedLimit", "limit is not supported on this architecture" },
    { 216, 1, "hipErrorContextAlreadyInUse", "exclusive-thread device already in use by a different thread" },
    { 217, 1, "hipErrorPeerAccessUnsupported", "peer access is not supported between these two devices" },
    { 218, 1, "hipErrorInvalidKernelFile", "invalid kernel file" },
    { 219, 1, "hipErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context" },
    { 300, 1, "hipErrorInvalidSource", "device kernel image is invalid" },
    { 301, 1, "hipErrorFileNotFound", "file not found" },
    { 302, 1, "hipErrorSharedObjectSymbolNotFound", "shared object symbol not found" },
    { 303, 1, "hipErrorSharedObjectInitFailed", "shared object initialization failed" },
    { 304, 1, "hipErrorOperatingSystem", "OS call failed or operation not supported on this OS" },
    { 400, 1, "hipErrorInvalidHandle", "invalid resource handle" },
    { 401, 0, "hipErrorIllegalState", "the operation cannot be performed in the present state" },
    { 500, 1, "hipErrorNotFound", "named symbol not found" },
    { 600, 1, "hipErrorNotReady", "device not ready" },
    { 700, 1, "hipErrorIllegalAddress", "an illegal memory access was encountered" },
    { 701, 1, "hipErrorLaunchOutOfResources", "too many resources requested for launch" },
    { 702, 1, "hipErrorLaunchTimeOut", "the launch timed out and was terminated" },
    { 704, 1, "hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled" },
    { 705, 1, "hipErrorPeerAccessNotEnabled", "peer access has not been enabled" },
    { 708, 1, "hipErrorSetOnActiveProcess", "cannot set while device is active in this process" },
    { 709, 1, "hipErrorContextIsDestroyed", "context is destroyed" },
    { 710, 1, "hipErrorAssert", "device-side assert triggered" },
    { 712, 1, "hipErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped" },
    { 713, 1, "hipErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region" },
    { 719, 1, "hipErrorLaunchFailure", "unspecified launch failure" },
    { 720, 1, "hipErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch" },
    { 801, 1, "hipErrorNotSupported", "operation not supported" },
    { 900, 1, "hipErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing" },
    { 901, 1, "hipErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture" },
    { 902, 1, "hipErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences" },
    { 903, 1, "hipErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began" },
    { 904, 1, "hipErrorStreamCaptureUnjoined", "capturing stream has unjoined work" },
    { 905, 1, "hipErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream" },
    { 906, 1, "hipErrorStreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream" },
    { 907, 1, "hipErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream" },
    { 908, 1, "hipErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread" },
    { 910, 1, "hipErrorGraphExecUpdateFailure",
      "the graph update was not performed because it included changes which violated constraints specific to "
      "instantiated graph update" },
    { 911, 0, "hipErrorInvalidChannelDescriptor", "invalid resource description of texture passed to the api" },
    { 912, 0, "hipErrorInvalidTexture", "invalid texture object passed to the api" },
    { 999, 1, "hipErrorUnknown", "unknown error" },
    { 1052, 0, "hipErrorRuntimeMemory", "runtime memory call returned error" },
    { 1053, 0, "hipErrorRuntimeOther", "runtime call other than memory returned error" },
};

static const struct hoc_error *find(int code)
{
    for (size_t i = 0; i < sizeof ERRORS / sizeof ERRORS[0]; i++)
        if (ERRORS[i].code == code)
            return &ERRORS[i];
    return NULL;
}

hipError_t hoc_from_cu(CUresult r)
{
    if (r == 0)
        return hipSuccess;
    const struct hoc_error *e = find((int)r);
    return e != NULL && e->twin ? (hipError_t)r : hipErrorUnknown;
}

/* ROCm 7: the last error is the last failure of the thread (hipSuccess and hipErrorNotReady
 * are not failures), reset by hipGetLastError. */
static __thread hipError_t tls_last_error;

hipError_t hoc_ret(hipError_t e, const char *fn)
{
    if (e != hipSuccess && e != hipErrorNotReady)
        tls_last_error = e;
    if (hoc.trace >= 2 || (hoc.trace == 1 && e != hipSuccess && e != hipErrorNotReady)) {
        const struct hoc_error *d = find(e);
        fprintf(stderr, "hip_on_cuda: %s -> %s (%d)\n", fn, d ? d->name : "?", e);
    }
    return e;
}

HOC_EXPORT const char *hipGetErrorName(hipError_t e)
{
    const struct hoc_error *d = find(e);
    return d ? d->name : "hipErrorUnknown";
}

HOC_EXPORT const char *hipGetErrorString(hipError_t e)
{
    const struct hoc_error *d = find(e);
    return d ? d->text : "unknown error";
}

HOC_EXPORT hipError_t hipDrvGetErrorName(hipError_t e, const char **out)
{
    if (out == NULL)
        return hipErrorInvalidValue;
    const struct hoc_error *d = find(e);
    *out = d ? d->name : "hipErrorUnknown";
    return d ? hipSuccess : hipErrorInvalidValue;
}

HOC_EXPORT hipError_t hipDrvGetErrorString(hipError_t e, const char **out)
{
    if (out == NULL)
        return hipErrorInvalidValue;
    const struct hoc_error *d = find(e);
    *out = d ? d->text : "unknown error";
    return d ? hipSuccess : hipErrorInvalidValue;
}

HOC_EXPORT hipError_t hipGetLastError(void)
{
    hipError_t e = tls_last_error;
    tls_last_error = hipSuccess;
    return e;
}

HOC_EXPORT hipError_t hipPeekAtLastError(void)
{
    return tls_last_error;
}
