#!/bin/bash
# The measurements left pending on 2026-11-28 (README, "Next device measurements"), in two device
# calls from the repository root (carry [".carry-gpu"], refreshed by scripts/carry_gpu_tests.sh):
#   PART=a  the TMA row-box probe and the zero-point W4A16 GPU test (carried binaries), then the
#           LSTM cell's variants beside the plain GEMM of its shape (lstm_gemm_gap.sh)
#   PART=b  the zero-point W4A16 variants against the interpreter and timed (w4a16.sh, no
#           sanitizers), then the tuned MoE with the routing costs (moe.sh)
#   PART=c  W4A16 at M = 1 with X and Y padded to 16 rows (w4a16.py --pad-m 16) and unpadded, the
#           best small-M variant, graphs of 8 launches: is a token box past the end slower?
# Records come back in $OUT (gemm.jsonl, lstm_cell.jsonl, w4a16.jsonl, moe.jsonl).
set -u
here=$(dirname "$0")
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
case ${PART:-a} in
  a)
    timeout 120 .carry-gpu/device_library_gpu_test --gtest_also_run_disabled_tests \
      --gtest_filter='*RowBoxes*' 2>&1 | grep -E "^\[  (PASSED|FAILED)|Failure|mismatch|seed|error" | head -8
    timeout 200 .carry-gpu/gemm_gpu_test --gtest_filter='*ZeroPoints*' 2>&1 |
      grep -E "^\[  (PASSED|FAILED)|Failure|Expected|Which is|worst" | head -8
    bash $here/lstm_gemm_gap.sh 2>&1 | tail -16 ;;
  b)
    SAN=0 VARIANTS=${VARIANTS:-z128x64,t128x64,z64x16_w2} \
      SHAPES=${SHAPES:-1x8192x8192g128,16x8192x8192g128,4096x8192x8192g128} \
      bash $here/w4a16.sh 2>&1 | grep -E "==|relative error|ms|FAIL" | tail -20
    SAN=0 TUNED=1 TOKENS=${TOKENS:-1,64,512,4096} VARIANTS=t16_r128_b2,t32_r64_b4,t64,t128 \
      BENCH_TIMEOUT=240 bash $here/moe.sh 2>&1 | grep -E "tuned|routing|relative error|FAIL" | tail -12 ;;
  c)
    for pad in 0 16 0 16; do
      echo "== pad-m $pad"
      TESTS=0 SAN=0 PAD_M=$pad VARIANTS=${VARIANTS:-c64x16_k256_h2_w3_p2_st6,c64x16_k256_h2_w2_st8} \
        SHAPES=1x8192x8192g128,16x8192x8192g128 BENCH_TIMEOUT=150 \
        bash $here/overlap_launches.sh 2>&1 | grep "graph of"
    done ;;
esac
