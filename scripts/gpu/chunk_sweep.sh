#!/usr/bin/env bash
# Engine chunk size against warm (T1) and cold (T2) reads on the GPU machine: one 8 GiB file,
# chunk sizes interleaved, fresh `hipfile bench` process per run (--repeat 2, median), and the
# plain 16-thread O_DIRECT reader as the disk's reference between runs. Run from the repo root
# with `.gpu/` carried.
set -uo pipefail
cd "$(dirname "$0")/../.."
HF=.gpu/bin/hipfile
dir=/mnt/hfsweep; mkdir -p "$dir" 2>/dev/null || dir=/var/tmp/hfsweep; mkdir -p "$dir"
f=$dir/sweep.dat
python3 - "$f" <<'PY'
import os, sys
blk = os.urandom(64 << 20)
with open(sys.argv[1], "wb") as out:
    for _ in range(128):
        out.write(blk)
    out.flush(); os.fsync(out.fileno())
PY
gcc -O2 -std=c11 -D_GNU_SOURCE -pthread -I/usr/local/cuda/include scripts/gpu/baselines.c -o /tmp/baselines -L/usr/local/cuda/lib64 -lcuda 2>/dev/null || gcc -O2 -std=c11 -D_GNU_SOURCE -pthread scripts/gpu/baselines.c -o /tmp/baselines -lcuda
json() { python3 -c 'import json,sys; d=json.load(sys.stdin)["hipfile"]; print("%.3f" % (d["gib_per_s"]*1.073741824))'; }
for round in 1 2; do
    for chunk in 4M 8M 16M; do
        cold=$(HIPFILE_CHUNK_SIZE=$chunk HIPFILE_LOG=error timeout 120 $HF bench --file "$f" --size 8G --io-size 1G --mem device --drop-cache --json --repeat 1 | json)
        warm=$(HIPFILE_CHUNK_SIZE=$chunk HIPFILE_LOG=error timeout 120 $HF bench --file "$f" --size 8G --io-size 1G --mem device --json --repeat 2 | json)
        echo "ROUND $round chunk=$chunk cold_GBps=$cold warm_GBps=$warm"
    done
    sync; echo 3 > /proc/sys/vm/drop_caches
    timeout 60 /tmp/baselines -c -f "$f" direct 16 16M 2>&1 | grep RESULT | sed "s/^/ROUND $round disk: /"
done
