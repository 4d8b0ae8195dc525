#!/bin/bash
# Batched GEMM at K = 1000 (issue 11: 0.96-0.98x cublasGemmStridedBatchedEx), the profile that the
# fourth 2026-11-28 session left for the next: cuBLAS's kernel (nvjet 128x256, 2x1 cluster, 4
# stages, persistent) and tessel's gemm_batched_cluster2x1 run the same configuration, cuBLAS in 6%
# fewer cycles, while tessel issues 39% more warp instructions, moves 11-15% more L2 bytes and
# stalls twice as often on named barriers (bench/results/2026-11-28-batched-rounds-h100.md). This
# takes one launch of each under ncu's full set with source counters (boost clocks, as timed) and
# prints the sections that say where: instruction mix, memory tables (L2 sectors by operation),
# warp states. One device call from the repository root, ~3 minutes; reports in $OUT/*.ncu-rep
# (open them here with `ncu --import`) and the text in $OUT/*.txt.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $LOG/build.log; exit 1; }
K=bench/kernel-variants/batched/gemm_batched_cluster2x1_n8.tir
for who in "hsh:cublas" "gemm_batched_cluster2x1_n8:tessel"; do
  timeout 240 ncu --clock-control none --set full --import-source yes --kernel-name regex:${who%%:*} \
    --launch-skip 2 --launch-count 1 -o $OUT/${who#*:} -f \
    build-dev/bin/tessel bench gemm --kernels $K --batch 12 --shapes 1000x1000x1000 --iterations 5 \
    > $LOG/ncu_${who#*:}.log 2>&1
  ncu --import $OUT/${who#*:}.ncu-rep --print-details all > $OUT/${who#*:}.txt 2>&1
  echo "== ${who#*:}"
  grep -E "Duration|Executed Instructions |L2 Hit Rate|Mem Busy|Issue Slots Busy|Stall|Shared Store|Shared Load|L2 .*Sectors|lts__t_sectors" $OUT/${who#*:}.txt | head -40
done
