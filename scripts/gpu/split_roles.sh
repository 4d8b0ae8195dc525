#!/bin/bash
# The K loop split among roles of one block (split-roles), one device call from the repository
# root: the GEMM variants for few tokens (bench/kernel-variants/gemm_m64_n32_s16_f4*.tir) checked
# against the interpreter on a ragged shape, sanitized, then `tessel bench gemm` against cuBLAS
# (records in $OUT/gemm.jsonl); then, with W4A16=1, scripts/gpu/w4a16_fixed_costs.sh over
# VARIANTS (its own checks and graph timings, records in $OUT/w4a16.jsonl).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool || exit 1
T=build-dev/bin/tessel
V=bench/kernel-variants
GEMMS=${GEMMS:-gemm_m64_n32_s16_f4,gemm_m64_n32_s16_f4_w2,gemm_m64_n32_s16_f4_w3,gemm_m64_n32_s16_f4_w4,gemm_m64_n32_s16_f4_w2_p2,gemm_swap_r64_t64_s8_split_k}
K=""
for g in ${GEMMS//,/ }; do
  K="$K${K:+,}$V/$g.tir"
  echo "$g against the interpreter (M=70,N=200,K=1000): $($T run $V/$g.tir --gpu --check --size M=70,N=200,K=1000 2>&1 | grep -E 'relative error|error')"
done
g=${GEMMS#*,}; g=${g%%,*}
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool $T run $V/$g.tir --gpu --size M=70,N=200,K=1000 > $LOG/san.log 2>&1
  echo "$g $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san.log)"
done
timeout 240 $T bench gemm --kernels $K --shapes ${GEMM_SHAPES:-16x4096x4096,32x4096x4096,64x4096x4096,128x4096x4096,64x4096x11008} \
  --iterations 30 --json $OUT/gemm.jsonl > $LOG/bench_gemm.log 2>&1
echo "bench gemm rc=$?"
python3 - $OUT/gemm.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "shape" not in r: continue
    print("%-14s %-30s %.1f us  ratio %.3f  %s" % (r["shape"], r.get("name", "?").replace("gemm_", ""), 1000 * (r.get("ms") or 0), r.get("ratio") or 0, "ok" if r.get("passed") else "BAD"))
PY
if [ "${W4A16:-0}" = 1 ]; then
  OUT=$OUT LOG=$LOG bash scripts/gpu/w4a16_fixed_costs.sh 2>&1 | grep -E "interpreter|check|SUMMARY|graph of" | sed 's/ *cuBLAS f16.*ratio/ ratio/'
fi
