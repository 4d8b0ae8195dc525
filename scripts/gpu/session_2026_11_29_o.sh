#!/bin/bash
# Call O of the 2026-11-29 sessions (H200), from the repository root, carrying .carry-gpu (the GPU
# test binaries built at 20b323b here): every carried GPU test binary side by side, after the
# emitter's change to row programs (one barrier fewer per reduction outside loops; chunked runs'
# chains, ld.global.nc and shared barrier pair), correctness only.
set -u
source "$(dirname "$0")/common.sh"
export OUT
run_gpu_test_binaries > $OUT/tests.txt 2>&1
cat $OUT/tests.txt
grep -h -E "^\[  FAILED  \]" $LOG/*_gpu_test.log | head -10
