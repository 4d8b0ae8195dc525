#!/bin/bash
# ncu of cuBLAS's own kernel at a few-token GEMM next to ours, on the lent H100, one device call
# from the repository root: what cuBLAS launches at SHAPE (default 64x4096x4096, f16, B [N,K])
# — its kernel name (tile, split, cluster), grid, block, registers, shared memory, duration and
# memory throughput — and the same sections for tessel's KERNELS (default the best variants of
# 2026-11-26-gemm-swap-h100.md) launched by `tessel run`. Reports under $OUT/ncu_*.txt.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $OUT/build.log; exit 1; }
SHAPE=${SHAPE:-64x4096x4096}
IFS=x read -r M N K <<< "$SHAPE"
V=bench/kernel-variants
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats"
keys="Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|L2 Hit Rate|Warp Cycles Per Issued|Grid Size|Block Size|Cluster Size|Registers Per|Dynamic Shared|Static Shared|Waves Per SM|Achieved Occupancy|Theoretical Occupancy|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps"
# cuBLAS: every kernel the bench process launches that is not tessel's (its GEMM and any split-K
# reduction), after the warm-up launches.
timeout 200 ncu --kernel-name regex:'^(?!gemm)' --launch-skip 10 --launch-count 4 $S \
  build-dev/bin/tessel bench gemm --kernels examples/kernels/gemm.tir --shapes $SHAPE --iterations 20 \
  > $OUT/ncu_cublas.txt 2>&1
echo "== cuBLAS at $SHAPE"
grep -E "^  [a-zA-Z_].*\(|$keys" $OUT/ncu_cublas.txt | head -60
for k in ${KERNELS:-gemm_m64_n64_s8 gemm_swap_r64_t64_s8_split_k}; do
  timeout 150 ncu --launch-count 1 --kernel-name regex:$k $S \
    build-dev/bin/tessel run $V/$k.tir --gpu --size M=$M,N=$N,K=$K > $OUT/ncu_$k.txt 2>&1
  echo "== $k at $SHAPE"
  grep -E "$keys" $OUT/ncu_$k.txt | head -30
done
