#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of fuzz/ without cargo-fuzz (plain cargo and the flags
# cargo-fuzz would pass), so a fresh machine needs nothing beyond the toolchains.
#
#   scripts/fuzz.sh build                 build every target
#   scripts/fuzz.sh run TARGET SECONDS    fuzz TARGET for SECONDS from fuzz/seeds/TARGET
#   scripts/fuzz.sh replay TARGET DIR...  run TARGET once over the inputs in DIR (regressions)
#   scripts/fuzz.sh merge TARGET          minimise fuzz/corpus/TARGET into fuzz/seeds/TARGET
#
# Toolchain: nightly when installed, with AddressSanitizer (-Zsanitizer=address); otherwise
# stable with coverage instrumentation only (no ASan: the guard pages of the harness still catch
# out-of-bounds access to the caller's memory). FUZZ_ASAN=0 turns ASan off on nightly too.
# The run's summary line (execs, corpus, crashes) is appended to $FUZZ_SUMMARY if set.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TRIPLE=x86_64-unknown-linux-gnu

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    TOOLCHAIN=+nightly
    ASAN=${FUZZ_ASAN:-1}
else
    TOOLCHAIN=+stable
    ASAN=0
    echo "fuzz.sh: no nightly toolchain: building without AddressSanitizer" >&2
fi

flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
flags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table"
flags+=" -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
flags+=" -Cforce-frame-pointers"
if [ "$ASAN" = 1 ]; then
    flags+=" -Zsanitizer=address"
fi

build() {
    # Loaded at run time, uninstrumented, from the main workspace: the simulator, and the
    # engine behind libcufile.so.0's code in cufile_sequence (libhipfile.so).
    cargo build --release -p hipsim -p hipfile --lib --quiet
    RUSTFLAGS="$flags" cargo $TOOLCHAIN build --release --quiet \
        --manifest-path fuzz/Cargo.toml --target $TRIPLE --bins \
        --target-dir fuzz/target
}

# FUZZ_BIN_DIR: run copies of the binaries (a long run keeps going while the tree is rebuilt).
bin() { echo "${FUZZ_BIN_DIR:-$ROOT/fuzz/target/$TRIPLE/release}/$1"; }

export HIPSIM_LIBRARY=${HIPSIM_LIBRARY:-$ROOT/target/release/libhipsim.so}
export HIPFILE_ENGINE_LIBRARY=${HIPFILE_ENGINE_LIBRARY:-$ROOT/target/release/libhipfile.so}
# LeakSanitizer: the library's process-wide state (driver, statistics) lives until exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:symbolize=1}

case "${1:-}" in
build)
    build
    ;;
run)
    target=$2
    secs=$3
    [ -n "${FUZZ_BIN_DIR:-}" ] || build
    corpus="fuzz/corpus/$target"
    mkdir -p "$corpus" fuzz/artifacts/"$target"
    log=$(mktemp)
    # FUZZ_KEEP_GOING=1 (the long run): after a finding, start again on the same corpus until
    # the time is up, so one finding does not end the run.
    end=$(( $(date +%s) + secs ))
    execs=0
    calls=0
    checked=0
    runs=0
    rc=0
    while :; do
        left=$(( end - $(date +%s) ))
        [ "$left" -gt 0 ] || break
        # -rss_limit_mb: the simulator reserves a large address range, not memory.
        set +e
        "$(bin "$target")" "$corpus" "fuzz/seeds/$target" -max_total_time="$left" -timeout=20 \
            -rss_limit_mb=4096 -max_len=4096 -len_control=0 -print_final_stats=1 -print_funcs=0 \
            -artifact_prefix="fuzz/artifacts/$target/" >"$log" 2>&1
        r=$?
        set -e
        grep -E '^(#[0-9]+.*(pulse|DONE)|==|SUMMARY|stat::|Done|hipfile-fuzz)' "$log" | tail -20
        e=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        execs=$(( execs + ${e:-0} ))
        runs=$(( runs + 1 ))
        c=$(sed -n 's/^hipfile-fuzz: \([0-9]*\) calls decoded, \([0-9]*\) reads.*/\1 \2/p' "$log" | tail -1)
        c=${c:-0 0}
        calls=$(( calls + ${c% *} ))
        checked=$(( checked + ${c#* } ))
        if [ "$r" != 0 ]; then
            rc=$r
            tail -60 "$log"
            [ "${FUZZ_KEEP_GOING:-0}" = 1 ] || break
        else
            break
        fi
    done
    units=$(ls "$corpus" | wc -l)
    crashes=$(ls fuzz/artifacts/"$target" | wc -l)
    line="fuzz $target: ${secs}s in $runs run(s), $execs executions, $calls calls decoded, $checked reads and writes checked byte for byte, corpus $units inputs, artifacts $crashes, exit $rc, asan=$ASAN"
    echo "$line"
    if [ -n "${FUZZ_SUMMARY:-}" ]; then echo "$line" >>"$FUZZ_SUMMARY"; fi
    rm -f "$log"
    exit "$rc"
    ;;
replay)
    target=$2
    shift 2
    build
    "$(bin "$target")" -runs=1 "$@"
    ;;
merge)
    target=$2
    build
    mkdir -p "fuzz/seeds/$target.new"
    "$(bin "$target")" -merge=1 -max_len=4096 "fuzz/seeds/$target.new" "fuzz/seeds/$target" "fuzz/corpus/$target"
    rm -rf "fuzz/seeds/$target"
    mv "fuzz/seeds/$target.new" "fuzz/seeds/$target"
    ls "fuzz/seeds/$target" | wc -l
    ;;
*)
    sed -n '2,13p' "$0"
    exit 2
    ;;
esac
