#!/bin/bash
# ncu profiles of row programs under pins, one device call from the repository root (carry
# nothing): each entry of PLAN ("SHAPE:kernel[+pins]", pins as in rows_pins.sh: reg, shared, two,
# cNNN, tNNN) is compiled by tessel and profiled for one launch (`tessel run --gpu`), and the
# lines that tell where the time goes are printed: duration, DRAM and L2 throughput, occupancy,
# registers, and the warp stall reasons. Writes $OUT/rows-profile-<n>.txt.
# Usage: PLAN="2048x32768:layernorm+shared+t256+c8192,layernorm+shared+t512+c16384" bash scripts/gpu/rows_profile.sh
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 "$LOG/build.log"; exit 1; }
V=build-dev/variants; mkdir -p $V
STALLS=$(for r in barrier long_scoreboard short_scoreboard wait lg_throttle mio_throttle drain math_pipe_throttle not_selected selected; do
  echo -n "smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio,"; done | sed 's/,$//')
n=0
for entry in ${PLAN:?PLAN=SHAPE:kernel+pins,...}; do
  shape=${entry%%:*}; m=${shape%x*}; nn=${shape#*x}
  for spec in $(echo ${entry#*:} | tr ',' ' '); do
    k=${spec%%+*}; attrs=""
    for p in $(echo ${spec#$k} | tr '+' ' '); do
      case $p in
        reg) a="hold_rows = registers" ;; shared) a="hold_rows = shared" ;; two) a="hold_rows = none" ;;
        c*) a="tile_cols = ${p#c}" ;; t*) a="threads = ${p#t}" ;;
      esac
      attrs="${attrs:+$attrs, }$a"
    done
    f=$V/$(echo $spec | tr '+' '_').tir
    if [ -n "$attrs" ]; then
      sed -e "s/block_grid %rows :/block_grid %rows {$attrs} :/" examples/kernels/${k}_auto.tir > $f
    else
      cp examples/kernels/${k}_auto.tir $f
    fi
    n=$((n + 1))
    timeout 120 ncu --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section LaunchStats --metrics $STALLS \
      build-dev/bin/tessel run $f --gpu --size M=$m,N=$nn > $OUT/rows-profile-$n.txt 2>&1
    echo "== $spec at $shape"
    grep -E "^ +(Duration|DRAM Throughput|L2 Cache Throughput|Memory Throughput|Registers Per Thread|Block Size|Achieved Occupancy|Theoretical Occupancy|Waves Per SM|Warp Cycles Per Issued Instruction|Avg. Active Threads|Dynamic Shared)" $OUT/rows-profile-$n.txt | sed 's/  */ /g'
    grep -E "issue_stalled" $OUT/rows-profile-$n.txt | sed -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//' -e 's/  */ /g' | tr '\n' ';'; echo
  done
done
