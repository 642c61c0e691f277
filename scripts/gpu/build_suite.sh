#!/usr/bin/env bash
# Builds the C test suite (tests/c/suite.c) on a machine with an NVIDIA GPU, against real
# CUDA memory: the suite's GPU shim uses the CUDA runtime API (-DSUITE_GPU_CUDA), and our
# prebuilt libhipfile.so.0 uses the CUDA driver API by itself at run time.
#
# Run from the repository root, on the GPU machine (gcc and a CUDA runtime, no Rust needed):
#
#   scripts/gpu/build_suite.sh OUTPUT [LIBDIR]
#
#   OUTPUT   path of the executable to build
#   LIBDIR   folder holding the prebuilt libhipfile.so.0 (and usually a libhipfile.so link);
#            default .gpu/lib
#
# libcudart is looked for, in this order: $CUDART_DIR, /usr/local/cuda/lib64 (and the
# targets/*/lib folder beside it), /usr/local/cuda-*/lib64, the Python environment's
# nvidia/cu13/lib (then nvidia/cuda_runtime/lib), and `ldconfig -p`. Both folders go on the
# executable's run path, so it runs without LD_LIBRARY_PATH.
#
# Then run it, for example:  OUTPUT /some/existing/dir [--large]
#
# HIP mode: with --hip LIBRARY (a libamdhip64.so.7, in practice the HIP-on-CUDA runtime that
# scripts/gpu/hip_on_cuda/build.sh builds), the suite is built with -DSUITE_GPU_HIP against that
# library instead of the CUDA runtime; run it with HIPFILE_PLATFORM=amd and HIPFILE_HIP_LIBRARY
# naming the same file (scripts/gpu/hip_suite.sh does all of this).
set -euo pipefail

die() {
    echo "build_suite.sh: error: $*" >&2
    exit 1
}

