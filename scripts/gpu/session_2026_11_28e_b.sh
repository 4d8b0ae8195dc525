#!/bin/bash
# Call B of the fifth 2026-11-28 session (H200), one device call from the repository root
# (carry [".carry-ncu"], the two reports of call A's batched_k1000_profile.sh copied there):
# 1. per-SASS-instruction counters of both reports (ncu's source page: executed instructions and
#    stall samples per instruction) into $OUT, to trace tessel's 39% more instructions and doubled
#    barrier stalls against cuBLAS's kernel of the same configuration at 12 x 1000³;
# 2. the H200's figures for the bars measured so far on the H100 only: batched GEMM at the four
#    shapes of issue 11's batched bar; attention (issue 12) at L = 1K, 4K, 16K, causal and not,
#    the examples and the pingpong variant.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for r in cublas tessel; do
  ncu -i .carry-ncu/$r.ncu-rep --page source --csv --print-source sass > $OUT/${r}_sass.csv 2>&1
  echo "$r sass rows $(wc -l < $OUT/${r}_sass.csv)"
done
build_tool_and_python || exit 1
T=build-dev/bin/tessel
V=bench/kernel-variants/batched
FAM=$V/gemm_batched_wg.tir+$V/gemm_batched_cluster2x1_n8.tir
for c in 16:1024x1024x1024 12:1000x1000x1000 12:1024x1024x1000 32:512x512x128; do
  timeout 60 $T bench gemm --kernels $FAM --batch ${c%%:*} --shapes ${c#*:} --iterations 30 --json $OUT/batched.jsonl > $LOG/b.log 2>&1 || echo "$c rc=$?"
  grep -E "ratio [0-9]|tuned" $LOG/b.log | tail -2
done
NO_SANITIZE=1 CHECK="examples/kernels/flash_attention.tir examples/kernels/flash_attention_causal.tir" \
  VARIANTS=pingpong timeout 330 bash scripts/gpu/attention_short.sh 2>&1 | grep -v "^NVIDIA"
