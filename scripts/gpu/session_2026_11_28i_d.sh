#!/bin/bash
# Call D of the ninth 2026-11-28 session (H200), one device call from the repository root with
# .carry-base = d547fdf carried (~5 minutes): masked loads whose pad is exact in the element type
# fetch the pad's bits into out-of-bounds lanes and convert without a select per value (LayerNorm
# at N = 8192: 128 FSEL of ~730 instructions a thread gone; call C's ncu found it issue-bound at
# 8191 x 8200, 45.0 M warp instructions against RMSNorm's 30.9 M). Base and new timed in turns:
# all eight shapes once, then the four widest again; the new tree's row programs checked against
# the interpreter on the GPU.
set -u
source "$(dirname "$0")/common.sh"
export OUT
ROOT=$PWD
build_side .carry-base base tool
build_side . new tool
wait
for side in base new; do [ -x $(side_tree $side)/build-dev/bin/tessel ] || { echo "$side build failed"; tail -20 $LOG/build_$side.log; exit 1; }; done
check_row_programs > $OUT/check.log 2>&1
K=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto
for round in 1 2; do
  shapes="65536x1024 32768x2048 16384x4096 8192x8192 4096x16384 2048x32768 8191x8200 2047x32760"
  [ $round = 2 ] && shapes="4096x16384 2048x32768 8191x8200 2047x32760"
  for shape in $shapes; do
    for side in base new; do
      T=$(side_tree $side)/build-dev/bin/tessel
      timeout 90 $T bench memory-bound --shape $shape --kernels $K --json $OUT/rows-d-$side.jsonl 2>&1 |
        grep -E "_auto" | sed "s/^/$side r$round /" | cut -c1-100
    done
  done
done > $OUT/bench.log
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -i -E "fail|rror:" $OUT/check.log | head -5
echo "== fraction of copy16 (base / new, rounds in order)"
awk '{k=$3" "$4; v[k" "$1]=v[k" "$1]" "$9} END {for (x in v) print x, v[x]}' $OUT/bench.log | sort | awk '{printf "%s %s %s:%s\n", $1, $2, $3, substr($0, index($0,$4))}' | paste - - | column -t
