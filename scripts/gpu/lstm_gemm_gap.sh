#!/bin/bash
# Where the fused LSTM cell's GEMM rate goes at hidden 8192 (issue 11: 1.2x the unfused sequence
# needs ~693 TFLOP/s at batch 4096), one device call from the repository root: the plain GEMM
# example against cuBLAS at the cell's GEMM shapes (both GEMMs in one K = I + H, and each alone),
# then bench/python/lstm_cell.py at SHAPES with the interleaved cell's cluster variants
# (bench/kernel-variants/lstm/). Records in $OUT/gemm.jsonl and $OUT/lstm_cell.jsonl.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
timeout 200 build-dev/bin/tessel bench gemm --kernels gemm --iterations 20 --json $OUT/gemm.jsonl \
  --shapes ${GEMM_SHAPES:-4096x32768x16384,4096x32768x8192,8192x8192x8192} 2>&1 | tail -12
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout 300 python3 bench/python/lstm_cell.py --json $OUT/lstm_cell.jsonl --iterations 20 \
  --shapes ${SHAPES:-4096x8192x8192,1024x8192x8192} \
  --variants bench/kernel-variants/lstm/*.tir 2>&1 | grep -E "ms|FAIL" | head -6
