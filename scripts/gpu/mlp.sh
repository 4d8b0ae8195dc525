#!/bin/bash
# The fused MLP (examples/kernels/mlp.tir, issue 11) on the lent H100, one device call from the
# repository root: builds tessel and the Python extension; `tessel run --gpu --check` (the GPU's
# output against the interpreter's) at ragged sizes for the example and its 64-row variant;
# compute-sanitizer memcheck, racecheck and synccheck on the example; then bench/python/mlp.py
# (against cuBLAS + torch.relu and cuBLASLt's bias + ReLU epilogue, eager and from CUDA graphs,
# in one process) with the variants beside it. Records under $OUT (mlp.jsonl). SHAPES: MxL,...
# VARIANTS: .tir files with mlp.tir's parameters (default: bench/kernel-variants/mlp_*.tir);
# SANITIZE: the kernels run under compute-sanitizer (default: the example).
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool & build_python & wait
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
variants=${VARIANTS:-$(ls bench/kernel-variants/mlp_*.tir)}
for f in examples/kernels/mlp.tir $variants; do
  for size in M=300,L=3 M=5,L=1 M=1000,L=2; do
    echo "$f $size: $(build-dev/bin/tessel run $f --gpu --check --size $size 2>&1 | grep -iE 'rel|error|mismatch' | head -2 | tr '\n' ' ')"
  done
done
for f in ${SANITIZE:-examples/kernels/mlp.tir}; do
  for tool in memcheck racecheck synccheck; do
    echo "$f $tool: $(timeout 200 compute-sanitizer --tool $tool build-dev/bin/tessel run $f --gpu --size M=300,L=3 2>&1 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|error' | head -3 | tr '\n' ' ')"
  done
done
export PYTHONPATH=$PWD/build-py/python
timeout 300 python3 bench/python/mlp.py --variants $variants --json $OUT/mlp.jsonl ${SHAPES:+--shapes $SHAPES}
