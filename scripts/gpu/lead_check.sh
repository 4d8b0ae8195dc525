#!/bin/bash
# Device-machine check of the host runtime and `tessel bench` (carry build-lead/bin build-lead/test):
# runtime GPU tests, memcheck on them, then the GEMM bench twice (cold NVRTC compile, then cache hit).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export TESSEL_CACHE_DIR=$(mktemp -d)
export TESSEL_COMMIT=${TESSEL_COMMIT:-$(cat .commit 2>/dev/null || echo unknown)}
shapes=${1:-4096x4096x4096,1000x1000x1000,8191x4097x520}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== runtime GPU tests"
build-lead/test/runtime_gpu_test 2>&1 | tee $OUT/runtime_gpu_test.log | grep -E "^\[  (FAILED|PASSED|SKIPPED)|Failure" | head -20
echo "== memcheck"
# API errors are off: one test provokes CUDA_ERROR_NOT_FOUND on purpose (an unknown kernel name).
compute-sanitizer --tool memcheck --report-api-errors no build-lead/test/runtime_gpu_test > $OUT/runtime_memcheck.log 2>&1
echo "rc=$? $(grep SUMMARY $OUT/runtime_memcheck.log)"
echo "== bench (cold cache, then warm)"
build-lead/bin/tessel bench gemm-reference --shapes $shapes --json $OUT/bench.json 2>&1 | tee $OUT/bench1.log
build-lead/bin/tessel bench gemm-reference --shapes 1000x1000x1000 --dtype f16 --iterations 5 2>&1 | grep compiled
