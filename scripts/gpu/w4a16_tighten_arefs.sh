#!/bin/bash
# The pass tighten-arefs on the GPU (sixteenth session, 2026-11-29), one device call from the
# repository root:
#   1. W4A16 at small M with the scale after each group's wgmma (`_gs`), with the pass and
#      without it (`_nt`: tighten_arefs = false on the grid), every variant checked against the
#      interpreter at ragged sizes, the first sanitized, then timed as graphs of 8 launches at
#      M = 1, 8, 16 (N = K = 8192) and 1 x 8192 x 32768 (records $OUT/w4a16.jsonl);
#   2. the MoE expert GEMM (its consumers' waits and releases move too): both kernels against the
#      interpreter and sanitized, then 4096 tokens over 256 experts, top-8, with 192-token tiles
#      against the cuBLAS loop (records $OUT/moe.jsonl).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
V=""
for b in c64x8_k256_h2_gs_w3 c64x8_k256_h2_gs_w4 c64x16_k256_h2_gs_w3; do
  V="$V,${b}_p1_st8_ovpreload,${b}_p1_st8_ovpreload_nt"
done
TESTS=0 SAN=1 CHECK_ALL=1 BENCH_TIMEOUT=300 GRAPH=8 \
  w4a16_check_and_bench ${V#,} 1x8192x8192g128,8x8192x8192g128,16x8192x8192g128,1x8192x32768g128 2>&1 |
  grep -E "graph of|relative error|FAIL|rror|rc="
TOKENS=4096 VARIANTS=t192 BENCH_TIMEOUT=150 ITER=20 bash scripts/gpu/moe.sh 2>&1 | tail -14
