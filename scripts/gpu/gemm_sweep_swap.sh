#!/bin/bash
# The 32-shape GEMM sweep of issue 11 with the swapped-operand variants in each family, one device
# call from the repository root: per layout (A [M,K] with B [N,K], and with B [K,N]) the tuned
# family of bench/results/2026-11-26-gemm-sweep-tuned3-h100.md plus the swapped variants of
# bench/kernel-variants/make_swap_variants.py; at each shape every variant is timed, the fastest
# checked and timed against cublasGemmEx interleaved (tessel bench gemm a.tir+b.tir+...).
# B [N,K]'s family also has the 64x32-tile variant with 4 wgmma groups in flight
# (gemm_m64_n32_s16_f4, 2026-11-26-gemm-few-tokens-h100.md) and its K loop split between two
# consumer warpgroups of the block (split-roles: `_w2`, `_w2_p2`, 2026-11-27-split-roles-h100.md);
# B [K,N]'s the 64x64 tile split so (`gemm_nn_m64_n64_s12_f2_w2`) and the 64x32 tiles (`gemm_nn_m64_n32_s16_f4`,
# `_w2`, `_w2_p2`: B's [64,32] tile MN-major in 64-byte swizzled atoms, since 2cf2b84). LAYOUTS (default "nt nn"; also nt_bf16, nn_bf16: the same families in bf16, from
# bench/kernel-variants/bf16/) picks the families. JSON records and the summary's SVG in $OUT.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool || { tail -30 $LOG/build.log; exit 1; }
V=bench/kernel-variants
SWAPS="r64_t16_s12 r64_t16_s12_split_k r64_t32_s12_split_k r64_t64_s8_split_k r128_t16_s8"
FAM=examples/kernels/gemm.tir$(for s in t128_s4_r8 t128_split_k m64 m64_t128 m64_t128_split_k n192 n192_split_k m64_n64 m64_n64_s8 m64_n64_s8_split_k m64_t128_s8_split_k m64_n32_s16_f4 m64_n32_s16_f4_w2 m64_n32_s16_f4_w2_p2; do echo -n +$V/gemm_$s.tir; done)$(for s in $SWAPS; do echo -n +$V/gemm_swap_$s.tir; done)
NNFAM=examples/kernels/gemm_nn.tir$(for s in t128 t128_split_k cluster2x1 m64 m64_t128 m64_t128_split_k n192 n192_split_k m64_n64 m64_n64_s8 m64_n64_s8_split_k m64_t128_s8_split_k m64_n64_s12_f2_w2 m64_n32_s16_f4 m64_n32_s16_f4_w2 m64_n32_s16_f4_w2_p2; do echo -n +$V/gemm_nn_$s.tir; done)$(for s in $SWAPS; do echo -n +$V/gemm_nn_swap_$s.tir; done)
B=$V/bf16
BFAM=examples/kernels/gemm_bf16.tir$(for s in t128_s4_r8 t128_split_k m64 m64_t128 m64_t128_split_k n192 n192_split_k m64_n64 m64_n64_s8 m64_n64_s8_split_k m64_t128_s8_split_k m64_n32_s16_f4 m64_n32_s16_f4_w2 m64_n32_s16_f4_w2_p2; do echo -n +$B/gemm_bf16_$s.tir; done)$(for s in $SWAPS; do echo -n +$B/gemm_bf16_swap_$s.tir; done)
BNNFAM=$B/gemm_nn_bf16.tir$(for s in t128 t128_split_k cluster2x1 m64 m64_t128 m64_t128_split_k n192 n192_split_k m64_n64 m64_n64_s8 m64_n64_s8_split_k m64_t128_s8_split_k m64_n64_s12_f2_w2 m64_n32_s16_f4 m64_n32_s16_f4_w2 m64_n32_s16_f4_w2_p2; do echo -n +$B/gemm_nn_bf16_$s.tir; done)$(for s in $SWAPS; do echo -n +$B/gemm_nn_bf16_swap_$s.tir; done)
for layout in ${LAYOUTS:-nt nn}; do
  case $layout in nt) fam=$FAM;; nn) fam=$NNFAM;; nt_bf16) fam=$BFAM;; nn_bf16) fam=$BNNFAM;; esac
  sweep_family $layout $fam
done
sweep_summary
