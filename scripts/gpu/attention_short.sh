#!/bin/bash
# Attention at short L (issue 12's 1K / 4K bar) on the lent H100, one device call from the
# repository root: builds tessel and the Python extension, makes the variants below by sed, checks
# each against the interpreter (BH = 3, S = 1000) and under compute-sanitizer, times them against
# cuDNN in the same process (bench/python/attention.py, B = 4, H = 32, D = 128, L = 1K / 4K,
# causal and not), and with PROFILE=1 takes an ncu profile of flash_attention at BH = 128,
# L = 1024 with per-SASS stall samples ($OUT/fa1k_sass.csv).
# Variants: _recip = the output divided by the row sum as o * (1 / l) (one division per row
# instead of one per element). KERNELS (default "flash_attention flash_attention_causal").
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool &
build_python &
wait
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $OUT/build.log $OUT/pybuild.log; exit 1; }
mkdir -p build-dev/variants
for f in ${KERNELS:-flash_attention flash_attention_causal}; do
  sed -e 's/^  %lb = broadcast %l {dims = \[1\]} : register<f32>\[128,\([0-9]*\)\]/  %one = fill {value = 1.0} : register<f32>[128]\n  %linv = div %one, %l : register<f32>[128]\n  %lb = broadcast %linv {dims = [1]} : register<f32>[128,\1]/' \
      -e 's/^  %out = div %o, %lb/  %out = mul %o, %lb/' examples/kernels/$f.tir > build-dev/variants/${f}_recip.tir
done
for f in build-dev/variants/*.tir ${CHECK_EXAMPLES:-}; do
  echo "$(basename $f) check: $(build-dev/bin/tessel run $f --gpu --check --size BH=3,S=1000 2>&1 | grep -i 'error\|relative\|mismatch' | head -2)"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool build-dev/bin/tessel run $f --gpu --size BH=3,S=300 > $OUT/san.log 2>&1
    echo "  $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
  done
done
export PYTHONPATH=$PWD/build-py/python
B="python3 bench/python/attention.py --iterations ${ITER:-20} --json $OUT/attention.jsonl"
S="${SHAPES:-4,32,1024,128 4,32,4096,128}"
for v in "" ${VARIANTS:-recip}; do
  k=""; [ -n "$v" ] && k="--kernel build-dev/variants/flash_attention_$v.tir"
  kc=""; [ -n "$v" ] && kc="--kernel build-dev/variants/flash_attention_causal_$v.tir"
  echo "== variant '${v:-example}'"
  timeout 150 $B $k --shapes $S 2>&1 | tail -2
  timeout 150 $B --causal $kc --shapes $S 2>&1 | tail -2
done
if [ -n "${PROFILE:-}" ]; then
  timeout 200 ncu --kernel-name regex:flash --launch-count 1 --import-source no \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats \
    -o $OUT/fa1k build-dev/bin/tessel run ${PROFILE_KERNEL:-examples/kernels/flash_attention.tir} --gpu --size BH=128,S=1024 > $OUT/ncu_run.log 2>&1
  ncu -i $OUT/fa1k.ncu-rep --page source --csv --print-source sass > $OUT/fa1k_sass.csv 2>&1
  ncu -i $OUT/fa1k.ncu-rep > $OUT/fa1k.txt 2>&1
  grep -E "Duration|SM Busy|Issue Slots|Eligible|Active Warps|No Eligible|Stall" $OUT/fa1k.txt | head -20
  wc -c $OUT/fa1k_sass.csv
fi
python3 - <<'PY'
import json, os
print("%-36s %-15s %-6s %8s %8s %7s %9s" % ("kernel", "shape", "causal", "ms", "cudnn_ms", "ratio", "rel_err"))
for l in open(os.environ.get("OUT", "/tmp/out") + "/attention.jsonl"):
    r = json.loads(l)
    print("%-36s %-15s %-6s %8.4f %8.4f %7.3f %9.2e" % (r["name"], r["shape"], r["causal"], r["ms"],
          r.get("cudnn_ms", 0), r.get("cudnn_ratio", 0), r["rel_err"]))
PY
