#!/bin/bash
# The MoE down projection with the weighted combine fused (examples/kernels/moe_w4a16_combine.tir,
# issue 14) on the lent H100, one device call from the repository root (carry [".carry-gpu"]):
# its GPU test (ragged experts, routing weights, a random permutation of destination rows,
# against float64), compute-sanitizer (memcheck, racecheck, synccheck) over that test, then
# bench/python/moe_combine.py (TOKENS, VARIANTS override its defaults) against the unfused kernel
# followed by PyTorch's combines and the loop of cuBLAS GEMMs followed by index_add_ (FUSED: the
# fused kernels' files, comma-separated, timed side by side). JSON records in
# $OUT/moe_combine.jsonl.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
moe_test_and_sanitize '*CombineScattersScaledRows*'
build_tool_and_python || exit 1
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout ${BENCH_TIMEOUT:-400} python3 bench/python/moe_combine.py --json $OUT/moe_combine.jsonl \
  --iterations ${ITER:-20} --tokens ${TOKENS:-1,64,512,4096} \
  --variants ${VARIANTS:-t16_r128_b2,t32_r64_b4,t64,t128} \
  --fused ${FUSED:-examples/kernels/moe_w4a16_combine.tir} 2>&1 | tail -12
