#!/usr/bin/env bash
# GPU benchmark orchestrator for hipfile: targets T1-T5, T7, T11 and T13 (the README's performance table), side by side with
# plain C (scripts/gpu/baselines.c), KvikIO (scripts/gpu/kvikio_bench.py) and cuFile
# (scripts/gpu/cufile_probe.py), on one file, in one run. Run from the repository root on the GPU machine:
#
#   bash scripts/gpu/bench.sh [--quick] [--budget SECONDS] [--phases LIST] [--clean] [--previous DIR] [FILE_DIR|auto]
#
#   --quick        1 GiB file, fewer repeats, no optional steps (a first smoke run, ~2 minutes)
#   --budget S     wall-clock budget for the whole run (default 530 full, 300 quick); every step's
#                  timeout is cut to what is left, and steps are skipped once it is spent
#   --phases LIST  comma list of: copy,warm,first,lat,kvikio,cold,write,cufile,extra (default: all)
#   --clean        remove the test files at the end (default: keep them for a re-run)
#   --size-g N     test file of N GiB instead of 8 (1 with --quick): for testing this script
#   --previous DIR another build laid out like .gpu (scripts/gpu/stage.sh --rev REV DIR): after T1,
#                  T1 once more for each build in turns, three rounds, previous first; the summary
#                  prints both medians and their ratio (is a change within noise?)
#   FILE_DIR       directory for the test files (default auto: first ext4/xfs directory with room)
#
# Needs: .gpu/bin/hipfile and .gpu/lib/libhipfile.so.0 (prebuilt by scripts/gpu/stage.sh), gcc and CUDA's libcuda, python3
# with cupy; .whl/*.whl for KvikIO (installed to /tmp/site). Writes to $OUT (default ./gpu-out):
# bench.log (everything), summary.txt (the table), results.json, raw.tar.gz (every step's output).
set -u
set -o pipefail

QUICK=0
FILE_DIR=auto
BUDGET_S=
PHASES=all
CLEAN=0
PREV=
SIZE_G_OVERRIDE=
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --budget) BUDGET_S=${2:?}; shift ;;
        --budget=*) BUDGET_S=${1#*=} ;;
        --phases) PHASES=${2:?}; shift ;;
        --phases=*) PHASES=${1#*=} ;;
        --size-g) SIZE_G_OVERRIDE=${2:?}; shift ;;
        --keep-files) CLEAN=0 ;;
        --clean) CLEAN=1 ;;
        --previous) PREV=${2:?}; shift ;;
        --previous=*) PREV=${1#*=} ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        -*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
        *) FILE_DIR=$1 ;;
    esac
    shift
done

if [ ! -f scripts/gpu/bench.sh ]; then
    echo "bench.sh: run me from the repository root (scripts/gpu/bench.sh not found in $(pwd))" >&2
    exit 2
fi
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT" || { echo "bench.sh: cannot create OUT=$OUT" >&2; exit 2; }
LOG=$OUT/bench.log
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
TEE_PID=$!
export PYTHONUNBUFFERED=1 LC_ALL=C

if [ "$QUICK" = 1 ]; then
    SIZE_G=1; REP=2; REP_COLD=1; REP_W=1; KV_REPEAT=2; : "${BUDGET_S:=300}"
else
    SIZE_G=8; REP=3; REP_COLD=2; REP_W=2; KV_REPEAT=3; : "${BUDGET_S:=530}"
fi
[ -n "$SIZE_G_OVERRIDE" ] && SIZE_G=$SIZE_G_OVERRIDE
SIZE=$((SIZE_G << 30))
LAT_SIZE=$((64 << 20))
RESERVE=20 # seconds kept for the summary at the end

T0=$(date +%s)
RAW=$(mktemp -d "${TMPDIR:-/tmp}/hfbench-raw.XXXXXX") || { echo "bench.sh: mktemp failed"; exit 2; }
mkdir -p "$RAW/bin"
: > "$RAW/steps.tsv"
HF=${HFB_HIPFILE:-$ROOT/.gpu/bin/hipfile}      # overridable for local tests
HF_LIBDIR=${HFB_LIBDIR:-$ROOT/.gpu/lib}
BL=$RAW/bin/baselines
PY=python3

