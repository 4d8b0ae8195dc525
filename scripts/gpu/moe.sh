#!/bin/bash
# The mixed-type MoE expert GEMMs (examples/kernels/moe_w4a16.tir and moe_w8a16.tir) on the lent
# H100, one device call from the repository root: both kernels against the interpreter at a
# ragged shape with random expert row counts (tessel run --gpu --check), compute-sanitizer
# (memcheck, racecheck, synccheck) on them, then bench/python/moe.py (TOKENS, EXPERTS, TOPK
# override its defaults: 256 experts, top-8, hidden 7168, intermediate 2048, G = 128) against the
# loop of cuBLAS GEMMs over the experts and torch._grouped_mm. VARIANTS (default t64: as written)
# times moe.py variants (t<T>[_r<R>][_b<B>][_s<S>]) side by side, TUNED=1 adds the tuned
# tessel.Variants over them, WEIGHTS=fp8 benches moe_w8a16 (int4 by default). JSON records in
# $OUT/moe.jsonl, logs under /tmp/moe-logs (only the records and the summary come back).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
T=build-dev/bin/tessel
LOGS=/tmp/moe-logs; mkdir -p $LOGS
SIZES=${CHECK_SIZES:-E=9,M=300,N=264,K=640,KG=5}
for k in moe_w4a16 moe_w8a16; do
  echo "== $k against the interpreter ($SIZES)"
  $T run examples/kernels/$k.tir --gpu --check --output Y --size $SIZES 2>&1 | grep -E "relative error|error"
  if [ "${SAN:-1}" = 1 ]; then
    for tool in memcheck racecheck synccheck; do
      compute-sanitizer --tool $tool $T run examples/kernels/$k.tir --gpu --size $SIZES > $LOGS/san.log 2>&1
      echo "$k $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOGS/san.log)"
    done
  fi
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout ${BENCH_TIMEOUT:-420} python3 bench/python/moe.py --json $OUT/moe.jsonl --iterations ${ITER:-20} \
  --tokens ${TOKENS:-1,64,512,4096,8192} --experts ${EXPERTS:-256} --top-k ${TOPK:-8} \
  --variants ${VARIANTS:-t64} ${TUNED:+--tuned} --weights ${WEIGHTS:-int4} 2>&1 | tail -30
