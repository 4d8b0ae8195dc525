#!/bin/bash
# The recorded GEMM benchmark (carry build-lead/bin build-lead/test .commit): runtime GPU tests, then
# `tessel bench gemm-reference` on the issue's shapes and the M=N=8192 K sweep, f16 and bf16, with a
# cold NVRTC compile first (fresh cache) and a cache hit after. JSON records land in $OUT.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export TESSEL_CACHE_DIR=$(mktemp -d)
export TESSEL_COMMIT=$(cat .commit 2>/dev/null || echo unknown)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
build-lead/test/runtime_gpu_test 2>&1 | tee $OUT/runtime_gpu_test.log | grep -E "^\[  (FAILED|PASSED|SKIPPED)|Failure" | head
compute-sanitizer --tool memcheck --report-api-errors no build-lead/test/runtime_gpu_test > $OUT/runtime_memcheck.log 2>&1
echo "memcheck runtime_gpu_test: rc=$? $(grep SUMMARY $OUT/runtime_memcheck.log)"
T=build-lead/bin/tessel
$T bench gemm-reference --json $OUT/shapes.jsonl --iterations 100 \
  --shapes 8192x8192x8192,8192x8192x4096,4096x4096x4096,1000x1000x1000,8191x4097x520 2>&1 | tee $OUT/shapes.log
$T bench gemm-reference --json $OUT/sweep.jsonl --iterations 50 \
  --shapes 8192x8192x256,8192x8192x512,8192x8192x1024,8192x8192x2048,8192x8192x4096,8192x8192x8192,8192x8192x16384 2>&1 | tee $OUT/sweep.log
# A second process: the kernel now comes from the on-disk cache.
$T bench gemm-reference --shapes 2048x2048x2048 --dtype f16 --iterations 10 2>&1 | grep compiled
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
