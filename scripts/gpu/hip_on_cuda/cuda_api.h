/*
 * cuda_api.h - CUDA driver API types and constants for the shim: CUDA's own <cuda.h> when the
 * compiler finds it (build.sh passes -I/usr/local/cuda/include on the GPU machine), otherwise
 * the self-written subset (cuda_subset.h), which has the same names and values. -DHOC_USE_SUBSET
 * forces the subset.
 *
 * Only types and constants come from here. The entry points are called through pointers that
 * dlsym() returns for exact versioned symbols (driver.c), typed by the shim's own prototypes,
 * so one binary works with any driver and with the simulator's libcuda.
 */
#ifndef HOC_CUDA_API_H
#define HOC_CUDA_API_H

#if !defined(HOC_USE_SUBSET) && defined(__has_include)
#if __has_include(<cuda.h>)
#include <cuda.h>
#define HOC_HAVE_CUDA_H 1
#endif
#endif

#if !defined(HOC_HAVE_CUDA_H)
#include "cuda_subset.h"
#endif

#endif /* HOC_CUDA_API_H */
