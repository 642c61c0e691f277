#!/usr/bin/env bash
# The library's HIP path on the NVIDIA GPU, in one call: the HIP-on-CUDA runtime
# (scripts/gpu/hip_on_cuda, built here with gcc) stands in for AMD's libamdhip64.so.7, and the
# library runs on it with HIPFILE_PLATFORM=amd HIPFILE_HIP_LIBRARY=<that library>:
#
#   build     the runtime, the C-ABI suite in HIP mode (build_suite.sh --hip), the three examples
#   check     `hipfile check`: the runtime the library chose, and why (GPU-direct absent)
#   suite     tests/c/suite.c: every group but async (--large), then the async group (8 streams x
#             100 operations included), each case bounded; then 64 streams x 2 stream-ordered
#             reads (`hipfile bench --api async --streams 64 --verify`)
#   examples  copy_file (the copy compared with cmp), batch_read and async_read (their FNV-1a
#             checksums compared with the file's)
#   stats     the statistics tool around copy_file (`hipfile stats --json -- copy_file ...`):
#             everything through the fallback, nothing through GPU-direct
#   speed     the HIP path against the CUDA path on the same GPU in the same run, interleaved,
#             with the command lines of bench.sh (T1, T4), t7_bench.sh (T7) and async_bench.sh
#             (T6, both shapes); the HIP path also with HIP_ON_CUDA_DEFAULT_STREAM=per-thread,
#             which tells the cost of the mapping (HIP's NULL stream is CUDA's legacy stream,
#             shared by every thread) from the library's own; one table with the ratios
#   queues    the async group with CUDA_DEVICE_MAX_CONNECTIONS=1, 2 and 4 (ROCm's default
#             GPU_MAX_HW_QUEUES is 4); a case that does not finish is printed as HANG (last:
#             a hang costs its case's timeout, never the rest of the run)
#
# Run from the repository root with .gpu/ carried (.gpu/bin/hipfile and .gpu/lib/libhipfile.so.0,
# as for run_all.sh); no Rust needed there:
#
#   scripts/gpu/hip_suite.sh [OUTDIR] [--phases LIST] [--budget SECONDS]
#
# OUTDIR defaults to $OUT, else ./gpu-out. LIST: comma-separated phases (default: all; build
# always runs). Every step runs under a timeout cut to what is left of the budget (default 560 s,
# within the device's 10 minutes); a step that fails prints its status and the run goes on. Test
# files go to $FILE_DIR (default /tmp/hip_suite). The last lines printed are the summary (one
# line per step) and the speed table; both are also in OUTDIR/hip_suite_summary.txt.
#
# Smaller runs (testing the script on the simulator: HIP_ON_CUDA_LIBCUDA and HIPFILE_CUDA_LIBRARY
# naming libhipsim.so, HFB_HIPFILE and HFB_LIBDIR a tool and library): HIP_SUITE_SPEED_SIZE
# (default 4G) sizes the speed file, HIP_SUITE_STREAMS64_SIZE (default 2G) the 64-stream case's,
# HIP_SUITE_LARGE= (empty) drops the suite's --large.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd -P)

out_arg=""
phases=all
budget=560
while [[ $# -gt 0 ]]; do
    case $1 in
    --phases) phases=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    -h | --help) sed -n '2,38p' "$0"; exit 0 ;;
    *) out_arg=$1; shift ;;
    esac
done
OUTDIR=${out_arg:-${OUT:-./gpu-out}}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd -P)
HF=${HFB_HIPFILE:-$root/.gpu/bin/hipfile}
LIBDIR=${HFB_LIBDIR:-$root/.gpu/lib}
FILES=${FILE_DIR:-/tmp/hip_suite}
SPEED_SIZE=${HIP_SUITE_SPEED_SIZE:-4G}
LARGE=${HIP_SUITE_LARGE---large}
STREAMS64_SIZE=${HIP_SUITE_STREAMS64_SIZE:-2G}
BIN=$FILES/bin
mkdir -p "$FILES" "$BIN"
start=$(date +%s)
summary=()

say() { echo "$*"; }
record() { summary+=("$1"); echo ">> $1"; }
want() { [[ $phases == all || ",$phases," == *",$1,"* ]]; }
left() { echo $((budget - ($(date +%s) - start))); }

