#!/bin/bash
# Call G of the fourth 2026-11-28 session, one device call from the repository root:
# 1. batched GEMM at the shapes under 1.0x with the overlapped epilogue off (batched/*_noov.tir:
#    K = 1000 and 1024 are 16 K blocks, the default's threshold for overlapping) beside the
#    kernels chosen in call F, two rounds;
# 2. the fused MoE combine at 1 and 64 tokens with every variant of each kind (call A timed one
#    variant and found the fused kernel 0.93-0.95x at 1 token, where the tuned comparison of
#    2026-11-28-moe-combine-early-weights-h100.md had it 1.02-1.16x).
set -u
source "$(dirname "$0")/common.sh"
# (As run in call G the Python build went on in the background during the batched timings, which
# it disturbed: bench/results/2026-11-28-batched-rounds-h100.md. Both builds finish first now.)
build_tool_and_python || exit 1
T=build-dev/bin/tessel
V=bench/kernel-variants/batched
FAM=$V/gemm_batched_wg.tir+$V/gemm_batched_wg_noov.tir+$V/gemm_batched_cluster2x1_n8.tir+$V/gemm_batched_cluster2x1_noov.tir
for r in 1 2; do
for c in 16:1024x1024x1024 12:1000x1000x1000 12:1024x1024x1000 32:512x512x128; do
  timeout 60 $T bench gemm --kernels $FAM --batch ${c%%:*} --shapes ${c#*:} --iterations 30 --json $OUT/batched.jsonl > $LOG/b.log 2>&1 || echo "$c rc=$?"
  grep -E "ratio [0-9]|tuned" $LOG/b.log | tail -2
done
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout ${MOE_TIMEOUT:-110} python3 bench/python/moe_combine.py --json $OUT/moe_combine.jsonl --iterations 20 \
  --tokens 1,64 2>&1 | tail -4
