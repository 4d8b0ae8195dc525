#!/bin/bash
# W4A16 at M = 1 with 8-token tiles (issue 14's small-M bar; README, the W4A16 lead): at M = 1 a
# 16-token X box runs 15 rows past the tensor and costs 1.4 µs a launch
# (bench/results/2026-11-28-w4a16-zero-points-pad-m-h100.md). Does an 8-token box (7 rows past)
# cost less? One device call from the repository root: scripts/gpu/overlap_launches.sh (every
# variant checked against the interpreter on the GPU first, then CUDA graphs of 8 launches) with
# the 8- and 16-token forms of the best small-M variants at M = 1 and 8 (and 16, where the
# 8-token form reads the weights twice), two rounds. Records in $OUT/w4a16.jsonl.
set -u
here=$(dirname "$0")
for round in $(seq 1 ${ROUNDS:-2}); do
  echo "== round $round"
  TESTS=0 SAN=${SAN:-0} BENCH_TIMEOUT=${BENCH_TIMEOUT:-200} \
    VARIANTS=${VARIANTS:-c64x8_k256_h2_w3_p2_st6,c64x16_k256_h2_w3_p2_st6,c64x8_k256_h2_w2_st8,c64x16_k256_h2_w2_st8} \
    SHAPES=${SHAPES:-1x8192x8192g128,8x8192x8192g128,16x8192x8192g128} \
    bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|relative error|FAIL|rror"
done
