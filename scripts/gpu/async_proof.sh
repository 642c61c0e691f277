#!/usr/bin/env bash
# One device call for stream-ordered I/O: the C-ABI suite's async group (each case bounded), the
# rest of the suite, then T6 (async_bench.sh). Run from the repository root with .gpu/ carried.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
bash scripts/gpu/build_suite.sh /tmp/hipfile-suite .gpu/lib > "$OUT/suite.txt" 2>&1 || { tail -20 "$OUT/suite.txt"; exit 1; }
mkdir -p /tmp/hipfile-suite-files
echo "== C-ABI suite, async group (cudaStreamCreate and cuStreamCreate streams)"
timeout 200 /tmp/hipfile-suite /tmp/hipfile-suite-files --only=async --case-timeout=60 > "$OUT/suite_async.txt" 2>&1
echo "async group exit code: $?" | tee -a "$OUT/suite_async.txt"
grep -E '^(PASS|FAIL|SKIP)' "$OUT/suite_async.txt" | grep -E 'async' | head -20
sed -n '/==== summary/,$p' "$OUT/suite_async.txt"
echo "== T6"
timeout 150 bash scripts/gpu/async_bench.sh /tmp
echo "== C-ABI suite, everything else"
timeout 200 /tmp/hipfile-suite /tmp/hipfile-suite-files --large --skip=async >> "$OUT/suite.txt" 2>&1
echo "suite exit code: $?" | tee -a "$OUT/suite.txt"
grep -E '^(FAIL|SKIP)' "$OUT/suite.txt" | head -10
sed -n '/==== summary/,$p' "$OUT/suite.txt"
