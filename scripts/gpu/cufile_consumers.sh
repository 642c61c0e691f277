#!/usr/bin/env bash
# cuFile consumers on hipfile's libcufile.so.0, each with LD_PRELOAD of it, on an NVIDIA GPU
# machine; one table at the end. Run from the repository root (about 3-4 minutes):
#
#   bash scripts/gpu/cufile_consumers.sh [FILE_DIR]
#
# Needs: .gpu/lib/libhipfile.so.0 and .gpu/lib/libcufile.so.0 (release builds; see below), gcc,
# python3 with torch (CUDA build with cuFile), cupy and cuda.bindings, and for KvikIO either the
# kvikio-cu13 package or its wheels in .whl/ (installed into /tmp/site, no network needed).
# FILE_DIR (default: the first writable ext4/xfs directory with 17 GiB free among /mnt /data
# /scratch /workspace /var/tmp /root /tmp and the repository) holds the 8 GiB test file and the
# 8 GiB written copies (removed at the end).
#
# Build the two libraries (on any x86-64 Linux machine with Rust): bash scripts/gpu/stage.sh
#
# Rows (each a process with LD_PRELOAD=.gpu/lib/libcufile.so.0; each also checks that the only
# libcufile the process mapped is ours):
#   torch        torch.cuda.gds.GdsFile save_storage then load_storage of a 1 GiB tensor, byte-exact
#   kvikio       KvikIO, KVIKIO_COMPAT_MODE=OFF (through cuFile, i.e. us) against KvikIO's own
#                compat mode (ON) in the same run on the same 8 GiB file: read into a cupy array
#                (best of 3, page cache warm), byte-exact; write from cupy, byte-exact; GB/s of
#                the best configuration of each side (thread count and task size: KV_OFF and
#                KV_ON list them as THREADS:TASK_MIB) and the ratio
#   bindings     cuda.bindings.cufile (the installed one; CUDA 13.0's allocates cuFile 1.15's
#                structures): version, parameters closed and open, open, register, write, read
#                (aligned and not), statistics levels 1-3 into the binding's own structures after
#                real I/O (their bytes read through the buffer protocol, _data or ptr, whichever
#                the binding has), BAR size against sysfs, batch, stream; its table is in the log
#   C suite      tests/c/cufile_suite.c on real CUDA memory (libcuda.so.1)
#   layouts      tests/c/cufile_layouts.c compiled for cuFile 1.15 and 1.19 consumers: every
#                output structure at the end of a page before a PROT_NONE page, on real memory
#   compare      scripts/gpu/cufile_compare.py: NVIDIA's libcufile.so.0 from the Python
#                environment and ours side by side, without LD_PRELOAD (each loaded by path in
#                a process of its own); its table goes to $OUT/cufile_compare.txt
# Output: $OUT (default ./gpu-out)/cufile_consumers.txt (everything) and the table on stdout.
# KV_SIZE=BYTES shrinks the KvikIO file (default 8 GiB) for a first smoke run.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
LOG="$OUT/cufile_consumers.txt"; : > "$LOG"
PY=${PY:-python3}
LIB=$(cd .gpu/lib 2>/dev/null && pwd -P) || { echo "no .gpu/lib"; exit 2; }
CUFILE="$LIB/libcufile.so.0"
for f in "$CUFILE" "$LIB/libhipfile.so.0"; do
    [ -f "$f" ] || { echo "missing $f (see the build lines at the top of this script)"; exit 2; }
done
[ -e "$LIB/libcufile.so" ] || ln -sf libcufile.so.0 "$LIB/libcufile.so"

pick_dir() {
    local d fs avail
    for d in /mnt /data /scratch /workspace /var/tmp /root /tmp "$ROOT"; do
        [ -d "$d" ] && [ -w "$d" ] || continue
        fs=$(df --output=fstype "$d" 2>/dev/null | tail -1 | tr -d ' ')
        avail=$(df --output=avail -B1 "$d" 2>/dev/null | tail -1 | tr -d ' ')
        case "$fs" in ext4|xfs) ;; *) continue ;; esac
        [ "${avail:-0}" -ge $((17 << 30)) ] && { echo "$d"; return 0; }
    done
    return 1
}
DIR=${1:-auto}
[ "$DIR" = auto ] && { DIR=$(pick_dir) || { echo "no ext4/xfs directory with 17 GiB free"; exit 2; }; }
WORK="$DIR/hipfile-cufile-$$"; mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