elapsed() { echo $(( $(date +%s) - T0 )); }
remaining() { echo $(( BUDGET_S - ($(date +%s) - T0) )); }
phase_on() { [ "$PHASES" = all ] || [[ ",$PHASES," == *",$1,"* ]]; }
eff_limit() { # eff_limit WANTED -> min(WANTED, what the budget leaves)
    local rem=$(( $(remaining) - RESERVE ))
    [ "$1" -lt "$rem" ] && echo "$1" || echo "$rem"
}
say() { echo "[bench +$(elapsed)s] $*"; }

show() { # show FILE [PREFIX]: print a log, trimmed to its head and tail when long
    local f=$1 p=${2:-}
    [ -s "$f" ] || return 0
    local n
    n=$(wc -l < "$f")
    if [ "$(head -c 1 "$f")" = "{" ] && $PY -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":")))' "$f" > "$f.compact" 2>/dev/null; then
        awk -v p="  $p" '{print p $0}' "$f.compact"  # a JSON document: shown on one line
        rm -f "$f.compact"
        return 0
    fi
    rm -f "$f.compact"
    if [ "$n" -le 120 ]; then
        awk -v p="  $p" '{print p $0}' "$f"
    else
        head -n 70 "$f" | awk -v p="  $p" '{print p $0}'
        echo "  $p... ($((n - 110)) lines omitted; whole file $(basename "$f") in raw.tar.gz) ..."
        tail -n 40 "$f" | awk -v p="  $p" '{print p $0}'
    fi
}

# step NAME LIMIT CMD...: run CMD under `timeout`, stdout -> RAW/NAME.out, stderr -> RAW/NAME.err
step() {
    local name=$1 limit
    limit=$(eff_limit "$2")
    shift 2
    if [ "$limit" -lt 8 ]; then
        echo "### [$name] SKIPPED: global budget spent (elapsed $(elapsed)s of ${BUDGET_S}s)"
        printf '%s\t-\t0\tskipped\n' "$name" >> "$RAW/steps.tsv"
        return 99
    fi
    echo
    echo "### [$name] start at +$(elapsed)s, limit ${limit}s: $*"
    local s e rc st dt
    s=$(date +%s.%N)
    timeout -k 5 "$limit" "$@" > "$RAW/$name.out" 2> "$RAW/$name.err" < /dev/null
    rc=$?
    e=$(date +%s.%N)
    dt=$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f", b - a}')
    case $rc in 0) st=ok ;; 124|137) st=TIMEOUT ;; *) st=FAIL ;; esac
    show "$RAW/$name.out"
    show "$RAW/$name.err" "err| "
    printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$dt" "$st" >> "$RAW/steps.tsv"
    echo "### [$name] $st rc=$rc in ${dt}s (elapsed $(elapsed)s of ${BUDGET_S}s)"
    return $rc
}

have_bl() { [ -x "$BL" ]; }
have_hf() { [ -x "$HF" ]; }

