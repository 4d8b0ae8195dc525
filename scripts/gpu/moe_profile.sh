#!/bin/bash
# ncu of the MoE expert GEMM (examples/kernels/moe_w4a16.tir) through bench/python/moe.py
# --tessel-only at each of TOKENS (default 1,4096; 256 experts, top-8, hidden 7168, intermediate
# 2048): duration, memory, scheduler and warp-state sections and the stall reasons of one launch
# per token count. Reports under $LOG (only the summary comes back).
set -u
source "$(dirname "$0")/common.sh"
build_python || { tail -20 $LOG/pybuild.log; exit 1; }
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
STALLS="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
for t in $(echo ${TOKENS:-1,4096} | tr ',' ' '); do
  timeout 240 ncu --kernel-name regex:moe_w4a16 --launch-count 1 $S $STALLS \
    python3 bench/python/moe.py --tessel-only --tokens $t > $LOG/ncu_moe_$t.txt 2>&1
  echo "== ncu moe_w4a16 tokens=$t"
  grep -E "^tokens|^    (Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit|Issue Slots Busy|Eligible Warps|Active Warps Per|No Eligible|Warp Cycles Per Issued|Grid Size|Registers Per|Achieved Occupancy|Block Limit|Dynamic Shared|Mem Busy|Max Bandwidth|Compute \(SM\) Throughput)" $LOG/ncu_moe_$t.txt | head -24
  grep -E "issue_stalled_.*ratio" $LOG/ncu_moe_$t.txt | awk '$NF+0 > 0.1 {sub("smsp__average_warps_issue_stalled_", "", $1); sub("_per_issue_active.ratio", "", $1); print $NF, $1}' | sort -rn | head -8 | tr '\n' ';'; echo
done
