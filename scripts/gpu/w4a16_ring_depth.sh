#!/bin/bash
# W4A16 at M = 1 and 8: shallower rings and K tiles of 512 (four scale groups a tile) around
# c64x8_k256_h2_w3_p1_st8 (0.79 of a copy; stages 12 lost to 8 and 6, 2026-11-28 call C of
# bench/results/2026-11-28-w4a16-tokens8-h100.md: does the fixed cost grow with the ring?).
# One device call from the repository root (carry [".carry-gpu"]); records in $OUT/w4a16.jsonl.
set -u
here=$(dirname "$0")
TESTS=0 SAN=0 BENCH_TIMEOUT=200 \
  VARIANTS=c64x8_k256_h2_w3_p1_st8,c64x8_k256_h2_w3_p1_st4,c64x8_k256_h2_w3_p1_st5,c64x8_k256_h2_w3_p1_st6,c64x8_k512_h4_w3_p1_st4,c64x8_k512_h4_w2_p1_st4,c64x8_k512_h4_w3_p1_st3 \
  SHAPES=1x8192x8192g128,8x8192x8192g128 \
  timeout 300 bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|relative error|FAIL|rror"
