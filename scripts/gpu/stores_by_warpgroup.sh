#!/bin/bash
# Staged stores synced and sent by warpgroup against the role-wide form, one device call from the
# repository root (carry [".carry-gpu"]):
#  1. attention (scripts/gpu/attention_short.sh): the examples (by warpgroup: their consumer
#     warpgroups drift apart), VARIANTS (default "role g4pp pingpong") by sed, checked against
#     the interpreter and sanitized at S = 300, where
#     the second warpgroup's rows of the last query tile lie wholly past S (its TMA box is clipped
#     away); timed against cuDNN at L = 1K / 4K / 16K, causal and not.
#  2. GEMM with B [K,N] (gemm_nn.tir: role-wide stores, its warpgroups run in step) and the same
#     pinned `stores_by = warpgroup` (its N % 8 fact allows it), alternately in their own
#     processes against cuBLAS (GEMM_SHAPES; none: skip).
# Records: $OUT/attention.jsonl, $OUT/gemm_{warpgroup,role}.jsonl.
set -u
source "$(dirname "$0")/common.sh"
export OUT
if [ "${ATTENTION:-1}" = 1 ]; then
  VARIANTS=${VARIANTS:-"role g4pp pingpong"} SANITIZE=${SANITIZE:-"examples/kernels/flash_attention.tir build-dev/variants/flash_attention_g4pp.tir"} \
    NO_SANITIZE=${NO_SANITIZE:-} bash scripts/gpu/attention_short.sh
else
  build_tool || { tail -20 $LOG/build.log; exit 1; }
fi
GS=${GEMM_SHAPES:-8192x8192x8192,4096x4096x4096,2048x2048x2048,8191x4097x520}
[ "$GS" = none ] && exit 0
mkdir -p build-dev/variants
sed 's/block_grid %tiles_m, %tiles_n :/block_grid %tiles_m, %tiles_n {stores_by = warpgroup} :/' \
  examples/kernels/gemm_nn.tir > build-dev/variants/gemm_nn_wg.tir
grep -q "stores_by = warpgroup" build-dev/variants/gemm_nn_wg.tir || echo "gemm_nn_wg: sed found no grid"
for round in 1 2; do
  for side in role warpgroup; do
    k=examples/kernels/gemm_nn.tir; [ $side = warpgroup ] && k=build-dev/variants/gemm_nn_wg.tir
    echo "== gemm_nn $side (round $round)"
    timeout 150 build-dev/bin/tessel bench gemm --kernels $k --shapes $GS --iterations 30 \
      --json $OUT/gemm_$side.jsonl 2>&1 | tail -7
  done
done
