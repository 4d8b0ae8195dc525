#!/bin/bash
# The attention check on the lent H100, in one device call from the repository root: the GPU test
# (built here, carried: strip -o .carry-gpu/attention_gpu_test build/test/attention_gpu_test;
# carry [".carry-gpu"]), compute-sanitizer on a small run, then bench/python/attention.py on the
# issue's shapes (B=4 H=32, L = 1K/4K/16K, D = 128 and 64, causal and not; GQA; bf16) against cuDNN and
# torch's FlashAttention-2 through SDPA. The Python extension and the tool are built there.
# JSON records land in $OUT/attention.jsonl. Usage: scripts/gpu/attention_check.sh
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool &
build_python &
if [ -x .carry-gpu/attention_gpu_test ]; then
  (timeout 250 .carry-gpu/attention_gpu_test > $OUT/attention_gpu_test.log 2>&1; echo "attention_gpu_test rc=$?" >> $OUT/attention_gpu_test.log) &
fi
wait
grep -E "^\[  (FAILED|PASSED|  OK)|Failure|rc=" $OUT/attention_gpu_test.log 2>/dev/null | head -12
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
for f in flash_attention flash_attention_causal flash_attention_d64; do
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool build-dev/bin/tessel run examples/kernels/$f.tir --gpu --size BH=3,S=300 > $OUT/san.log 2>&1
    echo "$f $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
  done
done
export PYTHONPATH=$PWD/build-py/python
B="python3 bench/python/attention.py --iterations 20 --json $OUT/attention.jsonl"
timeout 300 $B --shapes 2,4,4097,128 4,32,1024,128 4,32,4096,128 4,32,16384,128 2>&1 | tail -4
timeout 300 $B --causal --shapes 4,32,1024,128 4,32,4096,128 4,32,16384,128 2>&1 | tail -3
timeout 300 $B --shapes 4,32,1024,64 4,32,4096,64 4,32,16384,64 2>&1 | tail -3
# Grouped-query attention (32 query heads over 8 key/value heads) and bf16.
timeout 300 $B --shapes 4,32,4096,128,8 4,32,16384,128,8 2>&1 | tail -2
timeout 300 $B --dtype bf16 --shapes 4,32,4096,128 4,32,16384,128 2>&1 | tail -2
timeout 300 $B --dtype bf16 --causal --shapes 4,32,4096,128 2>&1 | tail -1
