#!/bin/bash
# Call D of the 2026-11-29 session (H200), from the repository root, carrying .carry-base (HEAD
# 1e580e0, before chunked runs) and .carry-gpu (GPU test binaries of this tree): chunked runs
# where the launch bound leaves 32 registers (src/target/cuda/emit_chunked.cpp) and schedule-rows'
# chunked one-pass form (RMSNorm at N >= 16384 unpinned). Checks: the unpinned row programs and
# the chunked forms pinned (threads 1024 or 512, the row in registers, a full SM) against the
# interpreter on the GPU at ragged sizes; every carried GPU test binary. Then the five unpinned
# programs timed base and new in turns at eight shapes, and the pinned chunked forms at the wide
# shapes.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
V=$ROOT/build-dev/variants
for k in layernorm rmsnorm softmax_exp2; do
  registers_variant $k 1024 2 $V > /dev/null
  registers_variant $k 512 4 $V > /dev/null
done
{
  check_row_programs
  for f in $V/*_chunked*.tir; do check_at_sizes $(basename $f) $f M=37,N=32760 M=3,N=32768 M=5,N=16384 M=9,N=16376 M=33,N=8200 M=2,N=40000; done
} > $OUT/check.log 2>&1
run_gpu_test_binaries > $OUT/tests.txt 2>&1
K=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto
for shape in 65536x1024 32768x2048 16384x4096 8192x8192 4096x16384 2048x32768 8191x8200 2047x32760; do
  KK=$K
  case $shape in 2048x32768|2047x32760|4096x16384) KK=$K,$V/layernorm_auto_chunked1024.tir,$V/rmsnorm_auto_chunked512.tir,$V/layernorm_auto_chunked512.tir ;; esac
  for side in base new; do
    [ $side = base ] && KB=$K || KB=$KK
    bench_rows $(side_tree $side) $shape $KB $OUT/rows-d-$side.jsonl $side
  done
done > $OUT/bench.log
summarize_checks $OUT/check.log
cat $OUT/tests.txt
cat $OUT/bench.log
