/*
 * exports.c - hipGetProcAddress: the address of an exported HIP function by name.
 *
 * The GPU-direct file entry points hipAmdFileRead/hipAmdFileWrite are absent, as on a ROCm whose
 * runtime has no AIS support: a program (hipfile's HIP backend) must find that out here and take
 * its fallback path by itself.
 */
#include <string.h>

#include "hip_on_cuda.h"

static const struct {
    const char *name;
    void *address;
} EXPORTS[] = {
#define HOC_EXPORT_ENTRY(name) { #name, (void *)&name },
    HOC_HIP_EXPORTS(HOC_EXPORT_ENTRY)
#undef HOC_EXPORT_ENTRY
};

/*
 * AMD's rules: a NULL or empty symbol or a NULL pfn is hipErrorInvalidValue; a symbol the
 * runtime does not have is hipErrorInvalidValue with *pfn = NULL and *status =
 * HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND; "hipGetDeviceProperties" asked for HIP 6.0 or later
 * (hip_version >= 600) is hipGetDevicePropertiesR0600. `status` may be NULL.
 */
HOC_EXPORT hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hip_version, uint64_t flags, int *status)
{
    (void)flags;
    if (symbol == NULL || *symbol == '\0' || pfn == NULL)
        HOC_RETURN(hipErrorInvalidValue);
    *pfn = NULL;
    if (strcmp(symbol, "hipGetDeviceProperties") == 0 && hip_version >= 600)
        symbol = "hipGetDevicePropertiesR0600";
    for (size_t i = 0; i < sizeof EXPORTS / sizeof EXPORTS[0]; i++) {
        if (strcmp(EXPORTS[i].name, symbol) == 0) {
            *pfn = EXPORTS[i].address;
            if (status != NULL)
                *status = HIP_GET_PROC_ADDRESS_SUCCESS;
            HOC_RETURN(hipSuccess);
        }
    }
    if (status != NULL)
        *status = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    HOC_RETURN(hipErrorInvalidValue);
}
