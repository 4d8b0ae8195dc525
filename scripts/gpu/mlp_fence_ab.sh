#!/bin/bash
# The fused MLP with and without lower-arefs' proxy fences (2026-11-28), one device call from the
# repository root: writes examples/kernels/mlp.tir's lowered IR, a copy with the fences before the
# releases of the prologue and bias slots deleted (what the kernel was before the fence; wrong in
# principle: the threads read those slots), and times both beside the example and the baselines
# (bench/python/mlp.py --variants; records in $OUT/mlp.jsonl). An A/B of the fence's cost only.
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python || exit 1
T=build-dev/bin/tessel
$T compile examples/kernels/mlp.tir --emit=ir > $OUT/fenced.lowered.tir || exit 1
# Delete a fence_proxy_async line when the next line releases a slot by thread.
awk '{ if (held != "") { if ($0 ~ /mbarrier_arrive .*_empty.*by = thread/) { held = "" } else { print held; held = "" } }
       if ($0 ~ /^ *fence_proxy_async$/) { held = $0; next } print }' $OUT/fenced.lowered.tir > $OUT/unfenced.lowered.tir
echo "fences: $(grep -c fence_proxy_async $OUT/fenced.lowered.tir) -> $(grep -c fence_proxy_async $OUT/unfenced.lowered.tir)"
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout ${BENCH_TIMEOUT:-300} python3 bench/python/mlp.py --json $OUT/mlp.jsonl \
  --shapes ${SHAPES:-64x2,64x8,1024x8,4096x8,4096x20,16384x8,65536x8} \
  --variants $OUT/fenced.lowered.tir $OUT/unfenced.lowered.tir 2>&1 | tail -12
