#!/bin/bash
# FlashAttention-2 as task programs (examples/tasks/attention.cpp, issue 13) against the tile
# programs they lower like (examples/kernels/flash_attention{,_causal}.tir) on the lent H100, one
# device call from the repository root: `tessel task NAME` writes the tile IR a task program and
# its default mapping lower to; bench/python/attention.py checks and times each (--kernel) against
# cuDNN and FlashAttention-2 through SDPA, the tile program and the task program run alternately
# per shape. The bar: task / tile >= 0.95 (ratios to the same baseline). Records in
# $OUT/task_attention.jsonl. Usage: scripts/gpu/task_attention.sh
set -u
source "$(dirname "$0")/common.sh"
build_tool &
build_python &
wait
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
T=build-dev/bin/tessel
$T task flash_attention > build-dev/fa_task.tir && $T task flash_attention_causal > build-dev/fa_causal_task.tir || exit 1
export PYTHONPATH=$PWD/build-py/python
B="python3 bench/python/attention.py --iterations 20 --json $OUT/task_attention.jsonl"
for L in 1024 4096 16384; do
  for k in examples/kernels/flash_attention.tir build-dev/fa_task.tir; do
    echo "== $k L=$L"; timeout 120 $B --kernel $k --shapes 4,32,$L,128 2>&1 | tail -2
  done
  for k in examples/kernels/flash_attention_causal.tir build-dev/fa_causal_task.tir; do
    echo "== $k L=$L causal"; timeout 120 $B --causal --kernel $k --shapes 4,32,$L,128 2>&1 | tail -2
  done
done
