#!/bin/bash
# Call D of the fifth 2026-11-28 session (H200), one device call from the repository root: the
# H200's figures for the bars so far measured on the H100 only (no sanitizers; each kernel
# checked against float64 or the interpreter by its bench):
# 1. attention at L = 1K (issue 12's last bar): the examples, the pingpong + raster-group-4 and
#    rotated persistent variants, the 176-key-column tile;
# 2. the LSTM cell at hidden 8192, batch 4096 (issue 11: 1.2x the unfused sequence), with the
#    hardware's tanh, beside the plain GEMM of its shape;
# 3. W4A16 at M = 4096 (issue 14: >= 0.9x cuBLAS f16) and MoE at 4096 tokens (>= 1.5x the loop of
#    cuBLAS GEMMs).
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
NO_SANITIZE=1 CHECK="examples/kernels/flash_attention.tir" VARIANTS="g4pp rotate" \
  KERNELS=bench/kernel-variants/attention/flash_attention_n176.tir SHAPES="4,32,1024,128" \
  timeout 200 bash scripts/gpu/attention_short.sh 2>&1 | grep -E "relative error|ratio|^kernel|^flash" | grep -v "^NVIDIA"
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout 150 build-dev/bin/tessel bench gemm --kernels gemm --iterations 20 --json $OUT/gemm.jsonl \
  --shapes 4096x32768x16384 2>&1 | grep -E "ratio"
timeout 200 python3 bench/python/lstm_cell.py --json $OUT/lstm_cell.jsonl --iterations 20 \
  --shapes 4096x8192x8192 --variants bench/kernel-variants/lstm/lstm_cell_interleaved_approx.tir 2>&1 | grep -E "ms|FAIL" | head -6
(cd bench/python && timeout 120 python3 w4a16.py --json $OUT/w4a16.jsonl --iterations 20 \
   --shapes 4096x8192x8192g128 --variants p128x256 2>&1 | tail -3)
timeout 200 python3 bench/python/moe.py --json $OUT/moe.jsonl --iterations 20 --tokens 4096 \
  --experts 256 --top-k 8 --variants t64,t128 --tuned --weights int4 2>&1 | tail -6
