#!/bin/bash
# ncu profiles of few-token GEMM variants on the lent H100, one device call from the repository
# root: speed of light, memory, launch shape and the stall reasons (cycles per issued instruction
# by reason) of each case, one launch each through `tessel run` on random inputs. CASES: "variant
# M" pairs at N = K = 4096 (default: why 64 tokens take 14.4 µs where 16 take 12.3 µs over the
# same weights — the 64x16 split variant at M = 16, the 64x64 split variant and the 64x64 tile
# without swap at M = 64).
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $LOG/build.log; exit 1; }
V=bench/kernel-variants
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy"
STALLS="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
CASES=${CASES:-"gemm_swap_r64_t16_s12_split_k:16 gemm_swap_r64_t64_s8_split_k:64 gemm_m64_n64_s8:64"}
for c in $CASES; do
  k=${c%%:*}; m=${c##*:}
  timeout 150 ncu --launch-count 1 --kernel-name regex:$k $S $STALLS \
    build-dev/bin/tessel run $V/$k.tir --gpu --size M=$m,N=4096,K=4096 > $OUT/ncu_$k.txt 2>&1
  echo "== $k M=$m"
  grep -E "Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\)|Warp Cycles Per Issued|Grid Size|Registers Per|Dynamic Shared" $OUT/ncu_$k.txt | head -10
  # the stall reasons over 0.1 cycles per issued instruction, largest first
  grep -E "issue_stalled_.*ratio" $OUT/ncu_$k.txt | awk '$NF+0 > 0.1 {sub("smsp__average_warps_issue_stalled_", "", $1); sub("_per_issue_active.ratio", "", $1); print $NF, $1}' | sort -rn | head -8 | tr '\n' ';'; echo
done
