#!/bin/bash
# Call F of the eighth 2026-11-28 session (H200), one device call from the repository root
# (~3 minutes): the final tree's unpinned row programs (the row fetched whole now races the row
# in registers at N = 16384) checked against the interpreter and timed at eight shapes.
set -u
source "$(dirname "$0")/common.sh"
export OUT
KERNELS=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto \
  bash scripts/gpu/rows_auto_bench.sh > $LOG/rows.log 2>&1
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -v "relative error vs the interpreter: [0-9.]*e-0[5-9]" $OUT/check.log | cut -c1-160 | head -10
echo "== rows bench"; grep -E "^baselines|_auto|FAIL|rror" $OUT/bench.log | cut -c1-112
