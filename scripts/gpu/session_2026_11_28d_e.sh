#!/bin/bash
# Call E of the fourth 2026-11-28 session, one device call from the repository root: cuBLAS's
# batched f16 kernel (nvjet 128x256, 2x1 cluster, persistent: the configuration of tessel's
# gemm_batched_cluster2x1, call D) and tessel's kernels side by side under ncu, the same metrics
# for both (cycles, L2 and DRAM bytes, L2 hit rate, tensor pipe, stalls), at 12 x 1000³ (tessel
# 0.97x) and 16 x 1024³ (0.99x), boost clocks (--clock-control none) as in the timings.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
V=bench/kernel-variants
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_sleeping_per_warp_active.pct
for c in 12:1000x1000x1000:$V/gemm_batched_cluster2x1.tir 16:1024x1024x1024:$V/gemm_batched_cluster2x1.tir 16:1024x1024x1024:examples/kernels/gemm_batched.tir; do
  IFS=: read L S K <<< "$c"
  n=$(basename $K .tir)
  timeout 150 ncu --clock-control none --kernel-name regex:"hsh|$n" --launch-skip 2 --launch-count 4 --metrics $M \
    $T bench gemm --kernels $K --batch $L --shapes $S --iterations 10 > $OUT/ncu_${L}_$n.txt 2>&1
  echo "== $L x $S ($n)"
  grep -E "^  [a-zA-Z_].*\(|__" $OUT/ncu_${L}_$n.txt | sed 's/  */ /g' | head -60
done
