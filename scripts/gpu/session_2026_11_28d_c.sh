#!/bin/bash
# Call C of the fourth 2026-11-28 session, one device call from the repository root (carry
# [".carry-gpu"]): what cublasGemmStridedBatchedEx launches at the batched shapes still under
# 1.0x (kernel name = tile, cluster; grid, duration, SM throughput) beside tessel's chosen kernel
# under the same sections; then the gemm_gpu_test cases that call B's 300 s did not reach.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $LOG/build.log; exit 1; }
V=bench/kernel-variants
S="--section SpeedOfLight --section LaunchStats"
keys="Duration|Compute \(SM\) Throughput|DRAM Throughput|Grid Size|Cluster Size|Registers Per|Dynamic Shared|Waves Per SM|SM Frequency"
for c in 16:1024x1024x1024:examples/kernels/gemm_batched.tir 12:1000x1000x1000:$V/gemm_batched_cluster2x1.tir; do
  IFS=: read L SHAPE K <<< "$c"
  timeout 150 ncu --launch-skip 10 --launch-count 4 $S \
    build-dev/bin/tessel bench gemm --kernels $K --batch $L --shapes $SHAPE --iterations 20 \
    > $OUT/ncu_batched_$L.txt 2>&1
  echo "== $L x $SHAPE"
  grep -E "^  [a-zA-Z_].*\(|$keys" $OUT/ncu_batched_$L.txt | head -48
done
timeout 200 .carry-gpu/gemm_gpu_test --gtest_filter='*KLoopSplitAmongRoles*:*EmptyK*:*PinnedStages*:*NonSpecialized*' > $LOG/gemm.log 2>&1; echo "gemm_gpu_test rest rc=$?"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED" $LOG/gemm.log
grep -B3 -A12 "Failure" $LOG/gemm.log | head -30
