#!/bin/bash
# Call E of the 2026-11-29 session (H200), from the repository root, nothing carried: why
# LayerNorm's chunked form (the row in registers over 1024 threads, two blocks a SM) measures
# 0.82 of a copy where the probe's same form measures 0.97-1.00 (call A) and RMSNorm's chunked
# form 1.00: ncu on one launch of each at 4096 x 16384 (ptxas: no spills there) and 2048 x 32768.
set -u
source "$(dirname "$0")/common.sh"
(build_tool > $LOG/bt.log 2>&1; echo "tool rc=$?" > $LOG/bt.rc) &
nvcc -std=c++17 -O3 -arch=sm_90a -lineinfo scripts/gpu/rows_columns_probe.cu -o $LOG/rcp || exit 1
wait; cat $LOG/bt.rc
V=build-dev/variants
for k in layernorm rmsnorm; do registers_variant $k 1024 2 $V > /dev/null; done
STALLS=$(for r in barrier long_scoreboard short_scoreboard wait lg_throttle mio_throttle drain math_pipe_throttle not_selected selected branch_resolving no_instruction; do
  echo -n "smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio,"; done | sed 's/,$//')
M="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,smsp__issue_active.avg.pct_of_peak_sustained_active,$STALLS"
prof() {  # name, command...
  local name=$1; shift
  timeout 120 ncu --metrics $M --launch-count 1 "$@" > $OUT/ncu_$name.txt 2>&1
  echo "== $name"
  grep -E "^ +[a-z_]+__" $OUT/ncu_$name.txt | sed -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//' -e 's/  */ /g'
}
for s in 4096x16384 2048x32768; do
  m=${s%x*}; n=${s#*x}
  prof probe_ln_$s --kernel-name regex:row_regs $LOG/rcp $s
  prof tessel_ln_$s build-dev/bin/tessel run $V/layernorm_auto_chunked1024.tir --gpu --size M=$m,N=$n
  prof tessel_rms_$s build-dev/bin/tessel run $V/rmsnorm_auto_chunked1024.tir --gpu --size M=$m,N=$n
done
build-dev/bin/tessel compile $V/layernorm_auto_chunked1024.tir --size-hint M=4096,N=16384 -o $OUT/ln_chunked_16384.cu
