#!/bin/bash
# Call H of the third 2026-11-29 session (H200), from the repository root: why the same LayerNorm
# schedule runs 2% slower under `__launch_bounds__(1024, 2)` than under `(1024)` at 2047 x 32760
# (call E: tessel's emitted kernel and the hand-written `row_regs_tv<1024, 4, 2>` 0.963-0.974 of
# the probe's copy, the hand-written `row_regs` under `(1024)` 0.983-0.995). Nsight Compute on the
# first launch of each of the three in rows_emitted_probe.cu: time, instructions, stall reasons,
# L1 / L2 / DRAM traffic.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -20 $LOG/build.log; exit 1; }
rm -rf $LOG/ev
./build-dev/bin/tessel compile examples/kernels/layernorm_auto.tir --size-hint M=2047,N=32760 \
  --emit=cuda -o $LOG/ln_n32k.cu
bash scripts/gpu/emitted_variants.sh $LOG/ln_n32k.cu $LOG/ev n32k 2>/dev/null
nvcc -std=c++17 -O3 -arch=sm_90a -Iscripts/gpu -Iruntime/device -I$LOG/ev \
  scripts/gpu/rows_emitted_probe.cu -o $LOG/rows_emitted_probe > $LOG/nvcc.log 2>&1 ||
  { tail -30 $LOG/nvcc.log; exit 1; }
NCU_METRICS="gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg,smsp__cycles_active.avg,\
smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,\
smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,\
smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_drain.ratio,\
smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,\
smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,\
l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,\
dram__bytes_read.sum,dram__bytes_write.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,\
smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum"
export VARIANTS=emitted ROUNDS=1
# ncu matches a kernel's function name without its template arguments: row_regs is launched once
# (row_regs<false, true, 0>), row_regs_tv first as <1024, 4, 2>. (The first run of this call had
# matched the mangled names, which ncu does not see: the emitted kernel's table only.)
for k in ${KERNELS:-ln_n32k_emitted row_regs row_regs_tv}; do
  ncu_metrics $k -k regex:^$k\$ $LOG/rows_emitted_probe 2047x32760:n32k
done