# bounded SECONDS CMD...: CMD under a timeout of at most SECONDS and what is left of the budget
# (less 10 s for the summary); 124 when it timed out, 125 when no time was left to start it.
bounded() {
    local t=$1
    shift
    local l=$(($(left) - 10))
    ((l < t)) && t=$l
    if ((t < 5)); then
        echo "(not run: the time budget is spent)"
        return 125
    fi
    timeout --kill-after=5 "$t" "$@"
}

# The suite's verdict: "passed N / failed M / skipped K", or what stopped it.
suite_verdict() { # FILE RC
    local f=$1 rc=$2 line hung
    line=$(grep -E '^passed [0-9]+ / failed' "$f" | tail -1)
    hung=$(grep -E '^FAIL .*: timed out' "$f" | head -1 | sed 's/^FAIL //; s/: timed out//')
    if [[ -n $hung ]]; then
        echo "HANG in case $hung (rc $rc)"
    elif ((rc == 124 || rc == 137)); then
        echo "HANG: the run timed out (last case: $(grep -E '^(PASS|FAIL|SKIP) ' "$f" | tail -1))"
    elif [[ -n $line ]]; then
        echo "$line (rc $rc)"
    else
        echo "no result (rc $rc): $(tail -1 "$f")"
    fi
}

{
    echo "# hip_suite.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# tree: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git status --porcelain 2>/dev/null | grep -q . && echo ' (modified)')"
    echo "# library: $(readlink -f "$LIBDIR/libhipfile.so.0" 2>/dev/null) $(stat -c '%y' "$LIBDIR/libhipfile.so.0" 2>/dev/null)"
    echo "# GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
} | tee "$OUTDIR/hip_suite_header.txt"

# ---- build -----------------------------------------------------------------------------------
say "== build: the HIP-on-CUDA runtime, the C-ABI suite in HIP mode, the examples"
SHIM=""
if bounded 60 bash scripts/gpu/hip_on_cuda/build.sh "$FILES/hip_on_cuda" >"$OUTDIR/build.txt" 2>&1; then
    SHIM=$(tail -1 "$OUTDIR/build.txt")
    grep -E 'cuda_check|built against|WARNING' "$OUTDIR/build.txt"
    record "build runtime: ok ($(grep -m1 'built against' "$OUTDIR/build.txt"))"
else
    tail -20 "$OUTDIR/build.txt"
    record "build runtime: FAILED (see build.txt); nothing else can run"
fi
if [[ -n $SHIM && ! -e $HF ]]; then
    record "build: $HF is missing (carry .gpu/); the steps that need the hipfile tool will fail"
fi
if [[ -n $SHIM ]]; then
    if bounded 60 bash scripts/gpu/build_suite.sh "$BIN/suite_hip" "$LIBDIR" --hip "$SHIM" >>"$OUTDIR/build.txt" 2>&1; then
        record "build suite (HIP mode): ok"
    else
        tail -10 "$OUTDIR/build.txt"
        record "build suite (HIP mode): FAILED (see build.txt)"
    fi
    shim_dir=$(dirname "$SHIM")
    for e in copy_file batch_read async_read; do
        if ! bounded 30 gcc -std=c11 -O2 -Wall -Wextra -Werror -Iinclude "examples/$e.c" -o "$BIN/$e" \
            -L"$LIBDIR" -l:libhipfile.so.0 -L"$shim_dir" -l:libamdhip64.so.7 \
            -Wl,-rpath,"$LIBDIR" -Wl,-rpath,"$shim_dir" >>"$OUTDIR/build.txt" 2>&1; then
            record "build example $e: FAILED (see build.txt)"
        fi
    done
    # The examples' checksum (FNV-1a 64) of a file, for comparing theirs with.
    bounded 30 gcc -O2 -x c -o "$BIN/fnv1a64" - >>"$OUTDIR/build.txt" 2>&1 <<'EOF'
#include <stdint.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
    if (f == NULL)
        return 1;
    static unsigned char buf[1 << 20];
    uint64_t h = 0xcbf29ce484222325ull;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
    printf("0x%016llx\n", (unsigned long long)h);
    return 0;
}
EOF
fi
HIP_ENV=(HIPFILE_PLATFORM=amd "HIPFILE_HIP_LIBRARY=$SHIM")
CUDA_ENV=(HIPFILE_PLATFORM=nvidia)

