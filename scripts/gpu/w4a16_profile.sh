#!/bin/bash
# ncu profiles of the W4A16 GEMM on the lent H100, one device call from the repository root: the
# 64x16 variant at M = 1 (the memory-bound case) and the 128x256 variant at M = 4096 (the
# compute-bound one), N = K = 8192, G = 128 (one launch each, through tessel run on random inputs).
set -u
source "$(dirname "$0")/common.sh"
build_tool &
build_python &
wait
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
mkdir -p build-dev/variants
python3 - <<'PY'
import re, w4a16
base = open("examples/kernels/gemm_w4a16.tir").read()
for v, r, t in (("t64x16", 64, 16), ("t128x256", 128, 256)):
    open("build-dev/variants/gemm_w4a16_%s.tir" % v, "w").write(w4a16.variant_text(base, r, t, False))
PY
S="--section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy --section SchedulerStats --section InstructionStats"
for c in "t64x16 M=1" "t128x256 M=4096"; do
  set -- $c
  timeout 200 ncu --kernel-name regex:gemm_w4a16 --launch-count 1 $S \
    build-dev/bin/tessel run build-dev/variants/gemm_w4a16_$1.tir --gpu --size $2,N=8192,K=8192,KG=64 > $OUT/ncu_$1.txt 2>&1
  echo "== $1 $2"
  grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Issue Slots Busy|Issued Ipc|Executed Ipc|Eligible Warps|No Eligible|Active Warps Per|Warp Cycles Per Issued|Stall|Registers Per|Achieved Occupancy" $OUT/ncu_$1.txt | head -30
done
