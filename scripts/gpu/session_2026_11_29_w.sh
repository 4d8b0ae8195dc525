#!/bin/bash
# Call W of the 2026-11-29 sessions (H200, twelfth session), from the repository root: schedule-rows
# counting a row within a vector a thread of 32 KiB as draining free (calls U, V: a row of 32752
# bytes had been charged the tail, and the chunked / fetched-whole forms passed over at N = 16376).
# The new tree's programs checked against the interpreter at ragged sizes (with N = 16376 and
# 16368 hints), then an A/B against .carry-base at the shapes whose choices change and two whose
# choices do not, two rounds.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
{
  check_row_programs
  for k in rmsnorm layernorm softmax softmax_exp2; do
    check_at_sizes $k examples/kernels/${k}_auto.tir M=9,N=16376 M=3,N=16368 M=130,N=16376
  done
} > $OUT/check-w.log 2>&1
summarize_checks $OUT/check-w.log
K=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto
for round in 1 2; do
  for shape in 3000x16376 2944x16376 4096x16376 1000x16368 3000x16384 8191x8200; do
    for side in base new; do
      bench_rows $(side_tree $side) $shape $K $OUT/rows-w-$side.jsonl "$round $side"
    done
  done
done
