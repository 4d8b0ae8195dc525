#!/bin/bash
# Device-machine iteration on the reference GEMM through the stand-alone nvcc harness: builds it,
# checks ragged shapes, times the big ones against cuBLAS, looks at the SASS, runs the sanitizers.
# Usage (device tool, repo root): scripts/gpu/gemm_iter.sh [harness args for the timed part]
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
H=/tmp/gemm_harness
nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I runtime/device -I bench/reference \
  scripts/gpu/gemm_harness.cu -lcuda -lcublas -o $H 2>&1 | grep -E "error|registers|spill" | sort | uniq -c
cuobjdump -sass $H > $OUT/gemm.sass
echo "SASS: HGMMA=$(grep -c HGMMA $OUT/gemm.sass) LDL=$(grep -c LDL $OUT/gemm.sass) STL=$(grep -c STL $OUT/gemm.sass)"
echo "== correctness (ragged)"
$H --check-only 1000x1000x1000 8191x4097x520 128x256x64 1x8x8 300x200x8 129x264x72 4096x4096x4096 777x1024x4104 2>&1
echo "== sanitizers"
compute-sanitizer --tool memcheck $H --check-only --dtype f16 333x520x200 2>&1 | tail -3
compute-sanitizer --tool racecheck $H --check-only --dtype bf16 333x520x200 2>&1 | tail -3
compute-sanitizer --tool synccheck $H --check-only --dtype f16 333x520x200 2>&1 | tail -3
echo "== timing"
$H "$@" 2>&1
