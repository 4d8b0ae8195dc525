#!/bin/bash
# Flash-decoding on the lent H100, one device call from the repository root (or a carried copy
# of it): builds tessel and the Python extension; runs decode_gpu_test if a stripped binary lies
# beside this checkout's root (strip -o .carry-decode/decode_gpu_test build/test/decode_gpu_test);
# checks the split kernel against the interpreter (tessel run --gpu --check); compute-sanitizer
# (memcheck, racecheck, synccheck) on both kernels; then bench/python/decode.py (SHAPES to
# override its 18 default shapes). JSON records in $OUT/decode.jsonl, logs in $OUT.
set -u
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=$(mktemp -d)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.mem --format=csv,noheader
(cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_PYTHON=OFF > $OUT/cfg.log 2>&1 && ninja -C build-dev tessel > $OUT/build.log 2>&1) &
(cmake -S . -B build-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(which python3) -DCUDAToolkit_ROOT=/usr/local/cuda > $OUT/pycfg.log 2>&1 && cmake --build build-py --target _tessel -j 16 > $OUT/pybuild.log 2>&1) &
if [ -x ./decode_gpu_test ]; then
  (timeout 200 ./decode_gpu_test > $OUT/decode_gpu_test.log 2>&1; echo "decode_gpu_test rc=$?" >> $OUT/decode_gpu_test.log) &
fi
wait
[ -f $OUT/decode_gpu_test.log ] && grep -E "^\[  (FAILED|PASSED|  OK|SKIPPED)|Failure|rc=|decode B=" $OUT/decode_gpu_test.log | head -30
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $OUT/build.log $OUT/pybuild.log; exit 1; }
T=build-dev/bin/tessel
for s in BHK=3,G=4,L=1000,NS=3 BHK=2,G=1,L=4097,NS=5; do
  echo "flash_decode $s: $($T run examples/kernels/flash_decode.tir --gpu --check --output OP --size $s 2>&1 | grep -i 'error\|relative' | head -2)"
done
for f in flash_decode:BHK=3,G=4,L=1000,NS=3 flash_decode_combine:BH=12,NS=3; do
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool $T run examples/kernels/${f%%:*}.tir --gpu --size ${f#*:} > $OUT/san.log 2>&1
    echo "${f%%:*} $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
  done
done
export PYTHONPATH=$PWD/build-py/python
PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-200} python3 bench/python/decode.py --iterations 30 --profile --json $OUT/decode.jsonl ${SHAPES:+--shapes $SHAPES} 2>&1 | tee $OUT/decode_bench.log
