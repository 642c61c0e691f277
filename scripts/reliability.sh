#!/usr/bin/env bash
# The long versions of the reliability suite, for a person with time (RELIABILITY.md says what
# each part checks). CI runs the bounded slice of the same parts from .ci/run.
#
#   scripts/reliability.sh [--fuzz-minutes N] [--stress-minutes M] [--threads T]
#                          [--targets "api_sequence batch_sequence cufile_sequence"] [--out DIR]
#   scripts/reliability.sh --ci
#
# Defaults: 30 minutes per fuzz target, 10 minutes of stress at 64 threads, and as long a close
# race (64 I/O threads while 4 more close the driver to 0 and reopen it). The fuzz targets and
# both stress tests run side by side; logs and a summary (summary.txt) go to DIR (default
# target/reliability). Exit status: non-zero when any part failed.
#
# --ci is the bounded slice .ci/run adds after `cargo test --workspace` (which already ran the
# stress test for HIPFILE_STRESS_SECS, the close race for HIPFILE_CLOSE_RACE_SECS, the fault
# matrix, and the C suite under ASan/UBSan and valgrind): each fuzz target for 60 s (side by
# side, a finding fails), then the fault matrix's EIO cells, which need the library built with
# the test-only feature io-fault-seam.
# The whole script is one function, read by bash before it runs: editing this file while a long
# run is going cannot change what that run does.
main() {
    set -uo pipefail
    cd "$(dirname "$0")/.."
    # Every fuzz target (fuzz/Cargo.toml): the hipFile C ABI's two and libcufile.so.0's.
    FUZZ_TARGETS="api_sequence batch_sequence cufile_sequence"

    if [ "${1:-}" = --ci ]; then
        set -e
        t0=$(date +%s)
        scripts/fuzz.sh build
        t1=$(date +%s)
        echo "reliability --ci: fuzz build $((t1 - t0)) s"
        pids=()
        for t in $FUZZ_TARGETS; do
            scripts/fuzz.sh run "$t" "${FUZZ_CI_SECONDS:-60}" >"target/fuzz-ci-$t.log" 2>&1 &
            pids+=($!)
        done
        fail=0
        for p in "${pids[@]}"; do wait "$p" || fail=1; done
        for t in $FUZZ_TARGETS; do
            if [ "$fail" = 1 ]; then tail -80 "target/fuzz-ci-$t.log"; else tail -1 "target/fuzz-ci-$t.log"; fi
        done
        [ "$fail" = 0 ] || { echo "reliability --ci: a fuzz target found something (fuzz/artifacts/)"; exit 1; }
        t2=$(date +%s)
        echo "reliability --ci: fuzzing $((t2 - t1)) s"
        cargo test --features io-fault-seam --test fault_matrix
        t3=$(date +%s)
        echo "reliability --ci: fault matrix with the I/O seam $((t3 - t2)) s; total $((t3 - t0)) s"
        exit 0
    fi

    fuzz_min=30
    stress_min=10
    threads=64
    targets=$FUZZ_TARGETS
    out=target/reliability
    while [ $# -gt 0 ]; do
        case "$1" in
        --fuzz-minutes) fuzz_min=$2; shift 2 ;;
        --stress-minutes) stress_min=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --targets) targets=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) sed -n '2,10p' "$0"; exit 2 ;;
        esac
    done
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    summary="$out/summary.txt"
    echo "reliability run $(date -u +%FT%TZ): fuzz ${fuzz_min} min x {$targets}, stress and close race ${stress_min} min x $threads threads" | tee "$summary"

    # Build everything first, so the timed parts only run.
    # Copies are run, so the tree may be rebuilt meanwhile.
    scripts/fuzz.sh build || { echo "fuzz build failed" | tee -a "$summary"; exit 1; }
    stress_exe=$(cargo test --test stress --no-run 2>&1 | sed -n 's/.*Executable tests\/stress.rs (\(.*\))/\1/p')
    [ -n "$stress_exe" ] || { echo "stress build failed" | tee -a "$summary"; exit 1; }
    mkdir -p "$out/bin" "$out/stress"
    for t in $targets; do cp "fuzz/target/x86_64-unknown-linux-gnu/release/$t" "$out/bin/"; done
    cp target/release/libhipsim.so target/release/libhipfile.so "$out/bin/"
    cp "$stress_exe" "$out/stress/stress"
    cp "$(dirname "$stress_exe")/libhipsim.so" "$out/stress/"
    export FUZZ_BIN_DIR="$out/bin" HIPSIM_LIBRARY="$out/bin/libhipsim.so" HIPFILE_ENGINE_LIBRARY="$out/bin/libhipfile.so"

    pids=()
    for t in $targets; do
        FUZZ_KEEP_GOING=1 FUZZ_SUMMARY="$summary" scripts/fuzz.sh run "$t" $((fuzz_min * 60)) >"$out/fuzz-$t.log" 2>&1 &
        pids+=($!)
    done
    (
        t0=$(date +%s)
        HIPFILE_STRESS_SECS=$((stress_min * 60)) HIPFILE_STRESS_THREADS=$threads \
            "$out/stress/stress" stress_against_the_model --exact --nocapture >"$out/stress.log" 2>&1
        rc=$?
        line=$(grep '^stress: ' "$out/stress.log" | tail -1)
        echo "${line:-stress: no summary line}; exit $rc, wall $(( $(date +%s) - t0 )) s" >>"$summary"
        exit $rc
    ) &
    pids+=($!)
    (
        t0=$(date +%s)
        HIPFILE_CLOSE_RACE_SECS=$((stress_min * 60)) HIPFILE_CLOSE_RACE_THREADS=$threads \
            "$out/stress/stress" closes_racing_io_against_the_model --exact --nocapture >"$out/close-race.log" 2>&1
        rc=$?
        line=$(grep '^close race: [0-9]' "$out/close-race.log" | tail -1)
        echo "${line:-close race: no summary line}; exit $rc, wall $(( $(date +%s) - t0 )) s" >>"$summary"
        exit $rc
    ) &
    pids+=($!)

    fail=0
    for p in "${pids[@]}"; do
        wait "$p" || fail=1
    done
    echo "done $(date -u +%FT%TZ), failures: $fail" >>"$summary"
    cat "$summary"
    exit $fail
}
main "$@"
exit $?
