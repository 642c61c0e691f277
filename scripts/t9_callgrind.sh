#!/usr/bin/env bash
# Target T9: instructions per 4 KiB registered read, hipFileRead against pread + hipMemcpy,
# counted by valgrind's callgrind on the simulated runtime. Prints the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 2; }
cargo build --release -q --example t9_percall -p hipfile
cargo build --release -q -p hipsim
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
head -c $((1 << 20)) /dev/urandom > "$work/data"
# Compat mode: the library then does the same runtime work as the plain loop (pread into pinned
# memory, hipMemcpy), so the difference is the library's own cost. (hipsim's GPU-direct entry
# point, which aligned reads would take otherwise, costs differently from hipMemcpy.)
export HIPFILE_HIP_LIBRARY=$PWD/target/release/libhipsim.so HIPFILE_LOG=error HIPFILE_FORCE_COMPAT_MODE=${T9_FORCE_COMPAT:-true}
instr() { # mode iterations -> total instructions
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" -q \
        target/release/examples/t9_percall "$1" "$2" "$work/data" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$work/cg.out"
}
lo=2000; hi=12000
declare -A per
for mode in plain hipfile; do
    a=$(instr $mode $lo); b=$(instr $mode $hi)
    per[$mode]=$(( (b - a) / (hi - lo) ))
    echo "$mode: $(( b - a )) instructions over $(( hi - lo )) calls = ${per[$mode]} per call"
done
awk -v h="${per[hipfile]}" -v p="${per[plain]}" 'BEGIN { printf "T9 ratio hipfile / (pread + hipMemcpy) = %.3f (target <= 1.2)\n", h / p }'
