#!/bin/bash
# Call A of the ninth 2026-11-28 session (H200), one device call from the repository root
# (~5 minutes): softmax written with `exp` now compiled through exp-to-exp2 (the per-element exps
# as ex2.approx of x log2(e), the online rescale kept accurate), checked against the interpreter
# on the GPU at ragged sizes with the other row programs, and all five timed against copy16 at
# eight shapes; then ncu's sector, byte and instruction counts of RMSNorm at 2048 x 32768 against
# 2047 x 32760 (the same schedule: 0.97 against 0.91 of a copy, unexplained).
set -u
source "$(dirname "$0")/common.sh"
export OUT
KERNELS=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto \
  bash scripts/gpu/rows_auto_bench.sh > $LOG/rows.log 2>&1
T=build-dev/bin/tessel
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg,lts__t_sectors_op_read_lookup_miss.sum"
for s in M=2048,N=32768 M=2047,N=32760; do
  echo "== ncu rmsnorm_auto $s"
  timeout 120 ncu --launch-count 1 --metrics $M $T run examples/kernels/rmsnorm_auto.tir --gpu --size $s 2>&1 |
    grep -E "^ +(gpu__|dram__|lts__|l1tex__|smsp__|sm__)" | sed 's/  */ /g'
done > $OUT/ncu.txt 2>&1
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -v "relative error vs the interpreter: [0-9.]*e-0[5-9]" $OUT/check.log | cut -c1-160 | head -10
cat $OUT/ncu.txt
echo "== rows bench"; grep -E "^baselines|_auto|FAIL|rror" $OUT/bench.log | cut -c1-112
