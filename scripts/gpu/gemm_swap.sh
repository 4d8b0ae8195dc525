#!/bin/bash
# Swapped-operand GEMMs for few tokens (issue 11): C = A·Bᵀ computed as Cᵀ = B·Aᵀ so that the
# weights B fill wgmma's M (64 or 128 rows) and the M tokens its N (16..64), stored transposed,
# split-K where pinned. One device call from the repository root: build, check each variant on a
# ragged shape against the interpreter, compute-sanitizer on two, then time them at the small-M
# shapes of the sweep next to the best earlier variants and cuBLAS (JSON in $OUT).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool || { tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
V=bench/kernel-variants
# SUFFIXES: the swapped variants to check and time (bench/kernel-variants/make_swap_variants.py)
SUFFIXES=${SUFFIXES:-r64_t16_s12_split_k r64_t16_s12_cluster2x1_split_k r64_t32_s12_cluster2x1_split_k r64_t64_s8_split_k r64_t64_s8_cluster2x1_split_k r64_t64_s8_cluster2x1 r128_t16_s8}
SWAP=$(for s in $SUFFIXES; do echo $V/gemm_swap_$s.tir $V/gemm_nn_swap_$s.tir; done)
for f in $SWAP; do
  echo "$(basename $f .tir) $($T run $f --gpu --check --size M=37,N=520,K=3000 2>&1 | grep -iE 'relative|error' | head -1)"
done
for f in $V/gemm_swap_r64_t64_s8_cluster2x1_split_k.tir $V/gemm_nn_swap_r64_t16_s12_cluster2x1_split_k.tir; do
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool $T run $f --gpu --size M=20,N=264,K=1000 > $OUT/san.log 2>&1
    echo "$(basename $f .tir) $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
  done
done
SHAPES=${SHAPES:-16x4096x4096,64x4096x4096,256x4096x4096,16x11008x4096,16x4096x11008,16x14336x4096,64x11008x4096,128x16384x16384}
TN=$(for s in $SUFFIXES; do echo -n $V/gemm_swap_$s.tir,; done)$V/gemm_m64_t128_s8_split_k.tir,$V/gemm_m64_n64_s8.tir,$V/gemm_m64_t128.tir
NN=$(for s in $SUFFIXES; do echo -n $V/gemm_nn_swap_$s.tir,; done)$V/gemm_nn_m64_t128_s8_split_k.tir,$V/gemm_nn_m64_n64_s8.tir,$V/gemm_nn_m64_t128.tir
timeout 250 $T bench gemm --kernels $TN --shapes $SHAPES --iterations 20 --json $OUT/swap_tn.jsonl > $OUT/tn.log 2>&1; echo "tn rc=$?"
timeout 250 $T bench gemm --kernels $NN --shapes $SHAPES --iterations 20 --json $OUT/swap_nn.jsonl > $OUT/nn.log 2>&1; echo "nn rc=$?"
python3 - $OUT/swap_tn.jsonl $OUT/swap_nn.jsonl <<'PY'
import json, sys, collections
rows = collections.defaultdict(dict)
for f in sys.argv[1:]:
    for line in open(f):
        r = json.loads(line)
        if "shape" not in r: continue
        k = r.get("name", "?")
        rows[(f.split("/")[-1][:7], r["shape"])][k] = (r.get("ratio"), r.get("ms"), r.get("passed"))
for s, ks in rows.items():
    best = sorted(ks.items(), key=lambda kv: -(kv[1][0] or 0))
    print(*s, " | ".join("%s %.3f %.1fus%s" % (k.replace("gemm_", ""), v[0] or 0, 1000 * (v[1] or 0), "" if v[2] else " BAD") for k, v in best[:5]))
PY