drop_cache() { # drop_cache FILE
    if have_bl; then timeout 120 "$BL" -f "$1" dropcache
    else timeout 120 $PY scripts/gpu/gpuutil.py dropcache "$1"; fi
    local rc=$?
    [ $rc -eq 0 ] || say "WARNING: dropping the page cache failed or left the file resident (rc=$rc): cold figures are not cold"
    return $rc
}
ensure_warm() { # ensure_warm FILE
    if have_bl; then timeout 180 "$BL" -f "$1" warm 16
    else timeout 180 $PY scripts/gpu/gpuutil.py warm "$1" 16; fi || say "WARNING: could not bring $1 into the page cache"
}
check_main_file() {
    local sz
    sz=$(stat -c %s "$F" 2>/dev/null || echo 0)
    if [ "$sz" != "$SIZE" ]; then
        say "WARNING: $F has $sz bytes, expected $SIZE (did a step truncate it?): re-creating"
        make_file "$F" "$SIZE" mkfile_again
    fi
}
make_file() { # make_file PATH SIZE STEPNAME
    if have_bl; then step "$3" 150 "$BL" -f "$1" -s "$2" mkfile 8
    else step "$3" 240 $PY scripts/gpu/gpuutil.py mkfile "$1" "$2"; fi
}
dd_result() { # dd_result STEPNAME MODE TAG COLD: turn dd's summary line into a RESULT line
    local name=$1 line
    line=$(awk -v mode="$2" -v tag="$3" -v cold="$4" '/copied/ {
            b = $1; s = 0
            for (i = 2; i <= NF; i++) if ($i == "s," || $i == "s") s = $(i - 1)
            if (s > 0) printf "RESULT mode=%s threads=1 chunk=67108864 bytes=%.0f seconds=%.6f gbps=%.3f cold=%d tag=%s\n", mode, b, s, b / s / 1e9, cold, tag
        }' "$RAW/$name.err" | tail -n 1)
    if [ -n "$line" ]; then echo "$line" | tee -a "$RAW/$name.out"; else say "could not parse dd output of $name"; fi
}
hf_in() { # hf_in LIBDIR STEPNAME LIMIT [VAR=VALUE...] ARGS...: run a command with LIBDIR on the library path
    local libdir=$1 name=$2 lim=$3
    shift 3
    step "$name" "$lim" env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
}
hf() { # hf STEPNAME LIMIT [VAR=VALUE...] ARGS...: run the hipfile CLI with our library on the path
    if ! have_hf; then
        echo "### [$1] SKIPPED: $HF missing"
        printf '%s\t-\t0\tskipped\n' "$1" >> "$RAW/steps.tsv"
        return 99
    fi
    hf_in "$HF_LIBDIR" "$@"
}

