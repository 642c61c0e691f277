#!/usr/bin/env bash
# Target T9: instructions per 4 KiB registered read, hipFileRead against pread + hipMemcpy,
# counted by valgrind's callgrind on the simulated runtime. Prints the ratio of both library
# paths in one run: the fallback (compat mode) and the fastpath.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 2; }
cargo build --release -q --example t9_percall -p hipfile
cargo build --release -q -p hipsim
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
head -c $((1 << 20)) /dev/urandom > "$work/data"
export HIPFILE_HIP_LIBRARY=$PWD/target/release/libhipsim.so HIPFILE_LOG=error
instr() { # mode iterations -> total instructions
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" -q \
        target/release/examples/t9_percall "$1" "$2" "$work/data" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$work/cg.out"
}
per_call() { # mode -> instructions per call (two iteration counts cancel the setup)
    local lo=2000 hi=12000 a b
    a=$(instr "$1" $lo); b=$(instr "$1" $hi)
    echo $(( (b - a) / (hi - lo) ))
}
plain=$(per_call plain)
echo "plain pread + hipMemcpy: $plain instructions per call"
# Compat mode first: the library then does the same runtime work as the plain loop (pread
# into pinned memory, hipMemcpy), so the difference is the library's own cost. The fastpath
# calls hipsim's GPU-direct entry point instead, which costs differently from hipMemcpy.
# T9_FORCE_COMPAT=true|false measures one path only.
# The statistics' stopwatch reads the TSC where the kernel keeps time on it, CLOCK_MONOTONIC
# elsewhere: the last line shows the fallback with the latter (HIPFILE_STATS_TSC=false).
for run in compat:true:auto compat:false:auto compat:true:false; do
    IFS=: read -r _ compat tsc <<<"$run"
    path=$([ "$compat" = true ] && echo "fallback (compat mode)" || echo "fastpath")
    [ "$tsc" = false ] && path="$path, no TSC"
    case " ${T9_FORCE_COMPAT:-true false} " in *" $compat "*) ;; *) continue ;; esac
    if [ "$tsc" = false ]; then
        h=$(HIPFILE_STATS_TSC=false HIPFILE_FORCE_COMPAT_MODE=$compat per_call hipfile)
    else
        h=$(HIPFILE_FORCE_COMPAT_MODE=$compat per_call hipfile)
    fi
    awk -v h="$h" -v p="$plain" -v path="$path" \
        'BEGIN { printf "%-34s %5d instructions per call, ratio %.3f (target <= 1.2)\n", path ":", h, h / p }'
done