# ---- check -----------------------------------------------------------------------------------
if [[ -n $SHIM ]] && want check; then
    say "== check: hipfile check in HIP mode"
    bounded 30 env "${HIP_ENV[@]}" HIPFILE_LOG=info "$HF" check >"$OUTDIR/check.txt" 2>&1
    rc=$?
    grep -iE 'platform|fastpath|GPU-direct|HIP [0-9]' "$OUTDIR/check.txt" | head -8
    if grep -q 'platform amd' "$OUTDIR/check.txt" || grep -qi 'HIP 7' "$OUTDIR/check.txt"; then
        record "check: rc $rc, $(grep -m1 -oE 'HIP [0-9.]+ from [^,]*, [0-9]+ device\(s\), fastpath entry points [a-z]+' "$OUTDIR/check.txt"); $(grep -m1 -oE 'fastpath not used: [^(]*' "$OUTDIR/check.txt")"
    else
        record "check: rc $rc, the HIP runtime was NOT chosen (see check.txt)"
    fi
fi

# ---- suite -----------------------------------------------------------------------------------
if [[ -x $BIN/suite_hip ]] && want suite; then
    say "== suite: the C-ABI suite in HIP mode (all groups but async, --large)"
    mkdir -p "$FILES/suite"
    bounded 240 env "${HIP_ENV[@]}" HIPFILE_LOG=warn "$BIN/suite_hip" "$FILES/suite" $LARGE --skip=async \
        >"$OUTDIR/suite_hip.txt" 2>&1
    rc=$?
    grep -E '^FAIL' "$OUTDIR/suite_hip.txt" | head -10
    sed -n '/==== summary/,$p' "$OUTDIR/suite_hip.txt"
    record "suite (HIP, --large, no async): $(suite_verdict "$OUTDIR/suite_hip.txt" $rc)"

    say "== suite: the async group in HIP mode, each case bounded"
    bounded 150 env "${HIP_ENV[@]}" HIPFILE_LOG=warn "$BIN/suite_hip" "$FILES/suite" --only=async --case-timeout=30 \
        >"$OUTDIR/suite_hip_async.txt" 2>&1
    rc=$?
    grep -E '^(PASS|FAIL|SKIP) async' "$OUTDIR/suite_hip_async.txt"
    record "suite (HIP, async group): $(suite_verdict "$OUTDIR/suite_hip_async.txt" $rc)"

    say "== 64 streams: 64 streams x 2 stream-ordered 4 MiB reads, checked against the file"
    bounded 90 env "${HIP_ENV[@]}" HIPFILE_LOG=warn "$HF" bench --file "$FILES/streams64.dat" --size "$STREAMS64_SIZE" \
        --io-size 4M --mode randread --api async --streams 64 --depth 2 --mem device --verify --repeat 1 --json \
        >"$OUTDIR/streams64.json" 2>"$OUTDIR/streams64.err"
    rc=$?
    tail -3 "$OUTDIR/streams64.err"
    if ((rc == 0)); then
        record "64 streams (HIP): verified, $(python3 -c 'import json,sys; print("%.2f GB/s" % (json.load(open(sys.argv[1]))["hipfile"]["gib_per_s"]*1.073741824))' "$OUTDIR/streams64.json" 2>/dev/null)"
    elif ((rc == 124 || rc == 137)); then
        record "64 streams (HIP): HANG (timed out)"
    else
        record "64 streams (HIP): FAILED rc $rc: $(tail -1 "$OUTDIR/streams64.err")"
    fi
    rm -f "$FILES/streams64.dat"
fi

# ---- examples --------------------------------------------------------------------------------
src=$FILES/example-src.bin
if [[ -n $SHIM ]] && { want examples || want stats; }; then
    head -c $((64 << 20)) /dev/urandom >"$src"
    want_fnv=$("$BIN/fnv1a64" "$src" 2>/dev/null)
