#!/bin/bash
# Call V of the 2026-11-29 sessions (H200, twelfth session), from the repository root: schedule-rows
# asking 3x the bytes in flight for rows that are not a multiple of 128 bytes (call U) — A/B of
# every unpinned row program with loops at the misaligned shapes where its choices change (and
# 2047 x 32760, 3000 x 16384 where they do not), base = .carry-base (the tree before), new = this
# tree; the new tree's programs checked against the interpreter at ragged sizes first.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_row_programs > $OUT/check-v.log 2>&1
summarize_checks $OUT/check-v.log
K=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto
for round in 1 2; do
  for shape in 3000x16376 2944x16376 8191x8200 4095x4100 2047x32760 3000x16384; do
    for side in base new; do
      bench_rows $(side_tree $side) $shape $K $OUT/rows-v-$side.jsonl "$round $side"
    done
  done
done
