#!/bin/bash
# The fused LSTM cell against the plain GEMM of the same M, N, K under Nsight Compute (issue 11:
# the cell is ~6.6% slower than the GEMM at 4096 x 32768 x 16384, bench/results/
# 2026-11-28-lstm-gemm-gap-h100.md), one device call from the repository root: one launch each
# (tessel run --gpu on random inputs), tensor-pipe activity, stall reasons, memory traffic; then
# each of VARIANTS (interleaved-cell files, e.g. bench/kernel-variants/lstm/*approx*.tir) the
# same way; L2=1 also writes ncu's memory tables (the L2 traffic by source) for the example and
# the GEMM to $OUT/ncu_l2_*.txt.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -20 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
NCU_METRICS="gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_sleeping_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__cycles_active.avg,gpc__cycles_elapsed.max,sm__throughput.avg.pct_of_peak_sustained_elapsed"
ncu_metrics gemm $T run examples/kernels/gemm.tir --gpu --size M=4096,N=32768,K=16384 --memory-limit 8
ncu_metrics lstm_il $T run examples/kernels/lstm_cell_interleaved.tir --gpu --size B=4096,I=8192,H=8192,T=128 --memory-limit 8
for v in ${VARIANTS:-}; do
  ncu_metrics $(basename $v .tir) $T run $v --gpu --size B=4096,I=8192,H=8192,T=128 --memory-limit 8
done
if [ "${L2:-0}" = 1 ]; then
  timeout 200 ncu --section MemoryWorkloadAnalysis_Tables --launch-count 1 $T run examples/kernels/gemm.tir \
    --gpu --size M=4096,N=32768,K=16384 --memory-limit 8 > $OUT/ncu_l2_gemm.txt 2>&1
  timeout 200 ncu --section MemoryWorkloadAnalysis_Tables --launch-count 1 $T run \
    examples/kernels/lstm_cell_interleaved.tir --gpu --size B=4096,I=8192,H=8192,T=128 \
    --memory-limit 8 > $OUT/ncu_l2_lstm_il.txt 2>&1
  echo "== L2 tables: $OUT/ncu_l2_gemm.txt, $OUT/ncu_l2_lstm_il.txt"
fi
