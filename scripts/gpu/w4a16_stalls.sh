#!/bin/bash
# Where the best small-M W4A16 kernel's warps stall (seventeenth session, 2026-11-29): ncu's
# per-reason stall fractions (smsp__warp_issue_stalled_*_per_warp_active.pct), issue activity
# and instruction-cache figures of one launch at M = 1, N = 8192, K = PROFILE_K (default 8192),
# G = 128 (`tessel run --gpu`), for variants V (comma-separated w4a16.py names).
set -u
source "$(dirname "$0")/common.sh"
build_tool > $LOG/build.log 2>&1 || { tail -20 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
K=${PROFILE_K:-8192}
REASONS="no_instruction wait long_scoreboard short_scoreboard math_pipe_throttle mio_throttle barrier membar sleeping branch_resolving dispatch_stall lg_throttle not_selected selected drain imc_miss misc"
NCU_METRICS=smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_elapsed.avg,smsp__warps_active.avg.per_cycle_active
for r in $REASONS; do NCU_METRICS=$NCU_METRICS,smsp__warp_issue_stalled_${r}_per_warp_active.pct; done
write_w4a16_variants "$V"
for v in ${V//,/ }; do
  kt=$(echo $v | sed -n 's/.*_k\([0-9]*\).*/\1/p')
  ncu_metrics $v --kernel-name regex:gemm_w4a16 $T run build-dev/variants/$v.tir --gpu \
    --size M=1,N=8192,K=$K,KG=$((K / 128)),NQ=$((8192 * K / ${kt:-64}))
done
