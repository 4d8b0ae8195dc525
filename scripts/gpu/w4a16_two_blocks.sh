#!/bin/bash
# Two blocks an SM for the small-M W4A16 kernel (seventeenth session, 2026-11-29): two consumer
# roles and one producer (384 threads; launch bound 80 registers, consumers raised to 96 by
# setmaxnreg, no spills by ptxas -v) with `blocks_per_sm = 2`, so that the next launch's block
# can start beside this launch's on the same SM (its preloads before the end of this one),
# against the best one-block kernel and the same two-role kernel one block an SM; at M = 1 / 8,
# N = K = 8192 and K = 32768, as graphs of 8 launches; each variant checked against the
# interpreter on ragged sizes first.
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python > $LOG/build.log 2>&1 || { tail -20 $LOG/build.log; exit 1; }
B=c64x8_k256_h2_gs
TESTS=0 SAN=0 CHECK_ALL=1 BENCH_TIMEOUT=200 GRAPH=8 w4a16_check_and_bench \
  ${B}_w3_p1_st8_ovpreload,${B}_b2_w2_p1_st8_ovpreload,${B}_b2_w2_p1_st6_ovpreload,${B}_w2_p1_st8_ovpreload \
  1x8192x8192g128,8x8192x8192g128,1x8192x32768g128 2>&1 | grep -E "interpreter|graph of|FAIL|rror"
