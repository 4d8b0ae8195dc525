#!/bin/bash
# ncu of cuBLAS's own kernel next to ours, on the lent H100, one device call from the repository
# root: what cuBLAS launches at each of SHAPES (default 64x4096x4096, f16, B [N,K]) — its kernel
# name (tile, split, cluster), grid, block, registers, shared memory, duration and memory
# throughput — and the same sections for tessel's KERNELS (default: the example and the best
# variants of 2026-11-26-gemm-swap-h100.md) launched by `tessel run`. Reports: $OUT/ncu_*.txt.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $LOG/build.log; exit 1; }
V=bench/kernel-variants
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats"
keys="Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|L2 Hit Rate|Warp Cycles Per Issued|Grid Size|Block Size|Cluster Size|Registers Per|Dynamic Shared|Static Shared|Waves Per SM|Achieved Occupancy|Theoretical Occupancy|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps"
for SHAPE in ${SHAPES:-64x4096x4096}; do
  IFS=x read -r M N K <<< "$SHAPE"
  # cuBLAS: every kernel the bench process launches that is not tessel's (its GEMM and any split-K
  # reduction), after the warm-up launches.
  timeout 200 ncu --kernel-name regex:'^(?!gemm)' --launch-skip 10 --launch-count 4 $S \
    build-dev/bin/tessel bench gemm --kernels examples/kernels/gemm.tir --shapes $SHAPE --iterations 20 \
    > $OUT/ncu_cublas_$SHAPE.txt 2>&1
  echo "== cuBLAS at $SHAPE"
  grep -E "^  [a-zA-Z_].*\(|$keys" $OUT/ncu_cublas_$SHAPE.txt | head -60
  for k in ${KERNELS:-gemm gemm_m64_n64_s8 gemm_swap_r64_t64_s8_split_k}; do
    f=$V/$k.tir; [ -f $f ] || f=examples/kernels/$k.tir
    timeout 150 ncu --launch-count 1 --kernel-name regex:$k $S \
      build-dev/bin/tessel run $f --gpu --size M=$M,N=$N,K=$K > $OUT/ncu_${k}_$SHAPE.txt 2>&1
    echo "== $k at $SHAPE"
    grep -E "$keys" $OUT/ncu_${k}_$SHAPE.txt | head -30
  done
done
