#!/bin/bash
# Overlapping launches (overlap-launches: programmatic dependent launch), one device call from
# the repository root:
#   TESTS=overlap   the carried overlap_gpu_test only; TESTS=all every carried GPU test binary
#                   (scripts/carry_gpu_tests.sh; carry [".carry-gpu"]); TESTS=0 none
#   SAN=1           compute-sanitizer memcheck, racecheck, synccheck on the first of VARIANTS
#   then bench/python/w4a16.py over VARIANTS at SHAPES as CUDA graphs of GRAPH launches (where
#   launches overlap) and launch by launch (records in $OUT/w4a16.jsonl). A/B of one kernel:
#   NAME (overlap and prefetch, the default), NAME_ovwait (overlap, no prefetch), NAME_ovoff.
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
T=build-dev/bin/tessel
VARIANTS=${VARIANTS:-c64x16_k128_w3_p2_st12,c64x16_k128_w3_p2_st12_ovwait,c64x16_k128_w3_p2_st12_ovoff}
write_w4a16_variants "$VARIANTS"
v=${VARIANTS%%,*}
for c in ${VARIANTS//,/ }; do
  SIZE=$(w4a16_check_sizes $c)
  echo "$c against the interpreter ($SIZE): $($T run build-dev/variants/$c.tir --gpu --check --size $SIZE 2>&1 | grep -E 'relative error|error')"
done
SIZE=$(w4a16_check_sizes $v)
if [ "${SAN:-1}" = 1 ]; then
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool $T run build-dev/variants/$v.tir --gpu --size $SIZE > $LOG/san.log 2>&1
    echo "$v $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san.log)"
  done
fi
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
cd bench/python
timeout ${BENCH_TIMEOUT:-360} python3 w4a16.py --json $OUT/w4a16.jsonl --iterations ${ITER:-30} \
  --graph ${GRAPH:-8} --sets 4 \
  --shapes ${SHAPES:-16x8192x2048g128,16x8192x8192g128,1x8192x8192g128} \
  --variants $VARIANTS 2>&1 | tail -40
