#!/bin/bash
# Call D of the eighth 2026-11-28 session (H200), one device call from the repository root
# (~8 minutes; carry .carry-gpu): 1. the row programs as this tree schedules them, unpinned and
# with the row pinned in shared memory (bench/kernel-variants/*_auto_shared.tir), checked against
# the interpreter at ragged sizes and timed against copy16 at eight shapes (rows_auto_bench.sh);
# 2. every carried GPU test binary (the emitter's sigmoid, copy_async into shared memory).
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
start=$(date +%s)
SHARED=1 KERNELS=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto \
  bash scripts/gpu/rows_auto_bench.sh > $LOG/rows.log 2>&1
echo "rows $(( $(date +%s) - start )) s"
run_gpu_test_binaries > $LOG/tests.txt 2>&1
echo "tests $(( $(date +%s) - start )) s"
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -v "relative error vs the interpreter: [0-9.]*e-0[5-9]" $OUT/check.log | cut -c1-160 | head -10
echo "== tests"; cat $LOG/tests.txt
echo "== rows bench"; grep -E "^baselines|_auto|FAIL|rror" $OUT/bench.log | cut -c1-112
