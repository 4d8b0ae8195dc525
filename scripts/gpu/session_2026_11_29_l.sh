#!/bin/bash
# Call L of the 2026-11-29 sessions (H200), from the repository root, carrying .carry-base (the
# commit before chains): call K's tree plus schedule-rows' chunked estimate recalibrated for
# chained reductions and read-only column vectors, so that LayerNorm takes the chunked form at
# N = 16384 (512 threads, four blocks a SM) and 32760 / 32768 (1024, two). The unpinned row
# programs checked against the interpreter on the GPU (new tree), then timed base and new in turns
# (two rounds) at the wide shapes and a ragged 16K one.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_row_programs > $OUT/check.log 2>&1
check_at_sizes layernorm examples/kernels/layernorm_auto.tir M=3000,N=16376 M=7,N=32000 M=1,N=16384 \
  >> $OUT/check.log 2>&1
K=rmsnorm_auto,layernorm_auto,softmax_exp2_auto
for round in 1 2; do
  for shape in 4096x16384 3000x16376 2048x32768 2047x32760; do
    for side in base new; do
      bench_rows $(side_tree $side) $shape $K $OUT/rows-l-$side.jsonl "$round $side"
    done
  done
done > $OUT/bench.log
summarize_checks $OUT/check.log
cat $OUT/bench.log
