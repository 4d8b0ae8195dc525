#!/bin/bash
# Call A of the fifth 2026-11-28 session, the first on an H200 (the device tool lends
# `nvidia-h200` now, no more H100s), one device call from the repository root (~7 minutes):
# 1. W4A16 at M = 1: where the time goes on a chip with 1.3x the copy bandwidth and the same SMs.
#    The 8-token variant with the preload at K = 8192 and 32768 (time = fixed + bytes / rate), ring
#    depths 8, 12, 16; then ncu's throughput, warp-state and scheduler sections of one launch.
# 2. Batched GEMM at K = 1000: scripts/gpu/batched_k1000_profile.sh (ncu --set full on cuBLAS's
#    kernel and on gemm_batched_cluster2x1_n8).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.mem --format=csv,noheader
build_tool_and_python || exit 1
A=c64x8_k256_h2_w3_p1
TESTS=0 SAN=0 CHECK_ALL=1 BENCH_TIMEOUT=170 GRAPH=8 \
  w4a16_check_and_bench ${A}_st8_ovpreload,${A}_st12_ovpreload,${A}_st16_ovpreload \
  1x8192x8192g128,1x8192x32768g128 2>&1 | grep -E "graph of|relative error|FAIL|rror"
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section LaunchStats"
timeout 100 ncu --clock-control none --kernel-name regex:gemm_w4a16 --launch-count 1 $S \
  build-dev/bin/tessel run build-dev/variants/${A}_st8_ovpreload.tir --gpu \
  --size M=1,N=8192,K=8192,KG=64,NQ=262144 > $OUT/ncu_w4a16_m1.txt 2>&1
echo "ncu rc=$?"
grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Issue Slots Busy|Issued Ipc|No Eligible|Active Warps Per|Warp Cycles Per Issued|Stall [A-Z]|Registers Per|Shared Memory Config|Mem Busy|Max Bandwidth|L2 Hit" $OUT/ncu_w4a16_m1.txt | head -30
bash scripts/gpu/batched_k1000_profile.sh
