#!/bin/bash
# tessel's emitted LayerNorm at its two chunked schedules (1024 threads x 4 vectors, hinted
# 2047 x 32760: tag n32k; 512 x 4, hinted 3000 x 16376: tag n16k) compiled by nvcc beside the
# edited copies of scripts/gpu/emitted_variants.sh and the hand-written register forms, against
# both copy kernels in one process (scripts/gpu/rows_emitted_probe.cu), from the repository root:
#   VARIANTS=emitted,rsqrt,nofull ROUNDS=3 bash scripts/gpu/rows_emitted.sh [MxN:TAG ...]
# (default shapes 2047x32760:n32k 2048x32768:n32k 3000x16376:n16k 4096x16384:n16k). ptxas's
# registers and spills of each kernel first; the probe's table in $OUT/rows-emitted.log.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -20 $LOG/build.log; exit 1; }
rm -rf $LOG/ev
for hint in n32k:M=2047,N=32760 n16k:M=3000,N=16376; do
  ./build-dev/bin/tessel compile examples/kernels/layernorm_auto.tir --size-hint ${hint#*:} \
    --emit=cuda -o $OUT/ln_${hint%%:*}.cu
  bash scripts/gpu/emitted_variants.sh $OUT/ln_${hint%%:*}.cu $LOG/ev ${hint%%:*}
done
nvcc -std=c++17 -O3 -arch=sm_90a -Iscripts/gpu -Iruntime/device -I$LOG/ev \
  scripts/gpu/rows_emitted_probe.cu -o $LOG/rows_emitted_probe -Xptxas -v > $LOG/ptxas.log 2>&1 ||
  { tail -30 $LOG/ptxas.log; exit 1; }
awk "/entry function '(ln_|_Z8row_regsILb0ELb1ELi0E|_Z11row_regs_tv)/ {split(\$0, a, \"'\"); name = a[2]}
  name != \"\" && /spill stores/ {spill = \$0}
  name != \"\" && /Used/ {print \"ptxas:\", name, \$5, \"registers,\", spill; name = \"\"}" $LOG/ptxas.log
shapes=${*:-2047x32760:n32k 2048x32768:n32k 3000x16376:n16k 4096x16384:n16k}
$LOG/rows_emitted_probe $shapes | tee $OUT/rows-emitted.log
