#!/bin/bash
# Head dim 256 and variable sequence lengths on the lent H100, in one device call from the
# repository root: the GPU test (built here, carried: strip -o .carry-gpu/attention_gpu_test
# build/test/attention_gpu_test, in the carried tree), compute-sanitizer on small runs of the new
# kernels, then bench/python/attention.py: D = 256 (B=4 H=16, L = 1K/4K/16K, causal and not, bf16;
# FlashAttention-3's 128 x 80 tiles as a variant) and the variable-length kernels (lengths 1, 17,
# 1000, 4097 and a batch of 16 mixed lengths) against torch's varlen FlashAttention-2 and cuDNN on
# the padded batch; D = 128 causal in its example's block order and longest first, heads fastest.
# JSON records land in $OUT/attention.jsonl. Usage: scripts/gpu/attention_d256_varlen.sh [bench|final]
# (bench: the measurements only, no sanitizer; final: the GPU tests, then causal D = 256 and varlen
# through `tessel bench attention`; GTEST_FILTER picks the GPU tests, default all).
set -u
source "$(dirname "$0")/common.sh"
export TESSEL_COMMIT=$(cat .commit 2>/dev/null || echo unknown)  # written before carrying: git rev-parse HEAD > .commit
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"
build_tool &
build_python &
if [ -x .carry-gpu/attention_gpu_test ]; then
  (timeout 300 .carry-gpu/attention_gpu_test --gtest_filter="${GTEST_FILTER:-*}" \
     > $OUT/attention_gpu_test.log 2>&1; echo "attention_gpu_test rc=$?" >> $OUT/attention_gpu_test.log) &
fi
wait
grep -E "^\[  (FAILED|PASSED|  OK)|Failure|rc=|Expected|Which is" $OUT/attention_gpu_test.log 2>/dev/null | head -30
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
export PYTHONPATH=$PWD/build-py/python
B="python3 bench/python/attention.py --iterations 20 --json $OUT/attention.jsonl"
run() { timeout 150 $B "$@" 2>&1 | tee -a $OUT/bench.log | grep -v "^  File\|^    "; }
if [ "${1:-}" = final ]; then  # the final kernels through `tessel bench attention`
  TB="build-dev/bin/tessel bench attention --iterations 20 --json $OUT/attention.jsonl"
  $TB --causal --shapes 2,4,4097,256 4,16,1024,256 4,16,4096,256 4,16,16384,256 2>&1 | tee -a $OUT/bench.log | tail -4
  $TB --varlen 1,17,1000,4097 16 2>&1 | tee -a $OUT/bench.log | tail -1
  exit 0
fi
run --shapes 2,4,4097,256 4,16,1024,256 4,16,4096,256 4,16,16384,256
run --causal --shapes 2,4,4097,256 4,16,1024,256 4,16,4096,256 4,16,16384,256
run --varlen 1,17,1000,4097 16
run --causal --varlen 1,17,1000,4097 16
L16=512,3000,1,4096,777,2048,100,4000,1024,64,3500,2000,9,1500,4096,600
run --varlen $L16 16
run --causal --varlen $L16 16
run --dtype bf16 --shapes 4,16,4096,256 4,16,16384,256
run --dtype bf16 --causal --shapes 4,16,4096,256 4,16,16384,256
# D = 128 causal: the example's block order against longest-first with heads fastest.
run --causal --shapes 4,32,1024,128 4,32,4096,128 4,32,16384,128
run --causal --kernel bench/kernel-variants/attention/flash_attention_causal_heads_inner.tir --shapes 4,32,1024,128 4,32,4096,128 4,32,16384,128
[ "${1:-}" = bench ] && exit 0
# FlashAttention-3's 128 x 80 tiles (output unstaged) at D = 256.
run --kernel bench/kernel-variants/attention/flash_attention_d256_n80.tir --shapes 4,16,4096,256 4,16,16384,256
# compute-sanitizer on small runs: all three tools on the non-causal kernels, memcheck on the causal.
for f in flash_attention_d256 flash_attention_causal_d256 flash_attention_varlen flash_attention_varlen_causal; do
  size="BH=3,S=300"; case $f in *varlen*) size="T=700,H=3,B=4";; esac
  tools="memcheck racecheck synccheck"; case $f in *causal*) tools=memcheck;; esac
  for tool in $tools; do
    timeout 100 compute-sanitizer --tool $tool build-dev/bin/tessel run examples/kernels/$f.tir --gpu --size $size > $OUT/san.log 2>&1
    echo "$f $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
  done
done
