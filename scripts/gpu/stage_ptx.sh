#!/usr/bin/env bash
# Regenerate src/runtime/stage/stage.ptx from stage.cu (needs CUDA's nvcc; run on a CUDA
# machine and carry the file back). The PTX is written for compute_75 and its ISA version is
# lowered to 7.0 (nothing newer is used), so drivers from CUDA 11 on can compile it.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-src/runtime/stage/stage.ptx}
nvcc -ptx -arch=compute_75 -O3 -o "$out.tmp" src/runtime/stage/stage.cu
sed -e 's/^\.version .*/.version 7.0/' -e 's/^\.target sm_75.*/.target sm_70/' "$out.tmp" > "$out"
rm -f "$out.tmp"
echo "wrote $out"
