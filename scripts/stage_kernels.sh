#!/usr/bin/env bash
# Build the staging kernel of stream-ordered I/O (src/runtime/stage/stage.c) for every GPU the
# library supports, into the files it embeds:
#   src/runtime/stage/stage.ptx          NVIDIA (CUDA, and HIP on NVIDIA): PTX ISA 7.0, sm_70,
#                                        which drivers from CUDA 11 on compile
#   src/runtime/stage/amdgpu/<gpu>.hsaco AMD: one code object (version 5, ROCm 5.3 and later) per
#                                        GPU architecture; LLVM 19's generic targets need code
#                                        object version 6, which it calls not ready for production
# Needs clang and ld.lld of LLVM 19 (Debian 12: apt-get install clang-19 lld-19). The output is
# deterministic: tests/stage_kernels.rs rebuilds it and compares when LLVM 19 is installed.
#   scripts/stage_kernels.sh [OUTDIR]   (default: src/runtime/stage)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-src/runtime/stage}
llvm=${LLVM_BIN:-/usr/lib/llvm-19/bin}
clang="$llvm/clang"
lld="$llvm/ld.lld"
for tool in "$clang" "$lld"; do
    [ -x "$tool" ] || { echo "stage_kernels.sh: $tool not found (apt-get install clang-19 lld-19)" >&2; exit 1; }
done
src=src/runtime/stage/stage.c
# Keep in step with AMDGPU_TARGETS in src/runtime/stage/mod.rs.
gpus="gfx906 gfx908 gfx90a gfx940 gfx941 gfx942 gfx1030 gfx1100 gfx1101 gfx1102 gfx1150 gfx1151 gfx1200 gfx1201"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out/amdgpu"
"$clang" -target nvptx64-nvidia-cuda -march=sm_70 -Xclang -target-feature -Xclang +ptx70 \
    -O3 -Wall -Wextra -Werror -S "$src" -o "$out/stage.ptx"
rm -f "$out"/amdgpu/*.hsaco
for gpu in $gpus; do
    "$clang" -target amdgcn-amd-amdhsa -mcpu="$gpu" -mcode-object-version=5 -nogpulib \
        -O3 -Wall -Wextra -Werror -c "$src" -o "$tmp/$gpu.o"
    "$lld" -shared --build-id=none "$tmp/$gpu.o" -o "$out/amdgpu/$gpu.hsaco"
done
echo "wrote $out/stage.ptx and $(ls "$out/amdgpu" | wc -l) AMD code objects in $out/amdgpu"
