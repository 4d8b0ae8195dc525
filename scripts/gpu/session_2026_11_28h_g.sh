#!/bin/bash
# Call G of the eighth 2026-11-28 session (H200), one device call from the repository root
# (~2 minutes): LayerNorm's row fetched whole where five blocks fit a SM (schedule-rows now lets
# it race at 4096 x 16384): checked against the interpreter on the GPU at ragged sizes with the
# prefetch pinned (256 threads, [1,8192] tiles), then the unpinned programs timed at the shapes
# where the choice moved or could have.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool || { tail -20 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
mkdir -p build-dev/variants
sed "s/block_grid %rows :/block_grid %rows {hold_rows = shared, threads = 256, tile_cols = 8192} :/" \
  examples/kernels/layernorm_auto.tir > build-dev/variants/layernorm_auto_fetch.tir
for s in M=5,N=16376 M=3,N=16384 M=2,N=8200 M=7,N=24000; do
  echo "== layernorm fetched whole $s: $($T run build-dev/variants/layernorm_auto_fetch.tir --gpu --check --size $s 2>&1 | grep -i -E 'rel|error|fail' | tr '\n' ' ')"
  echo "== layernorm $s: $($T run examples/kernels/layernorm_auto.tir --gpu --check --size $s 2>&1 | grep -i -E 'rel|error|fail' | tr '\n' ' ')"
done
for shape in 4096x16384 8192x8192 2048x32768 8191x8200; do
  timeout 60 $T bench memory-bound --shape $shape --kernels layernorm_auto,rmsnorm_auto,softmax_exp2_auto --json $OUT/rows-g.jsonl
done 2>&1 | grep -E "^baselines|_auto|FAIL" | cut -c1-112
