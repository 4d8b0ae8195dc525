#!/bin/bash
# W4A16's fixed cost per launch, one device call from the repository root:
#   TESTS=1     every carried GPU test binary (scripts/carry_gpu_tests.sh; carry [".carry-gpu"]);
#   CHECK_ALL=1 every variant checked against the interpreter on the GPU (else the first);
#   SAN=1       compute-sanitizer memcheck, racecheck, synccheck on the first of VARIANTS
#               (split-k's partial tiles and arrival counter);
#   then bench/python/w4a16.py over VARIANTS at SHAPES, each timed launch by launch (an event pair
#   around every launch, interleaved with cuBLAS and a copy) and as CUDA graphs of GRAPH launches
#   rotating over 4 weight copies (records in $OUT/w4a16.jsonl). SHAPES over several K give the
#   fixed cost: time = fixed + bytes / rate.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
[ "${TESTS:-0}" = 1 ] && run_gpu_test_binaries
T=build-dev/bin/tessel
VARIANTS=${VARIANTS:-c64x16_k128_sk3_b4,c64x16_k128_sk2_b3_st8}
write_w4a16_variants "$VARIANTS"
v=${VARIANTS%%,*}
# CHECK_ALL=1: every variant against the interpreter at its ragged size (else the first only).
for c in $([ "${CHECK_ALL:-0}" = 1 ] && echo ${VARIANTS//,/ } || echo $v); do
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
  --shapes ${SHAPES:-16x8192x2048g128,16x8192x8192g128,16x8192x32768g128,1x8192x8192g128} \
  --variants $VARIANTS 2>&1 | tail -40
