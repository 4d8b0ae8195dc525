#!/bin/bash
# Call F of the ninth 2026-11-28 session (H200), one device call from the repository root with
# .carry-base = d547fdf and .carry-gpu carried (~6 minutes): call E's change with held rows
# packed only where other tiles are loaded between the row's readers (LayerNorm, RMSNorm; softmax
# keeps its floats: call E's packed softmax lost a block a SM at 8191 x 8200). Base and new timed
# in turns at all eight shapes; the new tree's row programs checked against the interpreter on
# the GPU; then the GPU test binaries whose kernels load 16-bit tiles into registers (the guarded
# loads are in every masked 16-byte load).
set -u
source "$(dirname "$0")/common.sh"
export OUT
ROOT=$PWD
build_side .carry-base base tool
build_side . new tool
wait
for side in base new; do [ -x $(side_tree $side)/build-dev/bin/tessel ] || { echo "$side build failed"; tail -20 $LOG/build_$side.log; exit 1; }; done
check_row_programs > $OUT/check.log 2>&1
K=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto
for shape in 65536x1024 32768x2048 16384x4096 8192x8192 4096x16384 2048x32768 8191x8200 2047x32760; do
  for side in base new; do
    T=$(side_tree $side)/build-dev/bin/tessel
    timeout 90 $T bench memory-bound --shape $shape --kernels $K --json $OUT/rows-f-$side.jsonl 2>&1 |
      grep -E "_auto" | sed "s/^/$side r1 /" | cut -c1-100
  done
done > $OUT/bench.log
for t in kernels_gpu_test gemm_epilogue_gpu_test moe_gpu_test overlap_gpu_test decode_gpu_test attention_gpu_test runtime_gpu_test; do
  timeout 300 .carry-gpu/$t > $LOG/$t.log 2>&1
  echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $LOG/$t.log | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]" $LOG/$t.log | head -5
done > $OUT/tests.txt
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -i -E "fail|rror:" $OUT/check.log | head -5
cat $OUT/tests.txt
