#!/bin/bash
# Call C' of the sixth 2026-11-28 session (H200), one device call from the repository root (carry
# [".carry-base"] = `git archive` of the tree before): unpinned rings up to 8 stages instead of 4
# (stage_budget.h's kMaxStages; the shared-memory budget still binds first: 128x128x64 tiles get
# 6, 64x256 get 5, 64x128 get 8, 128x256 stay at 4). The f16 A [M,K] B [N,K] family of the sweep
# over the points that read lowest on the H200 and some mid and large shapes, base then new, each
# variant tuned per shape and the fastest timed against cuBLAS in the same process.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_side .carry-base base tool
build_tool || { tail -30 $LOG/build.log; exit 1; }
wait
ls .carry-base/build-dev/bin/tessel > /dev/null || { tail -20 $LOG/build_base.log; exit 1; }
V=bench/kernel-variants
SWAPS="r64_t16_s12 r64_t16_s12_split_k r64_t32_s12_split_k r64_t64_s8_split_k r128_t16_s8"
FAM=examples/kernels/gemm.tir$(for s in t128_s4_r8 t128_split_k m64 m64_t128 m64_t128_split_k n192 n192_split_k m64_n64 m64_n64_s8 m64_n64_s8_split_k m64_t128_s8_split_k m64_n32_s16_f4 m64_n32_s16_f4_w2 m64_n32_s16_f4_w2_p2; do echo -n +$V/gemm_$s.tir; done)$(for s in $SWAPS; do echo -n +$V/gemm_swap_$s.tir; done)
SHAPES=64x4096x4096,256x4096x4096,64x11008x4096,256x11008x4096,128x16384x16384,16384x128x16384,8192x8192x256,512x512x512,1024x1024x1024,2048x2048x2048,1024x4096x4096,4096x1024x4096
for side in base new; do
  T=build-dev/bin/tessel; [ $side = base ] && T=.carry-base/build-dev/bin/tessel
  start=$(date +%s)
  TESSEL_CACHE_DIR=$(mktemp -d) timeout 170 $T bench gemm --kernels $FAM --iterations 20 \
    --json $OUT/stages_$side.jsonl --shapes $SHAPES > $LOG/stages_$side.log 2>&1
  echo "$side rc=$? $(( $(date +%s) - start )) s"
done
python3 - $OUT/stages_base.jsonl $OUT/stages_new.jsonl <<'PY'
import json, sys, math
rows = {}
for side, f in zip(("base", "new"), sys.argv[1:]):
    for l in open(f):
        r = json.loads(l)
        if 'tuned_ms' in r: rows.setdefault(r['shape'], {})[side] = r
g = {"base": [], "new": []}
for s, d in rows.items():
    line = s
    for side in ("base", "new"):
        r = d.get(side)
        if r:
            g[side].append(math.log(r['ratio']))
            line += "  %s %.3f %.1f/%.1f us %s" % (side, r['ratio'], r['ms'] * 1e3, r['baseline_ms'] * 1e3, r['chosen'].replace('gemm_', ''))
    print(line)
for side in g:
    if g[side]: print(side, "geomean %.3f over %d" % (math.exp(sum(g[side]) / len(g[side])), len(g[side])))
PY
