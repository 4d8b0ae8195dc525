#!/bin/bash
# ncu profiles of the swapped-operand GEMMs for few tokens on the lent H100, one device call from
# the repository root: why 64 tokens take 14.4 µs where 16 take 12.3 µs over the same weights
# (N = K = 4096): the 64x16 split variant at M = 16, the 64x64 split variant and the 64x64 tile
# without swap at M = 64 (one launch each, through tessel run on random inputs).
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $OUT/build.log; exit 1; }
V=bench/kernel-variants
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy"
for c in "gemm_swap_r64_t16_s12_split_k M=16" "gemm_swap_r64_t64_s8_split_k M=64" "gemm_m64_n64_s8 M=64"; do
  set -- $c
  timeout 150 ncu --launch-count 1 --kernel-name regex:$1 $S \
    build-dev/bin/tessel run $V/$1.tir --gpu --size $2,N=4096,K=4096 > $OUT/ncu_$1.txt 2>&1
  echo "== $1 $2"
  grep -E "Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\)|Mem Busy|Max Bandwidth|L2 Hit Rate|Mem Pipes Busy|Warp Cycles Per Issued|Grid Size|Registers Per|Shared Memory Configuration Size|Dynamic Shared" $OUT/ncu_$1.txt | head -20
done
