#!/bin/bash
# One device call that starts with correctness: builds the tool and the Python extension while
# every carried GPU test binary runs (carry [".carry-gpu"], see common.sh), prints one summary line
# per binary, then runs each script named on the command line (e.g. scripts/gpu/moe.sh), whose
# builds are then no-ops. Usage: bash scripts/gpu/check.sh [scripts/gpu/X.sh ...]
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python > $LOG/builds.log 2>&1 &
TEST_TIMEOUT=${TEST_TIMEOUT:-420} run_gpu_test_binaries  # gemm_gpu_test alone takes ~280 s
wait
cat $LOG/builds.log
for script in "$@"; do
  echo "== $script"
  bash "$script"
done
