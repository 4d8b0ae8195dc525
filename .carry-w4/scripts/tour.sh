#!/usr/bin/env bash
# The main job: the most complete thing tessel can do so far (examples/tour.sh): the layout
# calculator, the tile IR in the interpreter, layout synthesis and CUDA generation, and on a GPU the
# compiled kernels and the reference GEMM against their baselines.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build >/dev/null
exec examples/tour.sh build/bin/tessel
