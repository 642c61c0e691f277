#!/usr/bin/env bash
# Builds the HIP-on-CUDA runtime, libamdhip64.so.7 (HIP's API on the CUDA driver API; see
# hip_on_cuda.h), with gcc. No CUDA library is needed to build it (the shim dlopens libcuda at
# run time); CUDA's headers are used when present:
#   - with $CUDA_INC/cuda.h (default /usr/local/cuda/include): first cuda_check.c, which asserts
#     that the shim's own CUDA subset agrees with cuda.h, then the shim against cuda.h (falling
#     back to the subset, with a warning, if that fails);
#   - without: the shim against its subset (cuda_subset.h).
#
#   scripts/gpu/hip_on_cuda/build.sh [OUTDIR]      (default: $TMPDIR/hip_on_cuda, else /tmp/...)
#
# The last line printed is the path of the library. Environment: CC (default gcc), CUDA_INC,
# HOC_USE_SUBSET=1 (ignore cuda.h).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
out=${1:-${TMPDIR:-/tmp}/hip_on_cuda}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
cc=${CC:-gcc}
cuda_inc=${CUDA_INC:-/usr/local/cuda/include}
srcs=(driver.c errors.c memory.c streams.c device.c modules.c exports.c)
flags=(-std=gnu11 -O2 -g -fPIC -fvisibility=hidden -D_GNU_SOURCE -Wall -Wextra -Werror
    -Wno-deprecated-declarations -I"$here")
link=(-shared -Wl,-soname,libamdhip64.so.7 -Wl,--version-script="$here/exports.map"
    -Wl,--no-undefined -ldl -lpthread)
lib=$out/libamdhip64.so.7

# Written under a private name and renamed: a program (or a concurrent build) never sees a
# partial library.
build() { # extra flags...
    (cd "$here" && "$cc" "${flags[@]}" "$@" "${srcs[@]}" "${link[@]}" -o "$lib.$$.tmp") && mv -f "$lib.$$.tmp" "$lib"
}

if [[ ${HOC_USE_SUBSET:-0} != 1 && -e $cuda_inc/cuda.h ]]; then
    if (cd "$here" && "$cc" "${flags[@]}" -I"$cuda_inc" -fsyntax-only cuda_check.c) 2>"$out/cuda_check.log"; then
        echo "cuda_check: the CUDA subset agrees with $cuda_inc/cuda.h"
    else
        echo "cuda_check: WARNING: the CUDA subset differs from $cuda_inc/cuda.h:" >&2
        sed 's/^/  /' "$out/cuda_check.log" | head -20 >&2
    fi
    if build -I"$cuda_inc" 2>"$out/build.log"; then
        echo "built against $cuda_inc/cuda.h"
    else
        echo "WARNING: the build against $cuda_inc/cuda.h failed; building with the CUDA subset:" >&2
        sed 's/^/  /' "$out/build.log" | head -20 >&2
        build -DHOC_USE_SUBSET
        echo "built against the CUDA subset (cuda_subset.h)"
    fi
else
    build -DHOC_USE_SUBSET
    echo "built against the CUDA subset (cuda_subset.h)"
fi
echo "$lib"
