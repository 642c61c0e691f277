#!/usr/bin/env bash
# Statistics overhead on the GPU machine (issue "observability"): T1 (8 GiB page cache -> device,
# 1 GiB reads) and T4 (4 KiB random reads, one thread) with HIPFILE_STATS_LEVEL=0 and =1,
# interleaved, median of the runs. Run from the repository root with `.gpu/` carried.
set -uo pipefail
cd "$(dirname "$0")/../.."
HF=.gpu/bin/hipfile
dir=/mnt/hfstats; mkdir -p "$dir" 2>/dev/null || dir=/var/tmp/hfstats; mkdir -p "$dir"
big=$dir/t1.dat; small=$dir/t4.dat
python3 - "$big" "$small" <<'PY'
import os, sys
blk = os.urandom(64 << 20)
for path, size in ((sys.argv[1], 8 << 30), (sys.argv[2], 64 << 20)):
    with open(path, "wb") as f:
        for _ in range(size // len(blk)) or [0]:
            f.write(blk[: min(len(blk), size)])
        f.flush(); os.fsync(f.fileno())
PY
cat "$big" > /dev/null
runs=${RUNS:-4}
for i in $(seq 1 "$runs"); do
    for level in 0 1; do
        t1=$(HIPFILE_STATS_LEVEL=$level HIPFILE_LOG=error timeout 120 $HF bench --file "$big" --size 8G --io-size 1G --mem device --json --repeat 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["hipfile"]["gib_per_s"])')
        t4=$(HIPFILE_STATS_LEVEL=$level HIPFILE_LOG=error timeout 60 $HF bench --file "$small" --size 64M --io-size 4K --mode randread --threads 1 --mem device --json --repeat 1 | python3 -c 'import json,sys; d=json.load(sys.stdin)["hipfile"]; print(d["p50_latency_us"], d["p99_latency_us"])')
        echo "RUN $i level=$level T1_gib_s=$t1 T4_p50_p99_us=$t4"
    done
done | tee /tmp/stats_overhead.txt
python3 - <<'PY'
import statistics as st
rows = [l.split() for l in open("/tmp/stats_overhead.txt") if l.startswith("RUN")]
for level in ("0", "1"):
    r = [x for x in rows if x[2] == f"level={level}"]
    t1 = [float(x[3].split("=")[1]) for x in r]
    p50 = [float(x[4].split("=")[1]) for x in r]
    p99 = [float(x[5]) for x in r]
    print(f"level {level}: T1 median {st.median(t1):.2f} GiB/s (runs {', '.join(f'{v:.1f}' for v in t1)}); T4 p50 median {st.median(p50):.2f} us, p99 median {st.median(p99):.2f} us")
PY
