#!/bin/bash
# Call H of the 2026-11-29 session (H200), from the repository root, carrying .carry-base
# (172b02d): chunked kernels with masked fetches as a load under a select (tsl_fetch16_sel) and
# stores without the full-tile second version inside chunks only (the held row keeps the asm
# fetch, all of its vectors in flight; call G changed both everywhere). RMSNorm unpinned and LayerNorm pinned to the chunked form, base and new in turns at
# the three wide shapes; the new tree's row programs and chunked forms checked against the
# interpreter on the GPU.
set -u
source "$(dirname "$0")/common.sh"
export OUT
ROOT=$PWD
build_side .carry-base base tool
build_side . new tool
wait
for side in base new; do [ -x $(side_tree $side)/build-dev/bin/tessel ] || { echo "$side build failed"; tail -20 $LOG/build_$side.log; exit 1; }; done
V=$ROOT/build-dev/variants; mkdir -p $V
for k in layernorm rmsnorm softmax_exp2; do
  sed -e "s/block_grid %rows :/block_grid %rows {threads = 1024, hold_rows = registers, blocks_per_sm = 2} :/" \
    examples/kernels/${k}_auto.tir > $V/${k}_auto_chunked1024.tir
done
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
    (cd $(side_tree $side) && timeout 120 $T bench memory-bound --shape $shape --kernels rmsnorm_auto,$V/layernorm_auto_chunked1024.tir,$V/softmax_exp2_auto_chunked1024.tir --json $OUT/rows-h-$side.jsonl 2>&1) |
      grep -E "_auto|FAIL|rror" | sed "s/^/$side /" | cut -c1-110
  done
done > $OUT/bench.log
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -i -E "fail|rror:" $OUT/check.log | grep -v "no schedule of" | head -5
cat $OUT/bench.log
