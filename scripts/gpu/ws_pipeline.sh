#!/bin/bash
# The warp-specialized pipeline on the device (issue 10), one call: builds the tessel tool
# (Release, no tests); `tessel bench gemm` over the example GEMMs compiled by the default pipeline
# (correct against cuBLAS element by element and float64 on samples; timed interleaved with
# cuBLAS / cuBLASLt, medians) at the issue's shapes; `tessel run --gpu --check` (the kernel
# against the interpreter, roles interleaved) under compute-sanitizer memcheck, racecheck and
# synccheck on shapes with partial tiles in M, N and K (N % 8 != 0 included); a table last.
# At most 8 files come back from the device: bench logs, ws.jsonl and one sanitize.log.
# Usage (device tool, repo root): TESSEL_COMMIT=<sha> scripts/gpu/ws_pipeline.sh [steps]
#   steps: bench extra sanitize (default: all); VARIANTS: the third kernel file(s) of `bench`
#   (default gemm_n8.tir), SANITIZE: the kernel files of `sanitize` (default gemm, bias + ReLU,
#   dual GEMM), SHAPES / ITER as below.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=/tmp/tessel-cache
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LOG=${LOG:-/tmp/tessel-logs}; mkdir -p $LOG
export TESSEL_COMMIT=${TESSEL_COMMIT:-unknown}
steps="${*:-bench extra sanitize}"
SHAPES=${SHAPES:-8192x8192x8192,8192x8192x4096,4096x4096x4096,8192x8192x1024,2048x8192x1024,3000x5000x704,129x257x64,1000x1000x1000,8192x8192x1000}
ITER=${ITER:-30}
K=examples/kernels
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF > $OUT/cmake.log 2>&1 &&
  cmake --build build-dev -j16 > $LOG/build.log 2>&1 || { echo "build failed"; tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
for step in $steps; do
  case $step in
  bench)
    echo "== gemm, gemm_bf16 (and gemm with N % 8 == 0: no store guard)"
    timeout 500 $T bench gemm --kernels $K/gemm.tir,$K/gemm_bf16.tir,${VARIANTS:-bench/kernel-variants/gemm_n8.tir} \
      --shapes "$SHAPES" --iterations $ITER --json $OUT/ws.jsonl > $OUT/bench.log 2>&1
    echo "rc=$?"; grep -E "FAIL|rror" $OUT/bench.log | head
    ;;
  extra)
    echo "== bias + ReLU (vs cuBLASLt's fused epilogue) and dual GEMM"
    for k in gemm_bias_relu dual_gemm; do
      timeout 300 $T bench gemm --kernels $K/$k.tir --iterations $ITER \
        --shapes 8192x8192x8192,8192x8192x4096,4096x4096x4096,8192x8192x1024,3000x5000x704,8191x4097x520 \
        --json $OUT/ws.jsonl > $OUT/bench_$k.log 2>&1
      echo "$k rc=$?"; grep -E "FAIL|rror" $OUT/bench_$k.log | head
    done
    ;;
  sanitize)
    for f in ${SANITIZE:-$K/gemm.tir $K/gemm_bias_relu.tir $K/dual_gemm.tir}; do
      k=$(basename $f .tir)
      for tool in memcheck racecheck synccheck; do
        for size in M=300,N=520,K=136 M=129,N=257,K=200; do
          log=/tmp/san.log
          timeout 300 compute-sanitizer --tool $tool $T run $f --gpu --check --size $size > $log 2>&1
          rc=$?
          echo "== $tool $k $size (rc=$rc)" >> $OUT/sanitize.log; cat $log >> $OUT/sanitize.log
          echo "$tool $k $size: rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $log | tr '\n' ' ') $(grep -iE 'rel.*err' $log | head -1)"
        done
      done
    done
    ;;
  esac
done
$T bench summary $OUT/ws.jsonl 2>&1 | tail -45
