#!/bin/bash
# Overlapping launches (overlap-launches: programmatic dependent launch), one device call from
# the repository root:
#   TESTS=overlap   the carried overlap_gpu_test only; TESTS=all every carried GPU test binary
#                   (scripts/carry_gpu_tests.sh; carry [".carry-gpu"]); TESTS=0 none
#   SAN=1           compute-sanitizer memcheck, racecheck, synccheck on the first of VARIANTS
#   then bench/python/w4a16.py over VARIANTS at SHAPES as CUDA graphs of GRAPH launches (where
#   launches overlap) and launch by launch (records in $OUT/w4a16.jsonl). A/B of one kernel:
#   NAME (overlapping, the default), NAME_ovearly / _ovlate / _ovprefetch, NAME_ovoff. Every variant
#   is checked against the interpreter first.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
case ${TESTS:-overlap} in
  all) run_gpu_test_binaries ;;
  overlap) timeout 300 .carry-gpu/overlap_gpu_test > $LOG/overlap.log 2>&1
           echo "overlap_gpu_test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|^\[       OK|Failure' $LOG/overlap.log | tr '\n' ' ')"
           grep -B2 -A8 "Failure" $LOG/overlap.log | head -40 ;;
esac
CHECK_ALL=1 w4a16_check_and_bench \
  "${VARIANTS:-c64x16_k128_w3_p2_st12,c64x16_k128_w3_p2_st12_ovoff}" \
  "${SHAPES:-16x8192x2048g128,16x8192x8192g128,1x8192x8192g128}"
