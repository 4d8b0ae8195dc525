#!/bin/bash
# Call B' of the sixth 2026-11-28 session (H200), one device call from the repository root: why the
# skinny, memory-bound GEMMs of the sweep trail cuBLAS on the H200 (0.83-0.92 at 64x11008x4096,
# 128x16384x16384, 16384x128x16384, where both ran even on the H100):
# 1. K tiles of 128 (bench/kernel-variants/k128/: 256 contiguous bytes of each operand row per
#    stage instead of 128) against the families' best variants at those shapes, timed by
#    `tessel bench gemm` (tuning measurement, then the fastest against cuBLAS interleaved);
# 2. ncu (scripts/gpu/gemm_cublas_profile.sh) of cuBLAS's kernel at two of them — its name (tile,
#    split, cluster), grid, DRAM throughput — beside tessel's best variants.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool || { tail -30 $LOG/build.log; exit 1; }
V=bench/kernel-variants
FAM=$V/k128/gemm_t128_k128.tir+$V/k128/gemm_m64_k128.tir+$V/gemm_m64.tir+$V/gemm_t128_s4_r8.tir+$V/gemm_m64_n32_s16_f4.tir+$V/gemm_m64_t128_s8_split_k.tir+$V/gemm_swap_r128_t64_s8_split_k.tir
SWEEP=128x16384x16384,16384x128x16384,64x11008x4096,256x4096x4096 FAMILY_TIMEOUT=150 sweep_family k128 $FAM
python3 - $OUT/sweep_k128.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if 'tuned_ms' not in r: continue
    t = sorted((float(x.split()[1]), x.split()[0]) for x in r['tuned_ms'].split(', '))
    print(r['shape'], 'ratio %.3f' % r['ratio'], 'cublas %.1f us' % (r['baseline_ms'] * 1e3),
          ' '.join('%s:%.1f' % (n.replace('gemm_', ''), v * 1e3) for v, n in t))
PY
SHAPES="128x16384x16384 64x11008x4096" KERNELS="gemm_m64 gemm_t128_s4_r8 gemm_m64_n32_s16_f4" \
  timeout 330 bash scripts/gpu/gemm_cublas_profile.sh 2>&1 | grep -E "==|nvjet|sm90|Duration|DRAM Throughput|Memory Throughput|Grid Size|Cluster Size|Dynamic Shared|L2 Hit"
