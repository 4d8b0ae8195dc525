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
  for f in $V/*_chunked*.tir; do
    for s in M=37,N=32760 M=3,N=32768 M=5,N=16384 M=9,N=16376 M=33,N=8200 M=2,N=40000; do
      echo "== $(basename $f) $s: $(build-dev/bin/tessel run $f --gpu --check --size $s 2>&1 | grep -i -E 'rel|error|fail' | tr '\n' ' ')"
    done
  done
} > $OUT/check.log 2>&1
run_gpu_test_binaries > $OUT/tests.txt 2>&1
K=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto
for shape in 65536x1024 32768x2048 16384x4096 8192x8192 4096x16384 2048x32768 8191x8200 2047x32760; do
  KK=$K
  case $shape in 2048x32768|2047x32760|4096x16384) KK=$K,$V/layernorm_auto_chunked1024.tir,$V/rmsnorm_auto_chunked512.tir,$V/layernorm_auto_chunked512.tir ;; esac
  for side in base new; do
    T=$(side_tree $side)/build-dev/bin/tessel
    [ $side = base ] && KB=$K || KB=$KK
    (cd $(side_tree $side) && timeout 120 $T bench memory-bound --shape $shape --kernels $KB --json $OUT/rows-d-$side.jsonl 2>&1) |
      grep -E "_auto|FAIL|rror" | sed "s/^/$side /" | cut -c1-110
  done
done > $OUT/bench.log
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -i -E "fail|rror:" $OUT/check.log | head -5
cat $OUT/tests.txt
cat $OUT/bench.log
