#!/bin/bash
# Call G of the 2026-11-29 session (H200), from the repository root, carrying .carry-base
# (172b02d): chunked kernels with masked fetches as a load under a select (tsl_fetch16_sel) and
# stores without the full-tile second version (call F: both habits cost the probe's LayerNorm a
# block a SM). RMSNorm unpinned and LayerNorm pinned to the chunked form, base and new in turns at
# the three wide shapes; the new tree's row programs and chunked forms checked against the
# interpreter on the GPU.
set -u
source "$(dirname "$0")/common.sh"
export OUT
CALL=${CALL:-g}  # the records' name (call H ran this script with CALL=h on its own tree)
build_base_and_new_tools || exit 1
V=$ROOT/build-dev/variants
for k in layernorm rmsnorm softmax_exp2; do registers_variant $k 1024 2 $V > /dev/null; done
{
  check_row_programs
  for f in $V/*_chunked*.tir; do
    for s in M=37,N=32760 M=3,N=32768 M=5,N=16384 M=9,N=16376 M=2,N=40000; do
      echo "== $(basename $f) $s: $(build-dev/bin/tessel run $f --gpu --check --size $s 2>&1 | grep -i -E 'rel|error|fail' | tr '\n' ' ')"
    done
  done
} > $OUT/check.log 2>&1
for shape in 4096x16384 2048x32768 2047x32760; do
  for side in base new; do
    T=$(side_tree $side)/build-dev/bin/tessel
    (cd $(side_tree $side) && timeout 120 $T bench memory-bound --shape $shape --kernels rmsnorm_auto,$V/layernorm_auto_chunked1024.tir,$V/softmax_exp2_auto_chunked1024.tir --json $OUT/rows-$CALL-$side.jsonl 2>&1) |
      grep -E "_auto|FAIL|rror" | sed "s/^/$side /" | cut -c1-110
  done
done > $OUT/bench.log
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -i -E "fail|rror:" $OUT/check.log | grep -v "no schedule of" | head -5
cat $OUT/bench.log
