#!/bin/bash
# Call R of the 2026-11-29 sessions (H200, twelfth session), from the repository root: at
# 2047 x 32760 every row program loses 3-6% against 2048 x 32768 (LayerNorm most: its weight and
# bias miss L1 2.4x as often, call M). Which of the two sizes does it: the rows' 16-byte
# misalignment (N = 32760, 65520-byte rows) or the odd row count (M = 2047)? Each program at the
# four combinations, and at N = 16376 / 16384 and 8200 / 8192 the same way, two rounds; then
# ncu's L2 read sectors and L1 hit rate of LayerNorm at the two mixed shapes.
set -u
source "$(dirname "$0")/common.sh"
export OUT
ROOT=$PWD
build_tool || { tail -20 $LOG/build.log; exit 1; }
KERNELS=layernorm_auto,rmsnorm_auto,softmax_exp2_auto
for round in 1 2; do
  for shape in 2048x32768 2047x32760 2048x32760 2047x32768 3000x16384 3000x16376 2944x16376 \
               8192x8200 8191x8192; do
    bench_rows $ROOT $shape $KERNELS $OUT/rows-r.jsonl "$round"
  done
done
NCU_METRICS="gpu__time_duration.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
for shape in 2048x32768 2047x32760 2048x32760 2047x32768; do
  ncu_metrics ln_$shape -k regex:layernorm ./build-dev/bin/tessel bench memory-bound --shape $shape --kernels layernorm_auto
done
