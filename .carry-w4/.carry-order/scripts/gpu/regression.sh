#!/bin/bash
# Every GPU test binary of the session on the lent H100 (built here, stripped and carried:
# for t in attention decode gemm_epilogue gemm kernels runtime device_library; do
#   strip -o .carry-gpu/${t}_gpu_test build/test/${t}_gpu_test; done; carry [".carry-gpu"]),
# then the LSTM cells under compute-sanitizer (scripts/gpu/lstm_sanitize.py). One device call.
set -u
source "$(dirname "$0")/common.sh"
build_python &
# The binaries run side by side (correctness only; nothing here is timed).
for t in .carry-gpu/*_gpu_test; do
  (timeout ${TEST_TIMEOUT:-420} $t > $OUT/$(basename $t).log 2>&1; echo "rc=$?" >> $OUT/$(basename $t).log) &
done
wait
for t in .carry-gpu/*_gpu_test; do
  n=$(basename $t)
  echo "$n $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]|^rc=' $OUT/$n.log | tr '\n' ' ')"
  grep -E "^\[  FAILED  \] [A-Za-z]" $OUT/$n.log | head -5
done
export PYTHONPATH=$PWD/build-py/python
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool python3 scripts/gpu/lstm_sanitize.py > $OUT/lstm_$tool.log 2>&1
  echo "lstm $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|ran both' $OUT/lstm_$tool.log | tr '\n' ' ')"
done
