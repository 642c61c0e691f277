#!/usr/bin/env bash
# The batch API against the synchronous calls on the GPU machine, in one run: 4 KiB random reads
# and 16 MiB reads from the page cache into device memory, `hipfile bench --api sync|batch`.
# Run from the repository root with .gpu/ carried; prints one table at the end.
set -uo pipefail
cd "$(dirname "$0")/../.."
HF=.gpu/bin/hipfile
DIR=${1:-/tmp}
F4=$DIR/hipfile-batch-4k.dat
FL=$DIR/hipfile-batch-large.dat
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
run() { # label args...
    local label=$1; shift
    local j
    j=$(timeout 120 "$HF" bench --json --repeat 3 "$@" 2>>"$OUT/batch_bench.err") || { echo "$label FAILED" >&2; return; }
    echo "$j" > "$OUT/batch_$label.json"
    python3 - "$label" "$j" <<'PY'
import json, sys
label, j = sys.argv[1], json.loads(sys.argv[2])
h = j["hipfile"]
print(f"{label:28s} {h['gib_per_s']*1.073741824:8.2f} GB/s  p50 {h['p50_latency_us']:9.1f} us  p99 {h['p99_latency_us']:9.1f} us  threads {h['threads']}")
PY
}
{
echo "== 4 KiB random reads, page cache -> device (256 MiB moved over a 1 GiB file)"
"$HF" bench --file "$F4" --size 1G --io-size 16M --threads 8 --repeat 1 >/dev/null 2>&1  # creates and warms the file
run sync_4k_t1        --file "$F4" --size 256M --io-size 4K --mode randread --threads 1
run sync_4k_t16       --file "$F4" --size 256M --io-size 4K --mode randread --threads 16
run batch_4k_t1_d64   --file "$F4" --size 256M --io-size 4K --mode randread --threads 1 --api batch --batch-depth 64
run batch_4k_t4_d32   --file "$F4" --size 256M --io-size 4K --mode randread --threads 4 --api batch --batch-depth 32
run batch_4k_t16_d8   --file "$F4" --size 256M --io-size 4K --mode randread --threads 16 --api batch --batch-depth 8
echo "== 16 MiB reads, page cache -> device (4 GiB)"
"$HF" bench --file "$FL" --size 4G --io-size 16M --threads 8 --repeat 1 >/dev/null 2>&1
run sync_16m_t1       --file "$FL" --size 4G --io-size 16M --threads 1
run sync_16m_t16      --file "$FL" --size 4G --io-size 16M --threads 16
run batch_16m_t1_d16  --file "$FL" --size 4G --io-size 16M --threads 1 --api batch --batch-depth 16
run batch_16m_t4_d8   --file "$FL" --size 4G --io-size 16M --threads 4 --api batch --batch-depth 8
} 2>&1 | tee "$OUT/batch_bench.txt"
rm -f "$F4" "$FL"
