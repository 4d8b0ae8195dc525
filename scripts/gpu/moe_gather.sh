#!/bin/bash
# The MoE up projection with the routing's gather fused (examples/kernels/moe_w4a16_gather.tir,
# issue 14: X's rows read from the tokens by TMA, one 1-row box per routed row) on the lent H100,
# one device call from the repository root (carry [".carry-gpu"]): the MoE GPU tests (the gather's
# among them: ragged experts, a random token map, against float64), compute-sanitizer (memcheck,
# racecheck, synccheck) over the gather's test, then bench/python/moe_gather.py (TOKENS, VARIANTS
# override its defaults) against torch.index_select followed by the unfused kernel. JSON records
# in $OUT/moe_gather.jsonl.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
moe_test_and_sanitize '*GatherReadsRowsFromTheirTokens*'
build_tool_and_python || exit 1
# Both routing kernels against the interpreter at a ragged shape (tessel run gives the row maps
# random rows: tokens for the gather, a permutation of the slots for the combine's scatter).
for k in moe_w4a16_gather:E=9,T=50,M=300,N=264,K=640,KG=5 moe_w4a16_combine:E=9,M=300,N=264,K=640,KG=5; do
  echo "${k%%:*} $(timeout 120 build-dev/bin/tessel run examples/kernels/${k%%:*}.tir --gpu --check \
    --output Y --size ${k#*:} 2>&1 | grep -E 'relative error|error' | head -2)"
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout ${BENCH_TIMEOUT:-400} python3 bench/python/moe_gather.py --json $OUT/moe_gather.jsonl \
  --iterations ${ITER:-20} --tokens ${TOKENS:-1,64,512,4096} \
  --variants ${VARIANTS:-t16_r128_b2,t32_r64_b4,t64,t128} 2>&1 | tail -12
