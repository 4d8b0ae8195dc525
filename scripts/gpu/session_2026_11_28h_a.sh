#!/bin/bash
# Call A of the eighth 2026-11-28 session (H200), one device call from the repository root
# (~5 minutes): the sigmoid in four instructions (runtime/device/convert.cuh), tanh-to-sigmoid
# (GELU's tanh form as h sigmoid(2z)), no pad select after a zero-filled masked fetch, and
# schedule-rows' near-fit tiles for elementwise programs:
# 1. the row programs against the interpreter on the GPU (ragged sizes), the carried GPU test
#    binaries that run sigmoid epilogues (gemm_epilogue_gpu_test, kernels_gpu_test);
# 2. bias + GELU unpinned at the six shapes, and at 8191 x 8200 under pins ([1,1024], [1,2048]:
#    the model's former choice) and the hardware-tanh variant for reference;
# 3. the wide rows under more pins (two passes over [1,8192], 1024 threads);
# 4. the LSTM cell at hidden 8192 (sigmoid and tanh in its epilogue), checked against torch.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
start=$(date +%s)
build_tool_and_python || exit 1
echo "built $(( $(date +%s) - start )) s"
T=build-dev/bin/tessel
(for t in gemm_epilogue_gpu_test kernels_gpu_test; do
   timeout 200 .carry-gpu/$t > $LOG/$t.log 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $LOG/$t.log | tr '\n' ' ')"
 done > $LOG/tests.txt) &
check_row_programs > $LOG/rows_check.log 2>&1
echo "checked $(( $(date +%s) - start )) s"
G=bench/kernel-variants/bias_gelu_auto
PLAN="65536x1024:bias_gelu 16384x4096:bias_gelu 4096x16384:bias_gelu 2048x32768:bias_gelu,rmsnorm+two+c8192,rmsnorm+two+t1024,softmax_exp2+two+c8192,layernorm+two+c8192,layernorm+shared+t1024
2047x32760:bias_gelu 8191x8200:bias_gelu,bias_gelu+c1024,bias_gelu+c2048,bias_gelu+c512,${G}_tanh_approx.tir,rmsnorm,softmax_exp2,layernorm"
CHECK=0 PLAN="$PLAN" bash scripts/gpu/rows_pins.sh > $LOG/rows_bench.log 2>&1
echo "rows $(( $(date +%s) - start )) s"
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout 240 python3 bench/python/lstm_cell.py --json $OUT/lstm_cell.jsonl --iterations 20 \
  --shapes 300x200x192,4096x8192x8192 --variants bench/kernel-variants/lstm/lstm_cell_interleaved_approx.tir > $LOG/lstm.log 2>&1
echo "lstm $(( $(date +%s) - start )) s"
wait
cp $OUT/rows-pins.jsonl $OUT/rows-h.jsonl 2>/dev/null
echo "== rows check"; cut -c1-100 $LOG/rows_check.log | grep -E "bias_gelu|e-0[0-3] |rror|FAIL" | head -20
echo "== tests"; cat $LOG/tests.txt
echo "== lstm"; grep -E "ms|FAIL|rror|rel" $LOG/lstm.log | cut -c1-200 | head -12
echo "== rows bench"; grep -E "^baselines|_auto|FAIL|rror" $LOG/rows_bench.log | cut -c1-130
