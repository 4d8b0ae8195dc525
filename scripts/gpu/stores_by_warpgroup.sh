#!/bin/bash
# Staged stores synced and sent by warpgroup (stage-stores' default since this script) against
# the role-wide form (`stores_by = role` pinned on the grid), one device call from the
# repository root (carry [".carry-gpu"]):
#  1. attention (scripts/gpu/attention_short.sh): the examples (by warpgroup), VARIANTS="role
#     g4pp pingpong" by sed, checked against the interpreter and sanitized at S = 300, where
#     the second warpgroup's rows of the last query tile lie wholly past S (its TMA box is clipped
#     away); timed against cuDNN at L = 1K / 4K / 16K, causal and not.
#  2. GEMM with B [K,N] (gemm_nn.tir, whose N % 8 fact lets its stores go by warpgroup) and the
#     same pinned `stores_by = role`, alternately in their own processes against cuBLAS.
# Records: $OUT/attention.jsonl, $OUT/gemm_{warpgroup,role}.jsonl.
set -u
source "$(dirname "$0")/common.sh"
export OUT
VARIANTS=${VARIANTS:-"role g4pp pingpong"} SANITIZE=${SANITIZE:-"examples/kernels/flash_attention.tir build-dev/variants/flash_attention_g4pp.tir"} \
  NO_SANITIZE=${NO_SANITIZE:-} bash scripts/gpu/attention_short.sh
sed 's/block_grid %tiles_m, %tiles_n :/block_grid %tiles_m, %tiles_n {stores_by = role} :/' \
  examples/kernels/gemm_nn.tir > build-dev/variants/gemm_nn_role.tir
grep -q "stores_by = role" build-dev/variants/gemm_nn_role.tir || echo "gemm_nn_role: sed found no grid"
GS=${GEMM_SHAPES:-8192x8192x8192,4096x4096x4096,2048x2048x2048,8191x4097x520}
for round in 1 2; do
  for side in warpgroup role; do
    k=examples/kernels/gemm_nn.tir; [ $side = role ] && k=build-dev/variants/gemm_nn_role.tir
    echo "== gemm_nn $side (round $round)"
    timeout 150 build-dev/bin/tessel bench gemm --kernels $k --shapes $GS --iterations 30 \
      --json $OUT/gemm_$side.jsonl 2>&1 | grep -E "ratio|x[0-9]+x|FAIL|error" | tail -6
  done
done
