#!/bin/bash
# Issue 12's forward bar in one run (fifteenth session): B = 4, H = 32, D = 128 f16, L = 1K, 4K,
# 16K, not causal through tessel.Variants over examples/kernels/flash_attention.tir and its
# ping-pong form (bench/kernel-variants/attention/flash_attention_g1pp.tir), tuned at each shape
# in the run (attention.py --tuned: Variants.tune, then the dispatcher timed beside cuDNN), causal
# the example. ROUNDS rounds (default 2). First: the ping-pong kernel against the interpreter on
# the GPU at ragged sizes and under racecheck / synccheck (NO_CHECK=1: not). Records:
# $OUT/attention.jsonl.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool_and_python || exit 1
G=bench/kernel-variants/attention/flash_attention_g1pp.tir
[ -n "${NO_CHECK:-}" ] || for size in BH=3,S=1000 BH=5,S=4097 BH=2,S=130; do
  echo "g1pp $size: $(timeout 100 build-dev/bin/tessel run $G --gpu --check --size $size 2>&1 | grep -i 'error\|relative' | head -2)"
done
[ -n "${NO_CHECK:-}" ] || for tool in racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool build-dev/bin/tessel run $G --gpu --size BH=3,S=300 > $LOG/san.log 2>&1
  echo "g1pp $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san.log)"
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
S="4,32,1024,128 4,32,4096,128 4,32,16384,128"
for round in $(seq ${ROUNDS:-2}); do
  timeout 200 python3 bench/python/attention.py --iterations 30 --json $OUT/attention.jsonl --shapes $S \
    --variants $G --tuned 2>&1 | grep -E "TFLOP|FAIL" | sed "s/^/$round /"
  timeout 200 python3 bench/python/attention.py --causal --iterations 30 --json $OUT/attention.jsonl \
    --shapes $S 2>&1 | grep -E "TFLOP|FAIL" | sed "s/^/$round /"
done
python3 - <<'PY'
import json, os, collections
r = collections.defaultdict(list)
for l in open(os.environ["OUT"] + "/attention.jsonl"):
    x = json.loads(l); r[(x["name"], x["causal"], int(x["shape"].split(",")[2]))].append(x["cudnn_ratio"])
print("%-34s %-6s %6s  cudnn ratios" % ("kernel", "causal", "L"))
for k in sorted(r, key=lambda k: (k[1], k[2], k[0])): print("%-34s %-6s %6s  %s" % (k[0], k[1], k[2], " ".join("%.3f" % v for v in r[k])))
PY