# KvikIO from the carried wheels.
KV_PATH=${PYTHONPATH:-}
if ls .whl/*.whl > /dev/null 2>&1; then
    timeout 120 $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl >> "$LOG" 2>&1 && KV_PATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

# A configuration file, as KvikIO wants one for its stream path ("{}" is enough).
echo '{ // hipfile cuFile consumers run
  "logging": { "level": "ERROR" } }' > "$WORK/cufile.json"

run() { # NAME TIMEOUT CMD... : one consumer process with our libcufile preloaded
    local name=$1 t=$2; shift 2
    echo "== $name: $*" >> "$LOG"
    (cd "$WORK" && env LD_PRELOAD="$CUFILE" LD_LIBRARY_PATH="$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        CUFILE_EXPECT="$CUFILE" CUFILE_ENV_PATH_JSON="$WORK/cufile.json" HIPFILE_LOG=${HIPFILE_LOG:-warn} \
        PYTHONPATH="$KV_PATH" timeout "$t" "$@") > "$WORK/$name.out" 2>&1
    local rc=$?
    cat "$WORK/$name.out" >> "$LOG"
    echo "exit code $rc" >> "$LOG"
    return $rc
}
status() { # NAME: ok, FAIL reason, or the exit code
    local s
    s=$(grep -m1 '^STATUS' "$WORK/$1.out" 2>/dev/null | cut -d' ' -f2-)
    echo "${s:-no status (exit $2; see $LOG)}"
}
field() { # NAME KEY [FILTER]: the KEY= value of the first RESULT line matching FILTER
    grep '^RESULT' "$WORK/$1.out" 2>/dev/null | grep -- "${3:-}" | head -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# The NVIDIA GPUs' PCI resource files and nvidia-smi's BAR1 size, for the record:
# cuFileGetBARSizeInKB answers the second non-empty memory BAR of the first (flags 0x200).
{
    echo "== PCI resources of the NVIDIA GPUs"
    for d in /sys/bus/pci/devices/*; do
        [ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] || continue
        case "$(cat "$d/class" 2>/dev/null)" in 0x03*) ;; *) continue ;; esac
        echo "-- $d/resource"
        head -7 "$d/resource"
    done
    command -v nvidia-smi > /dev/null && nvidia-smi -q -d MEMORY | grep -A2 BAR1
} >> "$LOG" 2>&1

ROWS=()
row() { ROWS+=("$(printf '| %-10s | %-32s | %s |' "$1" "$2" "$3")"); }
start=$(date +%s)

# 1. torch
run torch 120 $PY "$ROOT/scripts/gpu/cufile_consumers.py" torch "$WORK"; rc=$?
row torch "$(status torch $rc)" "1 GiB save $(field torch save_gbps) GB/s, load $(field torch load_gbps) GB/s, byte_exact=$(field torch byte_exact)"

# 2. KvikIO: ours (OFF) and KvikIO's compat mode (ON), same file, same run.
F="$WORK/kvikio-8g.bin"
KV=(--size "${KV_SIZE:-$((8 << 30))}")
kv_ok=ok
# Each side at several thread counts and task sizes (KVIKIO_NTHREADS, KVIKIO_TASK_SIZE; KvikIO's
# default task is 4 MiB): the same grid for both, and each side's best is compared.
KV_OFF=${KV_OFF:-"16:4 8:4 1:1024 2:256 4:64"}
KV_ON=${KV_ON:-"1:4 8:4 16:4 16:64"}
best() { # OP MODE CONFIGS...: best GB/s and its configuration (threads/task MiB)
    local op=$1 mode=$2 b=0 bt=- g c; shift 2
    for c in "$@"; do
        g=$(field "kv_${mode}_${c/:/_}" gbps "op=$op")
        [ -n "$g" ] && awk -v g="$g" -v b="$b" 'BEGIN{exit !(g>b)}' && { b=$g; bt="t${c%%:*}/${c#*:}M"; }
    done
    echo "$b $bt"
}
kv() { # MODE THREADS:TASK_MIB TIMEOUT ARGS...: one KvikIO process
    local mode=$1 c=$2 t=$3 name="kv_$1_${2/:/_}"; shift 3
    run "$name" "$t" env KVIKIO_TASK_SIZE=$(( ${c#*:} << 20 )) $PY "$ROOT/scripts/gpu/cufile_consumers.py" \
        kvikio "$F" "$mode" "${c%%:*}" "$@" "${KV[@]}"
    local rc=$?
    [ "$(status "$name" $rc)" = ok ] || kv_ok="$mode/$c: $(status "$name" $rc)"
}
first=1
# Writes (bound by the disk) only at KvikIO's default task size.
for c in $KV_OFF; do
    extra=(); [ "${c#*:}" = 4 ] && extra=(--write "$WORK/w.bin"); [ $first = 1 ] && extra=(--create "${extra[@]}")
    kv off "$c" 150 "${extra[@]}"; first=0
    [ -f "$F" ] || break
done
if [ -f "$F" ]; then
    for c in $KV_ON; do
        extra=(); [ "${c%%:*}" != 1 ] && [ "${c#*:}" = 4 ] && extra=(--write "$WORK/w.bin")
        kv on "$c" 120 "${extra[@]}"
    done
fi
read -r r_off r_off_t <<< "$(best read off $KV_OFF)"
read -r r_on r_on_t <<< "$(best read on $KV_ON)"
read -r w_off w_off_t <<< "$(best write off $KV_OFF)"
read -r w_on w_on_t <<< "$(best write on $KV_ON)"
read -r d_off _ <<< "$(best read off 16:4)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b>0) printf "%.2fx", a/b; else print "n/a" }'; }
row kvikio "$kv_ok" "read $(( ${KV_SIZE:-$((8 << 30))} >> 20 )) MiB: OFF(us) $r_off GB/s ($r_off_t) vs compat $r_on GB/s ($r_on_t) = $(ratio "$r_off" "$r_on") (OFF at t16/4M, KvikIO's task default: $d_off = $(ratio "$d_off" "$r_on")); write: $w_off ($w_off_t) vs $w_on ($w_on_t) = $(ratio "$w_off" "$w_on")"
rm -f "$F"

# 3. cuda.bindings.cufile
run bindings 90 $PY "$ROOT/scripts/gpu/cufile_consumers.py" bindings "$WORK"; rc=$?
row bindings "$(status bindings $rc)" "$(field bindings calls calls=) $(grep -m1 'stream=' "$WORK/bindings.out" | sed 's/.*\(stream=[^ ]*\).*/\1/')"

