#!/bin/bash
# Call F of the 2026-11-29 session (H200), from the repository root, nothing carried: which habit
# of tessel's emitted code costs LayerNorm's chunked form its 15% against the probe at 4096 x
# 16384: the probe's register form with IEEE statistics, guarded loads, branchy stores, a
# griddepcontrol.wait, and all four (scripts/gpu/rows_columns_probe.cu), beside tessel's pinned
# chunked LayerNorm in the same call.
set -u
source "$(dirname "$0")/common.sh"
(build_tool > $LOG/bt.log 2>&1; echo "tool rc=$?" > $LOG/bt.rc) &
nvcc -std=c++17 -O3 -arch=sm_90a scripts/gpu/rows_columns_probe.cu -o $LOG/rcp -Xptxas -v > $LOG/nvcc.log 2>&1 || { tail $LOG/nvcc.log; exit 1; }
PROBE_ONLY="layernorm regs" $LOG/rcp 4096x16384 2048x32768 2047x32760 > $OUT/probe.txt 2>&1
wait; cat $LOG/bt.rc
V=build-dev/variants
registers_variant layernorm 1024 2 $V > /dev/null
for s in 4096x16384 2048x32768 2047x32760; do
  timeout 120 build-dev/bin/tessel bench memory-bound --shape $s --kernels layernorm_auto,$V/layernorm_auto_chunked1024.tir,rmsnorm_auto --json $OUT/rows-f.jsonl 2>&1 | grep -E "_auto|FAIL"
done > $OUT/bench.log
cat $OUT/probe.txt $OUT/bench.log
