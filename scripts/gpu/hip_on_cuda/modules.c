/*
 * modules.c - code objects and kernel launches.
 *
 * hipModuleLoadData takes what cuModuleLoadData takes: NUL-terminated PTX text, a cubin or a
 * fatbin (on this shim, the code object of a HIP program for NVIDIA). Modules load into the
 * current device's primary context.
 */
#include "hip_on_cuda.h"

HOC_EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
    if (module == NULL || image == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(ModuleLoadData);
    hipError_t e = hoc_ctx();
    CUmodule m = NULL;
    if (e == hipSuccess)
        e = HOC_CU(ModuleLoadData(&m, image));
    if (e == hipSuccess)
        *module = (hipModule_t)m;
    HOC_RETURN(e);
}

HOC_EXPORT hipError_t hipModuleLoad(hipModule_t *module, const char *path)
{
    if (module == NULL || path == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    HOC_NEED(ModuleLoad);
    hipError_t e = hoc_ctx();
    CUmodule m = NULL;
    if (e == hipSuccess)
        e = HOC_CU(ModuleLoad(&m, path));
    if (e == hipSuccess)
        *module = (hipModule_t)m;
    HOC_RETURN(e);
}

HOC_EXPORT hipError_t hipModuleUnload(hipModule_t module)
{
    HOC_BEGIN();
    if (module == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    HOC_NEED(ModuleUnload);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(ModuleUnload((CUmodule)module)));
}

/* An unknown name is hipErrorNotFound (CUDA's answer has the same number). */
HOC_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *name)
{
    if (function == NULL || name == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    if (module == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    HOC_NEED(ModuleGetFunction);
    hipError_t e = hoc_ctx();
    CUfunction f = NULL;
    if (e == hipSuccess)
        e = HOC_CU(ModuleGetFunction(&f, (CUmodule)module, name));
    if (e == hipSuccess)
        *function = (hipFunction_t)f;
    HOC_RETURN(e);
}

#define MAX_PARAMS 64

/*
 * HIP's `extra`: exactly { HIP_LAUNCH_PARAM_BUFFER_POINTER, buffer, HIP_LAUNCH_PARAM_BUFFER_SIZE,
 * &size, HIP_LAUNCH_PARAM_END } (AMD's runtime accepts no other form; its END is 3 where CUDA's
 * is 0). The buffer holds the arguments laid out as the kernel declares them. Where the driver
 * describes a kernel's parameters (cuFuncGetParamInfo, CUDA 12.4), the buffer is turned into
 * CUDA's kernelParams - a pointer to each argument inside it - as AMD's runtime builds its
 * argument block from the kernel's metadata; otherwise it goes to CUDA's own `extra` with CUDA's
 * END. A buffer shorter than the parameters is hipErrorInvalidValue.
 */
static hipError_t params_from_extra(CUfunction f, void **extra, void **params, void ***out_params,
                                    void **cu_extra, void ***out_extra)
{
    if (extra[0] != HIP_LAUNCH_PARAM_BUFFER_POINTER || extra[2] != HIP_LAUNCH_PARAM_BUFFER_SIZE ||
        extra[4] != HIP_LAUNCH_PARAM_END || extra[3] == NULL)
        return hipErrorInvalidValue;
    char *buffer = extra[1];
    size_t size = *(const size_t *)extra[3];
    if (hoc.cu.FuncGetParamInfo == NULL) {
        cu_extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
        cu_extra[1] = buffer;
        cu_extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
        cu_extra[3] = extra[3];
        cu_extra[4] = CU_LAUNCH_PARAM_END;
        *out_extra = cu_extra;
        return hipSuccess;
    }
    size_t n = 0;
    for (; n < MAX_PARAMS; n++) {
        size_t offset = 0, bytes = 0;
        if (hoc.cu.FuncGetParamInfo(f, n, &offset, &bytes) != 0)
            break;
        if (offset > size || bytes > size - offset)
            return hipErrorInvalidValue;
        params[n] = buffer + offset;
    }
    if (n == MAX_PARAMS)
        return hipErrorNotSupported;
    *out_params = params;
    return hipSuccess;
}

/* Passing both kernelParams and extra is hipErrorInvalidValue (AMD's rule). */
HOC_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                            unsigned by, unsigned bz, unsigned shared, hipStream_t stream,
                                            void **kernel_params, void **extra)
{
    HOC_BEGIN();
    if (f == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    if (kernel_params != NULL && extra != NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_NEED(LaunchKernel);
    hipError_t e = hoc_ctx();
    if (e != hipSuccess)
        HOC_RETURN(e);
    void *params[MAX_PARAMS];
    void *cu_extra[5];
    void **use_params = kernel_params;
    void **use_extra = NULL;
    if (extra != NULL) {
        e = params_from_extra((CUfunction)f, extra, params, &use_params, cu_extra, &use_extra);
        if (e != hipSuccess)
            HOC_RETURN(e);
    }
    HOC_RETURN(HOC_CU(LaunchKernel((CUfunction)f, gx, gy, gz, bx, by, bz, shared, hoc_stream(stream), use_params,
                                   use_extra)));
}

/* Every block resident at once, or hipErrorCooperativeLaunchTooLarge (CUDA's twin). */
HOC_EXPORT hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                                       unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                                       hipStream_t stream, void **kernel_params)
{
    HOC_BEGIN();
    if (f == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    HOC_NEED(LaunchCooperativeKernel);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e
                               : HOC_CU(LaunchCooperativeKernel((CUfunction)f, gx, gy, gz, bx, by, bz, shared,
                                                                hoc_stream(stream), kernel_params)));
}

HOC_EXPORT hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, hipFunction_t f, int block_size,
                                                                         size_t dynamic_shared)
{
    if (blocks == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    HOC_BEGIN();
    if (f == NULL)
        HOC_RETURN(hipErrorInvalidHandle);
    HOC_NEED(OccupancyMaxActiveBlocks);
    hipError_t e = hoc_ctx();
    HOC_RETURN(e != hipSuccess ? e : HOC_CU(OccupancyMaxActiveBlocks(blocks, (CUfunction)f, block_size, dynamic_shared)));
}
