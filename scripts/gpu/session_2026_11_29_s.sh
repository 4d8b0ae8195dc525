#!/bin/bash
# Call S of the 2026-11-29 sessions (H200, twelfth session), from the repository root: is a row
# program at rows that are not a multiple of 128 bytes (N = 32760) bound by L1 wavefronts? ncu's
# L1 throughput, load requests, sectors and wavefronts, instructions, of LayerNorm, softmax_exp2
# and the copy at 2048 x 32768 and 2048 x 32760 (call R: the misaligned N, not the odd M, costs
# LayerNorm 4% and softmax 4%).
set -u
source "$(dirname "$0")/common.sh"
export OUT
[ -x build-dev/bin/tessel ] || build_tool || { tail -20 $LOG/build.log; exit 1; }
NCU_METRICS="gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__m_xbar2l1tex_read_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct"
for k in layernorm_auto softmax_exp2_auto; do
  for s in 2048x32768 2048x32760; do
    ncu_metrics ${k}_$s -k regex:${k%_auto} ./build-dev/bin/tessel bench memory-bound --shape $s --kernels $k
  done
done
for s in 2048x32768 2048x32760; do
  ncu_metrics copy_$s -k regex:copy ./build-dev/bin/tessel bench memory-bound --shape $s --kernels rmsnorm_auto
done
