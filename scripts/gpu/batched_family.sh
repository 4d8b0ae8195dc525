#!/bin/bash
# Batched GEMM against cublasGemmStridedBatchedEx (issue 11's batched bar), one device call from
# the repository root: per (L, MxNxK) one `tessel bench gemm --batch L` over the family — the
# example, bench/kernel-variants/gemm_batched_{t128,m64_t128,cluster2x1}.tir and the tiles and
# 2x1 clusters of bench/kernel-variants/batched/ — each variant timed, the fastest checked against
# float64 on sampled entries and element by element against cuBLAS, then timed interleaved with
# cuBLAS (medians of 20). CASES: "L:MxNxK ..." (default the eight of
# bench/results/2026-11-26-batched-gemm-h100.md plus 12 x 1024x1024x1000). Records in $OUT.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool || { tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
V=bench/kernel-variants
FAM=examples/kernels/gemm_batched.tir+$V/gemm_batched_t128.tir+$V/gemm_batched_m64_t128.tir+$V/gemm_batched_cluster2x1.tir$(for f in $V/batched/*.tir; do echo -n +$f; done)
for c in ${CASES:-1:8192x8192x8192 4:4096x4096x4096 8:2048x2048x2048 16:1024x1024x1024 64:512x512x512 128:256x256x256 12:1000x1000x1000 12:1024x1024x1000 32:512x512x128}; do
  timeout 120 $T bench gemm --kernels $FAM --batch ${c%%:*} --shapes ${c#*:} --iterations 20 --json $OUT/batched.jsonl > $LOG/b.log 2>&1 || { echo "$c rc=$?"; tail -3 $LOG/b.log; }
done
python3 - <<'PY'
import json, os, math
rs = [json.loads(l) for l in open(os.environ["OUT"] + "/batched.jsonl")]
rs = [r for r in rs if "ratio" in r]
for r in rs:
    print("%4s x %-16s %-34s %8.4f ms  cublas %8.4f  ratio %.3f  %s" % (r.get("batch"), r["shape"], r.get("chosen"), r["ms"], r["baseline_ms"], r["ratio"], "ok" if r["passed"] else "FAILED"))
print("geometric mean %.3f, lowest %.3f" % (math.exp(sum(math.log(r["ratio"]) for r in rs) / len(rs)), min(r["ratio"] for r in rs)))
PY
