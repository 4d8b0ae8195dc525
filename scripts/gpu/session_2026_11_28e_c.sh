#!/bin/bash
# Call C of the fifth 2026-11-28 session (H200), one device call from the repository root:
# 1. W4A16 with each scale group's scale applied after its wgmma (`_gs`: an f32 fma of the
#    group's product into the running sum instead of a packed multiply of every weight pair; on
#    the H200 the stream runs at 0.78 of a copy even at K = 32768, so the consumer's dequant, not
#    DRAM, bounds the rate): checked against the interpreter, sanitized, timed as CUDA graphs
#    beside the same kernel without it, with 2, 3, 4 consumer warpgroups;
# 2. batched GEMM at the nine shapes of issue 11's batched bar on the H200 (the H100's family
#    record: bench/results/2026-11-27-batched-family-h100.md), four kernels tuned per shape.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
A=c64x8_k256_h2
SAN=1 CHECK_ALL=1 BENCH_TIMEOUT=260 GRAPH=8 \
  w4a16_check_and_bench ${A}_gs_w3_p1_st8_ovpreload,${A}_w3_p1_st8_ovpreload,${A}_gs_w2_p1_st8_ovpreload,${A}_gs_w4_p1_st8_ovpreload,${A}_w4_p1_st8_ovpreload,c64x16_k256_h2_gs_w3_p1_st6_ovpreload \
  1x8192x8192g128,16x8192x8192g128,1x8192x32768g128 2>&1 | grep -E "graph of|relative error|rc=|FAIL|rror"
T=build-dev/bin/tessel
V=bench/kernel-variants
FAM=examples/kernels/gemm_batched.tir+$V/gemm_batched_m64_t128.tir+$V/batched/gemm_batched_wg.tir+$V/batched/gemm_batched_cluster2x1_n8.tir
for c in 1:8192x8192x8192 4:4096x4096x4096 8:2048x2048x2048 16:1024x1024x1024 64:512x512x512 128:256x256x256 12:1000x1000x1000 12:1024x1024x1000 32:512x512x128; do
  timeout 90 $T bench gemm --kernels $FAM --batch ${c%%:*} --shapes ${c#*:} --iterations 30 --json $OUT/batched.jsonl > $LOG/b.log 2>&1 || { echo "$c rc=$?"; tail -3 $LOG/b.log; }
  grep -E "ratio [0-9]" $LOG/b.log | tail -1
done
