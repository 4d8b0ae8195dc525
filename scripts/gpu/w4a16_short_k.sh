#!/bin/bash
# W4A16's fixed cost a launch on the H200 (sixteenth session, 2026-11-29): the best small-M
# kernels at M = 1, N = 8192 and short K (256 to 4096; one K tile to sixteen), as graphs of 8
# launches beside a copy of the same bytes and cuBLAS f16 (records $OUT/w4a16.jsonl).
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python > $LOG/build.log 2>&1 || exit 1
TESTS=0 SAN=0 CHECK_ALL=0 BENCH_TIMEOUT=200 GRAPH=8 \
  w4a16_check_and_bench c64x8_k256_h2_gs_w3_p1_st8_ovpreload,c64x8_k256_h2_gs_w4_p1_st8_ovpreload \
  1x8192x256g128,1x8192x1024g128,1x8192x2048g128,1x8192x4096g128 2>&1 | grep -E "graph of|relative|FAIL|rror"
