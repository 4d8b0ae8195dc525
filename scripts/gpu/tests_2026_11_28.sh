#!/bin/bash
# The GPU test binaries changed on 2026-11-28 (second session), whole, from the repository root
# (carry [".carry-gpu"]): the device library's (the TMA row-box test enabled, the 128B-swizzle
# tests' shared helpers), the GEMMs' (pinned grids through pin_block_grid, W4A16 zero points) and
# the MoE kernels' (the fused combine). One summary line each, failures' first lines.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for t in device_library_gpu_test gemm_gpu_test moe_gpu_test; do
  timeout 450 .carry-gpu/$t > /tmp/$t.log 2>&1
  echo "$t rc=$? $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]+ test' /tmp/$t.log | tr '\n' ' ')"
  grep -E "^\[  FAILED  \] [A-Z]|Failure" /tmp/$t.log | head -6
done
