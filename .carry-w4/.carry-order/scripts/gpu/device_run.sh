#!/bin/bash
# One device-machine call for the device library and the reference GEMM: the GPU tests (built
# here into build-gpu and carried), compute-sanitizer memcheck/racecheck on them, NVRTC compile
# times, and the reference GEMM against cuBLAS through the product path, with JSON under $OUT.
# Usage (device tool, repo root, carry build-gpu/test build-gpu/bin):
#   scripts/gpu/device_run.sh [tests] [sanitize] [bench] [sweep]
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=/tmp/tessel-cache
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
T=build-gpu/test; B="build-gpu/bin/tessel bench gemm-reference"
steps="${*:-tests sanitize bench sweep}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for step in $steps; do
  case $step in
  tests)
    echo "== GPU tests"
    $T/device_library_gpu_test 2>&1 | tee $OUT/device_library_gpu_test.log | grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|error" | head -40
    $T/reference_gemm_gpu_test 2>&1 | tee $OUT/reference_gemm_gpu_test.log | grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|error|ms\)" | head -40
    ;;
  sanitize)
    echo "== compute-sanitizer"
    for tool in memcheck racecheck synccheck; do
      timeout 300 compute-sanitizer --tool $tool $T/device_library_gpu_test > $OUT/san_$tool.log 2>&1
      echo "$tool device library: rc=$? $(grep -E 'SUMMARY' $OUT/san_$tool.log | sort | uniq -c | tr '\n' ' ') $(grep -cE '^\[  FAILED' $OUT/san_$tool.log) failed"
      TESSEL_TEST_SMALL=1 timeout 300 compute-sanitizer --tool $tool $T/reference_gemm_gpu_test > $OUT/san_ref_$tool.log 2>&1
      echo "$tool reference GEMM: rc=$? $(grep -E 'SUMMARY' $OUT/san_ref_$tool.log | sort | uniq -c | tr '\n' ' ') $(grep -cE '^\[  FAILED' $OUT/san_ref_$tool.log) failed"
    done
    ;;
  bench)
    echo "== reference GEMM vs cuBLAS (product path)"
    $B --iterations 50 --json $OUT/reference.jsonl \
      --shapes 8192x8192x8192,8192x8192x4096,4096x4096x4096,1000x1000x1000,8191x4097x520
    ;;
  sweep)
    echo "== M=N=8192 K sweep"
    $B --iterations 30 --json $OUT/sweep.jsonl \
      --shapes 8192x8192x256,8192x8192x512,8192x8192x1024,8192x8192x2048,8192x8192x4096,8192x8192x8192,8192x8192x16384
    ;;
  esac
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