hip_lib=""
args=()
while [[ $# -gt 0 ]]; do
    case $1 in
    --hip) [[ $# -ge 2 ]] || die "--hip needs a library"; hip_lib=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
    esac
done
set -- "${args[@]}"
[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 OUTPUT [LIBDIR] [--hip LIBAMDHIP64]"
out=$1
libdir=${2:-.gpu/lib}

[[ -f tests/c/suite.c && -f include/hipfile.h ]] \
    || die "run this from the repository root (tests/c/suite.c and include/hipfile.h not found in $PWD)"
command -v gcc >/dev/null || die "gcc not found"

# --- our library ------------------------------------------------------------------------------
[[ -d $libdir ]] || die "library folder $libdir does not exist"
libdir=$(cd "$libdir" && pwd -P)
[[ -e $libdir/libhipfile.so.0 ]] || die "$libdir/libhipfile.so.0 is missing"
if [[ -e $libdir/libhipfile.so ]]; then
    hipfile_link=(-L"$libdir" -lhipfile)
else
    # No development link: name the file itself (the executable still records libhipfile.so.0).
    hipfile_link=(-L"$libdir" -l:libhipfile.so.0)
fi
echo "libhipfile: $libdir/libhipfile.so.0 -> $(readlink -f "$libdir/libhipfile.so.0")"

# --- HIP mode: the suite's GPU shim calls the HIP runtime -------------------------------------
if [[ -n $hip_lib ]]; then
    [[ -e $hip_lib ]] || die "$hip_lib does not exist"
    hip_dir=$(cd "$(dirname "$hip_lib")" && pwd -P)
    echo "HIP runtime: $hip_dir/$(basename "$hip_lib")"
    mkdir -p "$(dirname "$out")"
    cmd=(gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -DSUITE_GPU_HIP
        -Iinclude tests/c/suite.c -o "$out"
        "${hipfile_link[@]}" -L"$hip_dir" "-l:$(basename "$hip_lib")" -pthread
        -Wl,-rpath,"$libdir" -Wl,-rpath,"$hip_dir")
    echo "+ ${cmd[*]}"
    "${cmd[@]}"
    echo "built $out"
    exit 0
fi

# --- libcudart --------------------------------------------------------------------------------
# Prints the first libcudart file of a folder: the development link if present, else the
# highest versioned file.
cudart_in() {
    local d=$1 f
    [[ -d $d ]] || return 1
    if [[ -e $d/libcudart.so ]]; then
        echo "$d/libcudart.so"
        return 0
    fi
    f=$(ls -1 "$d"/libcudart.so.* 2>/dev/null | sort -V | tail -n 1 || true)
    [[ -n $f ]] || return 1
    echo "$f"
}

candidates=()
[[ -n ${CUDART_DIR:-} ]] && candidates+=("$CUDART_DIR")
candidates+=(/usr/local/cuda/lib64)
for d in /usr/local/cuda/targets/*/lib /usr/local/cuda-*/lib64; do
    [[ -d $d ]] && candidates+=("$d")
done
if command -v python3 >/dev/null; then
    pydir=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null || true)
    if [[ -z $pydir ]]; then
        # nvidia is often a namespace package without __file__.
        pydir=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)
    fi
    if [[ -n $pydir ]]; then
        candidates+=("$pydir/cu13/lib" "$pydir/cuda_runtime/lib")
    fi
fi

cudart=""
for d in "${candidates[@]}"; do
    if f=$(cudart_in "$d"); then
        cudart=$f
        break
    fi
done
if [[ -z $cudart ]] && command -v ldconfig >/dev/null; then
    cudart=$( (ldconfig -p 2>/dev/null || true) | awk '/libcudart\.so/ && /x86-64|x86_64|64bit/ {print $NF}' | sort -V | tail -n 1)
    [[ -n $cudart ]] || cudart=$( (ldconfig -p 2>/dev/null || true) | awk '/libcudart\.so/ {print $NF}' | sort -V | tail -n 1)
fi
[[ -n $cudart && -e $cudart ]] || die "libcudart not found (looked in: ${candidates[*]} and ldconfig -p); set CUDART_DIR"
cudart_dir=$(cd "$(dirname "$cudart")" && pwd -P)
cudart_file=$(basename "$cudart")
if [[ $cudart_file == libcudart.so ]]; then
    cudart_link=(-L"$cudart_dir" -lcudart)
else
    cudart_link=(-L"$cudart_dir" "-l:$cudart_file")
fi
echo "libcudart:  $cudart_dir/$cudart_file -> $(readlink -f "$cudart")"

# --- libcuda (the driver API: the async group creates streams with cuStreamCreate too) --------
libcuda=$( (ldconfig -p 2>/dev/null || true) | awk '/libcuda\.so\.1 / && /x86-64|x86_64|64bit/ {print $NF}' | head -n 1)
[[ -n $libcuda ]] || libcuda=$( (ldconfig -p 2>/dev/null || true) | awk '/libcuda\.so\.1 / {print $NF}' | head -n 1)
for f in /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1; do
    [[ -n $libcuda ]] || { [[ -e $f ]] && libcuda=$f; }
done
[[ -n $libcuda && -e $libcuda ]] || die "libcuda.so.1 (the NVIDIA driver) not found"
cuda_link=(-L"$(dirname "$libcuda")" -l:libcuda.so.1)
echo "libcuda:    $libcuda"

# --- build ------------------------------------------------------------------------------------
mkdir -p "$(dirname "$out")"
cmd=(gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -DSUITE_GPU_CUDA
    -Iinclude -I/usr/local/cuda/include
    tests/c/suite.c -o "$out"
    "${hipfile_link[@]}" "${cudart_link[@]}" "${cuda_link[@]}" -pthread
    -Wl,-rpath,"$libdir" -Wl,-rpath,"$cudart_dir")
echo "+ ${cmd[*]}"
"${cmd[@]}"

# The executable must find both libraries by itself.
if command -v ldd >/dev/null; then
    deps=$(ldd "$out")
    echo "$deps" | grep -E 'libhipfile|libcudart' || true
    # libamdhip64.so.7 is our library's ELF auxiliary filter (DT_AUXILIARY): ldd lists it, and
    # the loader skips it where it does not exist (every NVIDIA machine).
    if echo "$deps" | grep -v 'libamdhip64\.so\.7' | grep -q 'not found'; then
        echo "$deps" >&2
        die "$out has unresolved libraries"
    fi
fi
echo "built $out"
