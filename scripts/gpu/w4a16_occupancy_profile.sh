#!/bin/bash
# ncu of W4A16 variants (PROFILE, default the 64-row tile with split-K and 4 blocks per SM, and
# the single-block baseline) at M = 16 with the stall reasons, N = K = 8192, G = 128 on the lent H100: throughput,
# memory, scheduler, warp-state and occupancy sections of one launch each. Builds the tool; the
# variant texts come from bench/python/w4a16.py's names (write_w4a16_variants). Logs in $OUT.
set -u
source "$(dirname "$0")/common.sh"
[ -x build-dev/bin/tessel ] || build_tool || { tail -20 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
PROFILE=${PROFILE:-p64x16,p64x16_k128_sk2_b4}
write_w4a16_variants "$PROFILE"
STALLS="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats"
for v in ${PROFILE//,/ }; do
  timeout 120 ncu --kernel-name regex:gemm_w4a16 --launch-count 1 $S $STALLS \
    $T run build-dev/variants/$v.tir --gpu --size M=16,N=8192,K=8192,KG=64 > $OUT/ncu_$v.txt 2>&1
  echo "== ncu $v M=16"
  grep -E "^    (Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit|Issue Slots Busy|Eligible Warps|Active Warps Per|No Eligible|Warp Cycles Per Issued|Issued Instructions  |Grid Size|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Dynamic Shared|Waves Per SM|Mem Busy|Max Bandwidth)" $OUT/ncu_$v.txt | head -30
  # the stall reasons over 0.1 cycles per issued instruction, largest first
  grep -E "issue_stalled_.*ratio" $OUT/ncu_$v.txt | awk '$NF+0 > 0.1 {sub("smsp__average_warps_issue_stalled_", "", $1); sub("_per_issue_active.ratio", "", $1); print $NF, $1}' | sort -rn | head -8 | tr '\n' ';'; echo
done
