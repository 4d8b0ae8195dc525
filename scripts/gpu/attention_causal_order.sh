#!/bin/bash
# Causal attention's block order on the lent H100, in one device call from the repository root:
# the persistent loop hands tile t to block t mod (SM count), so tiles whose work grows with their
# query index load the SMs unevenly unless the order spreads them. Same process, against cuDNN:
# D = 256 (B=4 H=16) in the example's order (raster groups of 2 heads) and longest first with the
# heads fastest (bench/kernel-variants/attention/flash_attention_causal_d256_heads_inner.tir, the
# example's order when the results were measured at 505b641, against a g2 variant then); D = 128
# (B=4 H=32) in its example's order (groups of 8 heads) and with groups of 4 (..._causal_g4.tir).
# compute-sanitizer memcheck on the two D = 256 orders. Usage: scripts/gpu/attention_causal_order.sh
set -u
source "$(dirname "$0")/common.sh"
export TESSEL_COMMIT=$(cat .commit 2>/dev/null || echo unknown)  # written before carrying: git rev-parse HEAD > .commit
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
build_tool &
build_python &
wait
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
export PYTHONPATH=$PWD/build-py/python
B="python3 bench/python/attention.py --iterations 20 --json $OUT/attention.jsonl"
run() { timeout 150 $B "$@" 2>&1 | tee -a $OUT/bench.log | grep -v "^  File\|^    "; }
V=bench/kernel-variants/attention
for round in 1 2; do
  run --causal --shapes 4,16,1024,256 4,16,4096,256 4,16,16384,256
  run --causal --kernel $V/flash_attention_causal_d256_heads_inner.tir --shapes 4,16,1024,256 4,16,4096,256 4,16,16384,256
done
run --causal --shapes 4,32,1024,128 4,32,4096,128 4,32,16384,128
run --causal --kernel $V/flash_attention_causal_g4.tir --shapes 4,32,1024,128 4,32,4096,128 4,32,16384,128
for f in examples/kernels/flash_attention_causal_d256.tir $V/flash_attention_causal_d256_heads_inner.tir; do
  timeout 100 compute-sanitizer --tool memcheck build-dev/bin/tessel run $f --gpu --size BH=3,S=300 > $OUT/san.log 2>&1
  echo "$f memcheck rc=$? $(grep -E 'ERROR SUMMARY' $OUT/san.log)"
done
