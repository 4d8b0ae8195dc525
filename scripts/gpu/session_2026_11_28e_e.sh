#!/bin/bash
# Call E of the fifth 2026-11-28 session (H200), one device call from the repository root: the
# bars that call D found under their line on the H200 (met on the H100), with the knobs each has:
# 1. MoE at 4096 tokens (1.45x the cuBLAS loop with t128; the bar 1.5x): ring depths and two
#    blocks an SM;
# 2. W4A16 at M = 4096 (0.896x cuBLAS f16 with p128x256; the bar 0.9x): ring depths, the tiled
#    weights;
# 3. batched 32 x 512x512x128 (0.935-1.011 over two calls), three rounds.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout 240 python3 bench/python/moe.py --json $OUT/moe.jsonl --iterations 20 --tokens 4096 \
  --experts 256 --top-k 8 --variants t128,t128_s3,t128_s5,t128_s6,t128_r64_b2,t64_b2 --weights int4 2>&1 | grep -E "tokens|FAIL|rror" | tail -8
(cd bench/python && timeout 150 python3 w4a16.py --json $OUT/w4a16.jsonl --iterations 30 \
   --shapes 4096x8192x8192g128 --variants p128x256,p128x256_st3,p128x256_st5,c128x256 2>&1 | grep -E "ratio|FAIL|rror" | tail -5)
T=build-dev/bin/tessel
V=bench/kernel-variants
FAM=examples/kernels/gemm_batched.tir+$V/gemm_batched_m64_t128.tir+$V/batched/gemm_batched_wg.tir+$V/gemm_batched_t128.tir
for r in 1 2 3; do
  timeout 60 $T bench gemm --kernels $FAM --batch 32 --shapes 512x512x128 --iterations 50 --json $OUT/batched.jsonl > $LOG/b.log 2>&1 || echo "rc=$?"
  grep -E "ratio [0-9]|tuned" $LOG/b.log | tail -2
done
