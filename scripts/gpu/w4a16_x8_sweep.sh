#!/bin/bash
# W4A16 at M = 1, 8 and 16 (issue 14's small-M bar: 0.8 of a copy's bandwidth, 3x cuBLAS f16 at
# M = 1) around the 8-token tiles that reached 0.78 of a copy and 3.03x at M = 1
# (bench/results/2026-11-28-w4a16-tokens8-h100.md): stages, consumer and producer warpgroups,
# the K tile; the 16-token forms at M = 16. One device call from the repository root (carry
# [".carry-gpu"]): every variant checked against the interpreter on the GPU, then graphs of 8
# launches (scripts/gpu/overlap_launches.sh), then the MoE combine example (routing weights now
# read at each tile's start): its GPU tests and timings. Records in $OUT/w4a16.jsonl and
# $OUT/moe_combine.jsonl.
set -u
here=$(dirname "$0")
X8=c64x8_k256_h2_w3_p2_st6,c64x8_k256_h2_w3_p2_st8,c64x8_k256_h2_w3_p2_st10,c64x8_k256_h2_w4_p2_st8,c64x8_k256_h2_w3_p1_st8,c64x8_k256_h2_w2_p2_st8,c64x8_k256_h2_w4_p1_st8,c64x8_k128_w3_p2_st12,c64x8_k256_h2_w3_p3_st9
X16=c64x16_k256_h2_w3_p2_st6,c64x16_k256_h2_w3_p2_st8,c64x16_k256_h2_w4_p2_st8
TESTS=0 SAN=0 BENCH_TIMEOUT=200 VARIANTS=$X8 SHAPES=1x8192x8192g128,8x8192x8192g128 \
  timeout 300 bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|relative error|FAIL|rror"
TESTS=0 SAN=0 BENCH_TIMEOUT=100 VARIANTS=$X16 SHAPES=16x8192x8192g128 \
  timeout 150 bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|relative error|FAIL|rror"
SAN=0 BENCH_TIMEOUT=150 timeout 220 bash $here/moe_combine.sh 2>&1 | grep -E "^tokens|rror|OK|PASSED|FAILED"
