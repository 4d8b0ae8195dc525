#!/bin/bash
# Builds and runs scripts/gpu/wgmma_chain_probe.cu (cycles a group of 16 RS wgmmas, chained
# through 1 .. 16 accumulators, 1 or 3 warpgroups an SM).
set -u
source "$(dirname "$0")/common.sh"
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iruntime/device \
  scripts/gpu/wgmma_chain_probe.cu -o $LOG/wgmma_chain_probe 2>&1 | grep -v "ptxas info" | head
$LOG/wgmma_chain_probe | tee $OUT/wgmma_chain_probe.txt
