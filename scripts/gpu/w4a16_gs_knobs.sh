#!/bin/bash
# The scale-after-mma W4A16 kernel's knobs at M = 1 (sixteenth session, 2026-11-29): ring depth
# (6, 8, 12), two producer warpgroups, two consumer roles, K tiles of 128 with four consumers,
# N = 8192, K = 8192 and 32768, as graphs of 8 launches (records $OUT/w4a16.jsonl; every kernel's
# output checked against float64 and cuBLAS by the bench).
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python > $LOG/build.log 2>&1 || exit 1
B=c64x8_k256_h2_gs
TESTS=0 SAN=0 CHECK_ALL=0 BENCH_TIMEOUT=250 GRAPH=8 w4a16_check_and_bench \
  ${B}_w3_p1_st8_ovpreload,${B}_w3_p1_st6_ovpreload,${B}_w3_p1_st12_ovpreload,${B}_w3_p2_st8_ovpreload,${B}_w2_p1_st8_ovpreload,c64x8_k128_h2_gs_w4_p1_st12_ovpreload \
  1x8192x8192g128,1x8192x32768g128 2>&1 | grep -E "graph of|relative|FAIL|rror"
