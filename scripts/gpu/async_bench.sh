#!/usr/bin/env bash
# T6: stream-ordered reads (hipFileReadAsync) against the synchronous calls, in one run, page
# cache -> device: 64 MiB reads with 8 in flight, as one stream x 8 queued and as 8 streams x 1,
# side by side with the synchronous T1 shape (1 GiB reads, one thread) and synchronous 64 MiB
# reads from 1 thread (one at a time, as one stream runs its operations) and from 8 threads; each async shape on streams registered with the three FIXED flags
# (`fixed`: size and offsets read at submission) and on unregistered streams (`none`), in rounds
# (queue 8, wait for the streams) and kept in flight (`--keep-in-flight`: a new read as soon as
# the oldest is done). The async rows also give the submitting thread's microseconds per call.
# Run from the repository root with .gpu/ carried; about a minute; prints one table at the end.
#
#   scripts/gpu/async_bench.sh [DIR]     DIR: where the 4 GiB test file goes (default /tmp)
set -uo pipefail
cd "$(dirname "$0")/../.."
HF=.gpu/bin/hipfile
DIR=${1:-/tmp}
F=$DIR/hipfile-async.dat
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
T1=""
run() { # label env args...
    local label=$1 envs=$2; shift 2
    local j
    # shellcheck disable=SC2086
    j=$(env $envs timeout 60 "$HF" bench --json --repeat 3 --file "$F" --size 4G --mem device "$@" 2>>"$OUT/async_bench.err") \
        || { printf '%-34s FAILED (see %s)\n' "$label" "$OUT/async_bench.err"; return; }
    echo "$j" > "$OUT/async_$label.json"
    python3 - "$label" "$j" "${T1:-0}" <<'PY'
import json, sys
label, j, t1 = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
h, c = j["hipfile"], j["config"]
gbs = h["gib_per_s"] * 1.073741824
ratio = f"{gbs / t1:5.2f}x" if t1 > 0 else "  (T1)"
sub = c.get("submit_us")
sub = f"{sub:8.1f} us/call" if sub is not None else ""
print(f"{label:34s} {gbs:8.2f} GB/s  {ratio} of T1  {sub}")
PY
    if [[ -z $T1 ]]; then
        T1=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["hipfile"]["gib_per_s"]*1.073741824)' "$j")
    fi
}
{
echo "== T6: 64 MiB reads, 8 in flight, page cache -> device (4 GiB per run, median of 3)"
"$HF" bench --file "$F" --size 4G --io-size 64M --threads 8 --repeat 1 >/dev/null 2>&1  # creates and warms the file
run sync_T1_1g_t1                   "" --io-size 1G --threads 1
run sync_64m_t1                     "" --io-size 64M --threads 1
run sync_64m_t8                     "" --io-size 64M --threads 8
for flags in fixed none; do
    run async_64m_1stream_x8_$flags        "" --io-size 64M --api async --stream-flags $flags --streams 1 --depth 8
    run async_64m_8streams_x1_$flags       "" --io-size 64M --api async --stream-flags $flags --streams 8 --depth 1
    run async_64m_1stream_x8_kept_$flags   "" --io-size 64M --api async --stream-flags $flags --streams 1 --depth 8 --keep-in-flight
    run async_64m_8streams_x1_kept_$flags  "" --io-size 64M --api async --stream-flags $flags --streams 8 --depth 1 --keep-in-flight
done
} 2>&1 | tee "$OUT/async_bench.txt"
rm -f "$F"
