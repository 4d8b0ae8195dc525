#!/bin/bash
# Call K of the 2026-11-29 sessions (H200), from the repository root, carrying .carry-base (the
# commit before the change): call J's change (chunked reduces fold by chains; weight and bias
# vectors by ld.global.nc in chunked kernels) plus reduces that end together crossing the block
# through one barrier pair, and no barrier before the partials' stores outside loops. The five
# unpinned row programs checked against the interpreter on the GPU (new tree) and timed base and
# new in turns at the bar's eight shapes; LayerNorm pinned to the chunked form at the wide ones.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
V=$ROOT/build-dev/variants
registers_variant layernorm 1024 2 $V > /dev/null
{
  check_row_programs
  check_at_sizes layernorm_auto_chunked1024 $V/layernorm_auto_chunked1024.tir \
    M=37,N=32760 M=3,N=32768 M=5,N=16384 M=9,N=16376 M=2,N=40000
} > $OUT/check.log 2>&1
K=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto
for shape in 65536x1024 32768x2048 16384x4096 8192x8192 4096x16384 2048x32768 8191x8200 2047x32760; do
  KK=$K
  case $shape in 2048x32768|2047x32760|4096x16384) KK=$K,$V/layernorm_auto_chunked1024.tir ;; esac
  for side in base new; do
    bench_rows $(side_tree $side) $shape $KK $OUT/rows-k-$side.jsonl $side
  done
done > $OUT/bench.log
summarize_checks $OUT/check.log
cat $OUT/bench.log
