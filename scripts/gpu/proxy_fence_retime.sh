#!/bin/bash
# After lower-arefs' proxy fence (2026-11-28): the kernels whose threads read TMA-filled slots
# fence before each release, and every figure of them predates that. One device call from the
# repository root (carry [".carry-gpu"]): every carried GPU test binary (TESTS=0 skips), then
# W4A16's best small-M variants as CUDA graphs (W4A16_VARIANTS at W4A16_SHAPES, checked against
# the interpreter first), then the int4 MoE expert GEMM with the tuned dispatcher over MOE_VARIANTS
# at MOE_TOKENS (the small-token choices used two and four blocks an SM, refused from 2026-11-27
# until the fence was measured). Records in $OUT/w4a16.jsonl and $OUT/moe.jsonl.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
[ "${TESTS:-all}" = all ] && TEST_TIMEOUT=${TEST_TIMEOUT:-240} run_gpu_test_binaries
echo "== W4A16 $(date +%T)"
CHECK_ALL=1 SAN=0 BENCH_TIMEOUT=${W4A16_TIMEOUT:-170} w4a16_check_and_bench \
  "${W4A16_VARIANTS:-c64x16_k256_h2_w3_p2_st6,c64x16_k256_h2_w2_st8,c64x16_k128_sk3_b4}" \
  "${W4A16_SHAPES:-16x8192x8192g128,1x8192x8192g128,16x8192x32768g128}"
echo "== MoE $(date +%T)"
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout ${MOE_TIMEOUT:-170} python3 bench/python/moe.py --json $OUT/moe.jsonl --iterations 20 \
  --tokens ${MOE_TOKENS:-1,64,512,4096} --variants ${MOE_VARIANTS:-t16_r128_b2,t32_r64_b4,t64,t128} \
  --tuned --weights int4 2>&1 | tail -14
echo "== end $(date +%T) $(git log -1 --format=%h 2>/dev/null)"
