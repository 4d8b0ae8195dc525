#!/bin/bash
# Attention at L = 1K (issue 12's last bar): where do tessel's extra cycles go against cuDNN's?
# One device call from the repository root (fifteenth session):
#   1. Nsight Compute's per-SM active cycles (min / avg / max over the SMs), elapsed cycles, warp
#      instructions and tensor-pipe activity of tessel's flash_attention and cuDNN's kernel, three
#      launches each, at B,H,L,D = 4,32,1024,128 (7.76 tiles an SM) and 4,33,1024,128 (8 tiles
#      an SM: the static schedule balanced in count) -> $OUT/balance_H.csv;
#   2. per-SASS stall samples of tessel's kernel at 4,32,1024,128 -> $OUT/fa1k_sass.csv;
#   3. the timing at both shapes (bench/python/attention.py) -> $OUT/attention.jsonl.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool_and_python || exit 1
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
M=sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,gpu__time_duration.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
for h in 32 33; do
  timeout 200 ncu --kernel-name 'regex:^flash_attention$|cudnn' --launch-skip 4 --launch-count 6 \
    --metrics $M --csv python3 bench/python/attention.py --shapes 4,$h,1024,128 --iterations 4 \
    > $OUT/balance_$h.csv 2> $LOG/balance_$h.err
  python3 - $OUT/balance_$h.csv $h <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: print("no rows"); sys.exit()
head = rows[0]; ki = head.index("Kernel Name"); ni = head.index("Metric Name"); vi = head.index("Metric Value")
ii = head.index("ID")
per = collections.defaultdict(dict)
for r in rows[1:]:
    per[(r[ii], "tessel" if "flash_attention" in r[ki] else "cudnn")][r[ni]] = float(r[vi].replace(",", ""))
for (i, k), m in sorted(per.items(), key=lambda x: int(x[0][0])):
    el = m["sm__cycles_elapsed.max"]
    print("H=%s %-6s us %7.1f elapsed %7.0f active min %7.0f avg %7.0f max %7.0f (avg/elapsed %.3f, min/max %.3f) inst %.3gM tensor %.1f%% warps %.1f%%" % (
        sys.argv[2], k, m["gpu__time_duration.sum"] / 1e3, el, m["sm__cycles_active.min"], m["sm__cycles_active.avg"],
        m["sm__cycles_active.max"], m["sm__cycles_active.avg"] / el, m["sm__cycles_active.min"] / m["sm__cycles_active.max"],
        m["smsp__inst_executed.sum"] / 1e6, m["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"],
        m["sm__warps_active.avg.pct_of_peak_sustained_active"]))
PY
done
timeout 200 ncu --kernel-name regex:flash --launch-count 1 --import-source no \
  --section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats \
  -o $OUT/fa1k build-dev/bin/tessel run examples/kernels/flash_attention.tir --gpu --size BH=128,S=1024 > $LOG/ncu_run.log 2>&1
ncu -i $OUT/fa1k.ncu-rep --page source --csv --print-source sass > $OUT/fa1k_sass.csv 2>&1
ncu -i $OUT/fa1k.ncu-rep > $OUT/fa1k.txt 2>&1
rm -f $OUT/fa1k.ncu-rep
grep -E "Duration|Eligible|Active Warps|Issued Warp" $OUT/fa1k.txt | head -8
timeout 150 python3 bench/python/attention.py --shapes 4,32,1024,128 4,33,1024,128 4,32,4096,128 \
  --iterations 30 --json $OUT/attention.jsonl 2>&1 | tail -8
