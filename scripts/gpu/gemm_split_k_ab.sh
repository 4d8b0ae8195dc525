#!/bin/bash
# split-k GEMM variants for few tokens, before (.carry-base) and after (the working tree): `tessel
# bench gemm` of each tree against cublasGemmEx in its own process; prints both ratios per point.
set -u
source "$(dirname "$0")/common.sh"
for side in base new; do
  tree=.; [ $side = base ] && tree=.carry-base
  (cd $tree && cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_PYTHON=OFF > $LOG/cfg_$side.log 2>&1 && ninja -C build-dev tessel > $LOG/b_$side.log 2>&1) &
done
wait
V=bench/kernel-variants
K=$V/gemm_m64_n32_s16_f4.tir,$V/gemm_swap_r64_t16_s12_split_k.tir,$V/gemm_swap_r64_t64_s8_split_k.tir,$V/gemm_m64_t128_s8_split_k.tir,$V/gemm_m64_n64_s8_split_k.tir
for side in base new; do
  tree=.; [ $side = base ] && tree=.carry-base
  (cd $tree && TESSEL_COMMIT=$side timeout 200 build-dev/bin/tessel bench gemm --kernels $K --shapes 16x4096x4096,32x4096x4096,64x4096x4096,128x4096x4096,64x4096x11008 --iterations 30 --json $OUT/gemm_$side.jsonl > $LOG/bench_$side.log 2>&1; echo "$side bench rc=$?")
done
python3 - $OUT/gemm_base.jsonl $OUT/gemm_new.jsonl <<'PY'
import json, sys, collections
rows = collections.defaultdict(dict)
for f, side in zip(sys.argv[1:], ["base", "new"]):
    for line in open(f):
        r = json.loads(line)
        if "shape" not in r: continue
        rows[(r["shape"], r.get("name", "?"))][side] = (r.get("ratio") or 0, 1000 * (r.get("ms") or 0), r.get("passed"))
for (s, k), v in sorted(rows.items()):
    print("%-14s %-32s " % (s, k.replace("gemm_", "")) + "  ".join("%s %.3f %.1fus%s" % (side, *v[side][:2], "" if v[side][2] else " BAD") for side in ["base", "new"] if side in v))
PY
