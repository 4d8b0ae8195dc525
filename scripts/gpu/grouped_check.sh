#!/bin/bash
# Grouped GEMM on the lent H100: build the tool, check the example kernel's lowering, run it in
# the interpreter and on the GPU against the interpreter at small ragged sizes, then
# `tessel bench gemm --groups 64` (64 groups of M_g in 1..4096, N = K = 4096) against
# cublasGemmGroupedBatchedEx and a loop of cublasGemmEx. Outputs go to $OUT.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 TESSEL_CACHE_DIR=/tmp/tessel-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LOG=${LOG:-/tmp/tessel-logs}; mkdir -p $LOG
( cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
    -DTESSEL_BUILD_PYTHON=OFF > "$LOG/build.log" 2>&1 && ninja -C build-dev tessel >> "$LOG/build.log" 2>&1 ) \
  || { tail -40 "$LOG/build.log"; exit 1; }
T=build-dev/bin/tessel
K=examples/kernels/gemm_grouped.tir
P=canonicalize,synthesize-layouts,synthesize-shared-layouts,raster-blocks,warp-specialize,stage-stores,pipeline-arefs,persistent
$T opt $K --passes=$P > "$OUT/persistent.ir" 2>&1; echo "opt persistent rc=$?"
$T compile $K --emit=cuda > "$OUT/gemm_grouped.cu" 2>&1; echo "compile rc=$?"
for s in G=5,M=300,N=264,K=72 G=3,M=7,N=8,K=136 G=8,M=1000,N=512,K=256 G=64,M=3000,N=264,K=72; do
  $T run $K --gpu --check --size $s --output C --show 4 2>&1 | grep -E "relative|error" ; echo "gpu check $s rc=$?"
done
[ "${SKIP_BENCH:-0}" = 1 ] || timeout 300 $T bench gemm --groups 64 --shapes 4096x4096x4096 --iterations 20 --warmup 5 \
  --json "$OUT/grouped.json" 2>&1 | tee "$OUT/bench.txt" | tail -20
