#!/bin/bash
# One carried GPU test binary's tests run REPEAT times (default 20): alone, or with BESIDE=1 the
# second half of the runs each beside every other carried binary (as check.sh runs them; the
# next run starts once they end), to tell a flake from a race. Prints each run's verdict and the
# first failure's log lines. Usage (device tool, carry [".carry-gpu"]):
#   TEST=gemm_gpu_test FILTER='GemmGpuTest.W4A16*' REPEAT=20 bash scripts/gpu/repeat_gpu_test.sh
set -u
source "$(dirname "$0")/common.sh"
TEST=${TEST:?TEST=<binary in .carry-gpu>}
FILTER=${FILTER:-*}
fails=0
for i in $(seq 1 ${REPEAT:-20}); do
  if [ "${BESIDE:-0}" = 1 ] && [ $i -gt $(( ${REPEAT:-20} / 2 )) ]; then
    for t in .carry-gpu/*_gpu_test; do
      [ "$(basename $t)" = "$TEST" ] || timeout 300 $t > /dev/null 2>&1 &
    done
  fi
  timeout 300 .carry-gpu/$TEST --gtest_filter="$FILTER" > $LOG/repeat_$i.log 2>&1
  rc=$?
  echo "run $i rc=$rc $(grep -E '^\[  (PASSED|FAILED)  \]' $LOG/repeat_$i.log | head -1)"
  if [ $rc != 0 ]; then
    fails=$((fails + 1))
    [ $fails = 1 ] && grep -B3 -A12 -E "Failure|FAILED" $LOG/repeat_$i.log | head -40
  fi
  wait
done
echo "$fails of ${REPEAT:-20} runs failed"
