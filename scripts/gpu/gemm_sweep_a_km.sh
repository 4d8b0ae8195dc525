#!/bin/bash
# The 32-shape GEMM sweep of issue 11 for A stored [K,M] (gemm_tn: B [K,N]; gemm_tt: B [N,K]),
# f16 and bf16, one device call from the repository root: per family the 11 variants of
# bench/results/2026-11-26-gemm-sweep-a-km-h100.md (bench/kernel-variants/a_km/), the swapped-
# operand variants of make_swap_variants.py (the token tile wgmma's MN-major B: 16 and 32 tokens
# in 32- and 64-byte swizzled atoms) and, for gemm_tn, the 2x1 cluster variant
# (bench/results/2026-11-26-operand-layouts-h100.md: 0.95 at 3000x5000x704). At each shape every
# variant is timed, the fastest checked and timed against cublasGemmEx interleaved (tessel bench
# gemm a.tir+b.tir+...). With TESTS=1 first the GPU tests of narrow MN-major operands (the
# descriptor cases of device_library_gpu_test's WgmmaGpu, gemm_gpu_test's swapped [K,M] and
# operand-layout tests; carry [".carry-gpu"]). LAYOUTS (default "tn tt tn_bf16 tt_bf16") picks
# the families; SWEEP the shapes. JSON records and the summary's SVG in $OUT.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool || { tail -30 $LOG/build.log; exit 1; }
if [ "${TESTS:-0}" = 1 ]; then
  timeout 120 .carry-gpu/device_library_gpu_test --gtest_filter='WgmmaGpu.*' > $LOG/wgmma.log 2>&1
  echo "WgmmaGpu rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $LOG/wgmma.log | tr '\n' ' ')" | tee -a $OUT/tests.txt; grep -B2 -A6 "Failure" $LOG/wgmma.log | head -30 | tee -a $OUT/tests.txt
  timeout 200 .carry-gpu/gemm_gpu_test --gtest_filter='GemmGpuTest.SwappedFewTokens*:GemmGpuTest.OperandLayouts' > $LOG/gemm.log 2>&1
  echo "gemm_gpu_test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $LOG/gemm.log | tr '\n' ' ')" | tee -a $OUT/tests.txt; grep -B2 -A6 "Failure" $LOG/gemm.log | head -30 | tee -a $OUT/tests.txt
fi
V=bench/kernel-variants
BASE="t128_s4_r8 t128_split_k m64 m64_t128 m64_t128_split_k n192 n192_split_k m64_n64 m64_n64_s8 m64_n64_s8_split_k m64_t128_s8_split_k"
SWAPS=${SWAPS:-r64_t16_s12 r64_t16_s12_split_k r64_t32_s12_split_k r64_t64_s8_split_k r128_t16_s8}
family() {  # $1 = tn | tt, $2 = "" | _bf16
  local dir=$V; [ -n "$2" ] && dir=$V/bf16
  echo -n $([ -n "$2" ] && echo $V/a_km/gemm_$1$2.tir || echo examples/kernels/gemm_$1.tir)
  for s in $BASE; do echo -n +$V/a_km/gemm_$1$2_$s.tir; done
  for s in $SWAPS; do echo -n +$dir/gemm_$1$2_swap_$s.tir; done
  if [ $1 = tn ]; then [ -n "$2" ] && echo -n +$V/a_km/gemm_tn_bf16_cluster2x1.tir || echo -n +$V/gemm_tn_cluster2x1.tir; fi
}
for layout in ${LAYOUTS:-tn tt tn_bf16 tt_bf16}; do
  case $layout in tn) fam=$(family tn "");; tt) fam=$(family tt "");; tn_bf16) fam=$(family tn _bf16);; tt_bf16) fam=$(family tt _bf16);; esac
  sweep_family $layout $fam
done
sweep_summary
cat $OUT/tests.txt 2>/dev/null  # the tests' lines again
