#!/bin/bash
# On this (GPU-less) machine: strips every GPU test binary of build/ into .carry-gpu/, which a
# device call carries (carry [".carry-gpu"]) and scripts/gpu/common.sh's run_gpu_test_binaries
# runs. Build first (cmake --build build).
set -eu
cd "$(dirname "$0")/.."
rm -rf .carry-gpu && mkdir -p .carry-gpu
for t in build/test/*_gpu_test; do strip -o .carry-gpu/$(basename $t) $t; done
ls .carry-gpu
