#!/bin/bash
# Call A of the seventh 2026-11-28 session (H200), one device call from the repository root
# (~6 minutes): the bars at their line, each with more rounds, in order of how near they are:
# 1. MoE at 4096 tokens, t128 against the 192-token tiles (t192 read 1.72x / 1.66x the cuBLAS
#    loop with int4 / fp8 weights in deeper_rings_ab.sh; the bar 1.5x), two rounds each;
# 2. batched 12 x 1024x1024x1000 and 32 x 512x512x128 (0.999 / 0.996; the bar 1.0x), three rounds;
# 3. W4A16 at M = 4096 (0.896 / 0.92x cuBLAS f16 with p128x256; the bar 0.9x), three rounds;
# 4. the unpinned row programs' first reading on the H200 (rows_auto_bench.sh's check and bench);
# 5. W4A16 at small M with K tiles of 128 and 5-6 consumer warpgroups (README's item 5).
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
start=$(date +%s)
build_tool_and_python || exit 1
echo "built $(( $(date +%s) - start )) s"
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
for r in 1 2; do for w in int4 fp8; do
  timeout 80 python3 bench/python/moe.py --json $OUT/moe.jsonl --iterations 30 --tokens 4096 \
    --experts 256 --top-k 8 --variants t128,t192 --weights $w 2>&1 | grep -E "t1[29]|FAIL|rror" | sed "s/^/$w round $r: /" >> $LOG/summary.txt
done; done
echo "moe $(( $(date +%s) - start )) s"
T=build-dev/bin/tessel
V=bench/kernel-variants
FAM=examples/kernels/gemm_batched.tir+$V/gemm_batched_m64_t128.tir+$V/batched/gemm_batched_wg.tir+$V/gemm_batched_t128.tir+$V/batched/gemm_batched_cluster2x1_n8.tir
for r in 1 2 3; do for c in 12:1024x1024x1000 32:512x512x128; do
  timeout 60 $T bench gemm --kernels $FAM --batch ${c%%:*} --shapes ${c#*:} --iterations 50 --json $OUT/batched.jsonl > $LOG/b.log 2>&1 || echo "$c rc=$?"
  echo "batched round $r: $(grep -E 'ratio [0-9]' $LOG/b.log | tail -1)" >> $LOG/summary.txt
done; done
echo "batched $(( $(date +%s) - start )) s"
for r in 1 2 3; do
  (cd bench/python && timeout 60 python3 w4a16.py --json $OUT/w4a16.jsonl --iterations 30 \
     --shapes 4096x8192x8192g128 --variants p128x256 2>&1 | grep -E "ratio|FAIL|rror" | tail -1 | sed "s/^/w4a16 M=4096 round $r: /") >> $LOG/summary.txt
done
echo "w4a16 4096 $(( $(date +%s) - start )) s"
check_row_programs > $LOG/rows_check.log 2>&1
for shape in 65536x1024 16384x4096 4096x16384 2048x32768 8191x8200 2047x32760; do
  timeout 40 $T bench memory-bound --shape $shape --kernels rmsnorm_auto,layernorm_auto,softmax_auto,bias_gelu_auto --json $OUT/rows-auto.jsonl
done > $LOG/rows_bench.log 2>&1
echo "rows $(( $(date +%s) - start )) s"
BENCH_TIMEOUT=100 SAN=0 CHECK_ALL=1 ITER=20 w4a16_check_and_bench \
  c64x8_k128_w5_p1_st12_ovpreload,c64x8_k128_w6_p1_st12_ovpreload,c64x8_k128_w4_p1_st12_ovpreload,c64x8_k256_h2_w4_p1_st8_ovpreload \
  1x8192x8192g128,16x8192x8192g128 > $LOG/w4a16_small.log 2>&1
echo "w4a16 small $(( $(date +%s) - start )) s"
echo "== rows check"; cut -c1-110 $LOG/rows_check.log
echo "== rows bench"; grep -E "^device|baselines|_auto|FAIL" $LOG/rows_bench.log | cut -c1-150
echo "== w4a16 small M"; grep -E "interpreter|ratio|copy|FAIL|rror" $LOG/w4a16_small.log | cut -c1-200 | tail -16
echo "== summary"; cat $LOG/summary.txt | cut -c1-230
