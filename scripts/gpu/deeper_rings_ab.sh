#!/bin/bash
# The kernels whose rings the deeper-ring change (stage_budget.h's kMaxStages 4 -> 8 where only
# wgmma reads a ring's slots; bench/results/2026-11-28-gemm-sweep-h200.md) deepened without a
# measurement, base against new on one H200, one device call from the repository root (~7
# minutes): the tree before the change in .carry-base (`rm -rf .carry-base && mkdir .carry-base &&
# git archive 8ba2f5a | tar -x -C .carry-base`; carry [".carry-base"]) and the working tree, both
# built here, then in turns base, new:
#   attention D = 64 (K and V rings 4 -> 5) at B = 4, H = 32, L = 1K / 4K, not causal;
#   the batched family (gemm_batched_t128 4 -> 6 stages, gemm_batched_m64_t128 4 -> 8): base at
#   the four shapes nearest the bar, new at issue 11's nine batched shapes (the bar's run);
# and on the new tree only, MoE at 4096 and 8192 tokens with t128 against the 192-token tiles
# (bench/kernel-variants/moe/moe_w4a16_t192.tir: one token tile per expert at 4096 tokens), with
# int4 and with fp8 weights (issue 14's MoE bar takes either; fp8 not yet measured on the H200).
# Each kernel is checked by its bench (float64 samples and the library).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_base_and_new || exit 1
V=bench/kernel-variants
FAM=examples/kernels/gemm_batched.tir+$V/gemm_batched_m64_t128.tir+$V/batched/gemm_batched_wg.tir+$V/gemm_batched_t128.tir+$V/batched/gemm_batched_cluster2x1_n8.tir
for side in base new; do
  tree=$(side_tree $side)
  echo "== $side"
  (cd $tree
   PYTHONPATH=build-py/python timeout 120 python3 bench/python/attention.py --iterations 20 \
     --json $OUT/${side}_attention.jsonl --kernel examples/kernels/flash_attention_d64.tir \
     --shapes 4,32,1024,64 4,32,4096,64 2>&1 | grep -E "ratio" | tail -2
   # the base side at the four shapes nearest the bar; the new side at all nine (the bar's run)
   shapes="16:1024x1024x1024 12:1000x1000x1000 128:256x256x256 32:512x512x128"
   [ $side = new ] && shapes="1:8192x8192x8192 4:4096x4096x4096 8:2048x2048x2048 64:512x512x512 12:1024x1024x1000 $shapes"
   for c in $shapes; do
     timeout 60 build-dev/bin/tessel bench gemm --kernels $FAM --batch ${c%%:*} --shapes ${c#*:} \
       --iterations 30 --json $OUT/${side}_batched.jsonl > $LOG/b.log 2>&1 || echo "$c rc=$?"
     grep -E "ratio [0-9]" $LOG/b.log | tail -1
   done)
done
for w in int4 fp8; do
  PYTHONPATH=build-py/python:bench/python timeout 150 python3 bench/python/moe.py --json $OUT/moe.jsonl \
    --iterations 20 --tokens 4096,8192 --experts 256 --top-k 8 --variants t128,t192 --weights $w 2>&1 |
    grep -E "tokens|FAIL|rror" | tail -6
done
