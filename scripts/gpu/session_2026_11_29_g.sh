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
  for f in $V/*_chunked*.tir; do check_at_sizes $(basename $f) $f M=37,N=32760 M=3,N=32768 M=5,N=16384 M=9,N=16376 M=2,N=40000; done
} > $OUT/check.log 2>&1
for shape in 4096x16384 2048x32768 2047x32760; do
  for side in base new; do
    bench_rows $(side_tree $side) $shape rmsnorm_auto,$V/layernorm_auto_chunked1024.tir,$V/softmax_exp2_auto_chunked1024.tir \
      $OUT/rows-$CALL-$side.jsonl $side
  done
done > $OUT/bench.log
summarize_checks $OUT/check.log
cat $OUT/bench.log
