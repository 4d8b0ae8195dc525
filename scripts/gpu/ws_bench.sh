#!/bin/bash
# Warp specialization on the device (issue 10), one call: builds the tessel tool (Release, no
# tests), then `tessel bench gemm` (correctness against cuBLAS element by element and float64 on
# samples; timing interleaved with cuBLAS, medians) for each variant at the shapes:
#   plain        examples/kernels/gemm.tir through the default pipeline
#   ws           the same kernel compiled from a lowered-IR variant (--lowered FILE), e.g.
#                test/lit/async/gemm_barriers.tir (warp-specialized) or
#                test/lit/async/gemm_persistent_barriers.tir (and persistent)
# Usage (device tool, repo root): scripts/gpu/ws_bench.sh [variant.tir ...]
# JSON records in $OUT/ws.jsonl, logs beside them; a table last.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=/tmp/tessel-cache
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LOG=${LOG:-/tmp/tessel-logs}; mkdir -p $LOG
export TESSEL_COMMIT=$(cat .commit 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)
SHAPES=${SHAPES:-8192x8192x8192,8192x8192x4096,4096x4096x4096,8192x8192x1024,2048x8192x1024,3000x5000x704,129x257x64,1000x1000x1000}
KERNELS=${KERNELS:-examples/kernels/gemm.tir}
ITER=${ITER:-30}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF > $OUT/cmake.log 2>&1 &&
  cmake --build build-dev -j16 > $LOG/build.log 2>&1 || { echo "build failed"; tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
variants=("plain" "$@")
for v in "${variants[@]}"; do
  extra=(); [ "$v" = plain ] || extra=(--lowered "$v")
  name=$(basename "$v" .tir)
  echo "== $name"
  timeout 400 $T bench gemm --kernels "$KERNELS" --shapes "$SHAPES" --iterations $ITER \
    "${extra[@]}" --json $OUT/ws.jsonl > $OUT/bench_$name.log 2>&1
  echo "rc=$?"; grep -E "FAIL|error|x[0-9]+x[0-9]+ " $OUT/bench_$name.log | head -40
done
$T bench summary $OUT/ws.jsonl 2>&1 | tail -40
