#!/bin/bash
# The FlashAttention-2 schedule (warp specialization off: every warp computes, one thread loads K
# and V ahead through a ring, lower-mainloops) against the examples' FlashAttention-3 schedule on
# the lent H100, one device call from the repository root: the examples pinned
# `warp_specialize = false` (made by sed) and the task program under
# examples/tasks/flash_attention_fa2.tmap; each checked against the interpreter on the GPU at
# ragged sizes, compute-sanitizer on the non-causal one, then bench/python/attention.py (poisoned
# O, float64 rows, against cuDNN and FA2 through SDPA) for the FA2 schedules and the examples at
# B = 4, H = 32, D = 128, L = SHAPES_L. Records in $OUT/attention_fa2.jsonl.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool & build_python & wait
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
T=build-dev/bin/tessel
mkdir -p build-dev/variants
for f in flash_attention flash_attention_causal; do
  sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, warp_specialize = false} :/' \
      -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {warp_specialize = false} :/' \
      examples/kernels/$f.tir | sed "s/@$f\[/@${f}_fa2[/" > build-dev/variants/${f}_fa2.tir
done
$T task flash_attention --mapping examples/tasks/flash_attention_fa2.tmap > build-dev/variants/fa2_task.tir || exit 1
V="build-dev/variants/flash_attention_fa2.tir build-dev/variants/flash_attention_causal_fa2.tir build-dev/variants/fa2_task.tir"
for f in $V; do
  for size in BH=3,S=300 BH=2,S=1000 BH=1,S=77; do
    echo "$(basename $f) $size: $($T run $f --gpu --check --size $size 2>&1 | grep -iE 'relative|error' | head -1)"
  done
done
for tool in memcheck racecheck synccheck; do
  echo "fa2 $tool: $(timeout 200 compute-sanitizer --tool $tool $T run build-dev/variants/flash_attention_fa2.tir --gpu --size BH=2,S=300 2>&1 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | head -1)"
done
export PYTHONPATH=$PWD/build-py/python
shapes=""; for l in ${SHAPES_L:-1024 4096 16384}; do shapes="$shapes 4,32,$l,128"; done
B="python3 bench/python/attention.py --iterations 20 --json $OUT/attention_fa2.jsonl --shapes $shapes"
for k in build-dev/variants/flash_attention_fa2.tir build-dev/variants/fa2_task.tir examples/kernels/flash_attention.tir; do
  echo "== $k"; timeout 150 $B --kernel $k 2>&1 | grep -E "tessel|FAIL" | cut -c1-200
done
for k in build-dev/variants/flash_attention_causal_fa2.tir examples/kernels/flash_attention_causal.tir; do
  echo "== $k causal"; timeout 150 $B --causal --kernel $k 2>&1 | grep -E "tessel|FAIL" | cut -c1-200
done
