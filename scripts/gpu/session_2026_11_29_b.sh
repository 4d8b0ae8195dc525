#!/bin/bash
# Call B of the 2026-11-29 session (H200), from the repository root, carrying .carry-gpu (the GPU
# test binaries built at this tree): every GPU test binary at HEAD (04c79d1's host-computed fill
# word and the -g1 build had not run on a GPU), then tessel's LayerNorm and RMSNorm at the wide
# shapes as the model schedules them beside the pins closest to the probe's winner (call A: the
# row in registers, 1024 threads, two blocks a SM): `threads = 1024, hold_rows = registers`
# (ptxas: 64 registers, one block a SM) and the same with `blocks_per_sm = 2` (32 registers,
# 708 bytes of spills).
set -u
source "$(dirname "$0")/common.sh"
(build_tool > $LOG/bt.log 2>&1; echo "tool rc=$?" > $LOG/bt.rc) &
run_gpu_test_binaries > $OUT/tests.txt 2>&1
wait
cat $LOG/bt.rc
V=build-dev/variants; mkdir -p $V
for k in layernorm rmsnorm; do
  sed -e "s/block_grid %rows :/block_grid %rows {threads = 1024, hold_rows = registers} :/" \
    examples/kernels/${k}_auto.tir > $V/${k}_auto_reg_t1024.tir
  sed -e "s/block_grid %rows :/block_grid %rows {threads = 1024, hold_rows = registers, blocks_per_sm = 2} :/" \
    examples/kernels/${k}_auto.tir > $V/${k}_auto_reg_t1024_b2.tir
done
for shape in 2048x32768 2047x32760; do
  K=layernorm_auto,$V/layernorm_auto_reg_t1024.tir,$V/layernorm_auto_reg_t1024_b2.tir,rmsnorm_auto,$V/rmsnorm_auto_reg_t1024.tir,$V/rmsnorm_auto_reg_t1024_b2.tir
  timeout 200 build-dev/bin/tessel bench memory-bound --shape $shape --kernels $K --json $OUT/rows-b.jsonl 2>&1 | grep -E "_auto|FAIL|rror"
done > $OUT/bench.log
cat $OUT/tests.txt
cat $OUT/bench.log
