#!/bin/bash
# Batched GEMM in 2x1 clusters (bench/kernel-variants/gemm_batched_cluster2x1.tir) against the
# example and cublasGemmStridedBatchedEx on the lent H100, one device call from the repository
# root: check against the interpreter on the GPU at ragged sizes, compute-sanitizer on the
# cluster variant, then `tessel bench gemm --batch L` at each "L:MxNxK" of CASES (JSON in
# $OUT/batched_cluster.jsonl).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool || { tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
V=bench/kernel-variants/gemm_batched_cluster2x1.tir
for size in L=3,M=300,N=130,K=72 L=12,M=1000,N=1000,K=1000 L=2,M=64,N=264,K=136; do
  echo "cluster $size: $($T run $V --gpu --check --size $size 2>&1 | grep -iE 'relative|error' | head -1)"
done
for tool in memcheck racecheck synccheck; do
  echo "cluster $tool: $(timeout 150 compute-sanitizer --tool $tool $T run $V --gpu --size L=3,M=300,N=130,K=72 2>&1 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | head -1)"
done
for c in ${CASES:-12:1000x1000x1000 12:1024x1024x1000 16:1024x1024x1024 4:4096x4096x4096 64:512x512x512 128:256x256x256}; do
  timeout 120 $T bench gemm --kernels gemm_batched,$V --batch ${c%%:*} --shapes ${c##*:} --iterations 20 \
    --json $OUT/batched_cluster.jsonl > $OUT/b_${c%%:*}_${c##*:}.log 2>&1 || echo "$c: rc=$?"
done
python3 - $OUT/batched_cluster.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "shape" not in r: continue
    print("%-14s L=%-4s %-26s %.4f ms ratio %.3f rel_err %.1e %s" % (r["shape"], r.get("batch", "?"), r.get("name", "?"), r.get("ms", 0), r.get("ratio", 0), r.get("rel_err", 0), "ok" if r.get("passed") else "FAIL"))
PY
