#!/bin/bash
# Call A of the 2026-11-29 session (H200), from the repository root, nothing carried: the
# stand-alone probe of wide-row norms with column vectors (scripts/gpu/rows_columns_probe.cu:
# row fetched by cp.async or by a TMA bulk copy, blocks a SM, L1 evict_last on the weights, the row
# in registers), then tessel at HEAD built and its unpinned row programs checked against the
# interpreter on the GPU (04c79d1's host-computed fill word had not run on a GPU).
set -u
source "$(dirname "$0")/common.sh"
(build_tool > $LOG/bt.log 2>&1; echo "tool rc=$?" > $LOG/bt.rc) &
nvcc -std=c++17 -O3 -arch=sm_90a scripts/gpu/rows_columns_probe.cu -o $LOG/rcp || exit 1
$LOG/rcp 2048x32768 2047x32760 4096x16384 8191x8200 > $OUT/probe.txt 2>&1
wait
cat $LOG/bt.rc
check_row_programs > $OUT/check.log 2>&1
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -i -E "fail|rror:" $OUT/check.log | head -5
cat $OUT/probe.txt
