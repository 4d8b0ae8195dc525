#!/bin/bash
# Call C of the eighth 2026-11-28 session (H200), one device call from the repository root
# (~4 minutes): schedule-rows' rows fetched whole into shared memory by cp.async (stash's
# prefetch). 1. every row program unpinned and pinned hold_rows = shared against the
# interpreter on the GPU at ragged sizes; 2. the unpinned programs at the wide rows (where the
# model now takes the prefetch) and the prefetch pinned where the model keeps the row in
# registers (4096 x 16384, 8191 x 8200, 16384 x 4096), each beside copy16 in the same process.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
start=$(date +%s)
build_tool || { tail -20 $LOG/build.log; exit 1; }
mkdir -p build-dev/variants
for k in rmsnorm layernorm softmax softmax_exp2; do
  sed "s/block_grid %rows :/block_grid %rows {hold_rows = shared} :/" examples/kernels/${k}_auto.tir > build-dev/variants/${k}_auto_shared.tir
done
check_row_programs build-dev/variants > $LOG/rows_check.log 2>&1
echo "checked $(( $(date +%s) - start )) s"
PLAN="2048x32768:rmsnorm,layernorm,softmax,softmax_exp2,rmsnorm+shared+t256,layernorm+shared+t256,softmax_exp2+shared+t512
2047x32760:rmsnorm,layernorm,softmax_exp2
4096x16384:rmsnorm,rmsnorm+shared,layernorm,layernorm+shared,softmax,softmax+shared,softmax_exp2,softmax_exp2+shared,layernorm+shared+t256
8191x8200:rmsnorm,rmsnorm+shared,layernorm,layernorm+shared,softmax,softmax+shared,softmax_exp2,softmax_exp2+shared
16384x4096:rmsnorm,rmsnorm+shared,layernorm,layernorm+shared,softmax_exp2,softmax_exp2+shared"
CHECK=0 PLAN="$PLAN" bash scripts/gpu/rows_pins.sh > $LOG/rows_bench.log 2>&1
echo "rows $(( $(date +%s) - start )) s"
cp $LOG/rows_check.log $OUT/rows-check.log
echo "== rows check: $(grep -c 'relative error vs the interpreter' $LOG/rows_check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $LOG/rows_check.log | awk '{print $2}' | sort -g | tail -1)"
grep -v "relative error vs the interpreter: [0-9.]*e-0[5-9]" $LOG/rows_check.log | cut -c1-160 | head -20
echo "== rows bench"; grep -E "^baselines|_auto|FAIL|rror" $LOG/rows_bench.log | cut -c1-130
