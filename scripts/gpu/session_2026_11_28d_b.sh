#!/bin/bash
# Call B of the fourth 2026-11-28 session, one device call from the repository root (carry
# [".carry-gpu"]):
# 1. gemm_gpu_test alone (it ran out of call A's 240 s beside ten other test binaries), every
#    test's line with its time.
# 2. W4A16 at M = 16 with one producer and 16-token tiles (c64x16_..._p1), beside the best so far.
# 3. Batched GEMM's four short shapes re-timed, each shape's chosen kernel alone against
#    cublasGemmStridedBatchedEx, ROUNDS rounds of 50 iterations (the spread between calls was
#    0.95-1.00 at 32 x 512x512x128).
set -u
here=$(dirname "$0")
source $here/common.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
echo "== gemm_gpu_test"
start=$(date +%s)
timeout ${TEST_TIMEOUT:-300} .carry-gpu/gemm_gpu_test > $LOG/gemm.log 2>&1; echo "rc=$? in $(( $(date +%s) - start )) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|^\[ RUN" $LOG/gemm.log | tail -40
grep -B3 -A12 "Failure" $LOG/gemm.log | head -40
echo "== W4A16 M = 16"
(TESTS=0 SAN=0 BENCH_TIMEOUT=150 CHECK_ALL=1 \
  VARIANTS=c64x16_k256_h2_w3_p1_st6,c64x16_k256_h2_w3_p1_st9,c64x16_k256_h2_w3_p2_st6 \
  SHAPES=16x8192x8192g128 \
  timeout 200 bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|relative error|FAIL|rror")
echo "== batched"
T=build-dev/bin/tessel
V=bench/kernel-variants
for r in $(seq ${ROUNDS:-3}); do
  for c in 16:1024x1024x1024:examples/kernels/gemm_batched.tir 32:512x512x128:examples/kernels/gemm_batched.tir \
           12:1000x1000x1000:$V/gemm_batched_cluster2x1.tir 12:1024x1024x1000:$V/gemm_batched_cluster2x1.tir; do
    IFS=: read L S K <<< "$c"
    timeout 60 $T bench gemm --kernels $K --batch $L --shapes $S --iterations 50 --json $OUT/batched_rounds.jsonl > $LOG/b.log 2>&1 || echo "$c rc=$?"
    echo "round $r $(grep -E "ratio" $LOG/b.log | tail -1)"
  done
done
