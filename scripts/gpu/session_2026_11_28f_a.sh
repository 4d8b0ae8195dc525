#!/bin/bash
# Call A' of the sixth 2026-11-28 session (H200), one device call from the repository root:
# 1. FP8 (e4m3) at 8192³ and 4096³ against cuBLASLt (issue 11: >= 1.0x at 8192³), and the grouped
#    GEMM (64 groups of M in 1..4096, N = K = 4096) against cublasGemmGroupedBatchedEx and a loop
#    of cublasGemmEx: their first readings on the H200;
# 2. the points of the 32-shape sweep that read lowest on the H200 (call 3 of
#    bench/results/2026-11-28-gemm-sweep-h200.md: skinny, memory-bound shapes where cuBLAS gained
#    from the H200's bandwidth more than the families' variants did), again, with the swapped-
#    operand variants not in the families added (64-token tiles with 12 stages, 128-row x 64-token
#    tiles, 2x1 clusters multicasting the token tile).
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
T=build-dev/bin/tessel
PYTHONPATH=build-py/python timeout 120 python3 bench/python/fp8_gemm.py \
  --shapes 8192x8192x8192,4096x4096x4096 --json $OUT/fp8.jsonl 2>&1 | grep -E "ratio|x[0-9]+ |FAIL|rror" | tail -4
timeout 150 $T bench gemm --groups 64 --shapes 4096x4096x4096 --iterations 20 --warmup 5 \
  --json $OUT/grouped.jsonl > $LOG/grouped.log 2>&1; echo "grouped rc=$?"; grep -iE "ratio|loop|grouped" $LOG/grouped.log | tail -4
V=bench/kernel-variants
EXTRA="r64_t64_s12_split_k r128_t64_s8_split_k r128_t16_s12_split_k r64_t64_s8_cluster2x1 r64_t64_s8_cluster2x1_split_k r64_t32_s12_cluster2x1_split_k"
SWAPS="r64_t16_s12 r64_t16_s12_split_k r64_t32_s12_split_k r64_t64_s8_split_k r128_t16_s8 $EXTRA"
FAM=examples/kernels/gemm.tir$(for s in t128_s4_r8 t128_split_k m64 m64_t128 m64_t128_split_k n192 n192_split_k m64_n64 m64_n64_s8 m64_n64_s8_split_k m64_t128_s8_split_k m64_n32_s16_f4 m64_n32_s16_f4_w2 m64_n32_s16_f4_w2_p2; do echo -n +$V/gemm_$s.tir; done)$(for s in $SWAPS; do echo -n +$V/gemm_swap_$s.tir; done)
NNFAM=examples/kernels/gemm_nn.tir$(for s in t128 t128_split_k cluster2x1 m64 m64_t128 m64_t128_split_k n192 n192_split_k m64_n64 m64_n64_s8 m64_n64_s8_split_k m64_t128_s8_split_k m64_n64_s12_f2_w2 m64_n32_s16_f4 m64_n32_s16_f4_w2 m64_n32_s16_f4_w2_p2; do echo -n +$V/gemm_nn_$s.tir; done)$(for s in $SWAPS; do echo -n +$V/gemm_nn_swap_$s.tir; done)
SWEEP=64x4096x4096,256x4096x4096,64x11008x4096,256x11008x4096,128x16384x16384,16384x128x16384,8192x8192x256,512x512x512,1024x1024x1024,3000x5000x704
export SWEEP
FAMILY_TIMEOUT=200 sweep_family nt_low $FAM
FAMILY_TIMEOUT=200 sweep_family nn_low $NNFAM
sweep_summary
