#!/bin/bash
# Call C of the ninth 2026-11-28 session (H200), one device call from the repository root with
# .carry-gpu carried (~5 minutes): the GPU test binaries that run kernels with exp (attention,
# decode, the row and memory-bound kernels: exp-to-exp2 now rewrites the exps whose error cannot
# show), then ncu of LayerNorm against RMSNorm at 8191 x 8200 (both hold the row in registers,
# 288 threads, 3 blocks a SM: 0.89 against 0.99 of a copy) and LayerNorm at 2048 x 32768: stall
# reasons, instructions, L1 hits and L2 sectors.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool || { tail -20 $LOG/build.log; exit 1; }
for t in attention_gpu_test decode_gpu_test kernels_gpu_test; do
  timeout 400 .carry-gpu/$t > $LOG/$t.log 2>&1
  echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $LOG/$t.log | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]" $LOG/$t.log | head -5
done > $OUT/tests.txt
T=build-dev/bin/tessel
STALLS=$(for r in barrier long_scoreboard short_scoreboard wait lg_throttle mio_throttle math_pipe_throttle not_selected selected; do
  echo -n "smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio,"; done)
M="${STALLS}gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,dram__bytes_read.sum,launch__registers_per_thread,smsp__cycles_active.avg,smsp__issue_active.avg.pct_of_peak_sustained_active"
for spec in layernorm_auto:M=8191,N=8200 rmsnorm_auto:M=8191,N=8200 layernorm_auto:M=8192,N=8192 layernorm_auto:M=2048,N=32768; do
  echo "== ncu ${spec%%:*} ${spec#*:}"
  timeout 120 ncu --launch-count 1 --metrics $M $T run examples/kernels/${spec%%:*}.tir --gpu --size ${spec#*:} 2>&1 |
    grep -E "^ +(gpu__|dram__|lts__|l1tex__|smsp__|sm__|launch__)" | sed -e 's/  */ /g' -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//'
done > $OUT/ncu.txt 2>&1
cat $OUT/tests.txt $OUT/ncu.txt
