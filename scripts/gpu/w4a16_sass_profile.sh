#!/bin/bash
# Where a W4A16 kernel's warps stall, instruction by instruction: ncu's SourceCounters of one
# launch of variant PROFILE (a bench/python/w4a16.py name, default the best small-M variant
# c64x16_k128_sk3_b4) at M = PROFILE_M (default 16), N = 8192, K = PROFILE_K (default 8192; a
# long K profiles the steady stream rather than the launch's ends), G = 128 through
# `tessel run --gpu`, then
#   $OUT/<variant>.sass        the kernel's SASS (cuobjdump), for counting a loop's instructions;
#   $OUT/<variant>_stalls.csv  ncu's source page: every SASS instruction with its stall samples;
#   stdout                     the sections' headline numbers and the 40 most sampled
#                              instructions with their top stall reason.
# Then, when VARIANTS is set, bench/python/w4a16.py times VARIANTS at SHAPES (records in
# $OUT/w4a16.jsonl; GRAPH=L: as CUDA graphs of L launches too), with the SM clock and the power
# sampled every 100 ms meanwhile ($OUT/clocks.csv). Run from the repository root on the device
# machine.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
if [ -n "${VARIANTS:-}" ]; then build_tool_and_python || exit 1; else build_tool || exit 1; fi
T=build-dev/bin/tessel
V=${PROFILE:-c64x16_k128_sk3_b4}
M=${PROFILE_M:-16}
write_w4a16_variants "$V"
kt=$(echo $V | sed -n 's/.*_k\([0-9]*\).*/\1/p')
K=${PROFILE_K:-8192}
SIZE="M=$M,N=8192,K=$K,KG=$((K / 128))"
case $V in c*) SIZE="$SIZE,NQ=$((8192 * K / ${kt:-64}))" ;; esac
$T compile build-dev/variants/$V.tir --emit=cubin -o $LOG/$V.cubin && cuobjdump -sass $LOG/$V.cubin > $OUT/$V.sass
timeout 200 ncu --kernel-name regex:gemm_w4a16 --launch-count 1 --import-source no \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section SchedulerStats --section SourceCounters --section Occupancy --section LaunchStats \
  -f -o $LOG/prof $T run build-dev/variants/$V.tir --gpu --size $SIZE > $LOG/ncu_run.log 2>&1
echo "ncu rc=$? ($(tail -1 $LOG/ncu_run.log))"
ncu -i $LOG/prof.ncu-rep > $LOG/prof.txt 2>&1
grep -E "^    (Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit|Issue Slots Busy|Eligible Warps|Active Warps Per|No Eligible|Warp Cycles Per Issued|Grid Size|Registers Per|Achieved Occupancy|Dynamic Shared|Mem Busy|Max Bandwidth|Compute \(SM\) Throughput|Executed Instructions  )" $LOG/prof.txt | head -30
ncu -i $LOG/prof.ncu-rep --page source --csv --print-source sass > $OUT/${V}_stalls.csv 2> $LOG/source.err
echo "source page: $(wc -l < $OUT/${V}_stalls.csv) lines $(head -c 300 $LOG/source.err)"
python3 - $OUT/${V}_stalls.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
# ncu's source page starts with a "Kernel Name" row, then the header.
while rows and "Source" not in [h.strip() for h in rows[0]]:
    rows = rows[1:]
if len(rows) < 2:
    sys.exit("no source rows")
head = rows[0]
def col(name):
    for i, h in enumerate(head):
        if h.strip() == name:
            return i
    return None
src, samples = col("Source"), col("Warp Stall Sampling (All Samples)")
if samples is None:
    samples = next((i for i, h in enumerate(head) if "Sampling" in h), None)
if src is None or samples is None:
    sys.exit("no Source / sampling column")
body = rows[1:]
def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0
total = sum(num(r[samples]) for r in body if len(r) > samples)
print("total samples %d over %d instructions" % (total, len(body)))
top = sorted(range(len(body)), key=lambda i: -num(body[i][samples]) if len(body[i]) > samples else 0)[:40]
for i in sorted(top):
    r = body[i]
    print("%5d %5.1f%% %s" % (i, 100 * num(r[samples]) / max(total, 1), r[src][:90]))
PY
if [ -n "${VARIANTS:-}" ]; then
  export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
  cd bench/python
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 \
    > $OUT/clocks.csv 2>&1 &
  smi=$!
  timeout ${BENCH_TIMEOUT:-300} python3 w4a16.py --json $OUT/w4a16.jsonl --iterations ${ITER:-30} \
    ${GRAPH:+--graph $GRAPH} --shapes ${SHAPES:-1x8192x8192g128,16x8192x8192g128} \
    --variants $VARIANTS 2>&1 | tail -40
  kill $smi
  python3 - $OUT/clocks.csv <<'PY'
import sys
rows = [l.split(",") for l in open(sys.argv[1]) if l.count(",") == 2]
mhz = sorted(float(r[1].split()[0]) for r in rows)
watts = sorted(float(r[2].split()[0]) for r in rows)
if mhz:
    print("SM clock MHz min / median / max %d / %d / %d, power W median / max %.0f / %.0f (%d samples)"
          % (mhz[0], mhz[len(mhz) // 2], mhz[-1], watts[len(watts) // 2], watts[-1], len(mhz)))
PY
fi
