#!/bin/bash
# Call E of the ninth 2026-11-28 session (H200), one device call from the repository root with
# .carry-base = d547fdf carried (~5 minutes): a loaded 16-bit row that two ops read (the row
# schedule-rows holds in registers) stays packed as loaded and is converted where each reads it;
# masked 16-byte loads go through one guarded asm load into registers holding the pad's bits (as
# C++, `ok ? load : 0` let ptxas sink the choice past the conversions: a select per value), and
# a pad exact in the element type needs no select after the conversion. Base and new timed in
# turns: all eight shapes once, then the four widest again; the new tree's row programs checked
# against the interpreter on the GPU. (Call D measured the select-free conversion alone: RMSNorm
# +1%, LayerNorm 0.57 at 8192 x 8192 — ptxas spilled the row held as floats; reverted.)
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
      timeout 90 $T bench memory-bound --shape $shape --kernels $K --json $OUT/rows-e-$side.jsonl 2>&1 |
        grep -E "_auto" | sed "s/^/$side r$round /" | cut -c1-100
    done
  done
done > $OUT/bench.log
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -i -E "fail|rror:" $OUT/check.log | head -5
echo "== fraction of copy16 (base / new, rounds in order)"
awk '{k=$3" "$4; v[k" "$1]=v[k" "$1]" "$9} END {for (x in v) print x, v[x]}' $OUT/bench.log | sort | awk '{printf "%s %s %s:%s\n", $1, $2, $3, substr($0, index($0,$4))}' | paste - - | column -t
