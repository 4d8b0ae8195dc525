#!/bin/bash
# GEMMs for few tokens shaped as cuBLAS runs them (issue 11's 64x4096x4096 point): 64 token rows x
# 32 weight rows per block, 16 stages, with and without 1x2 clusters (the token tile multicast),
# against the best earlier variants and cuBLAS. One device call from the repository root: build,
# check each variant on a ragged shape against the interpreter, compute-sanitizer on the cluster
# variant, then `tessel bench gemm` at SHAPES (JSON in $OUT/few_tokens.jsonl). KERNELS: the
# variants (bench/kernel-variants/NAME.tir) to time.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool || { tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
V=bench/kernel-variants
NEW=${NEW:-gemm_m64_n32_s16 gemm_m64_n32_s16_cluster1x2}
for k in $NEW; do
  for size in M=37,N=520,K=3000 M=64,N=200,K=136; do
    echo "$k $size $($T run $V/$k.tir --gpu --check --size $size 2>&1 | grep -iE 'relative|error' | head -1)"
  done
done
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool $T run $V/gemm_m64_n32_s16_cluster1x2.tir --gpu --size M=20,N=264,K=1000 > $OUT/san.log 2>&1
  echo "cluster1x2 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
done
SHAPES=${SHAPES:-64x4096x4096,64x4096x11008,64x11008x4096,64x14336x4096,32x4096x4096,16x4096x4096,128x4096x4096,256x4096x4096}
KERNELS=${KERNELS:-$(for k in $NEW gemm_m64_n64_s8 gemm_swap_r64_t64_s8_split_k gemm_swap_r64_t16_s12_split_k gemm_m64_t128_s8_split_k; do echo -n $V/$k.tir,; done)examples/kernels/gemm.tir}
timeout 300 $T bench gemm --kernels $KERNELS --shapes $SHAPES --iterations 20 --json $OUT/few_tokens.jsonl > $OUT/few_tokens.log 2>&1; echo "bench rc=$?"
python3 - $OUT/few_tokens.jsonl <<'PY'
import json, sys, collections
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "shape" not in r: continue
    rows[r["shape"]][r.get("name", "?")] = (r.get("ratio"), r.get("ms"), r.get("passed"), r.get("baseline_ms"))
for s, ks in rows.items():
    best = sorted(ks.items(), key=lambda kv: -(kv[1][0] or 0))
    print(s, "cublas %.1fus |" % (1000 * (best[0][1][3] or 0)), " | ".join("%s %.3f %.1fus%s" % (k.replace("gemm_", ""), v[0] or 0, 1000 * (v[1] or 0), "" if v[2] else " BAD") for k, v in best[:6]))
PY
