#!/usr/bin/env bash
# A tour of the tile IR and its interpreter: a GEMM written in the C++ tile language
# (examples/tile/gemm.cpp), printed as tile IR (examples/tile/gemm.tir), canonicalized, and run on
# random inputs in the CPU interpreter with sizes that are not tile multiples.
# Usage: examples/tile/tour.sh PATH/TO/tessel
set -euo pipefail
tessel=${1:-build/bin/tessel}
here="$(cd "$(dirname "$0")" && pwd)"

step() { printf '\n== %s\n' "$1"; }
run() {
  echo "$ tessel $*"
  "$tessel" "$@"
}

step "A GEMM in the tile language, as tile IR text (layouts, instructions, warp roles: not yet chosen)"
run opt "$here/gemm.tir" --passes=canonicalize
step "Run it in the CPU interpreter: 100x72 output, K=40, 32x32 tiles with masked partial tiles"
run run "$here/gemm.tir" --interpret --size M=100,N=72,K=40
step "Softmax over rows of 50, in column tiles of 32"
run run "$here/softmax.tir" --interpret --size M=12,N=50 --show 6
step "An out-of-bounds access is an error naming the op and the index"
printf 'kernel @oob[N](%%X: global<f32>[N]) {\n  %%c1 = const {value = 1} : index\n  %%t = tile %%X, %%c1 {shape = [8]} : global<f32>[8]\n  %%r = copy %%t : register<f32>[8]\n}\n' \
  > "${TMPDIR:-/tmp}/tessel_oob.tir"
run run "${TMPDIR:-/tmp}/tessel_oob.tir" --interpret --size N=12 || true
