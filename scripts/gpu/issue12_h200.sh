#!/bin/bash
# Issue 12's remaining bars on the H200 in one call (written in the fifteenth 2026-11-29 session,
# for the next one), from the repository root, carrying .carry-gpu (scripts/carry_gpu_tests.sh):
#   1. attention_gpu_test and decode_gpu_test (float64 references, every head dim, causal, GQA,
#      ragged lengths, decode; outputs poisoned), then compute-sanitizer memcheck / racecheck /
#      synccheck on the examples the bar runs (flash_attention, _causal, the ping-pong variant)
#      and the decode kernels;
#   2. the forward bar once more with Triton in the same process: not causal through the tuned
#      dispatcher (attention.py --triton --variants <g1pp> --tuned), causal the example, L = 1K,
#      4K, 16K (Triton's ratio: >= 1.2x where it runs);
#   3. D = 64, GQA (H_kv = 8), bf16 and D = 256 recorded (the examples, 4K and 16K / 1K and 4K);
#   4. decode at >= 85% of the bandwidth its KV read implies (bench/python/decode.py).
# Records: $OUT/attention.jsonl, $OUT/decode.jsonl; logs $OUT/*.log.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool_and_python || exit 1
for t in attention_gpu_test decode_gpu_test; do
  [ -x .carry-gpu/$t ] && { timeout 250 .carry-gpu/$t > $OUT/$t.log 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/$t.log | tr '\n' ' ')"; }
done
G=bench/kernel-variants/attention/flash_attention_g1pp.tir
for f in examples/kernels/flash_attention.tir examples/kernels/flash_attention_causal.tir $G; do
  sanitize $(basename $f) $f BH=3,S=300
done
for f in flash_decode:BHK=3,G=4,L=1000,NS=3 flash_decode_combine:BH=12,NS=3; do
  sanitize ${f%%:*} examples/kernels/${f%%:*}.tir ${f#*:}
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
B="python3 bench/python/attention.py --iterations 30 --json $OUT/attention.jsonl"
S="4,32,1024,128 4,32,4096,128 4,32,16384,128"
timeout 300 $B --triton --shapes $S --variants $G --tuned 2>&1 | grep -E "TFLOP|FAIL|refuses"
timeout 200 $B --triton --causal --shapes $S 2>&1 | grep -E "TFLOP|FAIL|refuses"
timeout 100 $B --shapes 4,32,4096,64 4,32,16384,64 2>&1 | grep -E "TFLOP|FAIL"
timeout 100 $B --shapes 4,32,4096,128,8 4,32,16384,128,8 2>&1 | grep -E "TFLOP|FAIL"
timeout 100 $B --dtype bf16 --shapes 4,32,1024,128 4,32,4096,128 2>&1 | grep -E "TFLOP|FAIL"
timeout 100 $B --shapes 4,16,1024,256 4,16,4096,256 2>&1 | grep -E "TFLOP|FAIL"
PYTHONUNBUFFERED=1 timeout 200 python3 bench/python/decode.py --iterations 30 --json $OUT/decode.jsonl 2>&1 | tail -22
