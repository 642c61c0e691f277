/*
 * cuda_check.c - compile-time check that cuda_subset.h agrees with the real <cuda.h>: every
 * constant of the subset becomes a static assertion against CUDA's value of the same name.
 * build.sh compiles it (-fsyntax-only) wherever cuda.h exists; nothing here is linked.
 */
#include <cuda.h>

_Static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr is 64-bit");
_Static_assert(sizeof(CUdevice) == sizeof(int), "CUdevice is an int");

#define HOC_CUDA_CONST(name, value) _Static_assert((long long)(name) == (value), #name " differs from cuda.h");
#include "cuda_subset.h"
