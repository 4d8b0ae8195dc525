#!/bin/bash
# Flash-decoding on the lent H100, one device call from the repository root (or a carried copy
# of it): builds tessel (with the tests, see below) and the Python extension; runs decode_gpu_test if a stripped binary lies
# beside this checkout's root (strip -o .carry-decode/decode_gpu_test build/test/decode_gpu_test);
# checks the split kernel against the interpreter (tessel run --gpu --check); compute-sanitizer
# (memcheck, racecheck, synccheck) on both kernels; then bench/python/decode.py (SHAPES to
# override its 18 default shapes; SAN=0 skips the sanitizer). JSON records in $OUT/decode.jsonl, logs in $OUT.
set -u
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=$(mktemp -d)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LOG=${LOG:-/tmp/tessel-logs}; mkdir -p $LOG
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.mem --format=csv,noheader
T=build-dev/bin/tessel
[ -d gtest-src ] && [ ! -x ./decode_gpu_test ] && T=build-test/bin/tessel
[ $T = build-dev/bin/tessel ] && (cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_PYTHON=OFF > $LOG/cfg.log 2>&1 && ninja -C build-dev tessel > $LOG/build.log 2>&1) &
(cmake -S . -B build-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(which python3) -DCUDAToolkit_ROOT=/usr/local/cuda > $LOG/pycfg.log 2>&1 && cmake --build build-py --target _tessel -j 16 > $LOG/pybuild.log 2>&1) &
# The tests, built here when googletest's sources are carried beside the checkout (the image has
# no GoogleTest): cp -r /usr/src/googletest .carry-decode/gtest-src.
if [ -d gtest-src ] && [ ! -x ./decode_gpu_test ]; then
  (cmake -S gtest-src -B build-gt -G Ninja -DCMAKE_BUILD_TYPE=Release > $OUT/gt.log 2>&1 && cmake --build build-gt -j 16 >> $OUT/gt.log 2>&1 && cmake --install build-gt --prefix /tmp/gtest >> $OUT/gt.log 2>&1 &&
   cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=ON -DTESSEL_BUILD_PYTHON=OFF -DCMAKE_PREFIX_PATH=/tmp/gtest > $OUT/testcfg.log 2>&1 &&
   ninja -C build-test tessel decode_gpu_test decode_test > $OUT/testbuild.log 2>&1 || tail -30 $OUT/gt.log $OUT/testcfg.log $OUT/testbuild.log
   cp build-test/test/decode_gpu_test build-test/test/decode_test . 2>/dev/null
   (timeout 200 ./decode_test > $OUT/decode_test.log 2>&1; echo "decode_test rc=$?" >> $OUT/decode_test.log) &
   (timeout 200 ./decode_gpu_test > $OUT/decode_gpu_test.log 2>&1; echo "decode_gpu_test rc=$?" >> $OUT/decode_gpu_test.log)
   wait) &
elif [ -x ./decode_gpu_test ]; then
  (timeout 200 ./decode_gpu_test > $OUT/decode_gpu_test.log 2>&1; echo "decode_gpu_test rc=$?" >> $OUT/decode_gpu_test.log) &
fi
wait
for f in decode_test decode_gpu_test; do [ -f $OUT/$f.log ] && grep -E "^\[  (FAILED|PASSED|  OK|SKIPPED)|Failure|rc=|decode B=" $OUT/$f.log | head -30; done
ls $T build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
for s in BHK=3,G=4,L=1000,NS=3 BHK=2,G=1,L=4097,NS=5; do
  echo "flash_decode $s: $($T run examples/kernels/flash_decode.tir --gpu --check --output OP --size $s 2>&1 | grep -i 'error\|relative' | head -2)"
done
[ "${SAN:-1}" = 1 ] && for f in flash_decode:BHK=3,G=4,L=1000,NS=3 flash_decode_combine:BH=12,NS=3; do
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool $T run examples/kernels/${f%%:*}.tir --gpu --size ${f#*:} > $OUT/san.log 2>&1
    echo "${f%%:*} $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
  done
done
export PYTHONPATH=$PWD/build-py/python
PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-200} python3 bench/python/decode.py --iterations 30 --profile --json $OUT/decode.jsonl ${SHAPES:+--shapes $SHAPES} 2>&1 | tee $OUT/decode_bench.log
