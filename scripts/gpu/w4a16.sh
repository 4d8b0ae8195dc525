#!/bin/bash
# W4A16 GEMM on the lent H100, one device call from the repository root: builds the tool and
# the Python extension; runs GemmGpuTest.W4A16 (built here and carried:
# strip -o .carry-w4/gemm_gpu_test build/test/gemm_gpu_test; carry [".carry-w4"]); checks the
# kernel against the interpreter (tessel run --gpu --check) at a ragged shape (also the zero-point
# kernel, gemm_w4a16_zp.tir); compute-sanitizer
# (memcheck, racecheck, synccheck) on a small run, for both weight orders; then bench/python/w4a16.py (SHAPES, VARIANTS
# override its defaults). JSON records in $OUT/w4a16.jsonl, logs in $OUT.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool &
build_python &
if [ -x .carry-w4/gemm_gpu_test ]; then
  (timeout 250 .carry-w4/gemm_gpu_test --gtest_filter='*W4A16*' > $OUT/gemm_gpu_test.log 2>&1; echo "gemm_gpu_test rc=$?" >> $OUT/gemm_gpu_test.log) &
fi
wait
grep -E "^\[  (FAILED|PASSED|  OK)|Failure|rc=|Expected|Which is|seed" $OUT/gemm_gpu_test.log 2>/dev/null | head -20
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
T=build-dev/bin/tessel
# Both weight orders: the natural one and the packed one (gemm_w4a16_packed.tir), each against
# the interpreter on the same random bytes (which reads Q through its declared layout).
for f in gemm_w4a16 gemm_w4a16_packed gemm_w4a16_zp; do
  echo "== $f"
  $T run examples/kernels/$f.tir --gpu --check --size M=70,N=328,K=640,KG=10 2>&1 | tail -3
  if [ "${SAN:-1}" = 1 ]; then
    for tool in memcheck racecheck synccheck; do
      compute-sanitizer --tool $tool $T run examples/kernels/$f.tir --gpu --size M=70,N=328,K=640,KG=10 > $OUT/san.log 2>&1
      echo "$f $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
    done
  fi
done
export PYTHONPATH=$PWD/build-py/python
cd bench/python
timeout 400 python3 w4a16.py --json $OUT/w4a16.jsonl --iterations ${ITER:-30} \
  --shapes ${SHAPES:-1x8192x8192g128,16x8192x8192g128,256x8192x8192g128,4096x8192x8192g128} \
  --variants ${VARIANTS:-t128x64,t64x16,t128x16,t64x64,t128x128,t128x256} 2>&1 | tail -40
