#!/bin/bash
# After tighten-arefs and the W4A16 ring grouping (sixteenth session, 2026-11-29), one device
# call from the repository root, carrying .carry-gpu (scripts/carry_gpu_tests.sh):
#   1. every GPU test binary, side by side (correctness only);
#   2. compute-sanitizer memcheck / racecheck / synccheck on the examples whose consumers changed
#      beside W4A16 and MoE (the MLP's scale ring released after its copies; attention's and
#      flash-decode's prologue waits sunk below register fills);
#   3. attention's forward bar once more (B = 4, H = 32, D = 128: not causal through the tuned
#      dispatcher over the example and its ping-pong form, causal the example; records
#      $OUT/attention.jsonl).
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python > $LOG/build.log 2>&1 &
run_gpu_test_binaries
wait
for f in mlp:M=300,L=3 flash_attention:BH=3,S=300 flash_decode:BHK=3,G=4,L=1000,NS=3; do
  sanitize ${f%%:*} examples/kernels/${f%%:*}.tir ${f#*:}
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
B="python3 bench/python/attention.py --iterations 30 --json $OUT/attention.jsonl"
S="4,32,1024,128 4,32,4096,128 4,32,16384,128"
timeout 200 $B --shapes $S --variants bench/kernel-variants/attention/flash_attention_g1pp.tir --tuned 2>&1 | grep -E "tuned|FAIL"
timeout 100 $B --causal --shapes $S 2>&1 | grep -E "TFLOP|FAIL"
