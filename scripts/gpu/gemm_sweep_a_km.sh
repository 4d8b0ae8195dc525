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
T=build-dev/bin/tessel
V=bench/kernel-variants
SWEEP=${SWEEP:-512x512x512,1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,16384x16384x16384,16x4096x4096,64x4096x4096,256x4096x4096,16x11008x4096,64x11008x4096,256x11008x4096,16x4096x11008,64x4096x11008,256x4096x11008,16x14336x4096,256x14336x4096,16x4096x14336,256x4096x14336,4096x4096x11008,4096x4096x14336,4096x11008x4096,4096x14336x4096,1024x4096x4096,2048x4096x4096,8192x4096x4096,4096x1024x4096,128x16384x16384,16384x128x16384,8192x8192x256,8192x8192x16384,3000x5000x704}
BASE="t128_s4_r8 t128_split_k m64 m64_t128 m64_t128_split_k n192 n192_split_k m64_n64 m64_n64_s8 m64_n64_s8_split_k m64_t128_s8_split_k"
SWAPS=${SWAPS:-r64_t16_s12 r64_t16_s12_split_k r64_t32_s12_split_k r64_t64_s8_split_k r128_t16_s8}
family() {  # $1 = tn | tt, $2 = "" | _bf16
  local dir=$V; [ -n "$2" ] && dir=$V/bf16
  echo -n $([ -n "$2" ] && echo $V/a_km/gemm_$1$2.tir || echo examples/kernels/gemm_$1.tir)
  for s in $BASE; do echo -n +$V/a_km/gemm_$1$2_$s.tir; done
  for s in $SWAPS; do echo -n +$dir/gemm_$1$2_swap_$s.tir; done
  if [ $1 = tn ]; then [ -n "$2" ] && echo -n +$V/a_km/gemm_tn_bf16_cluster2x1.tir || echo -n +$V/gemm_tn_cluster2x1.tir; fi
}
files=""
for layout in ${LAYOUTS:-tn tt tn_bf16 tt_bf16}; do
  case $layout in tn) fam=$(family tn "");; tt) fam=$(family tt "");; tn_bf16) fam=$(family tn _bf16);; tt_bf16) fam=$(family tt _bf16);; esac
  start=$(date +%s)
  timeout ${FAMILY_TIMEOUT:-290} $T bench gemm --kernels $fam --iterations 20 --json $OUT/sweep_$layout.jsonl --shapes $SWEEP > $LOG/$layout.log 2>&1
  echo "$layout rc=$? $(( $(date +%s) - start )) s"; grep -i "error\|mismatch" $LOG/$layout.log | head -3
  files="$files $OUT/sweep_$layout.jsonl"
done
$T bench summary $files --svg $OUT/sweep.svg > $OUT/summary.txt 2>&1
# the summary's family lines without the long family names; then the tests' lines again
grep "geometric mean" $OUT/summary.txt | sed 's/^[^ ]*+[^ ]* //'
cat $OUT/tests.txt 2>/dev/null
