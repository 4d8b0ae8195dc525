#!/bin/bash
# W4A16 at small M with each scale group's scale applied after its wgmma (`_gs`) now that
# warp-specialize gives that loop two rings (weights + scales, token tiles) instead of one per
# tile (sixteenth session, 2026-11-29): the SASS of the K loop has 285-309 instructions per K
# tile and consumer warp against 340-370 for the scale-per-weight kernel. One device call from the
# repository root: every variant checked against the interpreter at ragged sizes, the first
# sanitized, then bench/python/w4a16.py as graphs of 8 launches (records in $OUT/w4a16.jsonl).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
B=c64x8_k256_h2
V=${B}_gs_w3_p1_st8_ovpreload,${B}_w3_p1_st8_ovpreload,${B}_gs_w4_p1_st8_ovpreload,${B}_w4_p1_st8_ovpreload
V=$V,c64x16_k256_h2_gs_w3_p1_st8_ovpreload,c64x16_k256_h2_w3_p1_st8_ovpreload
TESTS=0 SAN=${SAN:-1} CHECK_ALL=1 BENCH_TIMEOUT=${BENCH_TIMEOUT:-330} GRAPH=8 \
  w4a16_check_and_bench ${VARIANTS:-$V} \
  ${SHAPES:-1x8192x8192g128,8x8192x8192g128,16x8192x8192g128,1x8192x32768g128} 2>&1 |
  grep -E "graph of|relative error|FAIL|rror|rc="