fi
if [[ -n $SHIM ]] && want examples; then
    say "== examples in HIP mode (64 MiB file, fnv1a64 $want_fnv)"
    : >"$OUTDIR/examples.txt"
    bounded 60 env "${HIP_ENV[@]}" HIPFILE_LOG=warn "$BIN/copy_file" "$src" "$FILES/example-dst.bin" >>"$OUTDIR/examples.txt" 2>&1
    rc=$?
    if ((rc == 0)) && cmp -s "$src" "$FILES/example-dst.bin"; then
        record "example copy_file: ok (the copy is byte-exact)"
    else
        record "example copy_file: FAILED (rc $rc$( ((rc == 0)) && echo ', the copy differs'))"
    fi
    for e in batch_read async_read; do
        line=$(bounded 60 env "${HIP_ENV[@]}" HIPFILE_LOG=warn "$BIN/$e" "$src" $((1 << 20)) 2>>"$OUTDIR/examples.txt")
        rc=$?
        echo "$line" >>"$OUTDIR/examples.txt"
        echo "$line"
        if ((rc == 0)) && [[ -n $want_fnv && $line == *"fnv1a64 $want_fnv"* ]]; then
            record "example $e: ok (${line#*: })"
        else
            record "example $e: FAILED (rc $rc: $line)"
        fi
    done
fi

# ---- stats -----------------------------------------------------------------------------------
if [[ -n $SHIM ]] && want stats; then
    say "== statistics tool around copy_file in HIP mode"
    bounded 60 env "${HIP_ENV[@]}" HIPFILE_LOG=warn "$HF" stats --json -- "$BIN/copy_file" "$src" "$FILES/stats-dst.bin" \
        >"$OUTDIR/stats.json" 2>"$OUTDIR/stats.err"
    rc=$?
    verdict=$(python3 - "$OUTDIR/stats.json" $((64 << 20)) <<'PY' 2>&1
import json, sys
doc = json.loads([l for l in open(sys.argv[1]) if l.strip()][-1])
size = int(sys.argv[2])
b = doc["backends"]
fb, fp = b["fallback"], b["fastpath"]
print("fallback read %d B / write %d B, fastpath read %d B / write %d B" % (
    fb["read"]["bytes"], fb["write"]["bytes"], fp["read"]["bytes"], fp["write"]["bytes"]))
ok = fb["read"]["bytes"] == size and fb["write"]["bytes"] == size and fp["read"]["bytes"] == 0 and fp["write"]["bytes"] == 0
sys.exit(0 if ok else 1)
PY
    )
    vrc=$?
    echo "$verdict"
    if ((rc == 0 && vrc == 0)); then
        record "stats: ok ($verdict)"
    else
        record "stats: FAILED (rc $rc: $verdict $(tail -1 "$OUTDIR/stats.err"))"
    fi
fi

# ---- speed -----------------------------------------------------------------------------------
if [[ -n $SHIM ]] && want speed; then
    say "== speed: the HIP path against the CUDA path (median of 3 each, interleaved)"
    big=$FILES/speed.dat
    lat=$FILES/speed-lat.dat
    bounded 90 env "${CUDA_ENV[@]}" "$HF" bench --file "$big" --size "$SPEED_SIZE" --io-size 1G --repeat 1 >/dev/null 2>"$OUTDIR/speed.err"
    bounded 30 env "${CUDA_ENV[@]}" "$HF" bench --file "$lat" --size 64M --io-size 4K --mode randread --repeat 1 \
        >/dev/null 2>>"$OUTDIR/speed.err"
    run() { # NAME ARGS...: each configuration once, CUDA first
        local name=$1 cfg
        shift
        for cfg in cuda hip hip_pt; do
            local envs=("${CUDA_ENV[@]}")
            [[ $cfg == hip ]] && envs=("${HIP_ENV[@]}")
            [[ $cfg == hip_pt ]] && envs=("${HIP_ENV[@]}" HIP_ON_CUDA_DEFAULT_STREAM=per-thread)
            if ! bounded 60 env "${envs[@]}" HIPFILE_LOG=warn "$HF" bench --json --repeat 3 --mem device "$@" \
                >"$OUTDIR/speed_${name}_$cfg.json" 2>>"$OUTDIR/speed.err"; then
                echo "$name $cfg: FAILED or timed out (see speed.err)"
                rm -f "$OUTDIR/speed_${name}_$cfg.json"
            fi
        done
    }
    run T1 --file "$big" --size "$SPEED_SIZE" --io-size 1G
    run T4 --file "$lat" --size 64M --io-size 4K --mode randread --threads 1
    run T7 --file "$big" --size "$SPEED_SIZE" --io-size 1M --mode randread --api batch --batch-depth 128
    run T6_1x8 --file "$big" --size "$SPEED_SIZE" --io-size 64M --api async --streams 1 --depth 8
    run T6_8x1 --file "$big" --size "$SPEED_SIZE" --io-size 64M --api async --streams 8 --depth 1
    python3 - "$OUTDIR" >"$OUTDIR/speed.txt" <<'PY'
