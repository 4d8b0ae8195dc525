#!/bin/bash
# Device-machine iteration on the reference GEMM through the stand-alone nvcc harness: builds it,
# checks ragged shapes, runs the sanitizers, looks at the SASS, then times what the arguments say.
# Usage (device tool, repo root): scripts/gpu/gemm_iter.sh "<harness args>" ["<harness args>" ...]
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
H=/tmp/gemm_harness
nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I runtime/device -I bench/reference \
  scripts/gpu/gemm_harness.cu -lcuda -lcublas -o $H 2>&1 | grep -E "error|registers|spill" | sort | uniq -c
cuobjdump -sass $H > $OUT/gemm.sass
echo "SASS: HGMMA=$(grep -c HGMMA $OUT/gemm.sass) LDL=$(grep -c LDL $OUT/gemm.sass) STL=$(grep -c STL $OUT/gemm.sass)"
if [ -z "${SKIP_CHECKS:-}" ]; then
  echo "== correctness (ragged)"
  $H --check-only 1000x1000x1000 8191x4097x520 128x256x64 1x8x8 300x200x8 129x264x72 777x1024x4104 \
     33x1001x16 4096x4096x4096 2>&1 | grep -v "^#"
  echo "== sanitizers"
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool $H --check-only 333x520x200 333x517x136 2>&1 | grep -E "SUMMARY|FAIL|failures"
  done
fi
echo "== timing"
for args in "$@"; do echo "-- $args"; $H $args 2>&1; done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