finalized=0
finalize() {
    [ "$finalized" = 1 ] && return
    finalized=1
    echo
    say "summary"
    timeout 60 $PY scripts/gpu/summarize.py --raw "$RAW" --out "$OUT" || say "summarize.py failed (rc=$?)"
    # cap very long logs, then pack every step's output
    for f in "$RAW"/*.out "$RAW"/*.err; do
        [ -f "$f" ] || continue
        if [ "$(stat -c %s "$f")" -gt $((4 << 20)) ]; then
            { head -c $((1 << 20)) "$f"; printf '\n... [trimmed] ...\n'; tail -c $((2 << 20)) "$f"; } > "$f.trim" && mv "$f.trim" "$f"
        fi
    done
    timeout 60 tar -czf "$OUT/raw.tar.gz" -C "$RAW" --exclude=./bin . 2>/dev/null || say "tar failed"
    if [ "$CLEAN" = 1 ] && [ -n "${F:-}" ]; then rm -f "$F" "$LATF" "$W"; fi
    rm -f "${W:-/nonexistent}"
    say "done: $OUT/bench.log, $OUT/summary.txt, $OUT/results.json, $OUT/raw.tar.gz (raw dir $RAW)"
}
trap finalize EXIT
trap 'say "interrupted"; exit 130' INT TERM

# ------------------------------------------------------------------------------------------------
say "hipfile GPU benchmark: mode=$([ $QUICK = 1 ] && echo quick || echo full) size=${SIZE_G}GiB budget=${BUDGET_S}s phases=$PHASES OUT=$OUT"

# -- where the files go ---------------------------------------------------------------------------
need_kb=$(( (2 * SIZE + (2 << 30)) / 1024 ))
pick_dir() {
    local d fs av fallback=""
    for d in /mnt /mnt/* /data /scratch /workspace /var/tmp /root /tmp "$ROOT" /; do
        [ -d "$d" ] && [ -w "$d" ] || continue
        fs=$(stat -f -c %T "$d" 2>/dev/null)
        av=$(df -Pk "$d" 2>/dev/null | awk 'NR==2 {print $4}')
        [ -n "$av" ] && [ "$av" -ge "$need_kb" ] || continue
        case "$fs" in
            ext2/ext3|ext4|xfs) echo "$d/hfbench"; return 0 ;;
            tmpfs|ramfs) ;;
            *) [ -z "$fallback" ] && fallback="$d/hfbench" ;;
        esac
    done
    [ -n "$fallback" ] && echo "$fallback"
}
if [ "$FILE_DIR" = auto ]; then
    FILE_DIR=$(pick_dir)
    [ -n "$FILE_DIR" ] || { say "FATAL: no writable directory with $((need_kb >> 20)) GiB free"; exit 3; }
fi
mkdir -p "$FILE_DIR" || { say "FATAL: cannot create $FILE_DIR"; exit 3; }
F=$FILE_DIR/hfbench_${SIZE_G}g.dat
LATF=$FILE_DIR/hfbench_lat64m.dat
W=$FILE_DIR/hfbench_write.dat
FSTYPE=$(stat -f -c %T "$FILE_DIR")
say "test files in $FILE_DIR (filesystem $FSTYPE): $F, $LATF; writes to $W"
case "$FSTYPE" in ext2/ext3|ext4|xfs) ;; *) say "WARNING: $FILE_DIR is on $FSTYPE, not ext4/xfs: cold-cache and O_DIRECT figures may not mean the disk" ;; esac
AVAIL_KB=$(df -Pk "$FILE_DIR" | awk 'NR==2 {print $4}')
if [ "${AVAIL_KB:-0}" -lt "$need_kb" ] && [ ! -f "$F" ]; then
    say "FATAL: $FILE_DIR has $((AVAIL_KB >> 20)) GiB free, need $((need_kb >> 20)) GiB"; exit 3
fi

# -- preflight ------------------------------------------------------------------------------------
echo "### [preflight]"
{
    echo "date: $(date -u +%FT%TZ)  host: $(hostname)  kernel: $(uname -r)  cpus: $(nproc)"
    free -g | sed 's/^/  /'
    df -hT "$FILE_DIR" | sed 's/^/  /'
    timeout 10 findmnt -T "$FILE_DIR" -o SOURCE,FSTYPE,OPTIONS 2>/dev/null | sed 's/^/  /'
    dev=$(df -P "$FILE_DIR" | awk 'NR==2 {print $1}'); blk=$(basename "$(readlink -f "$dev" 2>/dev/null || echo "$dev")")
    for q in scheduler max_sectors_kb nr_requests read_ahead_kb rotational; do
        for p in /sys/block/$blk/queue/$q /sys/class/block/$blk/../queue/$q; do
            [ -r "$p" ] && { echo "  $blk queue/$q: $(cat "$p")"; break; }
        done
    done
    echo "  vm.dirty_ratio=$(cat /proc/sys/vm/dirty_ratio 2>/dev/null) dirty_background_ratio=$(cat /proc/sys/vm/dirty_background_ratio 2>/dev/null)  memlock: $(ulimit -l)"
    timeout 20 nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,memory.total,memory.used --format=csv 2>&1 | sed 's/^/  /' || echo "  nvidia-smi failed"
    echo "  python: $($PY --version 2>&1) at $(command -v $PY)"
    echo "  gcc: $(gcc --version 2>/dev/null | head -n 1)  cuda.h: $(ls /usr/local/cuda/include/cuda.h 2>/dev/null || echo absent)"
    echo "  uid: $(id -u)  drop_caches writable: $([ -w /proc/sys/vm/drop_caches ] && echo yes || echo no)"
    if have_hf; then
        echo "  hipfile: $HF"
        ls -la "$ROOT/.gpu/lib" 2>&1 | sed 's/^/    /'
        LD_LIBRARY_PATH="$HF_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$HF" 2>&1 | sed 's/^/    ldd: /'
        LD_LIBRARY_PATH="$HF_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 20 "$HF" --version 2>&1 | head -n 5 | sed 's/^/    /'
        LD_LIBRARY_PATH="$HF_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 20 "$HF" bench --help 2>&1 | head -n 40 | sed 's/^/    /'
    else
        echo "  hipfile: MISSING ($HF): our library's steps will be skipped"
    fi
    ls .whl/*.whl 2>/dev/null | sed 's/^/  wheel: /' || echo "  no .whl/ wheels: KvikIO will be skipped unless already installed"
} 2>&1
if have_hf; then
    hf check_hipfile 30 HIPFILE_LOG=info "$HF" check
fi

# -- build ----------------------------------------------------------------------------------------
CFLAGS="-O2 -std=c11 -D_GNU_SOURCE -pthread -Wall"
# CUDA's header, and its link stub where libcuda.so (unversioned) is missing: for linking only,
# the programs still load the driver's libcuda.so.1 at run time.
cuda_inc() { [ -f /usr/local/cuda/include/cuda.h ] && echo "-I/usr/local/cuda/include"; }
cuda_stub() {
    local d
    for d in /usr/local/cuda/lib64/stubs /usr/local/cuda/targets/x86_64-linux/lib/stubs; do
        [ -f "$d/libcuda.so" ] && { echo "-L$d"; return; }
    done
}
build_bl() {
    local inc libs
    inc=$(cuda_inc)
    libs="-lcuda $(cuda_stub)"
    echo "gcc $CFLAGS $inc scripts/gpu/baselines.c -o $BL -lcuda (libs: $libs)"
    # shellcheck disable=SC2086
    if gcc $CFLAGS $inc scripts/gpu/baselines.c -o "$BL" -lcuda 2>&1; then return 0; fi
    # shellcheck disable=SC2086
    if gcc $CFLAGS $inc scripts/gpu/baselines.c -o "$BL" $libs 2>&1; then return 0; fi
    echo "retrying without <cuda.h> (own prototypes)"
    # shellcheck disable=SC2086
    gcc $CFLAGS -DBL_NO_CUDA_H scripts/gpu/baselines.c -o "$BL" $libs 2>&1
}
export -f cuda_inc cuda_stub build_bl 2>/dev/null
export CFLAGS BL
if step build 90 bash -c build_bl; then
    step build_check 20 "$BL" -f "$BL" resident || { say "WARNING: the baselines binary does not run: removed"; rm -f "$BL"; }
fi
have_bl || say "WARNING: no C baselines (their rows will be missing); file creation and cache control fall back to python"
# T11's program links our library: the first read of a fresh process, and what its set-up costs the driver.
FR=$RAW/bin/first_read
build_fr() {
    # shellcheck disable=SC2046,SC2086
    gcc $CFLAGS -Iinclude $(cuda_inc) scripts/gpu/first_read.c -o "$FR" -L"$HF_LIBDIR" -l:libhipfile.so.0 -Wl,-rpath,"$HF_LIBDIR" $(cuda_stub) -lcuda 2>&1
}
export -f build_fr 2>/dev/null
export FR HF_LIBDIR
if phase_on first; then
    step build_first_read 60 bash -c build_fr || rm -f "$FR"
fi

# -- KvikIO wheels --------------------------------------------------------------------------------
KV_PYTHONPATH=${PYTHONPATH:-}
if phase_on kvikio && ls .whl/*.whl > /dev/null 2>&1; then
    step kvikio_install 120 $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && KV_PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

# -- test files -----------------------------------------------------------------------------------
if [ -f "$F" ] && [ "$(stat -c %s "$F")" = "$SIZE" ] && [ -f "$F.ok" ]; then
    say "reusing $F"
else
    rm -f "$F.ok"
    if make_file "$F" "$SIZE" mkfile; then touch "$F.ok"; else say "FATAL: could not create $F"; exit 4; fi
fi
if [ ! -f "$LATF" ] || [ "$(stat -c %s "$LATF")" != "$LAT_SIZE" ]; then
    make_file "$LATF" "$LAT_SIZE" mkfile_lat || say "WARNING: could not create $LATF"
fi
rm -f "$W"

# -- 1. copy engine -------------------------------------------------------------------------------
if phase_on copy && have_bl; then
    step c_copy 60 "$BL" -t copy copy
fi

# -- 2. warm page cache -> device -----------------------------------------------------------------
if phase_on warm; then
    ensure_warm "$F"
    hf hipfile_T1 150 "HIPFILE_LOG=${HF_LOG:-info}" "$HF" bench --file "$F" --size "${SIZE_G}G" --io-size 1G --mem device --compare --json --repeat "$REP"
    check_main_file
    # T1 of the previous build and of this one in turns, on the same warm file: a change is within
    # noise when the two medians differ by less than the rounds of one build differ among themselves.
    if [ -n "$PREV" ] && have_hf; then
        if [ -x "$PREV/bin/hipfile" ]; then
            say "T1 in turns with the previous build in $PREV ($(cat "$PREV/BUILD" 2>/dev/null || echo 'build unknown')) and this one ($(cat "$ROOT/.gpu/BUILD" 2>/dev/null || echo 'build unknown'))"
            for r in 1 2 3; do
                for side in prev this; do
                    if [ "$side" = prev ]; then bin=$PREV/bin/hipfile lib=$PREV/lib; else bin=$HF lib=$HF_LIBDIR; fi
                    hf_in "$lib" "hipfile_T1ab_${side}_$r" 60 "HIPFILE_LOG=warn" "$bin" bench --file "$F" --size "${SIZE_G}G" --io-size 1G --mem device --json --repeat "$REP"
                done
            done
        else
            say "WARNING: --previous $PREV has no bin/hipfile: T1 in turns skipped"
        fi
    fi
    # T7: batches of 128 x 1 MiB random reads of the same warm file.
    hf hipfile_T7 90 "HIPFILE_LOG=${HF_LOG_LAT:-warn}" "$HF" bench --file "$F" --size "${SIZE_G}G" --io-size 1M --mode randread --api batch --batch-depth 128 --mem device --json --repeat "$REP"
    if have_bl; then
        ensure_warm "$F"
        step c_preadN8 45 "$BL" -f "$F" -r "$REP" -t warm preadN 8 16M
        step c_preadN16 45 "$BL" -f "$F" -r "$REP" -t warm preadN 16 16M
        step c_preadN16_own 45 "$BL" -f "$F" -r "$REP" -t warm -S preadN 16 16M
        step c_pread1 60 "$BL" -f "$F" -r $((REP > 2 ? 2 : REP)) -t warm pread1 64M
    fi
fi

# -- 2b. the first read of a fresh process (T11) ---------------------------------------------------
if phase_on first && [ -x "${FR:-}" ]; then
    ensure_warm "$F"
    step c_pinprobe 30 "$FR" pinprobe
    for i in 1 2 3; do
        step "first_read_$i" 30 env "HIPFILE_LOG=${HF_LOG_LAT:-warn}" "$FR" first "$F" $((1 << 30))
    done
fi

# -- 3. 4 KiB latency -----------------------------------------------------------------------------
if phase_on lat; then
    ensure_warm "$LATF"
    if have_bl; then
        step c_lat4k 30 "$BL" -f "$LATF" -n 20000 -t lat lat4k
        step c_lat4kN16 40 "$BL" -f "$LATF" -n 20000 -t lat lat4kN 16
        step c_lat4kN16_own 40 "$BL" -f "$LATF" -n 20000 -t lat -S lat4kN 16
    fi
    hf hipfile_T4 60 "HIPFILE_LOG=${HF_LOG_LAT:-warn}" "$HF" bench --file "$LATF" --size 64M --io-size 4K --mode randread --threads 1 --mem device --compare --json --repeat "$REP"
    hf hipfile_T5 60 "HIPFILE_LOG=${HF_LOG_LAT:-warn}" "$HF" bench --file "$LATF" --size 64M --io-size 4K --mode randread --threads 16 --mem device --compare --json --repeat "$REP"
fi

# -- 4. KvikIO ------------------------------------------------------------------------------------
if phase_on kvikio; then
    ensure_warm "$F"
    lim=$(eff_limit 240)
    step kvikio "$lim" env PYTHONPATH="$KV_PYTHONPATH" $PY scripts/gpu/kvikio_bench.py --file "$F" --write-file "$W" \
        --lat-file "$LATF" --threads 1,8,16 --repeat "$KV_REPEAT" --write-repeat 1 --lat-ops 2000 \
        --budget $((lim > 20 ? lim - 10 : 10)) --worker-timeout 120
    rm -f "$W"
    check_main_file
fi

# -- 5. cold page cache: interleaved (16 buffered readers, 16 O_DIRECT readers, hipfile; three times),
# since the virtual disk drifts; T2 compares the medians.
if phase_on cold; then
    for i in 1 2 3; do
        if have_bl; then
            step "c_preadN16_cold_$i" 60 "$BL" -f "$F" -r 1 -c -t cold preadN 16 16M
            step "c_direct16_$i" 60 "$BL" -f "$F" -r 1 -c -t cold direct 16 16M
        fi
        hf "hipfile_T2_$i" 60 "HIPFILE_LOG=${HF_LOG:-info}" "$HF" bench --file "$F" --size "${SIZE_G}G" --io-size 1G --mem device --drop-cache --json --repeat 1
        check_main_file
    done
fi

# -- 6. writes (durable) --------------------------------------------------------------------------
if phase_on write; then
    ensure_warm "$F"
    hf hipfile_T3 150 "HIPFILE_LOG=${HF_LOG:-info}" "$HF" bench --file "$W" --size "${SIZE_G}G" --io-size 1G --mem device --mode write --compare --json --repeat "$REP_W"
    rm -f "$W"
    if have_bl; then
        step c_writeN16 60 "$BL" -f "$W" -s "$SIZE" -r "$REP_W" -t write writeN 16 16M; rm -f "$W"
        step c_dwriteN16 60 "$BL" -f "$W" -s "$SIZE" -r 1 -t write dwriteN 16 16M; rm -f "$W"
    fi
    step dd_write_direct 60 dd if="$F" of="$W" bs=64M count=$((SIZE >> 26)) oflag=direct conv=fdatasync \
        && dd_result dd_write_direct dd_write direct 0
    rm -f "$W"
fi

# -- 7. cuFile ------------------------------------------------------------------------------------
if phase_on cufile; then
    lim=$(eff_limit 150)
    step cufile_probe "$lim" $PY scripts/gpu/cufile_probe.py --file "$F" --size 1G --timeout 30 --budget $((lim > 20 ? lim - 10 : 10))
fi

# -- 8. optional extras (full mode): zero-copy experiment, deeper O_DIRECT, tuned KvikIO, knob sweep
if [ "$QUICK" = 0 ] && phase_on extra; then
    if have_bl; then
        ensure_warm "$F"
        step c_mmapreg16 90 "$BL" -f "$F" -r 2 -t zc mmapreg 16 64M
        step c_lat4k_whole 30 "$BL" -f "$F" -n 20000 -t whole lat4k
        step c_direct32 60 "$BL" -f "$F" -r 1 -c -t cold direct 32 16M
        step c_direct8_64M 60 "$BL" -f "$F" -r 1 -c -t cold direct 8 64M
    fi
    ensure_warm "$F"
    if have_hf; then
        for cfg in "thr4:HIPFILE_IO_THREADS=4" "thr8:HIPFILE_IO_THREADS=8" "thr16:HIPFILE_IO_THREADS=16" \
                   "thr32:HIPFILE_IO_THREADS=32" "chunk4M:HIPFILE_CHUNK_SIZE=4194304" \
                   "chunk16M:HIPFILE_CHUNK_SIZE=16777216" "chunk64M:HIPFILE_CHUNK_SIZE=67108864" \
                   "thr16_chunk64M:HIPFILE_IO_THREADS=16 HIPFILE_CHUNK_SIZE=67108864" \
                   "bounce2G:HIPFILE_BOUNCE_BUDGET=2147483648"; do
            [ "$(remaining)" -gt $((RESERVE + 70)) ] || { say "sweep: budget low, stopping"; break; }
            # shellcheck disable=SC2086
            hf "hipfile_sweep_${cfg%%:*}" 40 ${cfg#*:} HIPFILE_LOG=warn "$HF" bench --file "$F" --size "${SIZE_G}G" --io-size 1G --mem device --json --repeat 2
        done
        check_main_file
    fi
    if phase_on kvikio && [ "$(remaining)" -gt $((RESERVE + 60)) ]; then
        ensure_warm "$F"
        lim=$(eff_limit 150)
        step kvikio_extra "$lim" env PYTHONPATH="$KV_PYTHONPATH" $PY scripts/gpu/kvikio_bench.py --file "$F" --write-file "$W" \
            --threads "" --extra --repeat "$KV_REPEAT" --budget $((lim > 20 ? lim - 10 : 10)) --worker-timeout 60
        rm -f "$W"
    fi
fi

say "all steps done"
finalize
exec 1>&- 2>&-
wait "$TEE_PID" 2>/dev/null
exit 0
