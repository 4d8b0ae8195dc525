#!/bin/bash
# Call A of the fourth 2026-11-28 session, one device call from the repository root (carry
# [".carry-gpu"]):
# 1. W4A16 at M = 1, 8, 16 (issue 14's 0.8-of-a-copy bar): does a block of the next launch that is
#    resident beside this launch's block (blocks_per_sm = 2: 64 registers a thread, so two blocks
#    of 512 threads fit an SM) with the trigger first (`_ovearly`) or L2 prefetches of its first
#    weight tiles before its wait (`_ovprefetch`) take off the fixed cost per launch?
# 2. Batched GEMM's three short shapes with overlap_epilogue pinned (batched/*_overlap.tir).
# 3. The checks pending since the u4 box-offset fix and tessel run's group ends: every carried GPU
#    test binary, the gather example under tessel run --check, moe_combine / moe_gather at 1 and
#    64 tokens (their shared check_and_time).
set -u
here=$(dirname "$0")
source $here/common.sh
B=c64x8_k256_h2_w3_p1_st8
B2=c64x8_k256_h2_b2_w3_p1_st8
C=c64x16_k256_h2_w3_p2_st6
C2=c64x16_k256_h2_b2_w3_p2_st6
echo "== W4A16"
(TESTS=0 SAN=0 BENCH_TIMEOUT=240 CHECK_ALL=1 \
  VARIANTS=$B,$B2,${B2}_ovearly,${B2}_ovprefetch,$C,${C2}_ovprefetch \
  SHAPES=1x8192x8192g128,8x8192x8192g128,16x8192x8192g128 \
  timeout 330 bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|relative error|FAIL|rror")
echo "== batched"
T=build-dev/bin/tessel
V=bench/kernel-variants
FAM=examples/kernels/gemm_batched.tir+$V/gemm_batched_t128.tir+$V/gemm_batched_cluster2x1.tir+$V/batched/gemm_batched_overlap.tir+$V/batched/gemm_batched_t128_overlap.tir+$V/batched/gemm_batched_n192.tir
for c in 16:1024x1024x1024 12:1000x1000x1000 32:512x512x128; do
  timeout 100 $T bench gemm --kernels $FAM --batch ${c%%:*} --shapes ${c#*:} --iterations 20 --json $OUT/batched.jsonl > $LOG/b.log 2>&1 || { echo "$c rc=$?"; tail -3 $LOG/b.log; }
  grep -E "^ *[a-z_0-9]+ .*ms|chosen|ratio" $LOG/b.log | tail -9
done
echo "== tests"
TEST_TIMEOUT=240 run_gpu_test_binaries
for k in moe_w4a16_gather:E=9,T=50,M=300,N=264,K=640,KG=5 moe_w4a16_combine:E=9,M=300,N=264,K=640,KG=5; do
  echo "${k%%:*} $(timeout 120 $T run examples/kernels/${k%%:*}.tir --gpu --check \
    --output Y --size ${k#*:} 2>&1 | grep -E 'relative error|error|NaN' | head -2)"
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
for b in moe_combine moe_gather; do
  timeout 100 python3 bench/python/$b.py --json $OUT/$b.jsonl --iterations 10 --tokens 1,64 \
    --variants t16_r128_b2 $([ $b = moe_combine ] && echo --fused examples/kernels/moe_w4a16_combine.tir) 2>&1 | tail -6
done
