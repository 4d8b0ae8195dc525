#!/bin/bash
# One device call over the whole GPU surface at one commit (carry build-lead/bin, the four GPU test
# binaries of build-lead/test, and .commit): every GPU test binary, then the main job's GPU part
# (examples/compile_tour.sh: compiled kernels checked against the interpreter, memory-bound bench,
# reference GEMM against cuBLAS).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export TESSEL_CACHE_DIR=$(mktemp -d)
export TESSEL_COMMIT=$(cat .commit 2>/dev/null || echo unknown)
echo "commit $TESSEL_COMMIT"
for t in runtime_gpu_test device_library_gpu_test reference_gemm_gpu_test kernels_gpu_test; do
  build-lead/test/$t > $OUT/$t.log 2>&1
  echo "$t: rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/$t.log | tr '\n' ' ')"
done
examples/compile_tour.sh build-lead/bin/tessel 2>&1 | tee $OUT/tour.log | sed -n '/== GPU/,$p'
