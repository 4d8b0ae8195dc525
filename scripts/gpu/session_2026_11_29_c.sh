#!/bin/bash
# Call C of the 2026-11-29 session (H200), from the repository root, carrying .carry-base (HEAD
# before chunked runs): the emitter's chunked runs (src/target/cuda/emit_chunked.cpp) A/B against
# the base tree. The new tree's row programs checked against the interpreter on the GPU; the five
# unpinned row programs timed base and new in turns at eight shapes; LayerNorm and RMSNorm pinned
# to the probe's winner (the row in registers over 1024 threads, two blocks a SM) at the wide
# shapes, both trees.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_row_programs > $OUT/check.log 2>&1
V=$ROOT/build-dev/variants; mkdir -p $V
for k in layernorm rmsnorm softmax_exp2; do  # (named as call C's records name them)
  sed -e "s/block_grid %rows :/block_grid %rows {threads = 1024, hold_rows = registers, blocks_per_sm = 2} :/" \
    examples/kernels/${k}_auto.tir > $V/${k}_auto_reg_t1024_b2.tir
done
K=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto
for shape in 65536x1024 32768x2048 16384x4096 8192x8192 4096x16384 2048x32768 8191x8200 2047x32760; do
  KK=$K
  case $shape in 2048x32768|2047x32760) KK=$K,$V/layernorm_auto_reg_t1024_b2.tir,$V/rmsnorm_auto_reg_t1024_b2.tir,$V/softmax_exp2_auto_reg_t1024_b2.tir ;; esac
  for side in base new; do
    T=$(side_tree $side)/build-dev/bin/tessel
    (cd $(side_tree $side) && timeout 120 $T bench memory-bound --shape $shape --kernels $KK --json $OUT/rows-c-$side.jsonl 2>&1) |
      grep -E "_auto|FAIL|rror" | sed "s/^/$side /" | cut -c1-110
  done
done > $OUT/bench.log
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -i -E "fail|rror:" $OUT/check.log | head -5
cat $OUT/bench.log
