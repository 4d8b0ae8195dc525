#!/bin/bash
# The second call of the third 2026-11-28 session, from the repository root (carry
# [".carry-gpu"]): the fused gather with its producer `issue = warp` (the 32 lanes share the
# row boxes; one thread issuing them ran at 0.39x of index_select + the unfused kernel):
# scripts/gpu/moe_gather.sh whole (GPU test, sanitizers, timings), the gather's `tessel run
# --gpu --check` unfiltered (it printed nothing in the first call), then W4A16 with 8-token
# boxes (scripts/gpu/w4a16_tokens8.sh, one round) and the combine with early weights.
# Ran once at tree 69dff90 (bench/results/2026-11-28-moe-gather-h100.md); since then issue = warp
# is reverted and the early-weights variant is the example, so it only reruns at that tree.
here=$(dirname "$0")
BENCH_TIMEOUT=240 bash $here/moe_gather.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
timeout 90 build-dev/bin/tessel run examples/kernels/moe_w4a16_gather.tir --gpu --check \
  --output Y --size E=9,T=50,M=300,N=264,K=640,KG=5 > /tmp/gather_run.log 2>&1
echo "gather tessel run rc=$?"; grep -vE "checksum" /tmp/gather_run.log | tail -4
echo "== W4A16 8-token boxes"
ROUNDS=1 timeout 200 bash $here/w4a16_tokens8.sh
echo "== combine, early weights"
SAN=0 BENCH_TIMEOUT=150 TOKENS=1,64,4096 \
  FUSED=examples/kernels/moe_w4a16_combine.tir,bench/kernel-variants/moe/moe_w4a16_combine_early_weights.tir \
  timeout 200 bash $here/moe_combine.sh 2>&1 | grep -E "^tokens|rror"