import json, os, sys
d = sys.argv[1]
def get(name, cfg, key):
    try:
        h = json.load(open(os.path.join(d, "speed_%s_%s.json" % (name, cfg))))["hipfile"]
    except Exception:
        return None
    v = h.get(key)
    return v * 1.073741824 if key == "gib_per_s" and v is not None else v
rows = [("T1", "1 GiB reads, GB/s", "T1", "gib_per_s", True),
        ("T4", "4 KiB p50, us", "T4", "p50_latency_us", False),
        ("T4", "4 KiB p99, us", "T4", "p99_latency_us", False),
        ("T7", "batch 128 x 1 MiB, GB/s", "T7", "gib_per_s", True),
        ("T6", "64 MiB, 1 stream x 8, GB/s", "T6_1x8", "gib_per_s", True),
        ("T6", "64 MiB, 8 streams x 1, GB/s", "T6_8x1", "gib_per_s", True)]
fmt = lambda v: "%.2f" % v if v is not None else "-"
def ratio(h, c, higher):
    if h is None or c is None or c == 0:
        return "-", ""
    r = h / c
    ok = r >= 0.95 if higher else r <= 1 / 0.95
    return "%.2fx" % r, "" if ok else " <"
print("%-3s %-28s %9s %9s %9s %9s %9s" % ("T", "measure", "CUDA", "HIP", "HIP/CUDA", "HIP(pt)", "pt/CUDA"))
for t, label, name, key, higher in rows:
    c, h, p = get(name, "cuda", key), get(name, "hip", key), get(name, "hip_pt", key)
    r1, m1 = ratio(h, c, higher)
    r2, m2 = ratio(p, c, higher)
    print("%-3s %-28s %9s %9s %9s %9s %9s" % (t, label, fmt(c), fmt(h), r1 + m1, fmt(p), r2 + m2))
print("target: HIP >= 0.95x CUDA (latency: <= 1.05x); '<' marks a miss. HIP(pt): the NULL stream")
print("mapped to CUDA's per-thread stream instead of the legacy stream (HIP_ON_CUDA_DEFAULT_STREAM).")
PY
    cat "$OUTDIR/speed.txt"
    record "speed: table in speed.txt ($(grep -c ' <' "$OUTDIR/speed.txt") row(s) below target)"
    rm -f "$big" "$lat"
fi

# ---- queues ----------------------------------------------------------------------------------
if [[ -x $BIN/suite_hip ]] && want queues; then
    for n in 1 2 4; do
        say "== async group in HIP mode with CUDA_DEVICE_MAX_CONNECTIONS=$n"
        bounded 100 env "${HIP_ENV[@]}" HIPFILE_LOG=warn CUDA_DEVICE_MAX_CONNECTIONS=$n "$BIN/suite_hip" "$FILES/suite" \
            --only=async --case-timeout=25 >"$OUTDIR/queues_$n.txt" 2>&1
        rc=$?
        grep -E '^(FAIL|SKIP) async' "$OUTDIR/queues_$n.txt" | head -5
        record "queues CUDA_DEVICE_MAX_CONNECTIONS=$n (HIP, async group): $(suite_verdict "$OUTDIR/queues_$n.txt" $rc)"
    done
fi

# ---- summary ---------------------------------------------------------------------------------
{
    echo
    echo "==================== hip_suite.sh summary ($(($(date +%s) - start)) s) ===================="
    cat "$OUTDIR/hip_suite_header.txt"
    for l in "${summary[@]}"; do echo "$l"; done
    [[ -s $OUTDIR/speed.txt ]] && { echo; cat "$OUTDIR/speed.txt"; }
} | tee "$OUTDIR/hip_suite_summary.txt"
rm -rf "$FILES/suite" "$FILES"/example-*.bin "$FILES/stats-dst.bin"
