#!/bin/bash
# Issue 12's six forward points (B = 4, H = 32, D = 128 f16; L = 1K, 4K, 16K, causal and not)
# with pingpong (FA3's ordered turns of the two consumer warpgroups) and raster groups of 4,
# against the examples, ROUNDS rounds (default 3), each round one process per causality with every
# kernel timed in the same interleaved loop beside cuDNN (bench/python/attention.py --variants).
# Variants by sed on the examples' block_grid: fa_g4pp, fa_pp, fa_g4 (not causal: the example has
# no attribute), fa_causal_nopp (causal: the example pins raster groups of 4 and the turns).
# Records: $OUT/attention.jsonl (`round` not in them: the order of lines is the order of rounds).
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool_and_python || exit 1
V=build-dev/variants; mkdir -p $V
for v in "g4pp:raster_group = 4, pingpong = true" "pp:pingpong = true" "g4:raster_group = 4"; do
  attention_variant fa_${v%%:*} "${v#*:}"
done
# The causal example pins the turns since this script's call D (2026-11-29): fa_causal_pp is the
# example as it is, the comparison is against it with `pingpong = false`.
sed -e "s/pingpong = true} :/pingpong = false} :/" \
  examples/kernels/flash_attention_causal.tir > $V/fa_causal_nopp.tir
cp examples/kernels/flash_attention_causal.tir $V/fa_causal_pp.tir
for f in $V/fa_g4pp.tir $V/fa_causal_pp.tir; do
  echo "$(basename $f) BH=3,S=1000: $(timeout 100 build-dev/bin/tessel run $f --gpu --check --size BH=3,S=1000 2>&1 | grep -i 'error\|relative' | head -2)"
done
for tool in racecheck synccheck; do
  for f in $V/fa_g4pp.tir $V/fa_causal_pp.tir; do
    timeout 100 compute-sanitizer --tool $tool build-dev/bin/tessel run $f --gpu --size BH=3,S=300 > $LOG/san.log 2>&1
    echo "$(basename $f) $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san.log)"
  done
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
S="4,32,1024,128 4,32,4096,128 4,32,16384,128"
for round in $(seq ${ROUNDS:-3}); do
  timeout 200 python3 bench/python/attention.py --iterations 30 --json $OUT/attention.jsonl --shapes $S \
    --variants $V/fa_g4pp.tir $V/fa_pp.tir $V/fa_g4.tir 2>&1 | grep -E "TFLOP" | sed "s/^/$round /"
  timeout 200 python3 bench/python/attention.py --causal --iterations 30 --json $OUT/attention.jsonl --shapes $S \
    --variants $V/fa_causal_nopp.tir 2>&1 | grep -E "TFLOP" | sed "s/^/$round /"
done
python3 - <<'PY'
import json, os, collections
r = collections.defaultdict(list)
for l in open(os.environ["OUT"] + "/attention.jsonl"):
    x = json.loads(l); r[(x["name"], x["causal"], x["shape"].split(",")[2])].append(x["cudnn_ratio"])
print("%-24s %-6s %6s  cudnn ratios" % ("kernel", "causal", "L"))
for k in sorted(r): print("%-24s %-6s %6s  %s" % (k[0], k[1], k[2], " ".join("%.3f" % v for v in r[k])))
PY
