#!/usr/bin/env bash
# Target T7 on the GPU machine, in one run: a batch of 128 x 1 MiB random reads per submit against
# 1 GiB sequential reads (T1's shape) from the same warm file, page cache -> device, plus 16
# synchronous threads of 1 MiB random reads. Run from the repository root with .gpu/ carried;
# prints one table (GB/s = 1e9 B/s) with the ratios to the sequential reads.
set -uo pipefail
cd "$(dirname "$0")/../.."
HF=.gpu/bin/hipfile
DIR=${1:-/tmp}
F=$DIR/hipfile-t7.dat
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
gbps() { # label args... -> "label GB/s"
    local label=$1; shift
    local j
    j=$(timeout 120 "$HF" bench --json --repeat 3 --mem device --file "$F" "$@" 2>>"$OUT/t7.err") || { echo "$label FAILED"; return; }
    echo "$j" > "$OUT/t7_$label.json"
    python3 -c 'import json,sys; h=json.loads(sys.argv[2])["hipfile"]; print(sys.argv[1], "%.2f" % (h["gib_per_s"]*1.073741824))' "$label" "$j"
}
# Creates the file and warms the page cache.
"$HF" bench --file "$F" --size 4G --io-size 1G --threads 1 --repeat 1 >/dev/null 2>>"$OUT/t7.err"
{
    gbps seq_1g           --size 4G --io-size 1G
    gbps batch_1m_d128    --size 4G --io-size 1M --mode randread --api batch --batch-depth 128
    gbps sync_1m_t16      --size 4G --io-size 1M --mode randread --threads 16
} | tee "$OUT/t7.txt" | python3 -c '
import sys
rows = [l.split() for l in sys.stdin if l.strip()]
vals = {r[0]: float(r[1]) for r in rows if len(r) == 2 and r[1] != "FAILED"}
seq = vals.get("seq_1g")
print("%-16s %9s %9s" % ("workload", "GB/s", "/seq_1g"))
for r in rows:
    v = vals.get(r[0])
    print("%-16s %9s %9s" % (r[0], "%.2f" % v if v else "FAILED", "%.2fx" % (v / seq) if v and seq else "-"))
print("T7 target: batch_1m_d128 >= 0.90x seq_1g")
'
rm -f "$F"
