#!/bin/bash
# The first call of the third 2026-11-28 session, from the repository root (carry [".carry-gpu"]):
# the device library's GPU tests (the TMA test kernels now share load_then_dump, not yet re-run on
# the device), then scripts/gpu/moe_gather.sh (the fused gather: GPU test, sanitizers, both routing
# kernels against the interpreter, timings vs index_select + the unfused kernel).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
timeout 120 .carry-gpu/device_library_gpu_test > /tmp/dl.log 2>&1
echo "device_library_gpu_test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]+ test' /tmp/dl.log | tr '\n' ' ')"
grep -E "^\[  FAILED  \] [A-Z]|Failure" /tmp/dl.log | head -6
bash "$(dirname "$0")/moe_gather.sh"
