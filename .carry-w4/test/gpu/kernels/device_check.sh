#!/bin/bash
# Device-machine check of the compiled kernels (carry build-emit-carry: stripped copies of
# build-emit/bin/tessel and build-emit/test/kernels_gpu_test): GPU tests, the interpreter
# cross-check through `tessel run --gpu --check`, memcheck and racecheck, the memory-bound bench,
# and cold/cached compile times. Logs under $OUT.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
B=build-emit-carry
export TESSEL_CACHE_DIR=$(mktemp -d)
export TESSEL_COMMIT=${TESSEL_COMMIT:-$(cat .commit 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== compile times (cold: all passes + NVRTC, then a disk-cache hit in a new process)"
for k in layernorm rmsnorm_n8192 gemv; do
  for i in 1 2; do TESSEL_CACHE_DIR=/tmp/cc-$k $B/tessel compile examples/kernels/$k.tir --emit=cubin -o /tmp/l.cubin --time 2>&1 | tail -1; done
done
echo "== kernels_gpu_test"
timeout 120 $B/kernels_gpu_test 2>&1 | tee $OUT/kernels_gpu_test.log | grep -E "^\[  (FAILED|PASSED|SKIPPED|  OK) |Failure|rel|Expected" | head -40
echo "== tessel run --gpu --check"
for k in rmsnorm softmax layernorm bias_gelu gemv; do
  timeout 60 $B/tessel run examples/kernels/$k.tir --gpu --check --size M=37,N=1048 --show 0 2>&1 | grep -E "relative|error"
done
echo "== unpinned tile programs through layout synthesis, on the GPU vs the interpreter"
for f in examples/tile/rmsnorm.tir examples/tile/softmax.tir; do
  timeout 60 $B/tessel run $f --gpu --check --size M=37,N=1000 --show 0 2>&1 | grep -E "relative|error"
done
echo "== bench memory-bound 8192x8192 f16"
timeout 300 $B/tessel bench memory-bound --json $OUT/memory_bench.jsonl 2>&1 | tee $OUT/bench.log
echo "== memcheck / racecheck (small shapes via the GPU test's ragged list)"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool $B/kernels_gpu_test > $OUT/$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/$tool.log | head -2 | tr '\n' ' ') $(grep -cE '^\[       OK' $OUT/$tool.log) tests ok"
done