# 4. The C suite on real CUDA memory.
if gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -pthread -I include tests/c/cufile_suite.c -o "$WORK/cufile_suite" \
    -L"$LIB" -l:libcufile.so.0 -ldl -Wl,-rpath,"$LIB" >> "$LOG" 2>&1; then
    mkdir -p "$WORK/suite"
    run suite 120 "$WORK/cufile_suite" "$WORK/suite"; rc=$?
    s=$(grep -m1 '^cufile suite:' "$WORK/suite.out")
    row "C suite" "$([ $rc = 0 ] && echo ok || echo "FAIL (exit $rc)")" "${s:-no summary} $(grep -m1 '^stream-ordered' "$WORK/suite.out")"
    grep '^FAIL' "$WORK/suite.out" | head -10
else
    row "C suite" "FAIL (build)" "see $LOG"
fi

# 5. The output structures at guard pages, compiled as a cuFile 1.15 and a 1.19 consumer.
for layout in 1150 1190; do
    if gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DCUFILE_LAYOUT=$layout -I include tests/c/cufile_layouts.c \
        -o "$WORK/cufile_layouts_$layout" -L"$LIB" -l:libcufile.so.0 -ldl -Wl,-rpath,"$LIB" >> "$LOG" 2>&1; then
        mkdir -p "$WORK/layouts"
        run "layouts_$layout" 60 "$WORK/cufile_layouts_$layout" "$WORK/layouts"; rc=$?
        s=$(grep -m1 '^cufile layouts' "$WORK/layouts_$layout.out")
        row "layouts $layout" "$([ $rc = 0 ] && echo ok || echo "FAIL (exit $rc)")" "${s:-no summary}"
        grep '^FAIL' "$WORK/layouts_$layout.out" | head -5
    else
        row "layouts $layout" "FAIL (build)" "see $LOG"
    fi
done

# 6. NVIDIA's library and ours side by side (no LD_PRELOAD: each is loaded by path).
echo "== compare" >> "$LOG"
timeout 400 $PY scripts/gpu/cufile_compare.py --ours "$CUFILE" --out "$OUT/cufile_compare.txt" \
    --json "$OUT/cufile_compare.json" > "$WORK/compare.out" 2>&1; rc=$?
cat "$WORK/compare.out" >> "$LOG"
row compare "$([ $rc = 0 ] && echo ok || echo "FAIL (exit $rc)")" "$(grep -m1 'steps identical' "$WORK/compare.out") (table: $OUT/cufile_compare.txt)"

{
    echo
    echo "cuFile consumers with LD_PRELOAD=$CUFILE ($(($(date +%s) - start)) s, files in $DIR)"
    printf '| %-10s | %-32s | %s |\n' consumer result detail
    printf '| %-10s | %-32s | %s |\n' ---------- -------------------------------- ------
    printf '%s\n' "${ROWS[@]}"
} | tee -a "$LOG"
