#!/bin/bash
# Call B of the second 2026-11-29 session (H200): call A's probe (scripts/gpu/rows_emitted_probe.cu)
# with the hand-written LayerNorm at other thread counts (512 x 8 and 256 x 16 vectors a thread) and
# launch bounds of two blocks a SM or more.
source "$(dirname "$0")/common.sh"
ROOT=$PWD
build_tool || { tail -20 $LOG/build.log; exit 1; }
./build-dev/bin/tessel compile examples/kernels/layernorm_auto.tir --size-hint M=2047,N=32760 \
  --emit=cuda -o $OUT/ln_emitted.cu
bash scripts/gpu/emitted_variants.sh $OUT/ln_emitted.cu $LOG/ev
nvcc -std=c++17 -O3 -arch=sm_90a -Iscripts/gpu -Iruntime/device -I$LOG/ev \
  scripts/gpu/rows_emitted_probe.cu -o $LOG/rows_emitted_probe -Xptxas -v > $LOG/ptxas.log 2>&1 ||
  { tail -30 $LOG/ptxas.log; exit 1; }
awk "/entry function '(ln_|_Z8row_regsILb0ELb1ELi0E|_Z11row_regs_tv)/ {split(\$0, a, \"'\"); name = a[2]}
  name != \"\" && /spill stores/ {spill = \$0}
  name != \"\" && /Used/ {print \"ptxas:\", name, \$5, \"registers,\", spill; name = \"\"}" $LOG/ptxas.log
$LOG/rows_emitted_probe 2047x32760 2048x32768 2048x32760 | tee $OUT/probe-b.log
