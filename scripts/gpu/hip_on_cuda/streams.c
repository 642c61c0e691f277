/*
 * streams.c - streams, events, host functions, and waits and writes on memory words.
 *
 * A hipStream_t is the CUstream itself; the NULL stream is CUDA's legacy default stream, whose
 * rules are HIP's NULL-stream rules (it waits for the blocking streams of the device and they
 * wait for it; streams created with hipStreamNonBlocking are exempt). hipStreamLegacy and
 * hipStreamPerThread have CUDA's values and pass unchanged.
 */
#include "hip_on_cuda.h"

/* The stream handles that are not streams of their own and can be neither destroyed nor
 * queried for a device other than the current one. */
static int is_implicit(hipStream_t s)
{
    return s == NULL || s == hipStreamLegacy || s == hipStreamPerThread;
}

/* ---- streams ----------------------------------------------------------------------------- */

static hipError_t stream_create(hipStream_t *s, unsigned flags)
{
    if (s == NULL || (flags != hipStreamDefault && flags != hipStreamNonBlocking))
        return hipErrorInvalidValue;
    hipError_t e = hoc_ctx();
    CUstream cs = NULL;
    if (e == hipSuccess)
        e = HOC_CU(StreamCreate(&cs, flags == hipStreamNonBlocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
    if (e == hipSuccess)
        *s = (hipStream_t)cs;
    return e;
}

HOC_EXPORT hipError_t hipStreamCreate(hipStream_t *s)
{
    HOC_BEGIN();
    HOC_RETURN(stream_create(s, hipStreamDefault));
}

HOC_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags)
{
    HOC_BEGIN();
    HOC_RETURN(stream_create(s, flags));
}

/* The NULL stream (and the other implicit handles) cannot be destroyed: hipErrorInvalidHandle.
 * Work still queued completes, then the stream goes away (HIP and CUDA agree). */
HOC_EXPORT hipError_t hipStreamDestroy(hipStream_t s)
{
    HOC_BEGIN();
    if (is_implicit(s))
        HOC_RETURN(hipErrorInvalidHandle);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(StreamDestroy((CUstream)s)));
}

/* Also returns the first failure of the stream's queued work. On the NULL stream this waits for
 * the legacy stream, which includes the blocking streams' earlier work, as HIP's NULL-stream
 * synchronisation does. */
HOC_EXPORT hipError_t hipStreamSynchronize(hipStream_t s)
{
    HOC_BEGIN();
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(StreamSynchronize(hoc_stream(s))));
}

/* hipSuccess when everything queued has run, hipErrorNotReady while work is pending. */
HOC_EXPORT hipError_t hipStreamQuery(hipStream_t s)
{
    HOC_BEGIN();
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(StreamQuery(hoc_stream(s))));
}

HOC_EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t event, unsigned flags)
{
    HOC_BEGIN();
    if (event == NULL || flags != 0)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_NEED(StreamWaitEvent);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(StreamWaitEvent(hoc_stream(s), (CUevent)event, 0)));
}

/* The implicit streams belong to the current device; a created stream to the device of its
 * context (a primary context: the device it was created on). */
