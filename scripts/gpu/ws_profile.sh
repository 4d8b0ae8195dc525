#!/bin/bash
# Where the time goes (issue 10): the reference GEMM against cuBLAS at two shapes, then Nsight
# Compute (speed of light, warp states, launch) on one launch each of the plain GEMM, the
# warp-specialized variants given as lowered IR, and the reference GEMM, at SIZE (default
# 4096^3). Usage (device tool, repo root): scripts/gpu/ws_profile.sh [variant.tir ...]
set -u
source "$(dirname "$0")/common.sh"
SIZE=${SIZE:-M=4096,N=4096,K=4096}
build_tool || { echo "build failed"; tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
echo "== reference GEMM vs cuBLAS"
$T bench gemm-reference --shapes 4096x4096x4096,3000x5000x704 --dtype f16 --iterations 30 2>&1 | grep -E "x[0-9]+x" | head
NCU_METRICS="gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_sleeping_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct,smsp__warp_issue_stalled_no_instruction_per_warp_active.pct,smsp__inst_executed.sum,dram__bytes.sum,lts__t_bytes.sum"
export NCU_TIMEOUT=240
ncu_metrics plain $T run examples/kernels/gemm.tir --gpu --size $SIZE
for v in "$@"; do
  ncu_metrics $(basename $v .tir) $T run $v --gpu --passes=verify --size $SIZE
done
ncu_metrics reference --kernel-name regex:reference_gemm_f16 $T bench gemm-reference --shapes ${SIZE_X:-4096x4096x4096} --dtype f16 --iterations 1 --warmup 1
