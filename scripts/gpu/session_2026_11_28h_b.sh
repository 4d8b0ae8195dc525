#!/bin/bash
# Call B of the eighth 2026-11-28 session (H200), one device call from the repository root
# (~3 minutes): 1. the committed tree's row programs against the interpreter on the GPU and bias +
# GELU timed at six shapes (call A ran a tree with a pad-select change since reverted), the norms
# at 8191 x 8200 and 4096 x 16384; 2. scripts/gpu/rows_prefetch_probe.cu at the wide rows: the
# whole row fetched by cp.async (one row a block, or two row buffers a persistent block).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
start=$(date +%s)
build_tool || { tail -20 $LOG/build.log; exit 1; }
nvcc -std=c++17 -O3 -arch=sm_90a scripts/gpu/rows_prefetch_probe.cu -o $LOG/probe > $LOG/probe_build.log 2>&1 &
echo "built $(( $(date +%s) - start )) s"
check_row_programs > $LOG/rows_check.log 2>&1
echo "checked $(( $(date +%s) - start )) s"
T=build-dev/bin/tessel
for shape in 65536x1024 16384x4096 4096x16384 2048x32768 8191x8200 2047x32760; do
  k=bias_gelu_auto
  case $shape in 8191x8200|4096x16384) k=$k,rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto ;; esac
  timeout 60 $T bench memory-bound --shape $shape --kernels $k --json $OUT/rows-b.jsonl
done > $LOG/rows_bench.log 2>&1
echo "rows $(( $(date +%s) - start )) s"
wait
timeout 120 $LOG/probe 2048x32768 2047x32760 4096x16384 8191x8200 > $LOG/probe.log 2>&1
echo "probe $(( $(date +%s) - start )) s"
cp $LOG/probe.log $OUT/probe.log
echo "== rows check (bias_gelu, and any error)"; grep -E "bias_gelu|FAIL|rror:" $LOG/rows_check.log | cut -c1-110
echo "   $(grep -c 'relative error vs the interpreter' $LOG/rows_check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $LOG/rows_check.log | awk '{print $2}' | sort -g | tail -1)"
echo "== rows bench"; grep -E "^baselines|_auto|FAIL" $LOG/rows_bench.log | cut -c1-130
echo "== probe"; cat $LOG/probe_build.log | grep -i error; cat $LOG/probe.log