HOC_EXPORT hipError_t hipStreamGetDevice(hipStream_t s, hipDevice_t *device)
{
    if (device == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    if (is_implicit(s))
        HOC_RETURN(hoc_current_device(device));
    CUcontext ctx = NULL;
    hipError_t e = HOC_CU(StreamGetCtx((CUstream)s, &ctx));
    HOC_RETURN(e != hipSuccess ? e : hoc_ordinal_of_ctx(ctx, device));
}

HOC_EXPORT hipError_t hipStreamGetFlags(hipStream_t s, unsigned *flags)
{
    if (flags == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(StreamGetFlags);
    hipError_t e = hoc_ctx();
    unsigned f = 0;
    if (e == hipSuccess)
        e = HOC_CU(StreamGetFlags(hoc_stream(s), &f));
    if (e == hipSuccess)
        *flags = (f & CU_STREAM_NON_BLOCKING) ? hipStreamNonBlocking : hipStreamDefault;
    HOC_RETURN(e);
}

/* A number unique to the stream for the life of the process (CUDA 12's stream id). */
HOC_EXPORT hipError_t hipStreamGetId(hipStream_t s, unsigned long long *id)
{
    if (id == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(StreamGetId);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(StreamGetId(hoc_stream(s), id)));
}

/* `fn` runs on a runtime thread once the stream's earlier work is done, and must not call HIP
 * (HIP and CUDA state the same rule). */
HOC_EXPORT hipError_t hipLaunchHostFunc(hipStream_t s, hipHostFn_t fn, void *data)
{
    HOC_BEGIN();
    if (fn == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_NEED(LaunchHostFunc);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(LaunchHostFunc(hoc_stream(s), fn, data)));
}

/* ---- waits and writes on memory words ------------------------------------------------------ */

/*
 * HIP's conditions hold for (*ptr & mask) against `value`; CUDA's waits have no mask. They map
 * exactly when the mask is all ones, and for "and" with any mask ((*ptr & mask) & value is
 * *ptr & (value & mask)); another mask is hipErrorNotSupported rather than a different wait.
 * Gte is CUDA's GEQ, whose comparison is cyclic ((int32_t)(*ptr - value) >= 0): the two agree
 * unless the word and the value are more than 2^31 apart. `ptr` must be memory the runtime
 * knows (pinned, registered, device), as HIP requires: anything else is hipErrorInvalidValue.
 */
static hipError_t wait_flags(unsigned flags, uint64_t mask, uint64_t all, uint64_t *value, unsigned *cu)
{
    switch (flags) {
    case hipStreamWaitValueGte:
        *cu = CU_STREAM_WAIT_VALUE_GEQ;
        break;
    case hipStreamWaitValueEq:
        *cu = CU_STREAM_WAIT_VALUE_EQ;
        break;
    case hipStreamWaitValueAnd:
        *cu = CU_STREAM_WAIT_VALUE_AND;
        *value &= mask;
        return hipSuccess;
    case hipStreamWaitValueNor:
        *cu = CU_STREAM_WAIT_VALUE_NOR;
        break;
    default:
        return hipErrorInvalidValue;
    }
    return (mask & all) == all ? hipSuccess : hipErrorNotSupported;
}

static hipError_t wait_value(hipStream_t s, void *ptr, uint64_t value, unsigned flags, uint64_t mask, int wide)
{
    if (ptr == NULL)
        return hipErrorInvalidValue;
    if (wide ? hoc.cu.StreamWaitValue64 == NULL : hoc.cu.StreamWaitValue32 == NULL)
        return hipErrorNotSupported;
    unsigned cu_flags = 0;
    hipError_t e = wait_flags(flags, mask, wide ? UINT64_MAX : UINT32_MAX, &value, &cu_flags);
    if (e != hipSuccess)
        return e;
    e = hoc_ctx();
    CUdeviceptr addr = 0;
    if (e == hipSuccess)
        e = hoc_device_address(ptr, &addr);
    if (e != hipSuccess)
        return e;
    return wide ? HOC_CU(StreamWaitValue64(hoc_stream(s), addr, value, cu_flags))
                : HOC_CU(StreamWaitValue32(hoc_stream(s), addr, (uint32_t)value, cu_flags));
}

HOC_EXPORT hipError_t hipStreamWaitValue32(hipStream_t s, void *ptr, uint32_t value, unsigned flags, uint32_t mask)
{
    HOC_BEGIN();
    HOC_RETURN(wait_value(s, ptr, value, flags, mask, 0));
}

HOC_EXPORT hipError_t hipStreamWaitValue64(hipStream_t s, void *ptr, uint64_t value, unsigned flags, uint64_t mask)
{
    HOC_BEGIN();
    HOC_RETURN(wait_value(s, ptr, value, flags, mask, 1));
}

/* Flags 0 only: AMD's increment/decrement extensions have no CUDA counterpart. */
static hipError_t write_value(hipStream_t s, void *ptr, uint64_t value, unsigned flags, int wide)
{
    if (ptr == NULL)
        return hipErrorInvalidValue;
    if (flags != 0 || (wide ? hoc.cu.StreamWriteValue64 == NULL : hoc.cu.StreamWriteValue32 == NULL))
        return hipErrorNotSupported;
    hipError_t e = hoc_ctx();
    CUdeviceptr addr = 0;
    if (e == hipSuccess)
        e = hoc_device_address(ptr, &addr);
    if (e != hipSuccess)
        return e;
    return wide ? HOC_CU(StreamWriteValue64(hoc_stream(s), addr, value, CU_STREAM_WRITE_VALUE_DEFAULT))
                : HOC_CU(StreamWriteValue32(hoc_stream(s), addr, (uint32_t)value, CU_STREAM_WRITE_VALUE_DEFAULT));
}

HOC_EXPORT hipError_t hipStreamWriteValue32(hipStream_t s, void *ptr, uint32_t value, unsigned flags)
{
    HOC_BEGIN();
    HOC_RETURN(write_value(s, ptr, value, flags, 0));
}

HOC_EXPORT hipError_t hipStreamWriteValue64(hipStream_t s, void *ptr, uint64_t value, unsigned flags)
{
    HOC_BEGIN();
    HOC_RETURN(write_value(s, ptr, value, flags, 1));
}

/* ---- events ------------------------------------------------------------------------------ */

/* The AMD-only release and fence flags are no-ops on CUDA (HIP's documentation says so);
 * blocking sync, disable timing and interprocess have CUDA's values. */
static hipError_t event_create(hipEvent_t *event, unsigned flags)
{
    const unsigned cuda_flags = hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess;
    const unsigned amd_only = hipEventDisableSystemFence | hipEventReleaseToDevice | hipEventReleaseToSystem;
    if (event == NULL || (flags & ~(cuda_flags | amd_only)) != 0)
        return hipErrorInvalidValue;
    hipError_t e = hoc_ctx();
    CUevent ev = NULL;
    if (e == hipSuccess)
        e = HOC_CU(EventCreate(&ev, flags & cuda_flags));
    if (e == hipSuccess)
        *event = (hipEvent_t)ev;
    return e;
}

HOC_EXPORT hipError_t hipEventCreate(hipEvent_t *event)
{
    HOC_BEGIN();
    HOC_RETURN(event_create(event, 0));
}

HOC_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
    HOC_BEGIN();
    HOC_RETURN(event_create(event, flags));
}

HOC_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t s)
{
    HOC_BEGIN();
    if (event == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(EventRecord((CUevent)event, hoc_stream(s))));
}

HOC_EXPORT hipError_t hipEventSynchronize(hipEvent_t event)
{
    HOC_BEGIN();
    if (event == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    HOC_RETURN(HOC_CU(EventSynchronize((CUevent)event)));
}

HOC_EXPORT hipError_t hipEventQuery(hipEvent_t event)
{
    HOC_BEGIN();
    if (event == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    HOC_NEED(EventQuery);
    HOC_RETURN(HOC_CU(EventQuery((CUevent)event)));
}

HOC_EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
    if (ms == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    if (start == NULL || stop == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    HOC_NEED(EventElapsedTime);
    HOC_RETURN(HOC_CU(EventElapsedTime(ms, (CUevent)start, (CUevent)stop)));
}

HOC_EXPORT hipError_t hipEventDestroy(hipEvent_t event)
{
    HOC_BEGIN();
    if (event == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    HOC_RETURN(HOC_CU(EventDestroy((CUevent)event)));
}
