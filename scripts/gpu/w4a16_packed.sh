#!/bin/bash
# The packed weight order on the lent H100 in one device call: scripts/gpu/w4a16.sh (both orders
# checked against the interpreter, sanitizers, the bench with natural tRxT and packed pRxT
# variants against cuBLAS f16 and a copy), then ncu of t64x16 and p64x16 at M = 1 (instructions
# issued, DRAM throughput), N = K = 8192, G = 128.
set -u
here=$(dirname "$0")
bash $here/w4a16.sh
source $here/common.sh
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
mkdir -p build-dev/variants
python3 - <<'PY'
import re, w4a16
for v, f in (("t64x16", "gemm_w4a16"), ("p64x16", "gemm_w4a16_packed")):
    base = open("examples/kernels/%s.tir" % f).read()
    open("build-dev/variants/gemm_w4a16_%s.tir" % v, "w").write(w4a16.variant_text(base, 64, 16, False))
PY
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats"
for v in t64x16 p64x16; do
  timeout 100 ncu --kernel-name regex:gemm_w4a16 --launch-count 1 $S \
    build-dev/bin/tessel run build-dev/variants/gemm_w4a16_$v.tir --gpu --size M=1,N=8192,K=8192,KG=64 > $OUT/ncu_$v.txt 2>&1
  echo "== ncu $v M=1"
  grep -E "Duration|DRAM Throughput|Issue Slots Busy|Eligible Warps|Active Warps Per|Warp Cycles Per Issued|Executed Instructions  |Issued Instructions  " $OUT/ncu_$v.txt | head -12
done
