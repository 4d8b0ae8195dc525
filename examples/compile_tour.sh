#!/usr/bin/env bash
# The compiler end to end: layout synthesis on a tile program, the CUDA C++ it becomes, and, where
# this machine has a GPU, the compiled kernels checked against the interpreter and timed against
# their baselines (cuBLAS for the GEMM, a copy kernel for the memory-bound ones).
# Usage: examples/compile_tour.sh PATH/TO/tessel
set -euo pipefail
tessel=${1:-build/bin/tessel}
here="$(cd "$(dirname "$0")" && pwd)"

step() { printf '\n== %s\n' "$1"; }
run() {
  echo "$ tessel $*"
  "$tessel" "$@"
}

step "Layout synthesis: RMSNorm with no layout or instruction written; tessel chooses both"
echo "$ tessel opt examples/tile/rmsnorm.tir --passes=synthesize-layouts,synthesize-shared-layouts"
synthesized=$("$tessel" opt "$here/tile/rmsnorm.tir" --passes=synthesize-layouts,synthesize-shared-layouts)
grep -E "block_grid|copy|reduce" <<<"$synthesized" | head -6

step "The CUDA C++ it becomes (the kernel's first lines), compiled by NVRTC for sm_90a"
echo "$ tessel compile examples/tile/rmsnorm.tir --emit=cuda"
cuda=$("$tessel" compile "$here/tile/rmsnorm.tir" --emit=cuda)
sed -n '/^extern "C"/,$p' <<<"$cuda" | head -16
run compile "$here/tile/rmsnorm.tir" --emit=cubin -o "${TMPDIR:-/tmp}/tessel_rmsnorm.cubin" --time

gpu=$("$tessel" version | sed -n 's/^gpu: //p')
step "GPU: $gpu"
if [[ $gpu == none* ]]; then
  echo "No GPU on this machine: the kernels above ran in the CPU interpreter, and their CUDA"
  echo "compiled for sm_90a. On a GPU this step checks and times them (scripts/tour.sh there)."
  exit 0
fi
run run "$here/tile/rmsnorm.tir" --gpu --check --size M=1000,N=777
run run "$here/tile/softmax.tir" --gpu --check --size M=513,N=1000
run bench memory-bound --iterations 20
run bench gemm-reference --shapes 8192x8192x8192,8192x8192x4096 --iterations 30
