#!/bin/bash
# W4A16 with K tiles of 512 after the fix of multi-box TMA loads of 4-bit tiles (each box at
# half its element offset in bytes): the GPU against the interpreter at whole K tiles
# (scripts/gpu/w4a16_k512_check.sh), then M = 1 and 8 as graphs beside the best K-256 variant.
# One device call from the repository root; records in $OUT/w4a16.jsonl.
set -u
here=$(dirname "$0")
bash $here/w4a16_k512_check.sh
TESTS=0 SAN=0 BENCH_TIMEOUT=150 \
  VARIANTS=c64x8_k256_h2_w3_p1_st8,c64x8_k512_h4_w2_p1_st4,c64x8_k512_h4_w2_p1_st3,c64x8_k512_h4_w2_p1_st5 \
  SHAPES=1x8192x8192g128,8x8192x8192g128 \
  timeout 250 bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|relative error|FAIL|rror"
