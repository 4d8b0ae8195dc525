#!/bin/bash
# Call D of the fourth 2026-11-28 session, one device call from the repository root: the f16
# kernel cublasGemmStridedBatchedEx launches at the batched shapes under 1.0x (ncu on kernels whose
# name holds `hsh`: f16 in and out; call C caught the f32-output reference of the bench's check),
# then the batched family with the new 256x128 tiles and 1x2 clusters at those shapes.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
V=bench/kernel-variants
S="--section SpeedOfLight --section LaunchStats"
keys="Duration|Compute \(SM\) Throughput|Grid Size|Block Size|Cluster Size|Registers Per|Dynamic Shared"
for c in 16:1024x1024x1024 12:1000x1000x1000; do
  timeout 120 ncu --kernel-name regex:hsh --launch-skip 4 --launch-count 1 $S \
    $T bench gemm --kernels examples/kernels/gemm_batched.tir --batch ${c%%:*} --shapes ${c#*:} --iterations 10 \
    > $OUT/ncu_cublas_${c%%:*}.txt 2>&1
  echo "== cuBLAS at $c"
  grep -E "^  [a-zA-Z_].*\(|$keys" $OUT/ncu_cublas_${c%%:*}.txt | head -12
done
FAM=examples/kernels/gemm_batched.tir+$V/gemm_batched_cluster2x1.tir+$V/batched/gemm_batched_m256.tir+$V/batched/gemm_batched_m256_cluster2x1.tir+$V/batched/gemm_batched_cluster1x2.tir+$V/batched/gemm_batched_n192_cluster2x1.tir
for c in 16:1024x1024x1024 12:1000x1000x1000 12:1024x1024x1000 32:512x512x128; do
  timeout 100 $T bench gemm --kernels $FAM --batch ${c%%:*} --shapes ${c#*:} --iterations 30 --json $OUT/batched.jsonl > $LOG/b.log 2>&1 || echo "$c rc=$?"
  grep -E "ratio [0-9]|tuned" $LOG/b.log | tail -2
done
