#!/bin/bash
# Call M of the 2026-11-29 sessions (H200), from the repository root: why the row programs lose
# 3-6% at 2047 x 32760 (and 3000 x 16376) against 2048 x 32768. Nsight Compute on the unpinned
# LayerNorm and RMSNorm (chunked forms) and on the copy kernel at both shapes: DRAM and L2 bytes,
# global-load sectors per request, duration, long-scoreboard stalls.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool || { tail -20 $LOG/build.log; exit 1; }
NCU_METRICS="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed"
for shape in 2048x32768 2047x32760 3000x16376 3000x16384; do
  for k in layernorm_auto rmsnorm_auto; do
    ncu_metrics ${k}_$shape -k regex:$k build-dev/bin/tessel bench memory-bound --shape $shape --kernels $k
  done
  ncu_metrics copy_$shape -k regex:^copy16$ build-dev/bin/tessel bench memory-bound --shape $shape --kernels rmsnorm_auto
done
