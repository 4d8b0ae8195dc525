#!/bin/bash
# W4A16 at small M with several blocks per SM, one device call from the repository root: the
# 64-row tiles with split-K (K divided among S blocks per tile, summed deterministically) and
# `blocks_per_sm = B` (launch bound and register budget for B blocks on an SM; the persistent grid
# is sized by the occupancy the launch finds). Checks two variants against the interpreter at a
# ragged shape (tessel run --gpu --check) and one under compute-sanitizer (memcheck, racecheck,
# synccheck), then bench/python/w4a16.py over VARIANTS at SHAPES (against cuBLAS f16 and a copy,
# interleaved). JSON records in $OUT/w4a16.jsonl, logs in $OUT (at most 8 files come back).
# CHECKED and VARIANTS take w4a16.py's variant names (pRxT, sRxT, cRxT with _kKT, _skS, _bB).
# CHECK_KG sets the checks' group count (K = 1280; 40 is G = 32).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
T=build-dev/bin/tessel
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
CHECKED=${CHECKED:-p64x16_sk4_b4,p64x16_k128_sk4_b4}
write_w4a16_variants "$CHECKED"
for v in ${CHECKED//,/ }; do
  echo "== $v against the interpreter ($(w4a16_check_sizes $v))"
  $T run build-dev/variants/$v.tir --gpu --check --size $(w4a16_check_sizes $v) 2>&1 | grep -E "relative error|rel"
done
if [ "${SAN:-1}" = 1 ]; then
  v=${CHECKED%%,*}
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool $T run build-dev/variants/$v.tir --gpu --size $(w4a16_check_sizes $v) > $OUT/san.log 2>&1
    echo "$v $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
  done
fi
cd bench/python
timeout ${BENCH_TIMEOUT:-400} python3 w4a16.py --json $OUT/w4a16.jsonl --iterations ${ITER:-30} \
  --shapes ${SHAPES:-1x8192x8192g128,16x8192x8192g128} \
  --variants ${VARIANTS:-p64x16,p64x16_sk4_b4,p64x16_k128_sk4_b4} 2>&1 | tail -60
# The SASS of one variant (SASS=name, one of CHECKED) for counting its loop's instructions.
if [ -n "${SASS:-}" ]; then
  cd ../..
  $T compile build-dev/variants/$SASS.tir --emit=cubin -o build-dev/variants/$SASS.cubin &&
    cuobjdump -sass build-dev/variants/$SASS.cubin > $OUT/$SASS.sass
fi
