#!/bin/bash
# Every GPU test binary of the session on the lent H100 (built here, stripped and carried:
# scripts/carry_gpu_tests.sh; carry [".carry-gpu"]),
# then the LSTM cells under compute-sanitizer (scripts/gpu/lstm_sanitize.py). One device call.
set -u
source "$(dirname "$0")/common.sh"
build_python &
run_gpu_test_binaries  # side by side, correctness only (nothing here is timed); waits for the build too
export PYTHONPATH=$PWD/build-py/python
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool python3 scripts/gpu/lstm_sanitize.py > $OUT/lstm_$tool.log 2>&1
  echo "lstm $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|ran both' $OUT/lstm_$tool.log | tr '\n' ' ')"
done
