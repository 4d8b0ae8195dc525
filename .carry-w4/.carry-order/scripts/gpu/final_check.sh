#!/bin/bash
# One device call over the GPU tests at one commit (carry build-lead/bin, the GPU test binaries of
# build-lead/test named below, or GPU_TESTS=<folder holding them>, and .commit): every GPU test binary, then the memory-bound bench.
# The GEMM benches, sanitizers and the main job are scripts/gpu/gemm_bench_run.sh's steps.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export TESSEL_CACHE_DIR=$(mktemp -d)
export TESSEL_COMMIT=$(cat .commit 2>/dev/null || echo unknown)
echo "commit $TESSEL_COMMIT"
for t in runtime_gpu_test device_library_gpu_test reference_gemm_gpu_test kernels_gpu_test \
  gemm_gpu_test gemm_sm80_gpu_test gemm_epilogue_gpu_test; do
  timeout 240 ${GPU_TESTS:-build-lead/test}/$t > $OUT/$t.log 2>&1
  echo "$t: rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/$t.log | tr '\n' ' ')"
done
echo "== tessel bench memory-bound (8192x8192 f16, against copy16 interleaved)"
timeout 300 build-lead/bin/tessel bench memory-bound --json $OUT/memory.jsonl 2>&1 | tee $OUT/memory.log | tail -25
