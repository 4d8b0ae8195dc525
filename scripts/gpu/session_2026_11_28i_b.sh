#!/bin/bash
# Call B of the ninth 2026-11-28 session (H200), one device call from the repository root with
# .carry-base = a100915 carried (~5 minutes): a row tile's cp.async's shifted so that each warp's
# 512 bytes start on a 128-byte line (rows of N = 32760 f16 start 65520 bytes apart: call A's ncu
# counted 8.3 M L2 read sectors at 2047 x 32760 against 4.5 M at 2048 x 32768 for the same
# RMSNorm). Base and new timed in turns (two rounds) at the wide shapes, the new tree's row
# programs checked against the interpreter, and ncu's L1 hits and L2 sectors for RMSNorm at
# 2047 x 32760 and LayerNorm at 2048 x 32768 (are its weight and bias read from L2?).
set -u
source "$(dirname "$0")/common.sh"
export OUT
ROOT=$PWD
build_side .carry-base base tool
build_side . new tool
wait
for side in base new; do [ -x $(side_tree $side)/build-dev/bin/tessel ] || { echo "$side build failed"; tail -20 $LOG/build_$side.log; exit 1; }; done
ROOT=$PWD
(check_row_programs > $OUT/check.log 2>&1)
for round in 1 2; do
  for side in base new; do
    T=$(side_tree $side)/build-dev/bin/tessel
    for shape in 2047x32760 2048x32768 8191x8200; do
      timeout 90 $T bench memory-bound --shape $shape --kernels rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto --json $OUT/rows-b-$side.jsonl 2>&1 |
        grep -E "_auto" | sed "s/^/$side r$round /" | cut -c1-100
    done
  done
done > $OUT/bench.log
T=build-dev/bin/tessel
M="gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,smsp__inst_executed.sum"
for spec in rmsnorm_auto:M=2047,N=32760 rmsnorm_auto:M=2048,N=32768 layernorm_auto:M=2048,N=32768; do
  echo "== ncu ${spec%%:*} ${spec#*:}"
  timeout 120 ncu --launch-count 1 --metrics $M $T run examples/kernels/${spec%%:*}.tir --gpu --size ${spec#*:} 2>&1 |
    grep -E "^ +(gpu__|dram__|lts__|l1tex__|smsp__)" | sed 's/  */ /g'
done > $OUT/ncu.txt 2>&1
echo "== rows check: $(grep -c 'relative error vs the interpreter' $OUT/check.log) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $OUT/check.log | awk '{print $2}' | sort -g | tail -1)"
grep -i -E "fail|rror:" $OUT/check.log | head -5
cat $OUT/ncu.txt
echo "== bench (kernel shape ms GB/s copy-ms copy-GB/s ratio)"; sort -k3,3 -k4,4 -k1,1 -s $OUT/bench.log
