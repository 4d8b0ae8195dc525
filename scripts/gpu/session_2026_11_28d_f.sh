#!/bin/bash
# Call F of the fourth 2026-11-28 session, one device call from the repository root: batched GEMM
# with its output stored by warpgroup (batched/*_wg.tir; call E's ncu: the role-wide stores stall
# the consumers on named barriers 34-41% against cuBLAS's 17-24%) beside the role-wide kernels and
# the control with the same N % 8 fact (cluster2x1_n8), at the batched shapes under 1.0x; each
# shape tuned over the family, the fastest checked and timed against cublasGemmStridedBatchedEx.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
V=bench/kernel-variants
FAM=examples/kernels/gemm_batched.tir+$V/batched/gemm_batched_wg.tir+$V/gemm_batched_cluster2x1.tir+$V/batched/gemm_batched_cluster2x1_n8.tir+$V/batched/gemm_batched_cluster2x1_wg.tir
for r in 1 2; do
for c in 16:1024x1024x1024 12:1000x1000x1000 12:1024x1024x1000 32:512x512x128; do
  timeout 100 $T bench gemm --kernels $FAM --batch ${c%%:*} --shapes ${c#*:} --iterations 30 --json $OUT/batched.jsonl > $LOG/b.log 2>&1 || echo "$c rc=$?"
  grep -E "ratio [0-9]|tuned" $LOG/b.log | tail -2
done
done
