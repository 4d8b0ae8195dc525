#!/bin/bash
# Call A of the second 2026-11-29 session (H200), from the repository root: tessel's emitted
# LayerNorm (row in registers, 1024 threads, 2 blocks a SM) compiled by nvcc beside edited copies
# of it and the hand-written register form, against both copy kernels in one process
# (scripts/gpu/rows_emitted_probe.cu); then the bench's own figure for the same kernel.
set -u
source "$(dirname "$0")/common.sh"
ROOT=$PWD
build_tool || { tail -20 $LOG/build.log; exit 1; }
./build-dev/bin/tessel compile examples/kernels/layernorm_auto.tir --size-hint M=2047,N=32760 \
  --emit=cuda -o $OUT/ln_emitted.cu
bash scripts/gpu/emitted_variants.sh $OUT/ln_emitted.cu $LOG/ev
nvcc -std=c++17 -O3 -arch=sm_90a -Iscripts/gpu -Iruntime/device -I$LOG/ev \
  scripts/gpu/rows_emitted_probe.cu -o $LOG/rows_emitted_probe -Xptxas -v > $LOG/ptxas.log 2>&1 ||
  { tail -30 $LOG/ptxas.log; exit 1; }
awk "/entry function '(ln_|_Z8row_regsILb0ELb1ELi0E)/ {split(\$0, a, \"'\"); name = a[2]}
  name != \"\" && /spill stores/ {spill = \$0}
  name != \"\" && /Used/ {print \"ptxas:\", name, \$5, \"registers,\", spill; name = \"\"}" $LOG/ptxas.log
$LOG/rows_emitted_probe 2047x32760 2048x32768 2048x32760 | tee $OUT/probe-a.log
for s in 2047x32760 2048x32768; do
  bench_rows $ROOT $s layernorm_auto $OUT/rows-a.jsonl bench
done
