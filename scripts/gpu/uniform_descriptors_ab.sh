#!/bin/bash
# The `uniform_descriptors` pin A/B'd in one process per bench (sixteenth session, 2026-11-29),
# one device call from the repository root: the B descriptors of wgmmas with A in registers
# broadcast from lane 0 (the default since) against as computed (`uniform_descriptors = false`):
#   W4A16 at small M (`_nu` = off), each variant checked against the interpreter first, as
#   graphs of 8 launches (records $OUT/w4a16.jsonl). (Attention's P·V takes P from registers too,
#   but its SASS is the same either way: ptxas proved that descriptor uniform already.)
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
V=""
for b in c64x8_k256_h2_gs_w3 c64x8_k256_h2_gs_w4 c64x16_k256_h2_gs_w3; do
  V="$V,${b}_p1_st8_ovpreload,${b}_p1_st8_ovpreload_nu"
done
TESTS=0 SAN=1 CHECK_ALL=1 BENCH_TIMEOUT=300 GRAPH=8 \
  w4a16_check_and_bench ${V#,} 1x8192x8192g128,8x8192x8192g128,16x8192x8192g128 2>&1 |
  grep -E "graph of|relative error|FAIL|rror|rc="
